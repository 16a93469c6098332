#include "graph/graph.h"

#include <algorithm>

#include "engine/error.h"
#include "ops/elementwise.h"
#include "ops/norm.h"
#include "ops/reduce.h"

namespace sdgen::graph {

TensorId Graph::add(const std::string& name, const Shape& shape, DType dtype, TensorRole role) {
  if (shape.empty() || shape.size() > 4) throw Error("graph tensor '" + name + "': rank must be 1..4, got " + shapeString(shape));
  tensors_.push_back({name, shape, dtype, role});
  return static_cast<TensorId>(tensors_.size() - 1);
}

TensorId Graph::input(const std::string& n, const Shape& s, DType d) { return add(n, s, d, TensorRole::Input); }
TensorId Graph::output(const std::string& n, const Shape& s, DType d) { return add(n, s, d, TensorRole::Output); }
TensorId Graph::intermediate(const std::string& n, const Shape& s, DType d) {
  return add(n, s, d, TensorRole::Intermediate);
}

Value Graph::read(TensorId id) const {
  return {tensors_.at(id).shape, {id}, [id](const Resolver& r) { return buffer(r.view(id)); }, 0};
}

Value Graph::map(const Value& a, const std::function<Expr(const Expr&)>& f) const {
  auto build = a.build;
  Expr probe = f(kernelOutput(a.shape));  // shape inference (and its errors) now, at graph construction
  return {probe.shape(), a.reads, [build, f](const Resolver& r) { return f(build(r)); }, a.logicalOps + 1};
}

Value Graph::zip(const Value& a, const Value& b, const std::function<Expr(const Expr&, const Expr&)>& f) const {
  Expr probe = f(kernelOutput(a.shape), kernelOutput(b.shape));
  std::vector<TensorId> reads = a.reads;
  reads.insert(reads.end(), b.reads.begin(), b.reads.end());
  auto ba = a.build, bb = b.build;
  return {probe.shape(), reads, [ba, bb, f](const Resolver& r) { return f(ba(r), bb(r)); },
          a.logicalOps + b.logicalOps + 1};
}

Value Graph::permute(const Value& a, const std::vector<int>& perm) const {
  return map(a, [perm](const Expr& e) { return graph::permute(e, perm); });
}

void Graph::store(const Value& v, TensorId dst, const std::vector<int>& sinkPerm, const std::string& label) {
  const TensorDesc& d = tensors_.at(dst);
  Shape logical = d.shape;
  if (!sinkPerm.empty()) {  // the value is written permuted: its shape is the destination's, un-permuted
    if (sinkPerm.size() != d.shape.size()) throw Error("store into '" + d.name + "': permutation rank mismatch");
    for (size_t j = 0; j < sinkPerm.size(); ++j) logical[sinkPerm[j]] = d.shape[j];
  }
  if (v.shape != logical)
    throw Error("store into '" + d.name + "': value shape " + shapeString(v.shape) + " differs from " +
                shapeString(logical));
  GraphNode node;
  node.label = label.empty() ? "store " + d.name : label;
  node.op = "elementwise";
  node.reads = v.reads;
  node.writes = {dst};
  node.logicalOps = std::max(1, v.logicalOps + (sinkPerm.empty() ? 0 : 1));
  auto build = v.build;
  std::string lbl = node.label;
  node.record = [build, dst, sinkPerm, lbl](NodeRecorder& r) {
    Sink sink = bufferSink(r.tensors.view(dst));
    if (!sinkPerm.empty()) sink = graph::permute(sink, sinkPerm);
    ops::elementwise(r.ctx, r.seq, build(r.tensors), sink, {.label = lbl});
  };
  addNode(std::move(node));
}

TensorId Graph::groupStats(const Value& x, int groups, const std::string& label) {
  if (x.shape.size() != 4 || groups <= 0 || x.shape[3] % groups)
    throw Error(label + ": expects NHWC [N, H, W, C] with C divisible by " + std::to_string(groups) + ", got " +
                shapeString(x.shape));
  int64_t n = x.shape[0], hw = x.shape[1] * x.shape[2], cg = x.shape[3] / groups;
  TensorId stats = intermediate(label, {n, groups, 2}, DType::F32);
  // Room for a split reduction (ops::chooseReducePlan decides at record time, per device): 32 groups per
  // image are too few workgroups for a GPU.
  TensorId partials = intermediate(label + " partials",
                                   {n, groups, std::max(ops::kMaxReduceParts, ops::kMaxRowReduceParts), 2}, DType::F32);
  GraphNode node;
  node.label = label;
  node.op = "norm";
  node.reads = x.reads;
  node.writes = {stats, partials};
  node.logicalOps = 1 + x.logicalOps;
  auto build = x.build;
  node.record = [=](NodeRecorder& r) {
    Expr grouped = reshape(build(r.tensors), {n, hw, groups, cg});
    ops::ReduceSplit plan = ops::chooseReducePlan(r.ctx.info(), n, hw, groups, cg);
    plan.partials = r.tensors.view(partials);
    ops::sumAndSumOfSquares(r.ctx, r.seq, grouped, r.tensors.view(stats), label, plan);
  };
  addNode(std::move(node));
  return stats;
}

Value Graph::groupNormalize(const Value& x, TensorId stats, int groups, float eps, const Value& gamma,
                            const Value& beta) const {
  std::vector<TensorId> reads = x.reads;
  reads.push_back(stats);
  for (const Value* v : {&gamma, &beta}) reads.insert(reads.end(), v->reads.begin(), v->reads.end());
  auto bx = x.build, bg = gamma.build, bb = beta.build;
  // Shapes are validated now, with a stand-in for the statistics.
  Expr probe = kernelOutput(x.shape);
  TensorView probeStats{0, DType::F32, {x.shape.at(0) * groups * 2}, {1}};
  ops::groupNormFromStats(probe, probeStats, groups, eps, kernelOutput(gamma.shape), kernelOutput(beta.shape));
  return {x.shape, reads,
          [=](const Resolver& r) { return ops::groupNormFromStats(bx(r), r.view(stats), groups, eps, bg(r), bb(r)); },
          x.logicalOps + 1};
}

void Graph::addNode(GraphNode node) {
  for (TensorId t : node.reads)
    if (t < 0 || t >= static_cast<TensorId>(tensors_.size())) throw Error("graph node '" + node.label + "': bad tensor");
  nodes_.push_back(std::move(node));
}

int Graph::logicalOps() const {
  int n = 0;
  for (auto& node : nodes_) n += node.logicalOps;
  return n;
}

}  // namespace sdgen::graph
