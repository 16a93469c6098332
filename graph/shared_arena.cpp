#include "graph/shared_arena.h"

#include <algorithm>

namespace sdgen::graph {

const Allocation& SharedArena::acquire(uint64_t bytes) {
  largest_ = std::max(largest_, bytes);
  if (current_ && current_.size() >= bytes) return current_;
  const uint64_t size = std::max(bytes, reserved_);
  if (current_) retired_.push_back(std::move(current_));
  current_ = ctx_.allocate(size, name_);
  return current_;
}

uint64_t SharedArena::bytesHeld() const {
  uint64_t n = current_ ? current_.size() : 0;
  for (const Allocation& a : retired_) n += a.size();
  return n;
}

}  // namespace sdgen::graph
