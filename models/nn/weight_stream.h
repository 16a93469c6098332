#pragma once
// Streams a network's weights to the device and packs them there. Loaders queue one job per destination range
// (a checkpoint tensor as the file stores it, or host floats where the host computes a layout), then flush():
// the jobs' bytes are read (pread, several threads) into one host-visible staging buffer per batch of up to
// 64 MiB, copied to device scratch with one transfer, and packed into their destinations by one dispatch each
// (ops/weight_pack.h), one submission per batch. Two batches are in flight: the host reads the next while the
// device packs the last. Staging and scratch are freed when flush() returns, so the only resident copy of a
// weight is its packed layout.
//
// A weight with LoRA updates (lora_targets.h) takes one more step on the device: its bytes are converted to fp32
// in a temporary buffer, each update is merged there (ops/lora_merge.h: W += scale * left . right, the factors
// uploaded with the weight in the same staging batch), and the packing reads the merged fp32 values.
//
// Where the device's memory is host visible and coherent (lavapipe), jobs without LoRA updates skip all of that:
// the read threads pack them (ops::packWeightsOnHost, the same bytes as the kernel) straight into place.
//
// Errors (a file that shrank since it was opened, a sizes mismatch) are sdgen::Error naming the file and the
// tensor; flush() waits for the work in flight before rethrowing, so the caller can free every destination.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/context.h"
#include "engine/dtype.h"
#include "models/weight_source.h"
#include "ops/weight_pack.h"

namespace sdgen::nn {

// W[M][N] += scale * left[M][rank] * right[rank][N], W in the source's row-major element order.
struct LowRankUpdate {
  std::shared_ptr<const std::vector<float>> left, right;
  uint32_t rank = 0;
  float scale = 0;
};

struct WeightStreamStats {
  uint64_t bytes = 0;    // bytes read from files or host memory
  uint64_t jobs = 0, batches = 0;
  uint64_t hostJobs = 0;  // of `jobs`, packed by the host straight into mapped device memory
  double readMs = 0;     // host time spent reading into staging
  double totalMs = 0;    // wall time of flush()
};

class WeightStream {
 public:
  // SDGEN_HOST_PACKING=0 in the environment starts it with host packing off (tests of the device path on
  // lavapipe).
  explicit WeightStream(Context& ctx);
  WeightStream(const WeightStream&) = delete;
  WeightStream& operator=(const WeightStream&) = delete;

  // Packs the stored tensor into `dst` as `layout` in `storage`. `dst` must outlive the next flush().
  // `updates` are merged first (see above).
  void pack(models::RawWeight source, const Allocation& dst, DType storage, const ops::PackLayout& layout,
            std::vector<LowRankUpdate> updates = {});
  // The same for values computed on the host (fp32).
  void pack(std::vector<float> values, const Allocation& dst, DType storage, const ops::PackLayout& layout,
            const std::string& name, std::vector<LowRankUpdate> updates = {});

  // Runs every queued job; returns when the packed weights are in place (or throws, see above).
  void flush();
  size_t pending() const { return jobs_.size(); }
  // Drops the queued jobs unrun (their destinations are about to be freed).
  void discard() { jobs_.clear(); }
  // Totals over every flush() so far.
  const WeightStreamStats& stats() const { return stats_; }
  // Whether jobs whose destination is mapped (host-visible device memory) are packed by the host in place
  // (default) rather than by the pack kernel; the two give the same bytes (tests compare them).
  void setHostPacking(bool allowed) { hostPacking_ = allowed; }

 private:
  struct Job {
    models::RawWeight raw;        // when raw.file is set
    std::vector<float> values;    // otherwise
    const Allocation* dst = nullptr;
    DType storage = DType::F32;
    ops::PackLayout layout;
    std::string name;
    std::vector<LowRankUpdate> updates;
    uint64_t sourceBytes() const { return raw.file ? raw.bytes : values.size() * 4; }
    uint64_t elements() const { return raw.file ? raw.elements() : values.size(); }
    // The source, then each update's left and right factors (fp32), each part 16-byte aligned.
    uint64_t bytes() const;
    ops::RawDType dtype() const;
    // F32 to F32 without a layout change: a plain copy from staging, no scratch and no dispatch.
    bool direct() const;
  };
  struct Batch;
  bool packsOnHost(const Job& j) const;
  void packOnHost(std::vector<Job>& jobs);
  void checkUpdates(const Job& j) const;
  void recordMerge(const Job& j, Batch& b, uint64_t offset);
  void readBatch(std::vector<Job>& jobs, size_t first, size_t last, const std::vector<uint64_t>& offsets,
                 uint8_t* staging);

  Context& ctx_;
  std::vector<Job> jobs_;
  WeightStreamStats stats_;
  bool hostPacking_ = true;
};

}  // namespace sdgen::nn
