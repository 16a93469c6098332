#include "ops/basic_kernels.h"

#include <string>

#include "engine/error.h"
#include "engine/param_block.h"

namespace sdgen::ops {

static KernelRef basicKernel(Context& ctx, const char* module, DType dtype, int op = -1) {
  KernelSource src;
  src.module = std::string("basic/") + module;
  src.defines = {{"SDGEN_DTYPE", dtypeDefine(dtype)}};
  if (op >= 0) src.defines.push_back({"SDGEN_OP", std::to_string(op)});
  src.label = std::string(module, std::string(module).find('.')) + "_" + dtypeName(dtype);
  return ctx.kernels().request(src);
}

static void requireBytes(const Allocation& a, uint64_t bytes, const char* what) {
  if (a.size() < bytes)
    throw Error(std::string(what) + ": allocation of " + std::to_string(a.size()) + " bytes is smaller than the " +
                std::to_string(bytes) + " bytes required");
}

static uint32_t groupsFor(uint32_t count) { return count == 0 ? 1 : (count + 255) / 256; }

static void fillImpl(Context& ctx, CommandSequence& seq, const Allocation& dst, DType dtype, uint32_t count,
                     float value, uint32_t slot) {
  requireBytes(dst, uint64_t(count) * dtypeSize(dtype), "fill destination");
  ParamBlock p;
  p.address(dst.address()).u32(count).f32(value).u32(slot);
  seq.dispatch(basicKernel(ctx, "fill.slang", dtype), {groupsFor(count), 1, 1}, p, {}, {range(dst)});
}

void fill(Context& ctx, CommandSequence& seq, const Allocation& dst, DType dtype, uint32_t count, float value) {
  fillImpl(ctx, seq, dst, dtype, count, value, 0xffffffffu);
}

void fillFromUniform(Context& ctx, CommandSequence& seq, const Allocation& dst, DType dtype, uint32_t count,
                     uint32_t slot) {
  fillImpl(ctx, seq, dst, dtype, count, 0.0f, slot);
}

void copy(Context& ctx, CommandSequence& seq, const Allocation& src, const Allocation& dst, DType dtype,
          uint32_t count) {
  uint64_t bytes = uint64_t(count) * dtypeSize(dtype);
  requireBytes(src, bytes, "copy source");
  requireBytes(dst, bytes, "copy destination");
  ParamBlock p;
  p.address(src.address()).address(dst.address()).u32(count);
  seq.dispatch(basicKernel(ctx, "copy.slang", dtype), {groupsFor(count), 1, 1}, p, {range(src)}, {range(dst)});
}

static void binary(Context& ctx, CommandSequence& seq, int op, const Allocation& a, const Allocation& b,
                   const Allocation& out, DType dtype, uint32_t count) {
  uint64_t bytes = uint64_t(count) * dtypeSize(dtype);
  requireBytes(a, bytes, "first operand");
  requireBytes(b, bytes, "second operand");
  requireBytes(out, bytes, "output");
  ParamBlock p;
  p.address(a.address()).address(b.address()).address(out.address()).u32(count);
  seq.dispatch(basicKernel(ctx, "binary.slang", dtype, op), {groupsFor(count), 1, 1}, p, {range(a), range(b)},
               {range(out)});
}

void add(Context& ctx, CommandSequence& seq, const Allocation& a, const Allocation& b, const Allocation& out,
         DType dtype, uint32_t count) {
  binary(ctx, seq, 0, a, b, out, dtype, count);
}

void multiply(Context& ctx, CommandSequence& seq, const Allocation& a, const Allocation& b, const Allocation& out,
              DType dtype, uint32_t count) {
  binary(ctx, seq, 1, a, b, out, dtype, count);
}

void rowSum(Context& ctx, CommandSequence& seq, const Allocation& in, const Allocation& out, DType dtype,
            uint32_t rows, uint32_t cols) {
  if (rows == 0) return;
  requireBytes(in, uint64_t(rows) * cols * dtypeSize(dtype), "row-sum input");
  requireBytes(out, uint64_t(rows) * 4, "row-sum output");
  ParamBlock p;
  p.address(in.address()).address(out.address()).u32(rows).u32(cols);
  seq.dispatch(basicKernel(ctx, "row_sum.slang", dtype), {rows, 1, 1}, p, {range(in)}, {range(out)});
}

}  // namespace sdgen::ops
