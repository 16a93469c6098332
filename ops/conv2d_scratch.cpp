#include "ops/conv2d_scratch.h"

#include <algorithm>
#include <vector>

#include "engine/error.h"
#include "engine/tensor_io.h"

namespace sdgen::ops {

void Conv2dScratch::replace(Allocation& current, bool& madeInPass, uint64_t bytes, const std::string& name) {
  if (current && inPass_ && madeInPass) {
    current = Allocation{};  // freed before the larger one is made: the pool may reuse its space
    freedInPass_ = true;
  } else if (current) {
    retired_.push_back(std::move(current));
  }
  current = ctx_.allocate(bytes, name);
  madeInPass = inPass_;
}

const Allocation& Conv2dScratch::acquire(uint64_t bytes, Slot slot) {
  const int i = static_cast<int>(slot);
  Allocation& current = current_[i];
  largest_[i] = std::max(largest_[i], bytes);
  if (current && current.size() >= bytes) return current;
  replace(current, madeInPass_[i], bytes,
          slot == Slot::Primary    ? name_
          : slot == Slot::Partials ? name_ + " (split-K partials)"
                                   : name_ + " (filters)");
  return current;
}

const Allocation& Conv2dScratch::counters(uint64_t count) {
  const uint64_t bytes = std::max<uint64_t>(count, 64) * 4;
  largest_[3] = std::max(largest_[3], bytes);
  if (counters_ && counters_.size() >= bytes) return counters_;
  replace(counters_, madeInPass_[3], bytes, name_ + " (counters)");
  writeFloats(ctx_, counters_, std::vector<float>(bytes / 4, 0.0f), DType::F32);  // +0.0f: all bits zero
  return counters_;
}

Conv2dScratch& Conv2dScratch::side() {
  if (!side_) {
    side_ = std::make_unique<Conv2dScratch>(ctx_, name_ + " (side)");
    side_->inPass_ = inPass_;
  }
  return *side_;
}

void Conv2dScratch::setPass(bool on) {
  inPass_ = on;
  freedInPass_ = false;
  for (bool& made : madeInPass_) made = false;
  if (side_) side_->setPass(on);
}

Conv2dScratch::RecordingPass::RecordingPass(Conv2dScratch& scratch) : scratch_(scratch) {
  if (scratch.inPass_) throw Error("Conv2dScratch: recording passes do not nest (" + scratch.name_ + ")");
  scratch.setPass(true);
}

Conv2dScratch::RecordingPass::~RecordingPass() { scratch_.setPass(false); }

bool Conv2dScratch::RecordingPass::outgrown() const { return scratch_.freedInPass(); }

uint64_t Conv2dScratch::bytesHeld() const {
  uint64_t n = side_ ? side_->bytesHeld() : 0;
  for (auto& a : current_) n += a ? a.size() : 0;
  n += counters_ ? counters_.size() : 0;
  for (auto& a : retired_) n += a.size();
  return n;
}

uint64_t Conv2dScratch::largestNeedBytes() const {
  uint64_t n = side_ ? side_->largestNeedBytes() : 0;
  for (uint64_t b : largest_) n += b;
  return n;
}

}  // namespace sdgen::ops
