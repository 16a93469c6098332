#pragma once
// Weight packing on the device (shaders/weights/pack_weights.slang): a checkpoint tensor's raw elements, already
// in device memory as the file stores them, converted to the storage dtype and written in the layout a kernel
// reads. The result is bit-identical to the host packing (LinearWeights' and Conv2dWeights' host constructors):
// tests/ops/weight_pack_test.cpp compares the two. The raw tensor is uploaded once; nothing is converted on the
// host.
#include <cstdint>
#include <span>
#include <string>

#include "engine/command_sequence.h"
#include "engine/context.h"
#include "engine/dtype.h"

namespace sdgen::ops {

// How a checkpoint stores its elements (the weight formats sdgen reads).
enum class RawDType : uint8_t { F32 = 0, F16 = 1, BF16 = 2 };
uint32_t rawDTypeSize(RawDType t);
const char* rawDTypeName(RawDType t);

// Where the raw elements are: `address` must be 4-byte aligned; `bytes` is the memory it may read.
struct RawTensorView {
  VkDeviceAddress address = 0;
  uint64_t bytes = 0;
  RawDType dtype = RawDType::F32;
};

// The transpose-with-taps layout of the kernel's header comment: source [rows][cin][taps], destination rows
// kRow = tap*cin + ci of `rowStride` (NP) elements, `width` values from column `colOffset` (zeros past `rows`).
struct PackLayout {
  uint32_t rows = 1, cin = 1, taps = 1;
  uint32_t width = 1, rowStride = 1, colOffset = 0;
  // The Winograd F(4,3) filters U[36][Cin][Cout] = G g G^T (fp32 storage) instead of a transpose: see
  // winogradF43.
  bool winograd = false;
  // > 0: the rows [value (inner); gate (inner)] of a GEGLU projection in the interleaved order its fused epilogue
  // reads (ops::interleaveGegluRows: blocks of 4 value rows then their 4 gate rows); rows = 2 * gegluInner.
  uint32_t gegluInner = 0;

  // LinearWeights' W^T [K][NP] from W [N][K] (NP = N rounded up to 8; padding columns zero).
  static PackLayout linear(int64_t n, int64_t k);
  // One part of a fused linear layer: W_i [n_i][K] into columns [colOffset, colOffset + n_i) of [K][NP]; the
  // last part (`last`) also zeroes the padding columns up to NP.
  static PackLayout linearPart(int64_t n, int64_t k, int64_t colOffset, int64_t np, bool last);
  // Conv2dWeights' gemm layout [kh*kw*Cin][Cout] from [Cout][Cin][kh][kw].
  static PackLayout convGemm(int cout, int cin, int kh, int kw);
  // A vector [n] into [np] values from `colOffset` on (a bias; padding zero when last).
  static PackLayout vector(int64_t n, int64_t colOffset, int64_t np, bool last);
  // A plain element-by-element conversion of `count` values.
  static PackLayout copy(int64_t count);
  // Conv2dWeights' Winograd layout U[36][Cin][Cout] (fp32) from 3x3 filters [Cout][Cin][3][3]: the kernel
  // computes G g G^T in fp32 (within a few ulps of the host's double transform, ops/conv2d_winograd_math.h, which
  // packWeightsOnHost uses: those bytes equal winograd::packFilters').
  static PackLayout winogradF43(int cout, int cin);
  // `base` (linearPart or vector of 2 * inner rows) reading its rows in the GEGLU interleave.
  static PackLayout gegluInterleaved(PackLayout base, int64_t inner);

  uint64_t sourceElements() const { return uint64_t(rows) * cin * taps; }
  // Elements of the destination the layout addresses (its last row's end).
  uint64_t destinationElements() const {
    return winograd ? uint64_t(36) * cin * rows : uint64_t(cin) * taps * rowStride;
  }
};

// Records one dispatch that packs `src` into `dst` (from its start) as `layout` in `storage`. Throws an
// sdgen::Error naming `what` when sizes disagree or a range is out of bounds.
void packWeights(Context& ctx, CommandSequence& seq, const RawTensorView& src, const Allocation& dst, DType storage,
                 const PackLayout& layout, const std::string& what);

// The same packing on the host, bit for bit (the kernel's integer conversions are engine/dtype.cpp's): `src` holds
// the raw elements, `dst` the destination from its start (host memory, or mapped host-visible device memory: the
// weight stream writes there directly on devices whose memory the host sees, such as lavapipe). Writes only the
// elements the layout addresses, in destination order. The same errors as packWeights.
void packWeightsOnHost(std::span<const uint8_t> src, RawDType srcType, std::span<uint8_t> dst, DType storage,
                       const PackLayout& layout, const std::string& what);

}  // namespace sdgen::ops
