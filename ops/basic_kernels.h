#pragma once
// The first kernels: fill, copy, elementwise add/multiply and a row sum (subgroup reduction), fp32 and fp16.
// Each records one dispatch into a CommandSequence. Counts are in elements of `dtype`.
#include <cstdint>

#include "engine/command_sequence.h"
#include "engine/context.h"
#include "engine/dtype.h"

namespace sdgen::ops {

void fill(Context& ctx, CommandSequence& seq, const Allocation& dst, DType dtype, uint32_t count, float value);
// Fills with the value of the sequence's uniform slot at execution time (replayable with new values).
void fillFromUniform(Context& ctx, CommandSequence& seq, const Allocation& dst, DType dtype, uint32_t count,
                     uint32_t slot);
void copy(Context& ctx, CommandSequence& seq, const Allocation& src, const Allocation& dst, DType dtype,
          uint32_t count);
void add(Context& ctx, CommandSequence& seq, const Allocation& a, const Allocation& b, const Allocation& out,
         DType dtype, uint32_t count);
void multiply(Context& ctx, CommandSequence& seq, const Allocation& a, const Allocation& b, const Allocation& out,
              DType dtype, uint32_t count);
// out[r] (fp32) = sum of in[r, 0..cols) (dtype).
void rowSum(Context& ctx, CommandSequence& seq, const Allocation& in, const Allocation& out, DType dtype,
            uint32_t rows, uint32_t cols);

}  // namespace sdgen::ops
