#include "ops/weight_pack.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <vector>

#include "engine/error.h"
#include "engine/param_block.h"
#include "ops/conv2d_winograd_math.h"

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

KernelRef packKernel(Context& ctx, DType storage, bool winograd) {
  KernelSource src;
  src.module = "weights/pack_weights.slang";
  src.defines = {{"SDGEN_PACK_F16", storage == DType::F16 ? "1" : "0"}, {"SDGEN_PACK_WINOGRAD", winograd ? "1" : "0"}};
  src.label = std::string(winograd ? "pack_winograd_" : "pack_weights_") + dtypeName(storage);
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

PackLayout PackLayout::winogradF43(int cout, int cin) {
  PackLayout l = convGemm(cout, cin, 3, 3);
  l.winograd = true;
  return l;
}

PackLayout PackLayout::gegluInterleaved(PackLayout base, int64_t inner) {
  if (inner <= 0 || inner % 4 || uint64_t(base.rows) != 2 * uint64_t(inner) || base.winograd)
    throw Error("GEGLU interleave: " + std::to_string(base.rows) + " rows are not 2 x " + std::to_string(inner) +
                " with inner % 4 == 0");
  base.gegluInner = uint32_t(inner);
  return base;
}

PackLayout PackLayout::copy(int64_t count) {
  PackLayout l;
  l.cin = checked32(count, "count", "weight copy");
  return l;
}

namespace {
// The checks shared by both packings; returns the bytes of the destination the layout writes (from its start).
uint64_t checkPack(const PackLayout& l, uint64_t srcBytesAvailable, RawDType srcType, uint64_t dstSize, DType storage,
                   const std::string& what) {
  if (l.width < l.rows || uint64_t(l.colOffset) + l.width > l.rowStride)
    throw Error(what + ": packing layout of " + std::to_string(l.width) + " columns from " +
                std::to_string(l.colOffset) + " (" + std::to_string(l.rows) + " rows) does not fit rows of " +
                std::to_string(l.rowStride));
  const uint64_t srcBytes = l.sourceElements() * rawDTypeSize(srcType);
  if (srcBytes > srcBytesAvailable)
    throw Error(what + ": packing reads " + std::to_string(srcBytes) + " bytes of " + rawDTypeName(srcType) +
                " but the raw tensor has " + std::to_string(srcBytesAvailable));
  if (l.winograd && (storage != DType::F32 || l.taps != 9 || l.width != l.rows || l.rowStride != l.rows || l.colOffset))
    throw Error(what + ": the Winograd filter layout takes 3x3 filters into fp32 storage");
  const uint64_t rowsOut = uint64_t(l.cin) * (l.winograd ? 36 : l.taps);
  const uint64_t dstBytes = ((rowsOut - 1) * l.rowStride + l.colOffset + l.width) * dtypeSize(storage);
  if (dstBytes > dstSize)
    throw Error(what + ": packing writes " + std::to_string(dstBytes) + " bytes into an allocation of " +
                std::to_string(dstSize));
  const uint64_t total = rowsOut * l.width;
  if (total >= (uint64_t(1) << 31) || rowsOut * l.rowStride >= (uint64_t(1) << 31) ||
      l.sourceElements() >= (uint64_t(1) << 31))
    throw Error(what + ": " + std::to_string(total) + " elements exceed the packing kernel's 31-bit indexing");
  return dstBytes;
}

// Element i of a raw tensor as fp32 bits: the kernel's loadAsFloatBits (halfToFloat is engine/dtype.cpp's, which
// the kernel mirrors bit for bit).
uint32_t rawFloatBits(const uint8_t* src, RawDType t, uint64_t i) {
  if (t == RawDType::F32) {
    uint32_t bits;
    std::memcpy(&bits, src + i * 4, 4);
    return bits;
  }
  uint16_t h;
  std::memcpy(&h, src + i * 2, 2);
  return t == RawDType::BF16 ? uint32_t(h) << 16 : std::bit_cast<uint32_t>(halfToFloat(h));
}
}  // namespace

void packWeights(Context& ctx, CommandSequence& seq, const RawTensorView& src, const Allocation& dst, DType storage,
                 const PackLayout& l, const std::string& what) {
  if (l.rows == 0 || l.cin == 0 || l.taps == 0 || l.width == 0) return;  // nothing to pack
  if (src.address % 4 != 0) throw Error(what + ": raw source address is not 4-byte aligned");
  const uint64_t dstBytes = checkPack(l, src.bytes, src.dtype, dst.size(), storage, what);
  const uint64_t srcBytes = l.sourceElements() * rawDTypeSize(src.dtype);
  const uint64_t total = uint64_t(l.cin) * (l.winograd ? 36 : l.taps) * l.width;
  const uint32_t groups = static_cast<uint32_t>(std::min<uint64_t>(kMaxGroups, (total + kThreads - 1) / kThreads));
  ParamBlock p;
  p.address(src.address).address(dst.address()).u32(static_cast<uint32_t>(src.dtype));
  p.u32(l.rows).u32(l.cin).u32(l.taps).u32(l.width).u32(l.rowStride).u32(l.colOffset);
  p.u32(static_cast<uint32_t>(total)).u32(groups * kThreads).u32(l.gegluInner);
  const MemRange reads[] = {{src.address, srcBytes}};
  const uint64_t firstByte = uint64_t(l.colOffset) * dtypeSize(storage);  // parts of a fused layer don't overlap
  const MemRange writes[] = {range(dst, firstByte, dstBytes - firstByte)};
  seq.dispatch(packKernel(ctx, storage, l.winograd), {groups, 1, 1}, p, reads, writes, "pack " + what);
}

void packWeightsOnHost(std::span<const uint8_t> src, RawDType srcType, std::span<uint8_t> dst, DType storage,
                       const PackLayout& l, const std::string& what) {
  if (l.rows == 0 || l.cin == 0 || l.taps == 0 || l.width == 0) return;
  checkPack(l, src.size(), srcType, dst.size(), storage, what);
  if (l.winograd) {  // in double, per input channel: 36 rows of Cout written in order
    const uint32_t cout = l.rows;
    std::vector<float> rows(size_t(36) * cout);
    float* out = reinterpret_cast<float*>(dst.data());
    for (uint64_t ci = 0; ci < l.cin; ++ci) {
      for (uint32_t co = 0; co < cout; ++co) {
        std::array<float, 9> g;
        for (int k = 0; k < 9; ++k)
          g[size_t(k)] = std::bit_cast<float>(rawFloatBits(src.data(), srcType, (co * uint64_t(l.cin) + ci) * 9 + k));
        const std::array<double, 36> u = winograd::filterTransform(g);
        for (int t = 0; t < 36; ++t) rows[size_t(t) * cout + co] = static_cast<float>(u[size_t(t)]);
      }
      for (int t = 0; t < 36; ++t)
        std::memcpy(out + (uint64_t(t) * l.cin + ci) * cout, rows.data() + size_t(t) * cout, size_t(cout) * 4);
    }
    return;
  }
  const uint64_t rowsOut = uint64_t(l.cin) * l.taps, rowStep = uint64_t(l.cin) * l.taps;
  auto sourceRow = [&](uint64_t r) -> uint64_t {  // the kernel's GEGLU interleave
    if (!l.gegluInner) return r;
    const uint64_t b = r / 8, i = r % 8;
    return i < 4 ? 4 * b + i : l.gegluInner + 4 * b + (i - 4);
  };
  // Destination order (rows of `width` consecutive elements): sequential writes, which write-combined
  // host-visible device memory needs; the reads stride through the source.
  for (uint64_t kRow = 0; kRow < rowsOut; ++kRow) {
    const uint64_t tap = kRow / l.cin, ci = kRow - tap * l.cin;
    const uint64_t first = ci * l.taps + tap, o = kRow * l.rowStride + l.colOffset;
    if (storage == DType::F16) {
      uint16_t* out = reinterpret_cast<uint16_t*>(dst.data()) + o;
      for (uint64_t r = 0; r < l.width; ++r)
        out[r] = r < l.rows ? floatToHalf(std::bit_cast<float>(
                                  rawFloatBits(src.data(), srcType, first + sourceRow(r) * rowStep)))
                            : uint16_t(0);
    } else {
      uint32_t* out = reinterpret_cast<uint32_t*>(dst.data()) + o;
      for (uint64_t r = 0; r < l.width; ++r)
        out[r] = r < l.rows ? rawFloatBits(src.data(), srcType, first + sourceRow(r) * rowStep) : 0u;
    }
  }
}

}  // namespace sdgen::ops
