#include "ops/weight_pack.h"

#include <algorithm>

#include "engine/error.h"
#include "engine/param_block.h"

namespace sdgen::ops {

namespace {

constexpr uint32_t kThreads = 256;
// The grid-stride loop covers the rest: 128K threads fill most of a large GPU, and each lavapipe thread
// amortizes its parameter loads (llvmpipe loads uniform words once per lane) over many elements.
constexpr uint64_t kMaxGroups = 512;

uint32_t checked32(int64_t v, const char* field, const std::string& what) {
  if (v < 0 || v >= (int64_t(1) << 31))
    throw Error(what + ": " + field + " " + std::to_string(v) + " is outside the packing kernel's 31-bit range");
  return static_cast<uint32_t>(v);
}

KernelRef packKernel(Context& ctx, DType storage) {
  KernelSource src;
  src.module = "weights/pack_weights.slang";
  src.defines = {{"SDGEN_PACK_F16", storage == DType::F16 ? "1" : "0"}};
  src.label = std::string("pack_weights_") + dtypeName(storage);
  return ctx.kernels().request(src);
}

}  // namespace

uint32_t rawDTypeSize(RawDType t) { return t == RawDType::F32 ? 4 : 2; }
const char* rawDTypeName(RawDType t) {
  switch (t) {
    case RawDType::F32: return "F32";
    case RawDType::F16: return "F16";
    case RawDType::BF16: return "BF16";
  }
  return "?";
}

PackLayout PackLayout::linear(int64_t n, int64_t k) { return linearPart(n, k, 0, (n + 7) / 8 * 8, true); }

PackLayout PackLayout::linearPart(int64_t n, int64_t k, int64_t colOffset, int64_t np, bool last) {
  const std::string what = "linear weight pack";
  PackLayout l;
  l.rows = checked32(n, "rows", what);
  l.cin = checked32(k, "K", what);
  l.taps = 1;
  l.width = checked32(last ? np - colOffset : n, "width", what);
  l.rowStride = checked32(np, "NP", what);
  l.colOffset = checked32(colOffset, "column offset", what);
  return l;
}

PackLayout PackLayout::convGemm(int cout, int cin, int kh, int kw) {
  PackLayout l;
  l.rows = checked32(cout, "Cout", "conv weight pack");
  l.cin = checked32(cin, "Cin", "conv weight pack");
  l.taps = checked32(int64_t(kh) * kw, "taps", "conv weight pack");
  l.width = l.rows;
  l.rowStride = l.rows;
  return l;
}

PackLayout PackLayout::vector(int64_t n, int64_t colOffset, int64_t np, bool last) {
  return linearPart(n, 1, colOffset, np, last);
}

PackLayout PackLayout::copy(int64_t count) {
  PackLayout l;
  l.cin = checked32(count, "count", "weight copy");
  return l;
}

void packWeights(Context& ctx, CommandSequence& seq, const RawTensorView& src, const Allocation& dst, DType storage,
                 const PackLayout& l, const std::string& what) {
  if (l.rows == 0 || l.cin == 0 || l.taps == 0 || l.width == 0) return;  // nothing to pack
  if (l.width < l.rows || uint64_t(l.colOffset) + l.width > l.rowStride)
    throw Error(what + ": packing layout of " + std::to_string(l.width) + " columns from " +
                std::to_string(l.colOffset) + " (" + std::to_string(l.rows) + " rows) does not fit rows of " +
                std::to_string(l.rowStride));
  if (src.address % 4 != 0) throw Error(what + ": raw source address is not 4-byte aligned");
  const uint64_t srcBytes = l.sourceElements() * rawDTypeSize(src.dtype);
  if (srcBytes > src.bytes)
    throw Error(what + ": packing reads " + std::to_string(srcBytes) + " bytes of " + rawDTypeName(src.dtype) +
                " but the raw tensor has " + std::to_string(src.bytes));
  const uint64_t rowsOut = uint64_t(l.cin) * l.taps;
  const uint64_t dstBytes = ((rowsOut - 1) * l.rowStride + l.colOffset + l.width) * dtypeSize(storage);
  if (dstBytes > dst.size())
    throw Error(what + ": packing writes " + std::to_string(dstBytes) + " bytes into an allocation of " +
                std::to_string(dst.size()));
  const uint64_t total = rowsOut * l.width;
  if (total >= (uint64_t(1) << 31) || rowsOut * l.rowStride >= (uint64_t(1) << 31) ||
      l.sourceElements() >= (uint64_t(1) << 31))
    throw Error(what + ": " + std::to_string(total) + " elements exceed the packing kernel's 31-bit indexing");

  const uint32_t groups = static_cast<uint32_t>(std::min<uint64_t>(kMaxGroups, (total + kThreads - 1) / kThreads));
  ParamBlock p;
  p.address(src.address).address(dst.address()).u32(static_cast<uint32_t>(src.dtype));
  p.u32(l.rows).u32(l.cin).u32(l.taps).u32(l.width).u32(l.rowStride).u32(l.colOffset);
  p.u32(static_cast<uint32_t>(total)).u32(groups * kThreads);
  const MemRange reads[] = {{src.address, srcBytes}};
  const uint64_t firstByte = uint64_t(l.colOffset) * dtypeSize(storage);  // parts of a fused layer don't overlap
  const MemRange writes[] = {range(dst, firstByte, dstBytes - firstByte)};
  seq.dispatch(packKernel(ctx, storage), {groups, 1, 1}, p, reads, writes, "pack " + what);
}

}  // namespace sdgen::ops
