// The graph executor: a small graph (group normalization from a reduction -> silu -> residual add, twice,
// then a permute) fused into fewer launches than it has operations, checked against a float64 reference,
// with a memory plan that reuses intermediate buffers, replayed with a new runtime scalar.
#include <cmath>

#include "graph/executor.h"
#include "graph/memory_planner.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

using namespace graph;

TEST(MemoryPlanner, DisjointLifetimesShareBytes) {
  // a [0,1], b [1,2], c [2,3]: a and c never coexist.
  auto plan = planMemory({{1000, 0, 1}, {500, 1, 2}, {1000, 2, 3}}, 256);
  EXPECT_EQ(plan.offsets[0], plan.offsets[2]);
  EXPECT_NE(plan.offsets[0], plan.offsets[1]);
  EXPECT_EQ(plan.naiveBytes, 1024u + 512u + 1024u);
  EXPECT_EQ(plan.peakBytes, 1024u + 512u);
}

TEST(MemoryPlanner, OverlappingLifetimesNeverOverlapInMemory) {
  std::vector<LiveTensor> t;
  for (int i = 0; i < 40; ++i) t.push_back({uint64_t(100 + 37 * (i % 7)), i % 11, i % 11 + i % 5});
  auto plan = planMemory(t, 64);
  for (size_t i = 0; i < t.size(); ++i)
    for (size_t j = 0; j < i; ++j) {
      bool timeOverlap = t[i].firstStep <= t[j].lastStep && t[j].firstStep <= t[i].lastStep;
      bool memOverlap = plan.offsets[i] < plan.offsets[j] + t[j].bytes && plan.offsets[j] < plan.offsets[i] + t[i].bytes;
      EXPECT_FALSE(timeOverlap && memOverlap) << i << " " << j;
      EXPECT_EQ(plan.offsets[i] % 64, 0u);
    }
  EXPECT_LE(plan.peakBytes, plan.naiveBytes);
}

class GraphTest : public test::VulkanTest, public ::testing::WithParamInterface<DType> {};

// CPU reference of one block: h = silu(groupnorm(x) * gamma + beta) + x.
std::vector<double> block(const std::vector<double>& x, const std::vector<double>& gamma,
                          const std::vector<double>& beta, int N, int HW, int C, int G, double eps) {
  std::vector<double> out(x.size());
  int cg = C / G;
  for (int n = 0; n < N; ++n)
    for (int g = 0; g < G; ++g) {
      double s = 0, q = 0;
      for (int p = 0; p < HW; ++p)
        for (int c = g * cg; c < (g + 1) * cg; ++c) {
          double v = x[(size_t(n) * HW + p) * C + c];
          s += v;
          q += v * v;
        }
      double cnt = double(HW) * cg, mean = s / cnt, var = q / cnt - mean * mean, rstd = 1 / std::sqrt(var + eps);
      for (int p = 0; p < HW; ++p)
        for (int c = g * cg; c < (g + 1) * cg; ++c) {
          size_t i = (size_t(n) * HW + p) * C + c;
          double y = (x[i] - mean) * rstd * gamma[c] + beta[c];
          out[i] = y / (1 + std::exp(-y)) + x[i];
        }
    }
  return out;
}

