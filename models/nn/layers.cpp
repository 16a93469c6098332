#include "models/nn/layers.h"

#include <cmath>
#include <cstdlib>

#include "engine/error.h"
#include "models/nn/tensor_views.h"
#include "ops/conv2d_scratch.h"
#include "ops/conv2d_tune.h"
#include "ops/group_norm_rows.h"
#include "ops/group_norm_tiles.h"
#include "ops/layer_norm_rows.h"
#include "ops/linear_gemm.h"
#include "ops/norm.h"
#include "ops/reduce.h"
#include "ops/softmax.h"

namespace sdgen::nn {

using graph::Expr;
using graph::NodeRecorder;
using graph::Resolver;
using graph::Shape;
using graph::Sink;
using graph::TensorId;
using graph::Value;

Epilogue residual(const Value& r) {
  return {{r}, [](const Expr& out, const std::vector<Expr>& in) { return out + in[0]; }};
}

Epilogue activation(std::function<Expr(const Expr&)> f) {
  return {{}, [f](const Expr& out, const std::vector<Expr>&) { return f(out); }};
}

namespace {

std::vector<TensorId> readsOf(const Value& x, const Epilogue& e) {
  std::vector<TensorId> reads = x.reads;
  for (const Value& v : e.inputs) reads.insert(reads.end(), v.reads.begin(), v.reads.end());
  return reads;
}

int opsOf(const Epilogue& e) {
  int n = e ? 1 : 0;
  for (const Value& v : e.inputs) n += v.logicalOps;
  return n;
}

// The sink of a kernel computing `shape`, stored into tensor dst (viewed with that shape), through the epilogue.
Sink makeSink(const Resolver& r, TensorId dst, const Shape& shape, const Epilogue& e) {
  Sink s = graph::bufferSink(reshaped(r.view(dst), shape));
  if (!e) return s;
  std::vector<Expr> inputs;
  for (const Value& v : e.inputs) inputs.push_back(v.build(r));
  return graph::map(e.apply(graph::kernelOutput(shape), inputs), s);
}

void probeEpilogue(const Shape& shape, const Epilogue& e, const std::string& label) {
  if (!e) return;
  std::vector<Expr> inputs;
  for (const Value& v : e.inputs) inputs.push_back(graph::kernelOutput(v.shape));
  Expr probe = e.apply(graph::kernelOutput(shape), inputs);
  if (probe.shape() != shape)
    throw Error(label + ": epilogue changes the shape " + graph::shapeString(shape) + " to " +
                graph::shapeString(probe.shape()));
}

}  // namespace

TensorId Builder::target(const Out& out, const Shape& shape) {
  if (!out.into) return graph_.intermediate(out.label, shape, dtype_);
  const auto& desc = graph_.tensors().at(*out.into);
  if (graph::numel(desc.shape) != graph::numel(shape))
    throw Error(out.label + ": result " + graph::shapeString(shape) + " does not fit tensor '" + desc.name + "' " +
                graph::shapeString(desc.shape));
  return *out.into;
}

// One launch of a kernel reading `x` and storing `shape` through the epilogue: `launch(recorder, input, sink)`.
Value Builder::kernelNode(const Value& x, const Shape& shape, const Epilogue& e, const Out& out,
                          std::function<void(NodeRecorder&, const Expr&, const graph::Sink&)> launch) {
  probeEpilogue(shape, e, out.label);
  TensorId dst = target(out, shape);
  graph::GraphNode node;
  node.label = out.label;
  node.reads = readsOf(x, e);
  node.writes = {dst};
  node.logicalOps = 1 + x.logicalOps + opsOf(e);
  auto build = x.build;
  node.record = [=](NodeRecorder& r) { launch(r, build(r.tensors), makeSink(r.tensors, dst, shape, e)); };
  graph_.addNode(std::move(node));
  Value v = graph_.read(dst);
  if (v.shape != shape) v = graph_.map(v, [shape](const Expr& a) { return graph::reshape(a, shape); });
  return v;
}

Value Builder::conv2d(const Value& x, const ops::Conv2dWeights& w, const Epilogue& e, const Out& out) {
  if (x.shape.size() != 4 || x.shape[3] != w.cin())
    throw Error(out.label + ": input " + graph::shapeString(x.shape) + " does not have the " +
                std::to_string(w.cin()) + " channels of " + w.name());
  const ops::Conv2dWeights* weights = &w;
  ops::Conv2dScratch* scratch = scratch_;
  std::string label = out.label;
  const Shape outShape = ops::conv2dOutputShape(x.shape, w);
  // The autotune compiles this conv's candidates now, beside every other conv of the graph being built; the
  // recording then tunes the problems one by one (ops::ConvTuner::precompile).
  if (ops::ConvTuner* tuner = w.tuner(); tuner && tuner->enabled() && scratch)
    tuner->precompile({x.shape[0], x.shape[1], x.shape[2], x.shape[3], outShape[1], outShape[2], outShape[3], w.params()},
                      w.storage());
  return kernelNode(x, outShape, e, out,
                    [=](NodeRecorder& r, const Expr& in, const graph::Sink& sink) {
                      ops::conv2d(r.ctx, r.seq, in, *weights, sink, {.scratch = scratch, .label = label});
                    });
}

Value Builder::linear(const Value& x, const ops::LinearWeights& w, const Epilogue& e, const Out& out) {
  if (x.shape.empty() || x.shape.back() != w.inFeatures())
    throw Error(out.label + ": input " + graph::shapeString(x.shape) + " does not have the " +
                std::to_string(w.inFeatures()) + " features of " + w.name());
  Shape shape = x.shape;
  shape.back() = w.outFeatures();
  const ops::LinearWeights* weights = &w;
  std::string label = out.label;
  ops::Conv2dScratch* scratch = out.sideScratch && scratch_ ? &scratch_->side() : scratch_;
  return kernelNode(x, shape, e, out, [=](NodeRecorder& r, const Expr& in, const graph::Sink& sink) {
    ops::linear(r.ctx, r.seq, in, *weights, sink, {.scratch = scratch, .label = label});
  });
}

std::pair<Value, Value> Builder::linearThenLayerNorm(const Value& x, const ops::LinearWeights& w, const Epilogue& e,
                                                     const Out& out, const DeviceTensor& gamma,
                                                     const DeviceTensor& beta, float eps, const std::string& normLabel) {
  // One node (unless SDGEN_SPLIT_SUM_NORM=0): the norm is written by one launch (the split-K sum's, or
  // ops::layerNormRows) wherever its rows fit, on any device.
  if (!ops::splitSumNormEnabled() || !ops::layerNormRowsFit(w.outFeatures()) || out.into) {
    Value h = linear(x, w, e, out);
    return {h, layerNorm(h, gamma, beta, eps, normLabel)};
  }
  if (x.shape.empty() || x.shape.back() != w.inFeatures())
    throw Error(out.label + ": input " + graph::shapeString(x.shape) + " does not have the " +
                std::to_string(w.inFeatures()) + " features of " + w.name());
  Shape shape = x.shape;
  shape.back() = w.outFeatures();
  probeEpilogue(shape, e, out.label);
  const TensorId dst = graph_.intermediate(out.label, shape, dtype_);
  const TensorId normed = graph_.intermediate(normLabel, shape, dtype_);
  graph::GraphNode node;
  node.label = out.label;
  node.reads = readsOf(x, e);
  node.writes = {dst, normed};
  node.logicalOps = 2 + x.logicalOps + opsOf(e);
  const ops::LinearWeights* weights = &w;
  ops::Conv2dScratch* scratch = out.sideScratch && scratch_ ? &scratch_->side() : scratch_;
  auto build = x.build, bg = gamma.value().build, bb = beta.value().build;
  const std::string label = out.label, nl = normLabel;
  node.record = [=](NodeRecorder& r) {
    ops::LinearOptions o{.scratch = scratch, .label = label};
    o.normOutput = ops::LinearNormOutput{reshaped(r.tensors.view(dst), shape), bg(r.tensors), bb(r.tensors), eps,
                                         r.tensors.view(normed), nl};
    ops::linear(r.ctx, r.seq, build(r.tensors), *weights, makeSink(r.tensors, dst, shape, e), o);
  };
  graph_.addNode(std::move(node));
  return {graph_.read(dst), graph_.read(normed)};
}

Value Builder::gegluLinear(const Value& x, const ops::LinearWeights& w, const Out& out) {
  if (x.shape.empty() || x.shape.back() != w.inFeatures())
    throw Error(out.label + ": input " + graph::shapeString(x.shape) + " does not have the " +
                std::to_string(w.inFeatures()) + " features of " + w.name());
  Shape shape = x.shape;
  shape.back() = w.outFeatures() / 2;
  const ops::LinearWeights* weights = &w;
  std::string label = out.label;
  ops::Conv2dScratch* scratch = scratch_;
  return kernelNode(x, shape, {}, out, [=](NodeRecorder& r, const Expr& in, const graph::Sink& sink) {
    ops::linear(r.ctx, r.seq, in, *weights, sink, {.scratch = scratch, .gegluOutput = true, .label = label});
  });
}

Value Builder::attention(const Value& q, const Value& k, const Value& v, const ops::AttentionOptions& options,
                         const Out& out) {
  if (q.shape.size() != 4 || k.shape.size() != 4 || v.shape != k.shape || q.shape[0] != k.shape[0] ||
      q.shape[2] != k.shape[2] || q.shape[3] != k.shape[3])
    throw Error(out.label + ": q " + graph::shapeString(q.shape) + ", k " + graph::shapeString(k.shape) + ", v " +
                graph::shapeString(v.shape) + " are not [B, S, H, D] heads of one attention");
  const Shape heads = q.shape;
  const Shape flat{heads[0], heads[1], heads[2] * heads[3]};
  TensorId dst = target(out, flat);
  if (heads[3] > ops::kAttentionMaxHeadDim) return attentionByProducts(q, k, v, options, dst, out.label);
  graph::GraphNode node;
  node.label = out.label;
  node.reads = q.reads;
  node.reads.insert(node.reads.end(), k.reads.begin(), k.reads.end());
  node.reads.insert(node.reads.end(), v.reads.begin(), v.reads.end());
  node.writes = {dst};
  node.logicalOps = 3 + q.logicalOps + k.logicalOps + v.logicalOps;  // QK^T, softmax, PV
  auto bq = q.build, bk = k.build, bv = v.build;
  ops::AttentionOptions o = options;
  o.label = out.label;
  node.record = [=](NodeRecorder& r) {
    ops::attention(r.ctx, r.seq, bq(r.tensors), bk(r.tensors), bv(r.tensors),
                   graph::bufferSink(reshaped(r.tensors.view(dst), heads)), o);
  };
  graph_.addNode(std::move(node));
  return graph_.read(dst);
}

// softmax(scale Q K^T) V with heads as batches: [B*H, Sq, D] x [B*H, Sk, D]^T -> scores (fp32), softmax in
// place, then probabilities x V straight into the output. Only single-head attention has heads this wide in SD
// (the VAE's mid-block attention: one head of 512 channels); the product's [B, Sq, D] is then the output itself.
Value Builder::attentionByProducts(const Value& q, const Value& k, const Value& v,
                                   const ops::AttentionOptions& options, TensorId dst, const std::string& label) {
  if (options.causal) throw Error(label + ": causal attention needs heads of at most " +
                                  std::to_string(ops::kAttentionMaxHeadDim) + " elements");
  const int64_t b = q.shape[0], sq = q.shape[1], h = q.shape[2], d = q.shape[3], sk = k.shape[1];
  if (h != 1)
    throw Error(label + ": " + std::to_string(h) + " heads of " + std::to_string(d) +
                " elements; attention with heads wider than " + std::to_string(ops::kAttentionMaxHeadDim) +
                " is supported for a single head only");
  const float scale = options.scale.value_or(float(1.0 / std::sqrt(double(d))));
  auto headsFirst = [](const Expr& x) {  // [B, S, H, D] -> [B*H, S, D]
    const Shape& s = x.shape();
    return graph::reshape(graph::permute(x, {0, 2, 1, 3}), {s[0] * s[2], s[1], s[3]});
  };
  if (dtype_ == DType::F16) return attentionByHalfProducts(q, k, v, scale, dst, label);
  TensorId scores = graph_.intermediate(label + " scores", {b * h, sq, sk}, DType::F32);
  {
    graph::GraphNode node;
    node.label = label + " scores";
    node.reads = q.reads;
    node.reads.insert(node.reads.end(), k.reads.begin(), k.reads.end());
    node.writes = {scores};
    node.logicalOps = 1;
    auto bq = q.build, bk = k.build;
    std::string l = node.label;
    node.record = [=](NodeRecorder& r) {
      ops::matmul(r.ctx, r.seq, headsFirst(bq(r.tensors)) * graph::constant(scale), headsFirst(bk(r.tensors)),
                  graph::bufferSink(r.tensors.view(scores)), {.transposeB = true, .label = l});
    };
    graph_.addNode(std::move(node));
  }
  TensorId probs = graph_.intermediate(label + " probabilities", {b * h, sq, sk}, DType::F32);
  {
    graph::GraphNode node;
    node.label = label + " softmax";
    node.reads = {scores};
    node.writes = {probs};
    std::string l = node.label;
    node.record = [=](NodeRecorder& r) {
      ops::softmax(r.ctx, r.seq, graph::buffer(r.tensors.view(scores)), graph::bufferSink(r.tensors.view(probs)), l);
    };
    graph_.addNode(std::move(node));
  }
  graph::GraphNode node;
  node.label = label + " values";
  node.reads = v.reads;
  node.reads.push_back(probs);
  node.writes = {dst};
  auto bv = v.build;
  std::string l = node.label;
  node.record = [=](NodeRecorder& r) {
    ops::matmul(r.ctx, r.seq, graph::buffer(r.tensors.view(probs)), headsFirst(bv(r.tensors)),
                graph::bufferSink(reshaped(r.tensors.view(dst), {b, sq, d})), {.label = l});
  };
  graph_.addNode(std::move(node));
  return graph_.read(dst);
}

// The fp16 form of attentionByProducts (h = 1): the keys transposed to [B, D, Sk] and the values to [B, Sk, D],
// stored once in fp16, are the B operands of two ops::matmulHalfB, which reads them as packed weights on tensor
// cores (the VAE decode at 512^2: 1.7 ms for the products on CUDA cores); the scale is applied in the softmax,
// whose probabilities are stored in fp16 (the operand rounding of the tensor-core product, which would round
// them anyway). Five launches instead of three.
Value Builder::attentionByHalfProducts(const Value& q, const Value& k, const Value& v, float scale, TensorId dst,
                                       const std::string& label) {
  const int64_t b = q.shape[0], sq = q.shape[1], d = q.shape[3], sk = k.shape[1];
  auto tokens = [](const Expr& x) {  // [B, S, 1, D] -> [B, S, D]
    const Shape& s = x.shape();
    return graph::reshape(x, {s[0], s[1], s[3]});
  };
  TensorId keysT = graph_.intermediate(label + " keys transposed", {b, d, sk}, DType::F16);
  graph_.store(graph_.map(k, [=](const Expr& x) { return graph::permute(tokens(x), {0, 2, 1}); }), keysT, {},
               label + " keys transposed");
  TensorId values = graph_.intermediate(label + " values fp16", {b, sk, d}, DType::F16);
  graph_.store(graph_.map(v, tokens), values, {}, label + " values fp16");
  ops::Conv2dScratch* scratch = scratch_;
  TensorId scores = graph_.intermediate(label + " scores", {b, sq, sk}, DType::F32);
  {
    graph::GraphNode node;
    node.label = label + " scores";
    node.reads = q.reads;
    node.reads.push_back(keysT);
    node.writes = {scores};
    node.logicalOps = 1;
    auto bq = q.build;
    std::string l = node.label;
    node.record = [=](NodeRecorder& r) {
      ops::matmulHalfB(r.ctx, r.seq, tokens(bq(r.tensors)), r.tensors.view(keysT),
                       graph::bufferSink(r.tensors.view(scores)), {.scratch = scratch, .label = l});
    };
    graph_.addNode(std::move(node));
  }
  TensorId probs = graph_.intermediate(label + " probabilities", {b, sq, sk}, DType::F16);
  {
    graph::GraphNode node;
    node.label = label + " softmax";
    node.reads = {scores};
    node.writes = {probs};
    std::string l = node.label;
    node.record = [=](NodeRecorder& r) {
      ops::softmax(r.ctx, r.seq, graph::buffer(r.tensors.view(scores)) * graph::constant(scale),
                   graph::bufferSink(r.tensors.view(probs)), l);
    };
    graph_.addNode(std::move(node));
  }
  graph::GraphNode node;
  node.label = label + " values";
  node.reads = {probs, values};
  node.writes = {dst};
  std::string l = node.label;
  node.record = [=](NodeRecorder& r) {
    ops::matmulHalfB(r.ctx, r.seq, graph::buffer(r.tensors.view(probs)), r.tensors.view(values),
                     graph::bufferSink(reshaped(r.tensors.view(dst), {b, sq, d})), {.scratch = scratch, .label = l});
  };
  graph_.addNode(std::move(node));
  return graph_.read(dst);
}

// fp16 activations on a tensor-core device, where the consumers (the coop convolutions and GEMMs) stage a
// computed input into fp16 scratch anyway: the normalized (SiLU) values are written once, by ops::groupNormRows
// (one workgroup per (image, group)) or ops::groupNormTiles (a statistics and a normalization launch over pixel
// blocks) as chooseGroupNormPath decides, instead of a statistics launch (plus a combine where it is split) and
// a staging launch. SDGEN_GROUP_NORM selects for measurements: `rows` never the tiles (the rule before session
// 26), `tiles` the tiles wherever they fit (session 26's), `lazy` the statistics launch and a lazy result
// everywhere; SDGEN_GROUP_NORM_MAX=N moves the one-launch bound, SDGEN_GROUP_NORM_TILES_MIN=N keeps the tiles
// from groups of fewer elements.
GroupNormKnobs GroupNormKnobs::fromEnvironment() {
  GroupNormKnobs k;
  if (const char* env = std::getenv("SDGEN_GROUP_NORM")) k.choice = env;
  if (const char* min = std::getenv("SDGEN_GROUP_NORM_TILES_MIN"); min && *min) k.tilesMinElements = std::atoll(min);
  if (const char* max = std::getenv("SDGEN_GROUP_NORM_MAX"); max && *max) k.rowsMaxElements = std::atoll(max);
  return k;
}

GroupNormPath chooseGroupNormPath(const Shape& shape, int groups, const GroupNormKnobs& knobs) {
  if (knobs.choice == "lazy" || shape.size() != 4 || groups < 1) return GroupNormPath::Lazy;
  const int64_t pixels = shape[1] * shape[2], cg = shape[3] / groups, groupElements = pixels * cg;
  const bool tiles = groupElements >= knobs.tilesMinElements && ops::groupNormTilesFit(shape, groups);
  const bool rows = ops::groupNormRowsFit(shape, groups) && groupElements <= knobs.rowsMaxElements;
  if (knobs.choice == "tiles" && tiles) return GroupNormPath::Tiles;
  // H200, session 27 (docs/perf.md): the tiles take 16-18 µs at the UNet's 64² level against 26 for one
  // launch (groups of 10 channels), but 11-16 µs at 8²-32² against 5-9 (two launches' fixed cost).
  if (knobs.choice != "rows" && knobs.choice != "tiles" && tiles && pixels <= kGroupNormTilesMaxPixels &&
      (cg % 4 != 0 || !rows))
    return GroupNormPath::Tiles;
  return rows ? GroupNormPath::Rows : GroupNormPath::Lazy;
}

bool Builder::tensorCoresInFp16() const {
  return dtype_ == DType::F16 && scratch_ && ops::gemmCoopSupported(scratch_->context().info());
}

GroupNormPath Builder::groupNormPath(const Shape& shape, int groups) const {
  if (!tensorCoresInFp16()) return GroupNormPath::Lazy;
  return chooseGroupNormPath(shape, groups, GroupNormKnobs::fromEnvironment());
}

Value Builder::groupNorm(const Value& x, const DeviceTensor& gamma, const DeviceTensor& beta, int groups, float eps,
                         const std::string& label, bool silu, Value* input) {
  const GroupNormPath path = groupNormPath(x.shape, groups);
  if (input) *input = x;
  if (path == GroupNormPath::Lazy) {
    TensorId stats = graph_.groupStats(x, groups, label + " stats");
    Value normalized = graph_.groupNormalize(x, stats, groups, eps, gamma.value(), beta.value());
    return silu ? graph_.map(normalized, graph::silu) : normalized;
  }
  TensorId dst = graph_.intermediate(label, x.shape, dtype_);
  graph::GraphNode node;
  node.label = label;
  node.op = "norm";
  node.reads = x.reads;
  node.writes = {dst};
  node.logicalOps = 1 + x.logicalOps;
  auto build = x.build, bg = gamma.value().build, bb = beta.value().build;
  std::string l = label;
  if (path == GroupNormPath::Tiles) {
    TensorId partials = graph_.intermediate(label + " partials", ops::groupNormTilesPartials(x.shape, groups),
                                            DType::F32);
    node.writes.push_back(partials);
    // x stored beside the result where another consumer wants it and it is computed (a concatenation, ...).
    std::optional<TensorId> copy;
    if (input && x.logicalOps > 0) {
      copy = graph_.intermediate(label + " input", x.shape, dtype_);
      node.writes.push_back(*copy);
    }
    node.record = [=](NodeRecorder& r) {
      const graph::TensorView copyView = copy ? r.tensors.view(*copy) : graph::TensorView{};
      ops::groupNormTiles(r.ctx, r.seq, build(r.tensors), bg(r.tensors), bb(r.tensors), groups, eps, silu,
                          r.tensors.view(partials), r.tensors.view(dst), l, copy ? &copyView : nullptr);
    };
    graph_.addNode(std::move(node));
    if (copy) *input = graph_.read(*copy);
    return graph_.read(dst);
  }
  node.record = [=](NodeRecorder& r) {
    ops::groupNormRows(r.ctx, r.seq, build(r.tensors), bg(r.tensors), bb(r.tensors), groups, eps, silu,
                       r.tensors.view(dst), l);
  };
  graph_.addNode(std::move(node));
  return graph_.read(dst);
}

// fp16 activations on a device whose GEMMs run on tensor cores: there every consumer of a layer norm stages the
// normalized rows into fp16 scratch, or normalizes them again per column tile while staging A (where its
// column tiles are few, or its rows: ops::kFusedNormMaxRows), so the rows are normalized once, statistics
// included, in one launch (ops::layerNormRows) instead of a statistics launch and a staging launch. Measured on
// the H200 (docs/perf.md, session 20): UNet step -0.4 ms (rows > 256), text encoder -0.07 ms (its 154 rows).
// For measurements, SDGEN_LAYER_NORM=stats keeps the statistics launch everywhere.
bool Builder::layerNormInOneLaunch(int64_t d) const {
  const char* env = std::getenv("SDGEN_LAYER_NORM");
  if (env && std::string(env) == "stats") return false;
  return tensorCoresInFp16() && ops::layerNormRowsFit(d);
}

Value Builder::layerNorm(const Value& x, const DeviceTensor& gamma, const DeviceTensor& beta, float eps,
                         const std::string& label) {
  const int64_t d = x.shape.back(), rows = graph::numel(x.shape) / d;
  if (layerNormInOneLaunch(d)) {
    TensorId dst = graph_.intermediate(label, x.shape, dtype_);
    graph::GraphNode node;
    node.label = label;
    node.reads = x.reads;
    node.writes = {dst};
    node.logicalOps = 1 + x.logicalOps;
    auto build = x.build, bg = gamma.value().build, bb = beta.value().build;
    const float epsilon = eps;
    std::string l = label;
    node.record = [=](NodeRecorder& r) {
      ops::layerNormRows(r.ctx, r.seq, build(r.tensors), bg(r.tensors), bb(r.tensors), epsilon, r.tensors.view(dst), l);
    };
    graph_.addNode(std::move(node));
    return graph_.read(dst);
  }
  TensorId stats = graph_.intermediate(label + " stats", {rows, 2}, DType::F32);
  graph::GraphNode node;
  node.label = label + " stats";
  node.reads = x.reads;
  node.writes = {stats};
  node.logicalOps = 1 + x.logicalOps;
  auto build = x.build;
  std::string l = node.label;
  node.record = [=](NodeRecorder& r) {
    ops::sumAndSumOfSquares(r.ctx, r.seq, graph::reshape(build(r.tensors), {rows, 1, 1, d}), r.tensors.view(stats), l);
  };
  graph_.addNode(std::move(node));
  Value g = gamma.value(), b = beta.value();
  std::vector<TensorId> reads = x.reads;
  reads.push_back(stats);
  auto bg = g.build, bb = b.build;
  float epsilon = eps;
  return {x.shape, reads,
          [=](const Resolver& r) {
            return ops::layerNormFromStats(build(r), r.view(stats), epsilon, bg(r), bb(r));
          },
          x.logicalOps + 1};
}

Value Builder::rawLinearInput(const Value& x, const Out& out) {
  return x.logicalOps == 0 || !tensorCoresInFp16() ? x : store(x, out);
}

Value Builder::store(const Value& v, const Out& out) {
  TensorId dst = target(out, v.shape);
  const auto& desc = graph_.tensors().at(dst);
  if (desc.shape == v.shape) {
    graph_.store(v, dst, {}, out.label);
    return graph_.read(dst);
  }
  Shape shape = desc.shape;
  graph_.store(graph_.map(v, [shape](const Expr& a) { return graph::reshape(a, shape); }), dst, {}, out.label);
  Shape vs = v.shape;
  return graph_.map(graph_.read(dst), [vs](const Expr& a) { return graph::reshape(a, vs); });
}

}  // namespace sdgen::nn
