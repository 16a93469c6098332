#pragma once
// Network layers as graph nodes: each big op is one launch whose input is a lazy graph value (any chain of
// elementwise/layout work folds into its prologue) and whose output may carry an epilogue (residual add, bias
// broadcast, activation) fused into the same launch. Norms are one statistics launch plus a lazy value that the
// consumer fuses. See docs/networks.md.
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "graph/graph.h"
#include "models/nn/parameters.h"
#include "ops/attention.h"
#include "ops/conv2d.h"
#include "ops/linear.h"

namespace sdgen::nn {

// A function of the kernel's computed value and further graph values, applied before the store.
struct Epilogue {
  std::vector<graph::Value> inputs;
  std::function<graph::Expr(const graph::Expr& out, const std::vector<graph::Expr>& inputs)> apply;
  explicit operator bool() const { return static_cast<bool>(apply); }
};
Epilogue residual(const graph::Value& r);  // out + r (r broadcast to out's shape)
Epilogue activation(std::function<graph::Expr(const graph::Expr&)> f);  // f(out)

// Where a layer's result goes: a new intermediate tensor (default) or an existing graph tensor.
struct Out {
  std::string label;
  std::optional<graph::TensorId> into;
  // Staging and split-K partials in the scratch's side() memory: for a product recorded beside the main chain's
  // launches (a ResNet's shortcut beside its conv1), which must not wait for them through shared scratch.
  bool sideScratch = false;
};

// The largest (image, group) that nn::Builder::groupNorm normalizes with ops::groupNormRows (elements: H * W * C /
// groups); past it one workgroup per group reads too much alone.
inline constexpr int64_t kGroupNormInOneLaunchMaxElements = 65536;
// The most pixels per image (H * W) for ops::groupNormTiles: past it (the VAE's 256² and 512² levels) its ~528
// workgroups each sum every partial of their image and move too few bytes each; the statistics path wins there
// (H200, session 27: 73 µs against 78 per 512² norm, docs/perf.md).
inline constexpr int64_t kGroupNormTilesMaxPixels = 128 * 128;

// How nn::Builder::groupNorm computes (fp16 activations on a tensor-core device; docs/dispatch.md): a statistics
// launch and a lazy result read by its consumer, or the result written by ops::groupNormRows (one launch) or by
// ops::groupNormTiles (two launches over pixel blocks).
enum class GroupNormPath { Lazy, Rows, Tiles };
// The knobs of the rule (the environment: SDGEN_GROUP_NORM=rows|tiles|lazy, SDGEN_GROUP_NORM_TILES_MIN,
// SDGEN_GROUP_NORM_MAX); the defaults are the rule.
struct GroupNormKnobs {
  std::string choice;  // "", "rows" (never tiles), "tiles" (tiles wherever they fit), "lazy"
  int64_t tilesMinElements = 0;
  int64_t rowsMaxElements = kGroupNormInOneLaunchMaxElements;
  static GroupNormKnobs fromEnvironment();
};
// The rule: the tiles where the one-launch kernel is slow, i.e. its groups are not whole 4-channel columns (it
// reads them 2 bytes at a time: the UNet's 320-, 960-channel norms) or past its bound, up to
// kGroupNormTilesMaxPixels; else the one-launch kernel within its bound; else the statistics path.
GroupNormPath chooseGroupNormPath(const graph::Shape& shape, int groups, const GroupNormKnobs& knobs);

class Builder {
 public:
  Builder(graph::Graph& graph, DType activations, ops::Conv2dScratch* scratch)
      : graph_(graph), dtype_(activations), scratch_(scratch) {}

  graph::Graph& graph() { return graph_; }
  DType activations() const { return dtype_; }