TEST_P(GraphTest, FusedNormSiluResidualPermute) {
  DType dt = GetParam();
  const int N = 2, H = 5, W = 6, C = 12, G = 3;
  const float eps = 1e-5f;
  Graph g;
  TensorId x = g.input("x", {N, H, W, C}, dt);
  TensorId gamma = g.input("gamma", {C}, DType::F32), beta = g.input("beta", {C}, DType::F32);
  TensorId out = g.output("out_nchw", {N, C, H, W}, dt);
  TensorId h1 = g.intermediate("h1", {N, H, W, C}, dt);

  auto normSiluResidual = [&](TensorId in, const std::string& name) {
    Value v = g.read(in);
    TensorId stats = g.groupStats(v, G, name + " stats");
    Value y = g.groupNormalize(v, stats, G, eps, g.read(gamma), g.read(beta));
    y = g.map(y, [](const Expr& e) { return silu(e); });
    return g.zip(y, v, [](const Expr& a, const Expr& b) { return a + b; });
  };
  g.store(normSiluResidual(x, "block1"), h1);
  g.store(normSiluResidual(h1, "block2"), out, {0, 3, 1, 2}, "block2 -> NCHW");

  auto xs = test::randomFloats(N * H * W * C, 1, -2.f, 2.f), gs = test::randomFloats(C, 2, 0.5f, 1.5f),
       bs = test::randomFloats(C, 3, -0.5f, 0.5f);
  Allocation dx = test::uploadFloats(ctx(), xs, dt), dg = test::uploadFloats(ctx(), gs, DType::F32),
             db = test::uploadFloats(ctx(), bs, DType::F32);
  Allocation dout = ctx().allocate(xs.size() * dtypeSize(dt), "out");
  test::poison(ctx(), dout);
  CompiledGraph cg(ctx(), g,
                   {{x, view(dx, dt, {N, H, W, C})}, {gamma, view(dg, DType::F32, {C})},
                    {beta, view(db, DType::F32, {C})}, {out, view(dout, dt, {N, C, H, W})}},
                   ctx().info().timestampsSupported);
  cg.run();

  // 2 x (stats, normalize, silu, add) + permute = 9 operations; 4 launches (2 reductions, 2 elementwise).
  EXPECT_EQ(g.logicalOps(), 9);
  EXPECT_EQ(cg.launches(), 4u);
  EXPECT_LT(cg.launches(), size_t(g.logicalOps()));
  // Intermediates: stats1 (dead after h1), h1, stats2: stats2 reuses stats1's bytes.
  EXPECT_LT(cg.memoryPlan().peakBytes, cg.memoryPlan().naiveBytes);
  if (ctx().info().timestampsSupported) {
    auto t = cg.timings();
    ASSERT_EQ(t.size(), 4u);
    EXPECT_EQ(t[0].label, "block1 stats");
    EXPECT_EQ(t[3].label, "block2 -> NCHW");
  }

  std::vector<double> x64(xs.begin(), xs.end()), g64(gs.begin(), gs.end()), b64(bs.begin(), bs.end());
  for (auto& v : x64) v = test::roundTo(dt, float(v));
  auto r1 = block(x64, g64, b64, N, H * W, C, G, eps);
  if (dt == DType::F16)
    for (auto& v : r1) v = test::roundTo(dt, float(v));  // h1 is stored in fp16
  auto r2 = block(r1, g64, b64, N, H * W, C, G, eps);
  auto got = test::downloadFloats(ctx(), dout, xs.size(), dt);
  double tol = dt == DType::F16 ? 1e-2 : 1e-4;
  for (int n = 0; n < N; ++n)
    for (int c = 0; c < C; ++c)
      for (int p = 0; p < H * W; ++p) {
        double ref = r2[(size_t(n) * H * W + p) * C + c];
        float v = got[(size_t(n) * C + c) * H * W + p];
        ASSERT_LE(std::abs(v - ref), tol * std::max(1.0, std::abs(ref))) << n << "," << c << "," << p;
      }
}

TEST_P(GraphTest, ReplaysWithNewUniformWithoutRerecording) {
  DType dt = GetParam();
  Graph g;
  TensorId x = g.input("x", {3, 8}, dt), y = g.output("y", {3, 8}, dt);
  g.store(g.map(g.read(x), [](const Expr& e) { return e * uniform(0); }), y);
  auto xs = test::randomFloats(24, 4);
  Allocation dx = test::uploadFloats(ctx(), xs, dt), dy = ctx().allocate(24 * dtypeSize(dt), "y");
  CompiledGraph cg(ctx(), g, {{x, view(dx, dt, {3, 8})}, {y, view(dy, dt, {3, 8})}});
  for (float t : {1.f, -3.f, 0.5f}) {
    cg.setUniform(0, t);
    cg.run();
    auto got = test::downloadFloats(ctx(), dy, 24, dt);
    for (size_t i = 0; i < 24; ++i) ASSERT_EQ(got[i], test::roundTo(dt, test::roundTo(dt, xs[i]) * t));
  }
}

