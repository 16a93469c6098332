#pragma once
// Shared by the tensor-core GEMM tests (gemm_coop_rule_test, gemm_split_test, gemm_tail_split_test, linear_test,
// linear_geglu_test, linear_norm_test): tile variants, H100-like device limits for the tile rules, its generated
// kernels compiled to SPIR-V on any device, and the error measure of its fp16-operand results.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/slang_compiler.h"
#include "ops/linear_gemm.h"

namespace sdgen::test {

inline ops::GemmTile doubleBuffered(ops::GemmTile t) {
  t.doubleBuffer = true;
  return t;
}
// fp16 accumulators added into the running fp16 total every `flushK` elements of K (ACC 3), optionally
// compiled through spirv-opt (the 4096^3 tile).
inline ops::GemmTile flushed(ops::GemmTile t, int flushK, bool spirvOpt = false) {
  t.f16Accumulators = true;
  t.flushK = flushK;
  t.spirvOpt = spirvOpt;
  return t;
}

// The header's shape words compiled into the kernel (GemmTile::fixedShape).
inline ops::GemmTile fixedShape(ops::GemmTile t) {
  t.fixedShape = true;
  return t;
}

// A GEMM whose A is a raw fp16 buffer (parameter word 32, after the 32-word header) and whose sink is an fp16
// buffer (word 39), with bias, in A mode `aMode`.
inline ops::GemmInfo coopGemmInfo(int aMode) {
  ops::GemmInfo info;
  info.aType = "Buf<32,F16Storage,1,0>";
  info.sinkType = "BufSink<39,F16Storage>";
  info.vectorA = info.vectorOut = true;
  info.aMode = aMode;
  return info;
}

// An H100 / H200 as the tile rules and conv candidates read it: a discrete device with cooperative matrices (the
// f16 x f16 -> f32 shape added by the callers that need it), 32-wide subgroups, 48 KB of shared memory, 132 SMs.
inline DeviceInfo h100Like() {
  DeviceInfo d;
  d.type = "discrete";
  d.coopMatrixKHR = true;
  d.subgroupSize = 32;
  for (auto& m : d.maxWorkgroupCount) m = 65535;
  d.sharedMemoryPerWorkgroup = 49152;
  d.maxWorkgroupInvocations = 1024;
  d.multiprocessors = 132;
  return d;
}
// ... with the subgroup shapes the fp16-accumulator tiles need (f16 x f16 -> f32 and -> f16).
inline DeviceInfo h100LikeWithHalfAccumulators() {
  DeviceInfo d = h100Like();
  d.coopMatrixShapes = {{16, 16, 16, "f16", "f16", "f32", "f32", "subgroup"},
                        {16, 16, 16, "f16", "f16", "f16", "f16", "subgroup"}};
  return d;
}

inline void expectCompiles(SlangCompiler& compiler, KernelSource src, bool coopMatrix = true) {
  if (coopMatrix) src.capabilities = {"spvCooperativeMatrixKHR"};
  std::vector<uint32_t> spirv;
  EXPECT_NO_THROW(spirv = compiler.compile(src)) << src.label;
  EXPECT_GT(spirv.size(), 100u) << src.label;
}

// max |got - ref| / max |ref| (a non-finite element counts as infinite): tensor cores round A to fp16, so
// their bar is relative to the output's scale.
inline double errorOfScale(const std::vector<float>& got, const std::vector<double>& ref) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    err = std::max(err, std::isfinite(got[i]) ? std::abs(got[i] - ref[i]) : INFINITY);
    scale = std::max(scale, std::abs(ref[i]));
  }
  return err / scale;
}

}  // namespace sdgen::test
