// Flash attention against a naive float64 softmax(Q K^T * scale) V, in fp32 and fp16 storage: the
// specialized head dimensions (40, 64, 80, 160) and the runtime-D kernel (8, 12, 33, 100), self- and
// cross-attention (Sk = 77), query counts off the tile size, causal masking, B = 2 and H = 2, fused input
// layouts (reshape, permute, slices of a fused QKV projection, computed Q) and permuted output sinks.
// Error measure: max |gpu - ref| / max(1, |ref|), with ref rounded to fp16 when the output is stored in fp16.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "engine/command_sequence.h"
#include "engine/slang_compiler.h"
#include "graph/expr.h"
#include "ops/attention.h"
#include "tests/graph/tensor_fixture.h"

namespace sdgen {
namespace {

using namespace graph;

class AttentionTest : public test::TensorTest {
 protected:
  // The tensor-core kernel rounds Q, K, V and P to fp16: the fp16 bound in both storage types.
  double tolerance() const override { return coopTolerance_ ? 5e-3 : TensorTest::tolerance(); }
  bool coopTolerance_ = false;

  // Naive attention over the reference values of q [B, Sq, H, D], k and v [B, Sk, H, D]; row-major result.
  std::vector<double> reference(const Expr& q, const Expr& k, const Expr& v, bool causal, double scale = 0) {
    const Shape &qs = q.shape(), &ks = k.shape();
    const int64_t B = qs[0], Sq = qs[1], H = qs[2], D = qs[3], Sk = ks[1];
    if (scale == 0) scale = 1 / std::sqrt(double(D));
    auto qv = test::evalReference(q, mem_), kv = test::evalReference(k, mem_), vv = test::evalReference(v, mem_);
    std::vector<double> out(qv.size()), s(Sk);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < Sq; ++i) {
          const double* qi = &qv[((b * Sq + i) * H + h) * D];
          double mx = -INFINITY, sum = 0;
          for (int64_t j = 0; j < Sk; ++j) {
            const double* kj = &kv[((b * Sk + j) * H + h) * D];
            double dot = 0;
            for (int64_t d = 0; d < D; ++d) dot += qi[d] * kj[d];
            s[j] = causal && j > i ? -INFINITY : dot * scale;
            mx = std::max(mx, s[j]);
          }
          for (int64_t j = 0; j < Sk; ++j) sum += s[j] = std::exp(s[j] - mx);
          for (int64_t d = 0; d < D; ++d) {
            double acc = 0;
            for (int64_t j = 0; j < Sk; ++j) acc += s[j] * vv[((b * Sk + j) * H + h) * D + d];
            out[((b * Sq + i) * H + h) * D + d] = acc / sum;
          }
        }
    return out;
  }
  // A row-major [B, S, H, D] result as [B, H, S, D] (for outputs written through a permuted sink).
  static std::vector<double> headMajorOf(const std::vector<double>& x, int64_t B, int64_t S, int64_t H, int64_t D) {
    std::vector<double> t(x.size());
    for (int64_t b = 0; b < B; ++b)
      for (int64_t s = 0; s < S; ++s)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t d = 0; d < D; ++d) t[((b * H + h) * S + s) * D + d] = x[((b * S + s) * H + h) * D + d];
    return t;
  }
  // Dense q, k, v buffers; q in a wider range so the softmax is peaked and the running max moves.
  struct Problem {
    Expr q, k, v;
  };
  Problem dense(int64_t B, int64_t Sq, int64_t Sk, int64_t H, int64_t D, uint32_t seed) {
    return {input({B, Sq, H, D}, seed, -3.f, 3.f), input({B, Sk, H, D}, seed + 1), input({B, Sk, H, D}, seed + 2)};
  }
  ops::AttentionInfo run(const Problem& p, ops::AttentionOptions options, const std::string& what) {
    TensorView out = output(p.q.shape());
    CommandSequence seq(ctx());
    auto info = ops::attention(ctx(), seq, p.q, p.k, p.v, bufferSink(out), options);
    seq.run();
    compare(read(out), reference(p.q, p.k, p.v, options.causal, options.scale.value_or(0)),
            what + " (" + (info.coopMatrix ? info.coopTile.describe()
                           : info.lanesRowsPerLane ? "lanes kernel, " + std::to_string(info.lanesRowsPerLane) +
                                                     " rows per lane"
                                                   : info.tile.describe()) + ")");
    return info;
  }
  // The tensor-core kernel's shapes: SD head dimensions and odd ones (24, 72; 33 element by element), Sq and Sk
  // off every block (100 x 77 cross-attention, 45 self), 256 x 256, causal CLIP, explicit scale, fused layouts.
  // !all (the emulation on llvmpipe, ~9 s to compile each kernel): fewer kernels with the same code paths.
  void tensorCoreShapes(const ops::AttentionOptions& base, bool all) {
    auto with = [&](auto f) {
      ops::AttentionOptions o = base;
      f(o);
      return o;
    };
    auto check = [&](const Problem& p, const ops::AttentionOptions& o, const std::string& what) {
      auto info = run(p, o, what);
      EXPECT_TRUE(info.coopMatrix) << what;
      return info;
    };
    for (int64_t d : {40, 64, 80, 160, 24, 72, 33}) {
      if (all || d == 40 || d == 160) {
        auto info = check(dense(2, 100, 77, 2, d, 1100 + uint32_t(d)), base, "cross 100 x 77, D " + std::to_string(d));
        EXPECT_EQ(info.coopTile.d, d);
        EXPECT_EQ(info.vector, d % 4 == 0);
        // fp16 buffers with D % 8 == 0 are read as raw rows (16-byte loads from hoisted row addresses).
        EXPECT_EQ(info.rawInputs, dt() == DType::F16 && d % 8 == 0) << d;
      }
      if (all || d == 33) check(dense(1, 45, 45, 2, d, 1200 + uint32_t(d)), base, "self 45, D " + std::to_string(d));
    }
    check(dense(1, 256, 256, 2, 72, 1300), base, "self 256 x 256, D 72");
    if (all) check(dense(1, 256, 256, 1, 40, 1301), base, "self 256 x 256, D 40");
    check(dense(2, 77, 77, 2, 64, 1302), with([](auto& o) { o.causal = true; }), "causal 77, D 64");
    if (all) check(dense(1, 5, 5, 1, 40, 1303), with([](auto& o) { o.causal = true; }), "causal 5, D 40");
    check(dense(1, 33, 9, 2, 40, 1304), with([](auto& o) { o.scale = 0.05f; }), "scale 0.05, Sk 9");
    // The expression loads on a shape the raw rows would take.
    auto viaExpr = check(dense(2, 100, 77, 2, 40, 1305), with([](auto& o) { o.allowRawInputs = false; }),
                         "cross 100 x 77, D 40, expression loads");
    EXPECT_FALSE(viaExpr.rawInputs);

    // Fused inputs and output: slices of a QKV projection, permuted head-major K/V, permuted output sink.
    const int64_t B = 2, S = 37, H = 2, D = 40, C = H * D;
    Expr qkv = input({B, S, 3 * C}, 1310, -2.f, 2.f);
    auto heads = [&](int part) { return reshape(sliceLastDim(qkv, part * C, C), {B, S, H, D}); };
    Expr kHeadMajor = input({B, H, 77, D}, 1311), vHeadMajor = input({B, H, 77, D}, 1312);
    Expr k2 = permute(kHeadMajor, {0, 2, 1, 3}), v2 = permute(vHeadMajor, {0, 2, 1, 3});
    TensorView flat = output({B, S, C}), headMajor = output({B, H, S, D});
    TensorView flatHeads = flat;
    flatHeads.shape = {B, S, H, D};
    flatHeads.strides = denseStrides(flatHeads.shape);
    CommandSequence seq(ctx());
    auto i1 = ops::attention(ctx(), seq, heads(0), heads(1), heads(2), bufferSink(flatHeads), base);
    auto i2 = ops::attention(ctx(), seq, heads(0), k2, v2, permute(bufferSink(headMajor), {0, 2, 1, 3}), base);
    seq.run();
    EXPECT_TRUE(i1.coopMatrix && i2.coopMatrix);
    // Strided raw rows: parts of the fused projection (row stride 3C), head-major K/V (head stride 77 D).
    EXPECT_EQ(i1.rawInputs, dt() == DType::F16);
    EXPECT_EQ(i2.rawInputs, dt() == DType::F16);
    EXPECT_EQ(i1.scalarWrappedNodes + i2.scalarWrappedNodes, 0) << i2.qType << " " << i2.kType << " " << i2.outType;
    compare(read(flat), reference(heads(0), heads(1), heads(2), false), "fused QKV slices (" + i1.coopTile.describe() + ")");
    compare(read(headMajor), headMajorOf(reference(heads(0), k2, v2, false), B, S, H, D),
            "permuted K/V and output (" + i2.coopTile.describe() + ")");
  }
};

