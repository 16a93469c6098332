#pragma once
// Records a whole graph into one command sequence (one label and, optionally, one GPU timestamp per launch)
// and replays it; intermediate tensors live in one arena laid out by the memory planner.
#include <map>

#include "graph/graph.h"
#include "graph/memory_planner.h"
#include "graph/shared_arena.h"

namespace sdgen::graph {

// The commands one graph node recorded: timings()[firstCommand .. firstCommand + commandCount).
struct NodeSpan {
  int node = 0;  // index into Graph::nodes()
  size_t firstCommand = 0, commandCount = 0;
};

// How a CompiledGraph's sequence is timed: `true` (or perCommand) a GPU timestamp after every command
// (timings(): where the time goes); span: at the start and the end only (spanMs(): the graph's GPU time).
struct GraphTiming {
  bool perCommand = false, span = false;
  GraphTiming(bool perCommandTimestamps = false) : perCommand(perCommandTimestamps) {}  // NOLINT: from bool
  static GraphTiming spanOnly() {
    GraphTiming t;
    t.span = true;
    return t;
  }
};

class CompiledGraph {
 public:
  // `bindings` gives the device view of every input and output tensor. Records the graph; its kernels compile
  // in the background until finishRecording() (or the first run) waits for them, so that graphs recorded
  // one after the other compile together. The intermediates live in an arena of the graph's own, or in `shared`
  // (graph/shared_arena.h: graphs that never run at the same time), which must outlive this graph.
  CompiledGraph(Context& ctx, const Graph& graph, const std::map<TensorId, TensorView>& bindings,
                GraphTiming timing = {}, SharedArena* shared = nullptr);

  // Waits for the graph's kernels and writes its command buffer (throws a compile error); idempotent.
  void finishRecording() { seq_.end(); }
  // Appends a copy of `bytes` from `src` to `dst` after everything recorded (before finishRecording): e.g. an
  // output computed in device memory, moved to host-visible memory in large transfers by the same submission.
  void appendCopy(const Allocation& src, const Allocation& dst, uint64_t bytes, const std::string& label) {
    seq_.copy(src, 0, dst, 0, bytes, label);
  }

  void run() { seq_.run(); }
  void submit() { seq_.submit(); }
  void wait() { seq_.wait(); }
  void setUniform(uint32_t slot, float value) { seq_.setUniform(slot, value); }
  std::vector<CommandTiming> timings() const { return seq_.timings(); }
  double spanMs() const { return seq_.spanMs(); }  // GraphTiming::span or perCommand, after a run

  size_t launches() const { return seq_.dispatchCount(); }
  // Barriers the hazard tracker put between commands, the final one before host reads included (not the full
  // barrier every sequence opens with): each starts a new interval in which independent launches overlap.
  size_t barriers() const { return seq_.barrierCount(); }
  const MemoryPlan& memoryPlan() const { return plan_; }
  // The arena this graph allocated for itself (0 where its intermediates are in a SharedArena, or it has none).
  uint64_t ownArenaBytes() const { return arena_ ? arena_.size() : 0; }
  const std::vector<int>& order() const { return order_; }
  // One span per node, in execution order (the order of timings()).
  const std::vector<NodeSpan>& nodeSpans() const { return spans_; }

 private:
  class ArenaResolver;
  Context& ctx_;
  std::vector<int> order_;
  std::vector<NodeSpan> spans_;
  MemoryPlan plan_;
  Allocation arena_;
  CommandSequence seq_;
};

// The arena plan of the graph's intermediates run in `order` (what CompiledGraph allocates), without recording
// or allocating anything: e.g. to decide whether a graph would fit before building it. `ids`, when given,
// receives the planned tensors in the plan's order.
MemoryPlan planIntermediates(const Graph& graph, const std::vector<int>& order, std::vector<TensorId>* ids = nullptr);

// Topological order of the nodes: every tensor is written before it is read. Throws on cycles and on reads
// of intermediates nothing writes.
std::vector<int> topologicalOrder(const Graph& graph);

}  // namespace sdgen::graph
