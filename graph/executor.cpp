#include "graph/executor.h"

#include <queue>

#include "engine/error.h"

namespace sdgen::graph {

std::vector<int> topologicalOrder(const Graph& graph) {
  const auto& nodes = graph.nodes();
  const auto& tensors = graph.tensors();
  std::vector<std::vector<int>> writers(tensors.size());
  for (size_t i = 0; i < nodes.size(); ++i)
    for (TensorId t : nodes[i].writes) writers[t].push_back(static_cast<int>(i));
  std::vector<int> pending(nodes.size(), 0);
  std::vector<std::vector<int>> dependents(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i)
    for (TensorId t : nodes[i].reads) {
      if (tensors[t].role == TensorRole::Intermediate && writers[t].empty())
        throw Error("graph node '" + nodes[i].label + "' reads '" + tensors[t].name + "', which nothing writes");
      for (int w : writers[t])
        if (w != static_cast<int>(i)) {
          dependents[w].push_back(static_cast<int>(i));
          pending[i]++;
        }
    }
  std::queue<int> ready;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (!pending[i]) ready.push(static_cast<int>(i));
  std::vector<int> order;
  while (!ready.empty()) {
    int n = ready.front();
    ready.pop();
    order.push_back(n);
    for (int d : dependents[n])
      if (--pending[d] == 0) ready.push(d);
  }
  if (order.size() != nodes.size()) throw Error("graph has a cycle");
  return order;
}

MemoryPlan planIntermediates(const Graph& graph, const std::vector<int>& order, std::vector<TensorId>* ids) {
  const auto& tensors = graph.tensors();
  // Lifetimes of intermediates in execution steps.
  std::map<TensorId, LiveTensor> live;
  for (size_t step = 0; step < order.size(); ++step) {
    const GraphNode& n = graph.nodes()[order[step]];
    for (const auto* list : {&n.writes, &n.reads})
      for (TensorId t : *list) {
        if (tensors[t].role != TensorRole::Intermediate) continue;
        auto [it, inserted] = live.try_emplace(t, LiveTensor{uint64_t(numel(tensors[t].shape)) * dtypeSize(tensors[t].dtype),
                                                             int(step), int(step)});
        it->second.lastStep = std::max(it->second.lastStep, int(step));
        it->second.firstStep = std::min(it->second.firstStep, int(step));
      }
  }
  std::vector<LiveTensor> requests;
  for (auto& [id, lt] : live) {
    if (ids) ids->push_back(id);
    requests.push_back(lt);
  }
  return planMemory(requests);
}

class CompiledGraph::ArenaResolver : public Resolver {
 public:
  ArenaResolver(const Graph& g, const std::map<TensorId, TensorView>& bindings, VkDeviceAddress arena,
                const std::map<TensorId, uint64_t>& offsets)
      : graph_(g), bindings_(bindings), arena_(arena), offsets_(offsets) {}
  TensorView view(TensorId id) const override {
    if (auto it = bindings_.find(id); it != bindings_.end()) return it->second;
    const TensorDesc& d = graph_.tensors().at(id);
    TensorView v{arena_ + offsets_.at(id), d.dtype, d.shape, denseStrides(d.shape)};
    return v;
  }

 private:
  const Graph& graph_;
  const std::map<TensorId, TensorView>& bindings_;
  VkDeviceAddress arena_;
  const std::map<TensorId, uint64_t>& offsets_;
};

CompiledGraph::CompiledGraph(Context& ctx, const Graph& graph, const std::map<TensorId, TensorView>& bindings,
                             GraphTiming timing, SharedArena* shared)
    : ctx_(ctx), seq_(ctx, {.timestamps = timing.perCommand, .spanTimestamps = timing.span}) {
  const auto& tensors = graph.tensors();
  for (size_t t = 0; t < tensors.size(); ++t) {
    bool bound = bindings.count(static_cast<TensorId>(t));
    if (tensors[t].role != TensorRole::Intermediate && !bound)
      throw Error("graph tensor '" + tensors[t].name + "' (input/output) has no binding");
    if (bound && bindings.at(static_cast<TensorId>(t)).shape != tensors[t].shape)
      throw Error("graph tensor '" + tensors[t].name + "' is bound to a view of shape " +
                  shapeString(bindings.at(static_cast<TensorId>(t)).shape) + ", expected " +
                  shapeString(tensors[t].shape));
  }
  order_ = topologicalOrder(graph);

  std::vector<TensorId> ids;
  plan_ = planIntermediates(graph, order_, &ids);
  std::map<TensorId, uint64_t> offsets;
  for (size_t i = 0; i < ids.size(); ++i) offsets[ids[i]] = plan_.offsets[i];
  VkDeviceAddress base = 0;
  if (plan_.peakBytes && shared) {
    base = shared->acquire(plan_.peakBytes).address();
  } else if (plan_.peakBytes) {
    arena_ = ctx.allocate(plan_.peakBytes, "graph intermediates arena");
    base = arena_.address();
  }

  ArenaResolver resolver(graph, bindings, base, offsets);
  NodeRecorder recorder{ctx, seq_, resolver};
  for (int i : order_) {
    const size_t first = seq_.commandCount();
    graph.nodes()[i].record(recorder);
    spans_.push_back({i, first, seq_.commandCount() - first});
  }
}

}  // namespace sdgen::graph
