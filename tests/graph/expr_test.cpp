// Every expression and sink node against a float64 CPU reference, in fp32 and fp16 storage, on odd shapes
// (innermost sizes not divisible by 4 take the scalar path) and vector-friendly ones.
#include <cmath>

#include "engine/command_sequence.h"
#include "graph/expr.h"
#include "graph/expr_nodes.h"
#include "ops/elementwise.h"
#include "tests/graph/tensor_fixture.h"

namespace sdgen {
namespace {

using namespace graph;

class ExprTest : public test::TensorTest {
 protected:
  // Elementwise kernels do a handful of fp32 operations per element: hold them to a tighter bar.
  double tolerance() const override { return dt() == DType::F16 ? 5e-3 : 1e-5; }
  Expr input(const Shape& s, uint32_t seed, float lo = -2.f, float hi = 2.f) {
    return TensorTest::input(s, seed, lo, hi);
  }

  // Evaluates `e` into a fresh output of the storage dtype and compares with the reference.
  ops::ElementwiseInfo check(const Expr& e, ops::ElementwiseOptions options = {}) {
    TensorView out = output(e.shape(), dt());
    CommandSequence seq(ctx());
    auto info = ops::elementwise(ctx(), seq, e, bufferSink(out), options);
    seq.run();
    compare(read(out), test::evalReference(e, mem_));
    return info;
  }
  void compare(const std::vector<float>& got, const std::vector<double>& ref) {
    TensorTest::compare(got, ref, "expression");
  }
};

const Shape kOdd = {2, 3, 5, 7};   // innermost 7: scalar path
const Shape kVec = {2, 3, 4, 8};   // innermost 8: vector path

TEST_P(ExprTest, UnaryOps) {
  for (const Shape& s : {kOdd, kVec}) {
    Expr x = input(s, 1), pos = input(s, 2, 0.1f, 2.f);
    for (auto op : {UnaryOp::Neg, UnaryOp::Abs, UnaryOp::Exp, UnaryOp::Sin, UnaryOp::Cos, UnaryOp::Tanh,
                    UnaryOp::Sigmoid, UnaryOp::Relu, UnaryOp::Silu, UnaryOp::Gelu, UnaryOp::GeluTanh,
                    UnaryOp::QuickGelu})
      check(unary(op, x));
    for (auto op : {UnaryOp::Log, UnaryOp::Sqrt, UnaryOp::Rsqrt}) check(unary(op, pos));
    check(clamp(x, -0.5f, 0.75f));
  }
}

TEST_P(ExprTest, BinaryOpsWithBroadcasting) {
  for (const Shape& s : {kOdd, kVec}) {
    Expr a = input(s, 3), b = input(s, 4), nonzero = input(s, 5, 0.5f, 2.f);
    Expr bias = input({s[3]}, 6), perBatch = input({s[0], 1, 1, s[3]}, 7), perRow = input({1, s[1], 1, 1}, 8);
    check(a + b);
    check(a - bias);
    check(a * perBatch);
    check(a / nonzero);
    check(min(a, perRow));
    check(max(bias, a));
    check(a + constant(0.25f) * b);
    check(silu(bias) + a);  // broadcast of a non-buffer expression
  }
}

TEST_P(ExprTest, UniformChangesBetweenReplays) {
  Expr x = input(kVec, 9);
  TensorView out = output(kVec, dt());
  CommandSequence seq(ctx());
  ops::elementwise(ctx(), seq, x * uniform(5), bufferSink(out));
  seq.end();
  for (float u : {2.f, -0.5f}) {
    seq.setUniform(5, u);
    seq.run();
    auto ref = test::evalReference(x * constant(u), mem_);
    compare(read(out), ref);
  }
}

TEST_P(ExprTest, LayoutNodes) {
  Expr x = input({2, 3, 4, 8}, 10), y = input({2, 3, 5, 6}, 11), z = input({2, 6, 4, 8}, 12);
  check(reshape(x, {6, 4, 8}));
  check(reshape(permute(y, {0, 2, 1, 3}), {2, 5, 18}));  // reshape of a non-dense view: a Reshape node
  // Reshapes that strides express fold into the view: a fused projection's part split into heads, merged
  // leading axes of a slice, size-1 axes.
  Expr heads = reshape(sliceLastDim(reshape(x, {6, 4, 8}), 4, 4), {6, 4, 2, 2});
  EXPECT_EQ(heads.node().kind, ExprKind::Buffer);
  EXPECT_EQ(heads.node().tensor.strides, (Shape{32, 8, 2, 1}));
  check(heads);
  Expr merged = reshape(slice(x, 3, 2, 5), {6, 4, 5});
  EXPECT_EQ(merged.node().kind, ExprKind::Buffer);
  EXPECT_EQ(merged.node().tensor.strides, (Shape{32, 8, 1}));
  check(merged);
  check(reshape(slice(x, 2, 1, 2), {6, 2, 8, 1}));
  EXPECT_EQ(reshape(slice(x, 3, 0, 4), {2, 3, 16}).node().kind, ExprKind::Reshape);  // 4 of 8 columns: no stride
  check(reshape(slice(x, 3, 0, 4), {2, 3, 16}));
  check(reshape(silu(x), {2, 12, 8}));                   // Reshape node over an expression, vector path
  check(permute(x, {0, 3, 1, 2}));                      // NHWC -> NCHW read: strided buffer
  check(permute(silu(y), {2, 0, 3, 1}));                 // Perm node
  check(transpose(exp(x), 1, 2));
  check(slice(y, 2, 1, 3));
  check(slice(exp(x), 3, 4, 4));                         // Slice node on the innermost axis, aligned
  check(slice(exp(y), 1, 1, 2));
  Expr geglu = input({2, 5, 16}, 13);
  check(sliceLastDim(geglu, 0, 8) * gelu(sliceLastDim(geglu, 8, 8)));
  check(concat(x, exp(z), 1));
  check(concat(y, sin(y), 3));                          // innermost, 6 + 6: not a multiple of 4
  check(concat(x, x * constant(2.f), 3));               // innermost, 8 + 8
  check(upsample2x(y));
  check(upsample2x(silu(x)));
  check(resizeNearest(y, 5, 9));        // diffusers' upsampling to an odd skip size (3 -> 5, 5 -> 9)
  check(resizeNearest(silu(x), 7, 3));  // any size, shrinking too
  Expr groups = input({2, 1, 1, 2}, 14);
  auto splat = check(repeatInterleave(groups, 3, 4) * x);  // innermost factor 4: one read splat to 4 lanes
  EXPECT_EQ(splat.scalarWrappedNodes, 0) << splat.exprType;
  auto wrapped = check(repeatInterleave(groups, 3, 6) + constant(1.f));  // 12 lanes, factor 6: scalar reads
  EXPECT_TRUE(wrapped.vector);
  EXPECT_EQ(wrapped.scalarWrappedNodes, 1) << wrapped.exprType;
  check(repeatInterleave(groups, 3, 3));  // innermost 6: scalar kernel
  check(repeatInterleave(exp(y), 1, 2));  // outer axis
}

TEST_P(ExprTest, Gather) {
  Expr table = input({10, 8}, 14), oddTable = input({10, 5}, 15);
  std::vector<int32_t> idx = {3, 0, 9, 9, 1, 4, 7, 2, 5, 6};
  Allocation ia = mem_.uploadIndices(ctx(), idx);
  check(gather(table, indexView(ia, {2, 5})));
  check(gather(oddTable, indexView(ia, {10})));
  check(gather(table, indexView(ia, {2, 5})) + constant(1.f));
}

TEST_P(ExprTest, Sinks) {
  Expr x = input({2, 3, 5, 8}, 16);
  // permute sink: NHWC value written as NCHW.
  TensorView nchw = output({2, 8, 3, 5}, dt());
  // partition: [2, 4, 12] into three [2, 4, 4] parts (fused QKV projection layout).
  Expr qkv = input({2, 4, 12}, 17);
  TensorView q = output({2, 4, 4}, dt()), k = output({2, 4, 4}, dt()), v = output({2, 4, 4}, dt());
  // map and residual add.
  Expr bias = input({8}, 18), residual = input({2, 3, 5, 8}, 19);
  TensorView mapped = output({2, 3, 5, 8}, dt()), added = output({2, 3, 5, 8}, dt());
  CommandSequence seq(ctx());
  ops::elementwise(ctx(), seq, x, permute(bufferSink(nchw), {0, 3, 1, 2}));
  ops::elementwise(ctx(), seq, qkv, partition({bufferSink(q), bufferSink(k), bufferSink(v)}, 2));
  ops::elementwise(ctx(), seq, x, map(silu(kernelOutput(x.shape()) + bias), bufferSink(mapped)));
  ops::elementwise(ctx(), seq, x, residualAdd(bufferSink(added), residual));
  seq.run();
  compare(read(nchw), test::evalReference(permute(x, {0, 3, 1, 2}), mem_));
  compare(read(q), test::evalReference(sliceLastDim(qkv, 0, 4), mem_));
  compare(read(k), test::evalReference(sliceLastDim(qkv, 4, 4), mem_));
  compare(read(v), test::evalReference(sliceLastDim(qkv, 8, 4), mem_));
  compare(read(mapped), test::evalReference(silu(x + bias), mem_));
  compare(read(added), test::evalReference(x + residual, mem_));
}

// graph::subPixel: value [4N, H, W, C] row p * N + n lands at (n, 2y + p / 2, 2x + p % 2) of the sink, through a
// residual add that reads the sink's own coordinates; vector (C 8) and scalar (C 3) stores. Odd sinks are refused.
TEST_P(ExprTest, SubPixelSinkPlacesEachPhase) {
  for (int64_t c : {8, 3}) {
    SCOPED_TRACE(c);
    const int64_t n = 2, h = 3, w = 5;
    Expr x = input({4 * n, h, w, c}, 30), residual = input({n, 2 * h, 2 * w, c}, 31);
    TensorView out = output({n, 2 * h, 2 * w, c}, dt());
    CommandSequence seq(ctx());
    ops::elementwise(ctx(), seq, x, subPixel(residualAdd(bufferSink(out), residual)));
    seq.run();
    const std::vector<double> xv = test::evalReference(x, mem_), rv = test::evalReference(residual, mem_);
    std::vector<double> ref(rv.size());
    for (int64_t i = 0; i < 4 * n * h * w * c; ++i) {
      const int64_t ch = i % c, xx = (i / c) % w, y = (i / (c * w)) % h, q = i / (c * w * h), p = q / n, img = q % n;
      const int64_t o = ((img * 2 * h + 2 * y + p / 2) * 2 * w + 2 * xx + p % 2) * c + ch;
      ref[size_t(o)] = xv[size_t(i)] + rv[size_t(o)];
    }
    compare(read(out), ref);
  }
  TensorView odd = output({1, 3, 4, 8}, dt());
  EXPECT_THROW(subPixel(bufferSink(odd)), Error);
}

TEST_P(ExprTest, VectorAndScalarPathsAgreeAndVectorIsChosenWhenAligned) {
  Expr a = input({2, 3, 4, 12}, 20), bias = input({12}, 21);
  Expr e = silu(a * constant(1.5f) + bias);
  TensorView vecOut = output(a.shape(), dt()), scalarOut = output(a.shape(), dt());
  CommandSequence seq(ctx());
  auto vec = ops::elementwise(ctx(), seq, e, bufferSink(vecOut));
  auto scalar = ops::elementwise(ctx(), seq, e, bufferSink(scalarOut), {.vector = false});
  seq.run();
  EXPECT_TRUE(vec.vector);
  EXPECT_FALSE(scalar.vector);
  EXPECT_EQ(vec.scalarWrappedNodes, 0) << vec.exprType;
  EXPECT_EQ(vec.nativeVectorNodes, 3) << vec.exprType << " / " << vec.sinkType;  // a, bias, the output
  EXPECT_EQ(read(vecOut), read(scalarOut));

  // The same tree over a tensor that starts one element into its allocation: not 16-byte aligned, so the
  // kernel still runs in vector mode but that leaf is read with scalar loads.
  std::vector<float> values = test::randomFloats(numel(a.shape()) + 1, 22);
  keep_.push_back(mem_.upload(ctx(), values, dt()));
  Expr shifted = buffer(view(keep_.back(), dt(), a.shape(), dtypeSize(dt())));
  auto info = check(silu(shifted * constant(1.5f) + bias));
  EXPECT_TRUE(info.vector);
  EXPECT_EQ(info.scalarWrappedNodes, 1) << info.exprType;
  EXPECT_NE(info.exprType.find("Scalar4<Buf<"), std::string::npos) << info.exprType;
}

TEST_P(ExprTest, LinearPathForDenseTrees) {
  Expr a = input({3, 5, 7, 8}, 23), bias = input({8}, 24);
  auto info = check(gelu(a) + bias);
  EXPECT_TRUE(info.linear) << info.exprType;
  auto strided = check(permute(a, {0, 2, 1, 3}) + bias);
  EXPECT_FALSE(strided.linear);
}

TEST_P(ExprTest, InteriorAndBorderDispatchWriteEachElementExactlyOnce) {
  // 7*13*20 = 1820 elements = 455 vector items: one whole interior workgroup and a partial border one.
  for (const Shape& s : {Shape{7, 13, 20}, Shape{3, 1000, 9}, Shape{256}}) {
    TensorView out = output(s, DType::F32);
    CommandSequence seq(ctx());
    seq.fill(keep_.back(), 0, keep_.back().size(), 0);  // zero, then add 1 once per element
    auto info = ops::elementwise(ctx(), seq, constant(1.f), accumulate(out));
    seq.run();
    int64_t items = numel(s) / (info.vector ? 4 : 1);
    EXPECT_EQ(info.dispatches, (items >= 256 ? 1 : 0) + (items % 256 ? 1 : 0)) << shapeString(s);
    for (float v : read(out)) ASSERT_EQ(v, 1.f) << shapeString(s);
  }
}

TEST_P(ExprTest, SameStructureNeverRecompiles) {
  auto run = [&](const Shape& s, uint32_t seed) {
    Expr a = input(s, seed), b = input({s.back()}, seed + 1);
    check(silu(a) * b + constant(float(seed)));
  };
  run({2, 9, 7, 40}, 30);  // 2520 vector items: interior + border variants
  size_t kernels = ctx().kernels().size();
  uint64_t compiled = ctx().compiler().stats().compiled;
  run({1, 33, 3, 28}, 40);  // other buffers, sizes and constant; same structure
  EXPECT_EQ(ctx().kernels().size(), kernels);
  EXPECT_EQ(ctx().compiler().stats().compiled, compiled);
}

TEST_P(ExprTest, ShapeErrorsNameTheOperation) {
  Expr a = input({2, 3, 4}, 50), b = input({2, 5, 4}, 51);
  test::expectErrorContaining([&] { return a + b; }, "cannot be broadcast");
  test::expectErrorContaining([&] { return reshape(a, {5, 5}); }, "reshape");
  test::expectErrorContaining([&] { return permute(a, {0, 0, 1}); }, "not a permutation");
  test::expectErrorContaining([&] { return slice(a, 1, 2, 2); }, "slice");
  test::expectErrorContaining([&] { return concat(a, b, 2); }, "differ on axis 1");
  test::expectErrorContaining([&] { return transpose(a, 0, 5); }, "axis 5 out of range");
  test::expectErrorContaining([&] { return upsample2x(a); }, "rank 4");
  test::expectErrorContaining([&] { return buffer(view(keep_[0], dt(), {1, 2, 3, 4, 5})); }, "rank");
  test::expectErrorContaining([&] {
    TensorView o = output({2, 3, 4}, dt());
    CommandSequence seq(ctx());
    ops::elementwise(ctx(), seq, b, bufferSink(o));
  }, "cannot be broadcast");
}

INSTANTIATE_TEST_SUITE_P(DTypes, ExprTest, ::testing::Values(DType::F32, DType::F16),
                         [](const auto& info) { return std::string(dtypeName(info.param)); });

}  // namespace
}  // namespace sdgen