TEST_P(AttentionTest, SelfAttentionSpecializedHeadDims) {
  // Sq = Sk = 45: not a multiple of any query or key block.
  for (int64_t d : {40, 64, 80, 160}) {
    auto info = run(dense(2, 45, 45, 2, d, uint32_t(d)), {}, "self D " + std::to_string(d));
    EXPECT_EQ(info.coopMatrix ? info.coopTile.d : info.tile.d, d);  // fp16 on tensor-core devices: flash_coop
    EXPECT_TRUE(info.vector);
    EXPECT_EQ(info.scalarWrappedNodes, 0) << info.qType;
  }
}

TEST_P(AttentionTest, CrossAttentionSkOf77) {
  for (int64_t d : {40, 64, 80, 160}) run(dense(2, 70, 77, 2, d, 200 + uint32_t(d)), {}, "cross D " + std::to_string(d));
}

TEST_P(AttentionTest, RuntimeHeadDims) {
  // D % 4 != 0 (33) reads and writes element by element; 100 uses the 128-column capacity.
  for (int64_t d : {8, 12, 33, 100}) {
    auto info = run(dense(2, 21, 30, 2, d, 300 + uint32_t(d)), {}, "runtime D " + std::to_string(d));
    if (!info.coopMatrix) {
      EXPECT_EQ(info.tile.d, 0);
    }
    EXPECT_EQ(info.vector, d % 4 == 0);
  }
  run(dense(1, 9, 77, 2, 12, 400), {}, "runtime D 12 cross");
}

TEST_P(AttentionTest, CausalMask) {
  // CLIP text encoder: 77 tokens, D = 64; also a runtime-D head and a sequence shorter than one block.
  run(dense(2, 77, 77, 2, 64, 500), {.causal = true}, "causal D 64");
  run(dense(2, 50, 50, 2, 12, 510), {.causal = true}, "causal D 12");
  run(dense(1, 5, 5, 1, 40, 520), {.causal = true}, "causal S 5");
}

TEST_P(AttentionTest, EveryTileCandidateThatFits) {
  // Each device picks its own blocks (lavapipe's 32 KiB and the H100's 48 KiB differ), so every candidate is
  // checked here on one head dimension, in both storage types.
  for (const ops::FlashBlocks& b : ops::flashBlockCandidates()) {
    ops::FlashTile t = ops::makeFlashTile(40, b);
    if (t.sharedBytes() > ctx().info().sharedMemoryPerWorkgroup) continue;
    auto info = run(dense(1, 45, 45, 2, 40, 550), {.blocks = b}, "blocks");
    EXPECT_EQ(info.tile.bq, b.bq);
    EXPECT_EQ(info.tile.bkv, b.bkv);
  }
}

