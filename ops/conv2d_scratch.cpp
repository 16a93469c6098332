#include "ops/conv2d_scratch.h"

namespace sdgen::ops {

const Allocation& Conv2dScratch::acquire(uint64_t bytes) {
  if (current_ && current_.size() >= bytes) return current_;
  if (current_) retired_.push_back(std::move(current_));
  current_ = ctx_.allocate(bytes, name_);
  return current_;
}

uint64_t Conv2dScratch::bytesHeld() const {
  uint64_t n = current_ ? current_.size() : 0;
  for (auto& a : retired_) n += a.size();
  return n;
}

}  // namespace sdgen::ops