  // x: [N, H, W, Cin] -> [N, Ho, Wo, Cout]
  graph::Value conv2d(const graph::Value& x, const ops::Conv2dWeights& w, const Epilogue& e, const Out& out);
  // x: [..., K] -> [..., N]
  graph::Value linear(const graph::Value& x, const ops::LinearWeights& w, const Epilogue& e, const Out& out);
  // x: [..., K] -> [..., N / 2]: value * gelu(gate) of a GEGLU projection interleaved by
  // ParameterStore::linearGeglu (fused: the tensor-core epilogue computes it).
  graph::Value gegluLinear(const graph::Value& x, const ops::LinearWeights& w, const Out& out);
  // q: [B, Sq, H, D], k/v: [B, Sk, H, D] -> [B, Sq, H*D]. A single head wider than the flash kernel's limit
  // (the VAE's) runs as two batched products around a softmax (three launches); several such heads are refused.
  graph::Value attention(const graph::Value& q, const graph::Value& k, const graph::Value& v,
                         const ops::AttentionOptions& options, const Out& out);
  // Group norm of NHWC x, then SiLU where `silu`: one statistics launch and a lazy result, or, where its
  // consumers would stage it for tensor cores anyway (groupNormPath), the result written by two launches.
  // `input` (optional) receives x for another consumer: where x is computed (not a stored tensor) and the
  // normalization launch is ops::groupNormTiles', x as stored by that launch too (one staging launch fewer for
  // a consumer that reads it raw, as a resnet's shortcut does); else x itself.
  graph::Value groupNorm(const graph::Value& x, const DeviceTensor& gamma, const DeviceTensor& beta, int groups,
                         float eps, const std::string& label, bool silu = false, graph::Value* input = nullptr);
  // Layer norm over the last axis: one statistics launch and a lazy result, or, where its consumers would
  // stage it for tensor cores anyway (layerNormInOneLaunch), the normalized rows written by one launch.
  graph::Value layerNorm(const graph::Value& x, const DeviceTensor& gamma, const DeviceTensor& beta, float eps,
                         const std::string& label);
  // linear(x, w, e, out) and the layer norm of its result. Unless SDGEN_SPLIT_SUM_NORM=0 (ops::splitSumNormEnabled)
  // one graph node writes both, the norm by the product's split-K sum launch where there is one, else by its own
  // launch (ops::LinearOptions::normOutput); otherwise the nodes of linear and layerNorm. Returns {result, norm}.
  std::pair<graph::Value, graph::Value> linearThenLayerNorm(const graph::Value& x, const ops::LinearWeights& w,
                                                            const Epilogue& e, const Out& out,
                                                            const DeviceTensor& gamma, const DeviceTensor& beta,
                                                            float eps, const std::string& normLabel);
  // Materializes a value (one elementwise launch).
  graph::Value store(const graph::Value& v, const Out& out);
  // x itself where it is a stored tensor or where linear layers read expressions as they are (CPU devices, fp32);
  // else x stored by its own launch (tensor cores read a raw fp16 A, and would stage it inside the product's
  // launches: as a node of its own, the copy is recorded beside the launches of other nodes).
  graph::Value rawLinearInput(const graph::Value& x, const Out& out);

  graph::Value map(const graph::Value& a, const std::function<graph::Expr(const graph::Expr&)>& f) const {
    return graph_.map(a, f);
  }
  graph::Value zip(const graph::Value& a, const graph::Value& b,
                   const std::function<graph::Expr(const graph::Expr&, const graph::Expr&)>& f) const {
    return graph_.zip(a, b, f);
  }

 private:
  graph::TensorId target(const Out& out, const graph::Shape& shape);
  // fp16 activations on a device running the tensor-core GEMM (with scratch to stage into): where the builder
  // writes normalized or computed inputs once for raw fp16 reads.
  bool tensorCoresInFp16() const;
  bool layerNormInOneLaunch(int64_t d) const;
  GroupNormPath groupNormPath(const graph::Shape& shape, int groups) const;
  graph::Value kernelNode(const graph::Value& x, const graph::Shape& shape, const Epilogue& e, const Out& out,
                          std::function<void(graph::NodeRecorder&, const graph::Expr&, const graph::Sink&)> launch);
  graph::Value attentionByProducts(const graph::Value& q, const graph::Value& k, const graph::Value& v,
                                   const ops::AttentionOptions& options, graph::TensorId dst, const std::string& label);
  graph::Value attentionByHalfProducts(const graph::Value& q, const graph::Value& k, const graph::Value& v,
                                       float scale, graph::TensorId dst, const std::string& label);

  graph::Graph& graph_;
  DType dtype_;
  ops::Conv2dScratch* scratch_;
};

}  // namespace sdgen::nn
