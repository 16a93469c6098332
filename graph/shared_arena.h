#pragma once
// One arena of intermediates for several recorded graphs that never run at the same time (a pipeline's text
// encoder, cross-attention K/V, UNet step and VAE decode): each graph plans its own intermediates as before
// (graph/memory_planner.h) and lays them out from the arena's start, so the device holds the largest plan once
// instead of the sum. Safe because every CommandSequence begins with a full barrier on the device's one queue:
// a graph's launches start only after everything submitted before has finished reading and writing, and no
// graph keeps anything in its intermediates between runs (inputs and outputs are bound, not planned).
//
// Growing: recorded commands hold device addresses, so a graph that needs more than the current allocation gets
// a new, larger one and the old one is retired, not freed (the graphs recorded on it still address it) until
// the arena is destroyed. Callers that know their graphs' plans reserve() the largest before recording the
// first, so that one allocation serves them all.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/context.h"
#include "engine/memory.h"

namespace sdgen::graph {

class SharedArena {
 public:
  explicit SharedArena(Context& ctx, std::string name = "shared graph arena") : ctx_(ctx), name_(std::move(name)) {}
  SharedArena(const SharedArena&) = delete;
  SharedArena& operator=(const SharedArena&) = delete;

  // The next allocation holds at least `bytes` (no allocation now; a current one of at least `bytes` stays).
  void reserve(uint64_t bytes) { reserved_ = std::max(reserved_, bytes); }
  // At least `bytes` of device memory from its start, valid until this object is destroyed; for a graph being
  // recorded now, to run only when no other graph of this arena runs.
  const Allocation& acquire(uint64_t bytes);
  // Device memory held: the current allocation and the retired ones.
  uint64_t bytesHeld() const;
  // The largest plan acquired so far.
  uint64_t largestRequest() const { return largest_; }

 private:
  Context& ctx_;
  std::string name_;
  uint64_t reserved_ = 0, largest_ = 0;
  Allocation current_;
  std::vector<Allocation> retired_;
};

}  // namespace sdgen::graph