TEST_P(AttentionTest, LanesKernelOnCpuDevices) {
  // CPU devices run flash_lanes.slang where D % 4 == 0 and D <= 64; the shared-memory kernel stays reachable
  // (allowLanes = false) and both must match the reference: the built-in model's D = 32 (self 256 x 256
  // as at its first level, cross with Sk = 77), row counts off the 8 * rows-per-lane block, causal CLIP.
  const bool cpu = ctx().info().type == "cpu" && ctx().info().subgroupSize == 8;
  for (bool lanes : {true, false}) {
    const std::string k = lanes ? " lanes" : " shared";
    auto info = run(dense(2, 256, 256, 2, 32, 900), {.allowLanes = lanes}, "self D 32" + k);
    EXPECT_EQ(info.lanesRowsPerLane > 0, lanes && cpu);
    if (lanes && cpu) {
      EXPECT_EQ(info.lanesRowsPerLane, ops::flashLanesRowsPerLane(32));
    }
    run(dense(2, 37, 77, 4, 32, 910), {.allowLanes = lanes}, "cross D 32" + k);
    run(dense(1, 77, 77, 2, 32, 920), {.causal = true, .allowLanes = lanes}, "causal D 32" + k);
    run(dense(1, 13, 9, 1, 16, 930), {.allowLanes = lanes}, "D 16" + k);
    run(dense(2, 3, 5, 2, 4, 940), {.allowLanes = lanes}, "D 4" + k);
  }
  // Outside the lanes contract: the shared-memory kernel.
  EXPECT_EQ(run(dense(1, 9, 9, 1, 80, 950), {}, "D 80").lanesRowsPerLane, 0);
  EXPECT_EQ(run(dense(1, 9, 9, 1, 33, 960), {}, "D 33").lanesRowsPerLane, 0);
  EXPECT_EQ(ops::flashLanesRowsPerLane(68), 0);
  EXPECT_EQ(ops::flashLanesRowsPerLane(30), 0);
  EXPECT_EQ(ops::flashLanesRowsPerLane(64), 2);
  EXPECT_EQ(ops::flashLanesRowsPerLane(32), 4);
}

TEST_P(AttentionTest, ExplicitScale) {
  run(dense(1, 33, 20, 2, 40, 600), {.scale = 0.05f}, "scale 0.05");
}

TEST_P(AttentionTest, FusedLayouts) {
  const int64_t B = 2, S = 19, H = 2, D = 40, C = H * D;
  // A fused QKV projection output [B, S, 3C]: Q, K and V are slices reshaped to heads (Reshape nodes).
  Expr qkv = input({B, S, 3 * C}, 700, -2.f, 2.f);
  auto heads = [&](int part) { return reshape(sliceLastDim(qkv, part * C, C), {B, S, H, D}); };
  // Q computed from a [B, S, C] projection viewed as heads (a folded reshape); K, V stored head-major.
  Expr proj = input({B, S, C}, 701);
  Expr q2 = reshape(proj, {B, S, H, D}) * constant(2.f);
  Expr kHeadMajor = input({B, H, 30, D}, 702), vHeadMajor = input({B, H, 30, D}, 703);
  Expr k2 = permute(kHeadMajor, {0, 2, 1, 3}), v2 = permute(vHeadMajor, {0, 2, 1, 3});
  // Outputs: [B, S, C] for the out projection viewed as [B, S, H, D], and a head-major [B, H, S, D] permute.
  TensorView flat = output({B, S, C}), headMajor = output({B, H, S, D});
  TensorView flatHeads = flat;
  flatHeads.shape = {B, S, H, D};
  flatHeads.strides = denseStrides(flatHeads.shape);
  CommandSequence seq(ctx());
  ops::attention(ctx(), seq, heads(0), heads(1), heads(2), bufferSink(flatHeads));
  auto info = ops::attention(ctx(), seq, q2, k2, v2, permute(bufferSink(headMajor), {0, 2, 1, 3}));
  seq.run();
  EXPECT_EQ(info.scalarWrappedNodes, 0) << info.qType << " " << info.kType << " " << info.outType;
  compare(read(flat), reference(heads(0), heads(1), heads(2), false), "fused QKV slices");
  compare(read(headMajor), headMajorOf(reference(q2, k2, v2, false), B, S, H, D), "permuted K/V and output");
}

TEST_P(AttentionTest, InvalidShapesThrowNamingShapes) {
  Expr q = input({2, 10, 2, 8}, 800), k = input({2, 12, 2, 8}, 801), v = input({2, 12, 2, 8}, 802);
  Expr kBadD = input({2, 12, 2, 6}, 803), big = input({1, 2, 1, 300}, 804);
  TensorView out = output({2, 10, 2, 8}), flat = output({2, 10, 16}), bigOut = output({1, 2, 1, 300});
  CommandSequence seq(ctx());
  test::expectErrorContaining([&] { ops::attention(ctx(), seq, q, kBadD, v, bufferSink(out)); }, "[2,12,2,6]");
  test::expectErrorContaining([&] { ops::attention(ctx(), seq, q, k, v, bufferSink(out), {.causal = true}); }, "Sq == Sk");
  test::expectErrorContaining([&] { ops::attention(ctx(), seq, reshape(q, {2, 10, 16}), k, v, bufferSink(out)); }, "[2,10,16]");
  test::expectErrorContaining([&] { ops::attention(ctx(), seq, q, k, v, bufferSink(flat)); }, "output [2,10,16]");
  test::expectErrorContaining([&] { ops::attention(ctx(), seq, big, big, big, bufferSink(bigOut)); }, "[1,2,1,300]");
  test::expectErrorContaining([&] { ops::attention(ctx(), seq, q, k, v, bufferSink(out), {.blocks = ops::FlashBlocks{8, 4, 8}}); },
              "inconsistent");
}