TEST_P(GraphTest, GraphsShareOneArenaAndRunBackToBack) {
  // Two graphs with intermediates in one SharedArena, of different plan sizes, the larger reserved first: one
  // allocation holds both (the larger plan), and submitted back to back without a wait in between (as the
  // text encoder and the cross-attention K/V are), each still reads its own intermediate: every sequence begins
  // with a full barrier, so the second's writes wait for the first's reads.
  DType dt = GetParam();
  auto twoStep = [&](int64_t n, float scale, float shift, TensorId& x, TensorId& y) {
    auto g = std::make_unique<Graph>();
    x = g->input("x", {n, 8}, dt);
    y = g->output("y", {n, 8}, dt);
    TensorId t = g->intermediate("t", {n, 8}, dt);
    g->store(g->map(g->read(x), [scale](const Expr& e) { return e * constant(scale); }), t);
    g->store(g->map(g->read(t), [shift](const Expr& e) { return e + constant(shift); }), y);
    return g;
  };
  TensorId xa, ya, xb, yb;
  auto ga = twoStep(64, 2.f, 1.f, xa, ya), gb = twoStep(16, 3.f, -1.f, xb, yb);
  const uint64_t planA = planIntermediates(*ga, topologicalOrder(*ga)).peakBytes;
  const uint64_t planB = planIntermediates(*gb, topologicalOrder(*gb)).peakBytes;
  ASSERT_GT(planA, planB);
  SharedArena arena(ctx(), "test arena");
  arena.reserve(planA);
  auto xsA = test::randomFloats(64 * 8, 8), xsB = test::randomFloats(16 * 8, 9);
  Allocation dxa = test::uploadFloats(ctx(), xsA, dt), dya = ctx().allocate(64 * 8 * dtypeSize(dt), "ya");
  Allocation dxb = test::uploadFloats(ctx(), xsB, dt), dyb = ctx().allocate(16 * 8 * dtypeSize(dt), "yb");
  CompiledGraph b(ctx(), *gb, {{xb, view(dxb, dt, {16, 8})}, {yb, view(dyb, dt, {16, 8})}}, false, &arena);
  CompiledGraph a(ctx(), *ga, {{xa, view(dxa, dt, {64, 8})}, {ya, view(dya, dt, {64, 8})}}, false, &arena);
  EXPECT_EQ(arena.bytesHeld(), planA);  // one allocation: B recorded first got what A needs
  EXPECT_EQ(arena.largestRequest(), planA);
  EXPECT_EQ(a.ownArenaBytes(), 0u);
  EXPECT_EQ(b.ownArenaBytes(), 0u);
  auto expect = [&](const Allocation& dy, const std::vector<float>& xs, float scale, float shift) {
    auto got = test::downloadFloats(ctx(), dy, xs.size(), dt);
    for (size_t i = 0; i < xs.size(); ++i)
      ASSERT_EQ(got[i], test::roundTo(dt, test::roundTo(dt, test::roundTo(dt, xs[i]) * scale) + shift)) << i;
  };
  for (int round = 0; round < 3; ++round) {
    a.finishRecording();
    b.finishRecording();
    a.submit();
    b.submit();
    a.wait();
    b.wait();
    expect(dya, xsA, 2.f, 1.f);
    expect(dyb, xsB, 3.f, -1.f);
  }
  // A graph larger than the allocation grows the arena; the old allocation stays for the graphs that use it.
  TensorId xc, yc;
  auto gc = twoStep(256, 0.5f, 0.f, xc, yc);
  auto xsC = test::randomFloats(256 * 8, 10);
  Allocation dxc = test::uploadFloats(ctx(), xsC, dt), dyc = ctx().allocate(256 * 8 * dtypeSize(dt), "yc");
  CompiledGraph c(ctx(), *gc, {{xc, view(dxc, dt, {256, 8})}, {yc, view(dyc, dt, {256, 8})}}, false, &arena);
  const uint64_t planC = c.memoryPlan().peakBytes;
  EXPECT_EQ(arena.bytesHeld(), planA + planC);
  c.run();
  a.run();
  expect(dyc, xsC, 0.5f, 0.f);
  expect(dya, xsA, 2.f, 1.f);
}

TEST_P(GraphTest, BadGraphsAreErrors) {
  DType dt = GetParam();
  Graph g;
  TensorId x = g.input("x", {4, 8}, dt), y = g.output("y", {4, 8}, dt), orphan = g.intermediate("orphan", {4, 8}, dt);
  g.store(g.read(orphan), y);
  Allocation a = ctx().allocate(256, "a");
  EXPECT_THROW(CompiledGraph(ctx(), g, {{x, view(a, dt, {4, 8})}}), Error);  // y unbound
  try {
    CompiledGraph(ctx(), g, {{x, view(a, dt, {4, 8})}, {y, view(a, dt, {4, 8})}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("orphan"), std::string::npos) << e.what();
  }
  EXPECT_THROW(g.store(g.read(x), g.output("z", {8, 4}, dt)), Error);
}

INSTANTIATE_TEST_SUITE_P(DTypes, GraphTest, ::testing::Values(DType::F32, DType::F16),
                         [](const auto& info) { return std::string(dtypeName(info.param)); });

}  // namespace
}  // namespace sdgen
