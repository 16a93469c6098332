#include "ops/conv2d_scratch.h"

#include <algorithm>
#include <vector>

#include "engine/tensor_io.h"

namespace sdgen::ops {

const Allocation& Conv2dScratch::acquire(uint64_t bytes, Slot slot) {
  Allocation& current = current_[static_cast<int>(slot)];
  if (current && current.size() >= bytes) return current;
  if (current) retired_.push_back(std::move(current));
  current = ctx_.allocate(bytes, slot == Slot::Primary    ? name_
                                 : slot == Slot::Partials ? name_ + " (split-K partials)"
                                                          : name_ + " (filters)");
  return current;
}

const Allocation& Conv2dScratch::counters(uint64_t count) {
  const uint64_t bytes = std::max<uint64_t>(count, 64) * 4;
  if (counters_ && counters_.size() >= bytes) return counters_;
  if (counters_) retired_.push_back(std::move(counters_));
  counters_ = ctx_.allocate(bytes, name_ + " (counters)");
  writeFloats(ctx_, counters_, std::vector<float>(bytes / 4, 0.0f), DType::F32);  // +0.0f: all bits zero
  return counters_;
}

Conv2dScratch& Conv2dScratch::side() {
  if (!side_) side_ = std::make_unique<Conv2dScratch>(ctx_, name_ + " (side)");
  return *side_;
}

uint64_t Conv2dScratch::bytesHeld() const {
  uint64_t n = side_ ? side_->bytesHeld() : 0;
  for (auto& a : current_) n += a ? a.size() : 0;
  n += counters_ ? counters_.size() : 0;
  for (auto& a : retired_) n += a.size();
  return n;
}

}  // namespace sdgen::ops