TEST_P(AttentionTest, TensorCoreKernel) {
  // Where the device has 16x16x16 f16 cooperative matrices and 32-wide subgroups (H100, H200): the kernel
  // against the reference, the default choice (fp16 inputs only) and every block variant that fits. Elsewhere
  // (lavapipe): fp16 inputs keep the fp32 kernel and forcing the tensor cores throws, naming the reason.
  const DeviceInfo& dev = ctx().info();
  if (!ops::flashCoopSupported(dev)) {
    Problem p = dense(1, 20, 20, 2, 40, 1000);
    auto info = run(p, {}, "no tensor cores");
    EXPECT_FALSE(info.coopMatrix);
    TensorView out = output(p.q.shape());
    CommandSequence seq(ctx());
    test::expectErrorContaining([&] { ops::attention(ctx(), seq, p.q, p.k, p.v, bufferSink(out), {.coop = true}); },
                                "cannot run it: " + ops::flashCoopUnsupportedReason(dev));
    test::expectErrorContaining([&] {
      ops::attention(ctx(), seq, p.q, p.k, p.v, bufferSink(out), {.coopBlocks = ops::FlashCoopBlocks{64, 1, 4}});
    }, "tensor-core attention kernel was requested");
    return;
  }
  coopTolerance_ = true;
  tensorCoreShapes({.coop = true}, true);
  auto info = run(dense(1, 45, 45, 2, 64, 1400), {}, "default choice");
  EXPECT_EQ(info.coopMatrix, dt() == DType::F16) << "the default uses tensor cores for fp16 inputs only";
  EXPECT_FALSE(run(dense(1, 45, 45, 2, 64, 1401), {.coop = false}, "coop = false").coopMatrix);
  // Beyond kFlashCoopAutoMaxHeadDim the default takes the tensor cores only with raw fp16 heads; through
  // expression loads it keeps the fp32 kernel (measured faster there).
  EXPECT_EQ(run(dense(1, 45, 45, 2, 160, 1402), {}, "default at D 160").coopMatrix, dt() == DType::F16);
  EXPECT_FALSE(run(dense(1, 45, 45, 2, 160, 1403), {.allowRawInputs = false}, "default at D 160, expressions").coopMatrix);
  for (int bkv : {16, 32, 64})
    for (int rows : {1, 2, 4})
      for (int sg : {1, 2, 4})
        for (bool db : {false, true}) {
          ops::FlashCoopTile t = ops::makeFlashCoopTile(80, {bkv, rows, sg, db});
          if (t.sharedBytes() > dev.sharedMemoryPerWorkgroup) continue;
          auto i = run(dense(1, 150, 77, 2, 80, 1410), {.coopBlocks = ops::FlashCoopBlocks{bkv, rows, sg, db}},
                       "blocks");
          EXPECT_EQ(i.coopTile.bq(), 16 * rows * sg);
          EXPECT_EQ(i.coopTile.doubleBuffer, db);
        }
  // Double-buffered causal (the block skip comes after the next block is staged) and through expressions.
  run(dense(2, 77, 77, 2, 64, 1420), {.causal = true, .coopBlocks = ops::FlashCoopBlocks{16, 1, 4, true}},
      "causal, double-buffered");
  run(dense(1, 150, 77, 2, 40, 1421), {.coopBlocks = ops::FlashCoopBlocks{16, 1, 4, true}, .allowRawInputs = false},
      "expression loads, double-buffered");
}

TEST_P(AttentionTest, AccumulatorSoftmaxKernel) {
  // flash_coop2.slang (softmax in accumulators, VK_NV_cooperative_matrix2) against the reference where the
  // device has it (H100, H200): every block variant on shapes whose key count its blocks divide and on shapes
  // whose last block is masked, raw and expression loads, odd query counts and head dimensions; the default
  // choice takes it for both and keeps flash_coop.slang for causal masks. Elsewhere (lavapipe): forcing it
  // throws the reason.
  const DeviceInfo& dev = ctx().info();
  const std::string why = ops::flashCoop2UnsupportedReason(dev, false, 128, 64);
  if (!why.empty()) {
    Problem p = dense(1, 20, 64, 2, 40, 1600);
    TensorView out = output(p.q.shape());
    CommandSequence seq(ctx());
    test::expectErrorContaining([&] {
      ops::attention(ctx(), seq, p.q, p.k, p.v, bufferSink(out), {.coopBlocks = ops::FlashCoopBlocks{64, 1, 4, false, true}});
    }, why);
    EXPECT_FALSE(run(p, {}, "no accumulator softmax").coopTile.accumulatorSoftmax);
    return;
  }
  coopTolerance_ = true;
  for (int bkv : {16, 32, 64})
    for (int rows : {1, 2})
      for (int sg : {1, 4}) {
        const ops::FlashCoopBlocks b{bkv, rows, sg, false, true};
        auto i = run(dense(2, 150, 128, 2, 40, 1610 + uint32_t(bkv + rows + sg)), {.coopBlocks = b}, "cm2 D 40");
        EXPECT_TRUE(i.coopTile.accumulatorSoftmax);
        EXPECT_EQ(i.rawInputs, dt() == DType::F16);
        run(dense(1, 33, 64, 3, 80, 1620 + uint32_t(bkv + rows + sg)), {.coopBlocks = b, .allowRawInputs = false},
            "cm2 D 80, expression loads");
      }
  // 8 and 16 subgroups (one or two row tiles), unmasked and masked, raw and expression loads.
  for (int rows : {1, 2})
    for (int sg : {8, 16}) {
      if (rows == 2 && sg == 16) continue;  // 512 staged Q rows: more shared memory than a workgroup has
      const ops::FlashCoopBlocks b{64, rows, sg, false, true};
      const uint32_t seed = 1700 + uint32_t(rows * 100 + sg);
      EXPECT_EQ(run(dense(2, 300, 256, 2, 40, seed), {.coopBlocks = b}, "cm2 wide, D 40").coopTile.subgroups, sg);
      run(dense(1, 70, 77, 2, 40, seed + 1), {.coopBlocks = b}, "cm2 wide, masked, 77 keys, D 40");
      run(dense(1, 33, 128, 2, 80, seed + 2), {.coopBlocks = b, .allowRawInputs = false},
          "cm2 wide, D 80, expression loads");
    }
  run(dense(1, 70, 256, 2, 160, 1630), {.coopBlocks = ops::FlashCoopBlocks{32, 1, 4, false, true}}, "cm2 D 160");
  // fp16 accumulation (scores, block products, both) on SDXL's tile (D 64, 32-key blocks, 8 subgroups), masked too.
  for (int half : {1, 2, 3}) {
    const ops::FlashCoopBlocks b{32, 1, 8, false, true, -1, half};
    run(dense(2, 300, 256, 2, 64, 1632 + uint32_t(half)), {.coopBlocks = b}, "cm2 D 64, fp16 accumulation " + std::to_string(half));
    run(dense(1, 70, 77, 2, 64, 1636 + uint32_t(half)), {.coopBlocks = b}, "cm2 D 64 masked, fp16 accumulation " + std::to_string(half));
  }
  run(dense(1, 17, 32, 1, 33, 1631), {.coopBlocks = ops::FlashCoopBlocks{16, 1, 2, false, true}}, "cm2 D 33");
  if (dt() == DType::F16) {
    EXPECT_TRUE(run(dense(2, 100, 256, 2, 40, 1640), {}, "default, 256 keys").coopTile.accumulatorSoftmax);
    const auto cross = run(dense(2, 100, 77, 2, 40, 1641), {}, "default, 77 keys");
    EXPECT_TRUE(cross.coopTile.accumulatorSoftmax);
    EXPECT_TRUE(cross.coopTile.maskKeys);
    EXPECT_FALSE(run(dense(2, 64, 64, 2, 40, 1642), {.causal = true}, "default, causal").coopTile.accumulatorSoftmax);
  }
  // Keys past Sk masked in the last block: a partial 16-key tile (77 = 64 + 13), whole masked tiles after it
  // (13 keys in a 64-key block), a partial block with no partial tile (48 keys in 64-key blocks), one key; every
  // block size, raw and expression loads, D 40 (ones column), 80 and 160.
  for (int bkv : {16, 32, 64}) {
    const ops::FlashCoopBlocks b{bkv, 1, 4, false, true};
    auto i = run(dense(2, 70, 77, 2, 40, 1650 + uint32_t(bkv)), {.coopBlocks = b}, "cm2 masked, 77 keys, D 40");
    EXPECT_TRUE(i.coopTile.maskKeys);
    run(dense(1, 33, 13, 3, 80, 1660 + uint32_t(bkv)), {.coopBlocks = b, .allowRawInputs = false},
        "cm2 masked, 13 keys, D 80, expression loads");
    if (bkv == 64) run(dense(1, 20, 48, 2, 40, 1670), {.coopBlocks = b}, "cm2 masked, 48 keys in a 64-key block");
  }
  run(dense(2, 64, 77, 2, 160, 1680), {.coopBlocks = ops::FlashCoopBlocks{32, 1, 4, false, true}},
      "cm2 masked, 77 keys, D 160");
  run(dense(1, 40, 1, 2, 40, 1681), {.coopBlocks = ops::FlashCoopBlocks{16, 1, 4, false, true}}, "cm2 masked, one key");
  Problem p = dense(1, 20, 77, 2, 40, 1690);
  TensorView out = output(p.q.shape());
  CommandSequence seq(ctx());
  test::expectErrorContaining([&] {
    ops::attention(ctx(), seq, p.q, p.k, p.v, bufferSink(out),
                   {.causal = true, .coopBlocks = ops::FlashCoopBlocks{16, 1, 4, false, true}});
  }, "a causal mask");
}

