#include "ops/conv2d_scratch.h"

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

Conv2dScratch& Conv2dScratch::side() {
  if (!side_) side_ = std::make_unique<Conv2dScratch>(ctx_, name_ + " (side)");
  return *side_;
}

uint64_t Conv2dScratch::bytesHeld() const {
  uint64_t n = side_ ? side_->bytesHeld() : 0;
  for (auto& a : current_) n += a ? a.size() : 0;
  for (auto& a : retired_) n += a.size();
  return n;
}

}  // namespace sdgen::ops
