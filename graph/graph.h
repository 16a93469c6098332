#pragma once
// The graph: tensors with shape and dtype, and nodes (kernel launches) with the tensors they read and write.
// Elementwise and layout work does not become nodes: a Value is a lazy expression over tensors, and it is
// compiled into whichever kernel consumes it (or into one elementwise launch when it must be stored).
#include <functional>
#include <string>
#include <vector>

#include "engine/command_sequence.h"
#include "engine/context.h"
#include "graph/expr.h"

namespace sdgen::graph {

using TensorId = int;

enum class TensorRole { Input, Output, Intermediate };

struct TensorDesc {
  std::string name;
  Shape shape;
  DType dtype;
  TensorRole role;
};

// Maps tensor ids to device views while a graph is recorded.
class Resolver {
 public:
  virtual ~Resolver() = default;
  virtual TensorView view(TensorId id) const = 0;
};

struct NodeRecorder {
  Context& ctx;
  CommandSequence& seq;
  const Resolver& tensors;
};

struct GraphNode {
  std::string label;
  std::vector<TensorId> reads, writes;
  std::function<void(NodeRecorder&)> record;
  int logicalOps = 1;  // graph operations fused into this launch
  // What kind of operation the node records, for profiles (sdgen --profile-conv): "conv2d", "linear",
  // "attention", "norm", "elementwise", ...; empty when the builder did not say.
  std::string op;
};

// A lazy value: an expression over graph tensors, built when the consuming kernel is recorded.
struct Value {
  Shape shape;
  std::vector<TensorId> reads;
  std::function<Expr(const Resolver&)> build;
  int logicalOps = 0;  // elementwise/layout operations folded into it
};

class Graph {
 public:
  TensorId input(const std::string& name, const Shape& shape, DType dtype);
  TensorId output(const std::string& name, const Shape& shape, DType dtype);
  TensorId intermediate(const std::string& name, const Shape& shape, DType dtype);

  // Values. Each operation on values is one logical graph operation but no launch.
  Value read(TensorId id) const;
  Value map(const Value& a, const std::function<Expr(const Expr&)>& f) const;
  Value zip(const Value& a, const Value& b, const std::function<Expr(const Expr&, const Expr&)>& f) const;
  Value permute(const Value& a, const std::vector<int>& perm) const;

  // Stores a value into a tensor in one elementwise launch; `sinkPerm` (optional) permutes on the way out.
  void store(const Value& v, TensorId dst, const std::vector<int>& sinkPerm = {}, const std::string& label = "");
  // Group statistics of an NHWC value [N, H, W, C] with `groups` groups: writes a new [N, groups, 2] fp32
  // tensor of (sum, sum of squares). One reduction launch.
  TensorId groupStats(const Value& x, int groups, const std::string& label = "group stats");
  // Group normalization from those statistics (lazy): (x - mean) * rsqrt(var + eps) * gamma + beta.
  Value groupNormalize(const Value& x, TensorId stats, int groups, float eps, const Value& gamma,
                       const Value& beta) const;

  void addNode(GraphNode node);

  const std::vector<TensorDesc>& tensors() const { return tensors_; }
  const std::vector<GraphNode>& nodes() const { return nodes_; }
  // Logical operations (what a graph without fusion would launch) vs launches (nodes).
  int logicalOps() const;

 private:
  TensorId add(const std::string& name, const Shape& shape, DType dtype, TensorRole role);
  std::vector<TensorDesc> tensors_;
  std::vector<GraphNode> nodes_;
};

}  // namespace sdgen::graph