// fp16 storage only (instantiated below): fp32 leaves change nothing in the emulated kernel's code, and each
// kernel takes llvmpipe ~9 s to compile.
class AttentionF16Test : public AttentionTest {};

TEST_P(AttentionF16Test, TensorCoreKernelEmulated) {
  // The same kernel code on every device, with cooperative matrices emulated in shared memory
  // (coop_emulation.slang, one subgroup per workgroup): indexing, masking, online softmax and epilogue.
  coopTolerance_ = true;
  tensorCoreShapes({.coopEmulation = true}, false);
  // Two row tiles per subgroup, 16-key blocks (with a causal mask).
  auto info = run(dense(1, 70, 77, 2, 72, 1500), {.coopBlocks = ops::FlashCoopBlocks{32, 2, 1}, .coopEmulation = true},
                  "blocks 32 x 2");
  EXPECT_EQ(info.coopTile.bq(), 32);
  run(dense(1, 50, 50, 1, 24, 1501), {.causal = true, .coopBlocks = ops::FlashCoopBlocks{16, 2, 1},
                                      .coopEmulation = true}, "causal blocks 16 x 2");
  // Double-buffered K/V: five key blocks (the last partial) alternating between the halves; causal too.
  info = run(dense(1, 40, 77, 2, 40, 1503), {.coopBlocks = ops::FlashCoopBlocks{16, 1, 1, true}, .coopEmulation = true},
             "double-buffered 16");
  EXPECT_TRUE(info.coopTile.doubleBuffer && info.rawInputs);
  run(dense(1, 50, 50, 1, 24, 1504), {.causal = true, .coopBlocks = ops::FlashCoopBlocks{16, 2, 1, true},
                                      .coopEmulation = true, .allowRawInputs = false},
      "causal double-buffered, expression loads");
  Problem p = dense(1, 8, 8, 1, 40, 1502);
  TensorView out = output(p.q.shape());
  CommandSequence seq(ctx());
  test::expectErrorContaining([&] {
    ops::attention(ctx(), seq, p.q, p.k, p.v, bufferSink(out),
                   {.coopBlocks = ops::FlashCoopBlocks{32, 1, 4}, .coopEmulation = true});
  }, "one subgroup per workgroup");
  test::expectErrorContaining([&] {
    ops::attention(ctx(), seq, p.q, p.k, p.v, bufferSink(out), {.blocks = ops::FlashBlocks{32, 32, 4}, .coop = true});
  }, "both requested");
}

