#pragma once
// Device memory for the intermediate tensors of multi-kernel algorithms: Winograd's V and M tiles, a linear
// layer's or convolution's staged input (ops::LinearOptions::scratch), split-K partials.
// The caller owns one Conv2dScratch per command sequence (or per group of sequences that never run at the
// same time) and keeps it alive while any sequence recorded with it may run. Every conv recorded with it
// reuses the same memory; the sequence's hazard tracking orders the reuse (write-after-read barriers). When a
// call needs more, a larger allocation replaces the current one and the old one is retired, not freed, because
// commands already recorded still address it: all memory lives until the scratch is destroyed.
// A graph whose convs grow the scratch step by step (the VAE decoder's levels: staged inputs of 4, 16, 64 then
// 128 MiB) would hold every step that way; recording it inside a RecordingPass (recordWithinPass) frees the steps
// made by the pass itself and records once more where it did, so the scratch ends at the largest need.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/context.h"
#include "engine/memory.h"

namespace sdgen::ops {

class Conv2dScratch {
 public:
  explicit Conv2dScratch(Context& ctx, std::string name = "conv2d scratch") : ctx_(ctx), name_(std::move(name)) {}
  Conv2dScratch(const Conv2dScratch&) = delete;
  Conv2dScratch& operator=(const Conv2dScratch&) = delete;

  // What one op needs at the same time: a staged input, the fp32 partials of a split-K GEMM reading it, and
  // filters transformed per call (ops/conv2d_coop_upsample.cpp).
  enum class Slot { Primary, Partials, Filters };
  // At least `bytes` of device memory, valid until this object is destroyed. The slots never overlap.
  const Allocation& acquire(uint64_t bytes, Slot slot = Slot::Primary);
  // At least `count` uint32 counters, zero: every kernel that counts on them leaves them zero when it ends (the
  // fused Winograd-rows output, gemm_coop_rows.slang), so they are made zero once, when allocated.
  const Allocation& counters(uint64_t count);
  Context& context() const { return ctx_; }  // the device the memory lives on (nn::Builder asks what it can run)
  // Device memory held (current plus retired allocations, and the side scratch's).
  uint64_t bytesHeld() const;
  // The largest request of each slot (and the counters') summed, with the side scratch's: what bytesHeld() would
  // be had every graph been recorded with the scratch at its final size (the rest is retired growth steps).
  uint64_t largestNeedBytes() const;
  // A second scratch with the same lifetime, for ops recorded beside the main chain's (a ResNet's shortcut
  // product beside its conv1): ops on separate scratch memory have no write-after-write hazard between them,
  // so the sequence does not put a barrier between them for that. Created on first use.
  Conv2dScratch& side();

  // Between construction and destruction, an allocation this pass made that a larger request outgrows is freed
  // at once instead of retired (allocations made before the pass are retired as always: recorded graphs address
  // them). Whatever was recorded during the pass then addresses freed memory where outgrown() is true: the
  // caller discards it and records again (nothing grows the second time). Passes do not nest.
  class RecordingPass {
   public:
    explicit RecordingPass(Conv2dScratch& scratch);
    ~RecordingPass();
    RecordingPass(const RecordingPass&) = delete;
    RecordingPass& operator=(const RecordingPass&) = delete;
    bool outgrown() const;  // an allocation of this pass was freed (this scratch's or its side scratch's)

   private:
    Conv2dScratch& scratch_;
  };

 private:
  void setPass(bool on);
  void replace(Allocation& current, bool& madeInPass, uint64_t bytes, const std::string& name);
  bool freedInPass() const { return freedInPass_ || (side_ && side_->freedInPass()); }

  Context& ctx_;
  std::string name_;
  Allocation current_[3];  // by Slot
  Allocation counters_;
  uint64_t largest_[4] = {};  // by Slot, then the counters: the largest request in bytes
  bool madeInPass_[4] = {};  // by Slot, then the counters: current_ (counters_) was allocated by the open pass
  bool inPass_ = false, freedInPass_ = false;
  std::vector<Allocation> retired_;
  std::unique_ptr<Conv2dScratch> side_;
};

// Runs `record` (which records commands that address `scratch` and returns what owns them) inside a
// RecordingPass; where the pass outgrew its own allocations, discards that result and records again.
template <class Record>
auto recordWithinPass(Conv2dScratch& scratch, Record record) -> decltype(record()) {
  {
    Conv2dScratch::RecordingPass pass(scratch);
    auto recorded = record();
    if (!pass.outgrown()) return recorded;
  }  // the first recording is destroyed before the second allocates anything
  return record();
}

}  // namespace sdgen::ops