TEST_P(AttentionF16Test, AccumulatorSoftmaxKernelEmulated) {
  // flash_coop2.slang on software matrices (row reductions, element access and accumulator -> operand conversions
  // emulated too): the ones column (D 40), a masked last block (77 keys), expression loads (D 80), and the fp16
  // accumulation of the scores and of each block's P V (FlashCoopBlocks::halfAccumulate) at SDXL's D 64.
  coopTolerance_ = true;
  auto blocks = [](int bkv, int half) { return ops::FlashCoopBlocks{bkv, 1, 1, false, true, -1, half}; };
  auto info = run(dense(1, 40, 64, 2, 40, 1710), {.coopBlocks = blocks(32, 0), .coopEmulation = true}, "cm2 emulated D 40");
  EXPECT_TRUE(info.coopTile.accumulatorSoftmax && info.rawInputs);
  EXPECT_TRUE(run(dense(1, 20, 77, 1, 64, 1711), {.coopBlocks = blocks(32, 0), .coopEmulation = true},
                  "cm2 emulated, masked, D 64").coopTile.maskKeys);
  run(dense(1, 20, 48, 1, 80, 1712), {.coopBlocks = blocks(16, 0), .coopEmulation = true, .allowRawInputs = false},
      "cm2 emulated, expression loads, D 80");
  for (int half : {1, 2, 3})
    EXPECT_EQ(run(dense(1, 36, 96, 2, 64, 1720 + uint32_t(half)), {.coopBlocks = blocks(32, half), .coopEmulation = true},
                  "cm2 emulated, fp16 accumulation " + std::to_string(half) + ", D 64")
                  .coopTile.halfAccumulate, half);
  Problem p = dense(1, 8, 8, 1, 40, 1730);
  TensorView out = output(p.q.shape());
  CommandSequence seq(ctx());
  test::expectErrorContaining([&] {
    ops::attention(ctx(), seq, p.q, p.k, p.v, bufferSink(out),
                   {.coopBlocks = ops::FlashCoopBlocks{16, 1, 1, false, false, -1, 1}, .coopEmulation = true});
  }, "the accumulator-softmax kernel");
}

INSTANTIATE_TEST_SUITE_P(Attention, AttentionTest, ::testing::Values(DType::F32, DType::F16),
                         [](const auto& info) { return std::string(dtypeName(info.param)); });
INSTANTIATE_TEST_SUITE_P(Attention, AttentionF16Test, ::testing::Values(DType::F16),
                         [](const auto& info) { return std::string(dtypeName(info.param)); });

// Host-only: every head dimension gets a tile within lavapipe's and the H100's limits.
TEST(AttentionTiles, FitDeviceLimits) {
  for (uint32_t shared : {32768u, 49152u})
    for (int64_t d : {1, 8, 12, 33, 40, 64, 80, 100, 128, 160, 200, 256}) {
      ops::FlashTile t = ops::chooseFlashTile(d, shared, 1024);
      EXPECT_LE(t.sharedBytes(), shared) << t.describe();
      EXPECT_GE(4 * t.c4, d) << t.describe();
      EXPECT_EQ(t.bkv % t.tpr, 0) << t.describe();
      EXPECT_EQ(t.d != 0, ops::attentionHeadDimSpecialized(d)) << t.describe();
    }
  EXPECT_EQ(ops::chooseFlashTile(160, 49152, 1024).bkv, 16) << "the H100's 48 KiB allows larger key blocks";
  EXPECT_THROW(ops::chooseFlashTile(257, 49152, 1024), Error);
  EXPECT_THROW(ops::chooseFlashTile(160, 8192, 1024), Error);
}

// Host-only: the tensor-core tile choice within the H100's limits, its rules, and the device conditions.
TEST(AttentionCoopTiles, ChoiceAndDeviceConditions) {
  for (int64_t d : {1, 8, 24, 33, 40, 64, 72, 80, 100, 128, 160, 200, 256}) {
    auto t = ops::chooseFlashCoopTile(d, 4096, 49152, 1024);
    ASSERT_TRUE(t.has_value()) << d;
    EXPECT_LE(t->sharedBytes(), 49152u) << t->describe();
    EXPECT_EQ(t->dp % 16, 0);
    EXPECT_TRUE(t->dp >= d && t->dp - d < 16) << t->describe();
    EXPECT_EQ(t->subgroups, 4) << t->describe();
    EXPECT_EQ(t->rowTiles, 1) << t->describe();
    EXPECT_EQ(t->bkv, d > 128 ? 32 : 16) << t->describe();
    EXPECT_FALSE(t->doubleBuffer) << "measured slower on the H100";
  }
  auto choose = [](int64_t d, int64_t sq) { return *ops::chooseFlashCoopTile(d, sq, 49152, 1024); };
  EXPECT_EQ(choose(160, 64).subgroups, 4) << "8x8 latents: 64 query rows";
  EXPECT_EQ(choose(64, 77).subgroups, 4);
  EXPECT_EQ(choose(64, 20).subgroups, 2) << "no more 16-row tiles than rows";
  EXPECT_EQ(choose(64, 9).subgroups, 1);
  EXPECT_EQ(ops::chooseFlashCoopTile(64, 4096, 49152, 1024, 1)->subgroups, 1) << "the emulation's cap";
  EXPECT_TRUE(choose(40, 4096).prefetch);
  EXPECT_EQ(ops::chooseFlashCoopTile(256, 4096, 45000, 1024)->bkv, 16) << "32-key blocks do not fit, 16 do";
  EXPECT_FALSE(ops::chooseFlashCoopTile(257, 64, 49152, 1024).has_value());
  EXPECT_FALSE(ops::chooseFlashCoopTile(256, 64, 8192, 1024).has_value());
  EXPECT_THROW(ops::makeFlashCoopTile(40, {48, 1, 4}), Error);
  EXPECT_THROW(ops::makeFlashCoopTile(40, {32, 3, 4}), Error);
  EXPECT_EQ(ops::makeFlashCoopTile(40, {16, 1, 4, true}).kvRows(), 64) << "2 x (K + V) x 16 keys = 64 = Q rows";
  EXPECT_EQ(ops::makeFlashCoopTile(40, {32, 1, 2, true}).kvRows(), 128);
  EXPECT_THROW(ops::makeFlashCoopTile(300, {32, 1, 4}), Error);
  // The register prefetch: the rule's unless forced (measurements, attention_bench cm2:...,P); a double buffer
  // always prefetches.
  EXPECT_TRUE(ops::makeFlashCoopTile(64, {16, 1, 4, false, true}).prefetch);
  EXPECT_FALSE(ops::makeFlashCoopTile(64, {16, 1, 4, false, true, 0}).prefetch);
  EXPECT_TRUE(ops::makeFlashCoopTile(64, {16, 1, 4, false, true, 1}).prefetch);
  EXPECT_THROW(ops::makeFlashCoopTile(40, {16, 1, 4, true, false, 0}), Error);
  // 8 and 16 subgroups: the accumulator-softmax kernel only.
  EXPECT_THROW(ops::makeFlashCoopTile(40, {64, 1, 8}), Error);
  const ops::FlashCoopTile wide = ops::makeFlashCoopTile(40, {64, 1, 8, false, true});
  EXPECT_EQ(wide.threads(), 256);
  EXPECT_EQ(wide.kvRows(), 128) << "2 x 64 K/V rows = the 128 staged Q rows";
  EXPECT_EQ(ops::makeFlashCoopTile(40, {64, 1, 16, false, true}).threads(), 512);
  EXPECT_THROW(ops::makeFlashCoopTile(40, {64, 1, 32, false, true}), Error);

  DeviceInfo info;
  EXPECT_NE(ops::flashCoopUnsupportedReason(info).find("VK_KHR_cooperative_matrix"), std::string::npos);
  info.coopMatrixKHR = true;
  info.coopMatrixShapes = {{16, 16, 16, "f16", "f16", "f32", "f32", "subgroup"}};
  info.subgroupSize = 32;
  info.shaderFloat16 = true;
  EXPECT_TRUE(ops::flashCoopSupported(info));
  info.subgroupSize = 64;
  EXPECT_NE(ops::flashCoopUnsupportedReason(info).find("subgroup size 64"), std::string::npos);
  info.subgroupSize = 32;
  info.coopMatrixShapes = {{16, 16, 16, "f16", "f16", "f16", "f16", "subgroup"}};
  EXPECT_NE(ops::flashCoopUnsupportedReason(info).find("16x16x16"), std::string::npos);
}

// Host-only (no device needs it): the tensor-core kernel compiles to SPIR-V for the SD head dimensions and
// odd ones, every block shape, causal and element-wise variants, so a device without cooperative matrices
// (CI on lavapipe) still catches a kernel that would not build on the H100.
// Which views the tensor-core kernel reads as raw fp16 rows (no device needed).
TEST(AttentionCoopTiles, RawHalfHeadsContract) {
  auto view = [](uint64_t address, DType dt, Shape shape, Shape strides) {
    TensorView t;
    t.address = address;
    t.dtype = dt;
    t.shape = std::move(shape);
    t.strides = std::move(strides);
    return buffer(t);
  };
  // One part of a fused [2, 77, 3 * 320] QKV projection as 8 heads of 40.
  auto r = ops::rawHalfHeads(view(4096 + 640, DType::F16, {2, 77, 8, 40}, {77 * 960, 960, 40, 1}));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->address, 4096u + 640u);
  EXPECT_EQ(r->strideB, 77 * 960);
  EXPECT_EQ(r->strideS, 960);
  EXPECT_EQ(r->strideH, 40);
  EXPECT_FALSE(ops::rawHalfHeads(view(4096 + 8, DType::F16, {2, 77, 8, 40}, {77 * 960, 960, 40, 1})))
      << "start not 16-byte aligned";
  EXPECT_FALSE(ops::rawHalfHeads(view(4096, DType::F32, {2, 77, 8, 40}, {77 * 960, 960, 40, 1}))) << "fp32";
  EXPECT_FALSE(ops::rawHalfHeads(view(4096, DType::F16, {2, 77, 8, 36}, {77 * 864, 864, 36, 1}))) << "D % 8";
  EXPECT_FALSE(ops::rawHalfHeads(view(4096, DType::F16, {2, 77, 8, 40}, {77 * 964, 964, 40, 1}))) << "row stride % 8";
  EXPECT_TRUE(ops::rawHalfHeads(view(4096, DType::F16, {2, 77, 8, 40}, {8 * 77 * 40, 40, 77 * 40, 1})))
      << "head-major K read as [B, S, H, D]";
  EXPECT_FALSE(ops::rawHalfHeads(view(4096, DType::F16, {1, 70000, 1, 40}, {0, 40000, 0, 1})))
      << "element offsets beyond 2^31";
  EXPECT_FALSE(ops::rawHalfHeads(reshape(view(4096, DType::F16, {2, 77, 320}, {77 * 320, 320, 1}), {2, 77, 8, 40}) *
                                 constant(2.f)))
      << "a computed value";
}

TEST(AttentionCoopTiles, AccumulatorSoftmaxChoiceAndContract) {
  // The rule measured on the H100 and H200 (docs/dispatch.md): the largest key block dividing Sk, one row tile
  // per subgroup, 8 subgroups from 1024 query rows on (4 below), only K/V in shared memory.
  auto t = *ops::chooseFlashCoop2Tile(40, 4096, 4096, 49152, 1024);
  EXPECT_TRUE(t.accumulatorSoftmax);
  EXPECT_EQ(t.bkv, 64);
  EXPECT_EQ(t.rowTiles, 1);
  EXPECT_EQ(t.subgroups, 8);
  EXPECT_EQ(t.sharedBytes(), uint32_t(2 * 128 * (48 + 8) + 16 * 16 * 4)) << "K/V rows and the ones column's mask";
  EXPECT_EQ(ops::chooseFlashCoop2Tile(40, 4096, 4096, 49152, 128)->subgroups, 4) << "256 invocations do not fit";
  t = *ops::chooseFlashCoop2Tile(80, 1024, 1024, 49152, 1024);
  EXPECT_EQ(t.rowTiles, 1);
  EXPECT_EQ(t.subgroups, 8);
  EXPECT_EQ(t.sharedBytes(), uint32_t(2 * 128 * (80 + 8))) << "D 80 fills its padded head: no ones column";
  EXPECT_EQ(ops::chooseFlashCoop2Tile(80, 1023, 1024, 49152, 1024)->subgroups, 4) << "below 1024 query rows";
  t = *ops::chooseFlashCoop2Tile(64, 4096, 4096, 49152, 1024);
  EXPECT_EQ(t.bkv, 32) << "D 64 with 8 subgroups: 32-key blocks";
  EXPECT_EQ(t.subgroups, 8);
  EXPECT_EQ(ops::chooseFlashCoop2Tile(64, 256, 256, 49152, 1024)->bkv, 64) << "4 subgroups: 64-key blocks";
  t = *ops::chooseFlashCoop2Tile(64, 1024, 77, 49152, 1024);
  EXPECT_EQ(t.subgroups, 8) << "the text's 77 keys, masked";
  EXPECT_TRUE(t.maskKeys);
  EXPECT_EQ(ops::chooseFlashCoop2Tile(80, 64, 96, 49152, 1024)->bkv, 32) << "96 keys: 32-key blocks";
  EXPECT_EQ(ops::chooseFlashCoop2Tile(160, 256, 256, 49152, 1024)->bkv, 32) << "beyond D 128: 32-key blocks";
  EXPECT_EQ(ops::chooseFlashCoop2Tile(160, 256, 48, 49152, 1024)->bkv, 16);
  EXPECT_EQ(ops::chooseFlashCoop2Tile(160, 16, 48, 49152, 1024)->subgroups, 1);
  // No block divides 77 keys: the first whose padding stays within a quarter of Sk (96 rows of 32), masked.
  t = *ops::chooseFlashCoop2Tile(40, 4096, 77, 49152, 1024);
  EXPECT_EQ(t.bkv, 32);
  EXPECT_TRUE(t.maskKeys);
  EXPECT_EQ(t.sharedBytes(), uint32_t(2 * 128 * (48 + 8) + 2 * 16 * 16 * 4)) << "the ones column's and the key mask";
  EXPECT_EQ(ops::chooseFlashCoop2Tile(160, 256, 77, 49152, 1024)->bkv, 32);
  EXPECT_EQ(ops::chooseFlashCoop2Tile(80, 1024, 20, 49152, 1024)->bkv, 16) << "20 keys: only 16 pads within 25 %";
  EXPECT_FALSE(ops::chooseFlashCoop2Tile(80, 1024, 1024, 49152, 1024)->maskKeys);
  EXPECT_FALSE(ops::chooseFlashCoop2Tile(256, 4096, 4096, 16384, 1024).has_value()) << "nothing fits 16 KiB";
  EXPECT_THROW(ops::makeFlashCoopTile(40, {16, 1, 4, true, true}), Error) << "no double-buffered variant";

  DeviceInfo d;
  d.coopMatrixKHR = true;
  d.subgroupSize = 32;
  d.shaderFloat16 = true;
  d.coopMatrixShapes = {{16, 16, 16, "f16", "f16", "f32", "f32", "subgroup"}};
  EXPECT_NE(ops::flashCoop2UnsupportedReason(d, false, 128, 64).find("VK_NV_cooperative_matrix2"), std::string::npos);
  d.coopMatrix2Softmax = true;
  EXPECT_EQ(ops::flashCoop2UnsupportedReason(d, false, 128, 64), "");
  EXPECT_NE(ops::flashCoop2UnsupportedReason(d, true, 128, 64).find("causal"), std::string::npos);
  EXPECT_EQ(ops::flashCoop2UnsupportedReason(d, false, 77, 32), "") << "keys past Sk are masked";
  EXPECT_NE(ops::flashCoop2UnsupportedReason(d, false, 0, 16).find("no keys"), std::string::npos);
  EXPECT_NE(ops::flashCoop2UnsupportedReason(d, false, 128, 48).find("48-key block"), std::string::npos);
  EXPECT_EQ(ops::flashCoopCapabilities(t).size(), 3u);
}

TEST(AttentionCoopTiles, RealKernelCompilesToSpirv) {
  const std::filesystem::path cache = std::filesystem::temp_directory_path() / "sdgen-flash-coop-compile-test";
  std::filesystem::remove_all(cache);
  SlangCompiler compiler(defaultSlangc(), defaultShaderDir(), cache.string());
  struct Case {
    int64_t d;
    ops::FlashCoopBlocks blocks;
    bool vector, causal, raw;
  };
  for (const Case& c : {Case{40, {64, 1, 4}, true, false, true}, Case{80, {64, 1, 2}, true, false, false},
                        Case{160, {32, 1, 4}, true, false, true}, Case{160, {32, 1, 1}, true, true, false},
                        Case{64, {16, 2, 4}, true, true, true}, Case{33, {32, 1, 2}, false, false, false},
                        Case{256, {32, 1, 4}, true, false, true}, Case{40, {64, 2, 4}, true, false, true},
                        Case{40, {16, 1, 4, true}, true, false, true}, Case{80, {32, 1, 4, true}, true, true, false},
                        // The accumulator-softmax kernel (flash_coop2.slang).
                        Case{40, {64, 1, 4, false, true}, true, false, true},
                        Case{160, {32, 2, 4, false, true}, true, false, false},
                        Case{33, {16, 1, 2, false, true}, false, false, false},
                        Case{40, {32, 1, 4, false, true}, true, false, true},  // masked below
                        // ... with fp16 scores and block products (HACC 3), SDXL's tile.
                        Case{64, {32, 1, 8, false, true, -1, 3}, true, false, true}}) {
    ops::FlashCoopTile t = ops::makeFlashCoopTile(c.d, c.blocks);
    t.maskKeys = c.d == 40 && c.blocks.bkv == 32;
    KernelSource src;
    src.generated = ops::flashCoopWrapperSource(t, "Buf<20,F16Storage,1,0>", "Buf<27,F16Storage,1,0>",
                                                "Buf<34,F16Storage,1,0>", "BufSink<41,F16Storage>", c.vector, c.causal,
                                                c.raw);
    src.capabilities = ops::flashCoopCapabilities(t);
    src.label = "flash coop " + t.describe();
    std::vector<uint32_t> spirv;
    EXPECT_NO_THROW(spirv = compiler.compile(src)) << src.label;
    EXPECT_GT(spirv.size(), 100u) << src.label;
  }
  std::filesystem::remove_all(cache);
}

}  // namespace
}  // namespace sdgen
