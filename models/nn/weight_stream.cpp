#include "models/nn/weight_stream.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <span>
#include <thread>

#include "engine/command_sequence.h"
#include "engine/error.h"
#include "ops/lora_merge.h"

namespace sdgen::nn {

namespace {

constexpr uint64_t kBatchBytes = 64ull << 20;  // staging per batch: large transfers, bounded host memory
constexpr uint64_t kAlign = 16;                // every job's bytes start 16-byte aligned in staging and scratch
constexpr unsigned kMaxReadThreads = 4;        // pread from the page cache scales to a few threads

uint64_t alignUp(uint64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

ops::RawDType toRaw(models::TensorDType t) {
  switch (t) {
    case models::TensorDType::F32: return ops::RawDType::F32;
    case models::TensorDType::F16: return ops::RawDType::F16;
    case models::TensorDType::BF16: return ops::RawDType::BF16;
    default: throw Error(std::string("weights of dtype ") + models::tensorDTypeName(t) + " cannot be packed");
  }
}

}  // namespace

WeightStream::WeightStream(Context& ctx) : ctx_(ctx) {
  const char* env = std::getenv("SDGEN_HOST_PACKING");
  hostPacking_ = !(env && std::string(env) == "0");
}

ops::RawDType WeightStream::Job::dtype() const { return raw.file ? toRaw(raw.dtype) : ops::RawDType::F32; }

uint64_t WeightStream::Job::bytes() const {
  if (updates.empty()) return sourceBytes();
  uint64_t b = alignUp(sourceBytes());
  for (const LowRankUpdate& u : updates) b += alignUp(u.left->size() * 4) + alignUp(u.right->size() * 4);
  return b;
}

bool WeightStream::Job::direct() const {
  return updates.empty() && dtype() == ops::RawDType::F32 && storage == DType::F32 && layout.rows == 1 &&
         layout.taps == 1 && layout.width == 1 && layout.rowStride == 1 && layout.colOffset == 0;
}

void WeightStream::checkUpdates(const Job& j) const {
  for (const LowRankUpdate& u : j.updates) {
    const uint64_t m = u.rank ? u.left->size() / u.rank : 0, n = u.rank ? u.right->size() / u.rank : 0;
    if (u.rank == 0 || m * u.rank != u.left->size() || n * u.rank != u.right->size() || m * n != j.elements())
      throw Error("LoRA update of " + j.name + ": factors of " + std::to_string(u.left->size()) + " and " +
                  std::to_string(u.right->size()) + " values (rank " + std::to_string(u.rank) +
                  ") do not make its " + std::to_string(j.elements()) + " elements");
  }
}

void WeightStream::pack(models::RawWeight source, const Allocation& dst, DType storage,
                        const ops::PackLayout& layout, std::vector<LowRankUpdate> updates) {
  Job j;
  j.updates = std::move(updates);
  j.name = "'" + source.name + "' in '" + source.file->path() + "'";
  j.raw = std::move(source);
  j.dst = &dst;
  j.storage = storage;
  j.layout = layout;
  toRaw(j.raw.dtype);  // refuse integer tensors now, naming nothing the caller has not checked
  if (j.layout.sourceElements() != j.raw.elements())
    throw Error("tensor " + j.name + " has " + std::to_string(j.raw.elements()) + " elements, the packing expects " +
                std::to_string(j.layout.sourceElements()));
  checkUpdates(j);
  jobs_.push_back(std::move(j));
}

void WeightStream::pack(std::vector<float> values, const Allocation& dst, DType storage,
                        const ops::PackLayout& layout, const std::string& name, std::vector<LowRankUpdate> updates) {
  Job j;
  j.updates = std::move(updates);
  j.name = name;
  j.values = std::move(values);
  j.dst = &dst;
  j.storage = storage;
  j.layout = layout;
  if (j.layout.sourceElements() != j.values.size())
    throw Error(name + ": " + std::to_string(j.values.size()) + " values, the packing expects " +
                std::to_string(j.layout.sourceElements()));
  checkUpdates(j);
  jobs_.push_back(std::move(j));
}

// One batch's staging and scratch memory and its submission. The sequence is declared last so that it is
// destroyed first: its destructor waits for the device before the memory it reads is freed.
struct WeightStream::Batch {
  Allocation staging, scratch;
  std::vector<Allocation> merged;  // the fp32 weights LoRA updates are merged into
  std::unique_ptr<CommandSequence> seq;
};

// Runs work(a, b) over jobs [first, last) split into contiguous groups of about equal bytes, one thread each (this
// one takes the last); rethrows the first failure in job order once every thread has finished.
template <typename Work>
static void forJobGroups(const std::vector<uint64_t>& bytes, size_t first, size_t last, Work work) {
  uint64_t total = 0;
  for (size_t i = first; i < last; ++i) total += bytes[i];
  const unsigned threads = std::max(1u, std::min({kMaxReadThreads, std::thread::hardware_concurrency(),
                                                  static_cast<unsigned>(total / (4ull << 20) + 1)}));
  std::vector<size_t> cuts = {first};
  uint64_t acc = 0;
  for (size_t i = first; i < last && cuts.size() < threads; ++i) {
    acc += bytes[i];
    if (acc >= total * cuts.size() / threads) cuts.push_back(i + 1);
  }
  cuts.push_back(last);
  std::vector<std::exception_ptr> errors(cuts.size() - 1);
  std::vector<std::thread> pool;
  for (size_t g = 0; g + 1 < cuts.size(); ++g) {
    auto run = [&, g] {
      try {
        work(cuts[g], cuts[g + 1]);
      } catch (...) {
        errors[g] = std::current_exception();
      }
    };
    if (g + 2 == cuts.size())
      run();
    else
      pool.emplace_back(run);
  }
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors)  // the first failing tensor in load order
    if (e) std::rethrow_exception(e);
}

void WeightStream::readBatch(std::vector<Job>& jobs, size_t first, size_t last, const std::vector<uint64_t>& offsets,
                             uint8_t* staging) {
  std::vector<uint64_t> bytes(jobs.size());
  for (size_t i = first; i < last; ++i) bytes[i] = jobs[i].bytes();
  forJobGroups(bytes, first, last, [&](size_t a, size_t b) {
    for (size_t i = a; i < b; ++i) {
      Job& j = jobs[i];
      uint8_t* out = staging + offsets[i];
      if (j.raw.file)
        j.raw.read({out, j.raw.bytes});
      else
        std::memcpy(out, j.values.data(), j.values.size() * 4);
      uint64_t at = alignUp(j.sourceBytes());
      for (const LowRankUpdate& u : j.updates)
        for (const auto* f : {u.left.get(), u.right.get()}) {
          std::memcpy(out + at, f->data(), f->size() * 4);
          at += alignUp(f->size() * 4);
        }
    }
  });
}

bool WeightStream::packsOnHost(const Job& j) const {
  return hostPacking_ && j.updates.empty() && j.dst->mapped() != nullptr;
}

void WeightStream::packOnHost(std::vector<Job>& jobs) {
  // Host writes are not ordered after earlier submissions the way a queued pack is: let them finish first (a
  // reload into weights in place, e.g. LoRA tags removed, must not change what a running graph reads).
  ctx_.device().waitIdle();
  std::vector<uint64_t> bytes(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) bytes[i] = jobs[i].sourceBytes();
  forJobGroups(bytes, 0, jobs.size(), [&](size_t a, size_t b) {
    std::vector<uint8_t> raw;  // one file tensor at a time, as the file stores it
    for (size_t i = a; i < b; ++i) {
      const Job& j = jobs[i];
      std::span<const uint8_t> src;
      if (j.raw.file) {
        raw.resize(j.raw.bytes);
        j.raw.read({raw.data(), raw.size()});
        src = raw;
      } else {
        src = {reinterpret_cast<const uint8_t*>(j.values.data()), j.values.size() * 4};
      }
      std::span<uint8_t> dst{j.dst->mapped(), j.dst->size()};
      if (j.direct()) {
        if (src.size() > dst.size())
          throw Error(j.name + ": " + std::to_string(src.size()) + " bytes do not fit the destination of " +
                      std::to_string(dst.size()));
        std::memcpy(dst.data(), src.data(), src.size());
      } else {
        ops::packWeightsOnHost(src, j.dtype(), dst, j.storage, j.layout, j.name);
      }
    }
  });
}

// Source -> fp32 -> + each update -> packed, three kinds of dispatch in the batch's sequence (its hazard tracking
// orders them).
void WeightStream::recordMerge(const Job& j, Batch& b, uint64_t offset) {
  const uint64_t n = j.elements();
  const Allocation& merged =
      b.merged.emplace_back(ctx_.allocate(std::max<uint64_t>(n, 1) * 4, "LoRA merge " + j.name));
  const VkDeviceAddress base = b.scratch.address() + offset;
  ops::packWeights(ctx_, *b.seq, {base, j.sourceBytes(), j.dtype()}, merged, DType::F32,
                   ops::PackLayout::copy(int64_t(n)), j.name + " (to fp32 for LoRA)");
  uint64_t at = alignUp(j.sourceBytes());
  for (const LowRankUpdate& u : j.updates) {
    const VkDeviceAddress left = base + at;
    at += alignUp(u.left->size() * 4);
    const VkDeviceAddress right = base + at;
    at += alignUp(u.right->size() * 4);
    const uint32_t m = uint32_t(u.left->size() / u.rank), cols = uint32_t(u.right->size() / u.rank);
    ops::loraMerge(ctx_, *b.seq, merged.address(), left, right, {m, cols, u.rank}, u.scale, j.name);
  }
  ops::packWeights(ctx_, *b.seq, {merged.address(), n * 4, ops::RawDType::F32}, *j.dst, j.storage, j.layout, j.name);
}

void WeightStream::flush() {
  if (jobs_.empty()) return;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<Job> all = std::move(jobs_);
  jobs_.clear();
  // Destinations the host can write (mapped device memory: lavapipe) are packed in the read threads, straight
  // into place: no staging, scratch, copy or dispatch (llvmpipe runs the pack kernel lane by lane, several
  // times slower than the host loop). LoRA merges stay on the device.
  std::vector<Job> hostJobs, jobs;
  for (Job& j : all) (packsOnHost(j) ? hostJobs : jobs).push_back(std::move(j));
  if (!hostJobs.empty()) {
    const auto r0 = std::chrono::steady_clock::now();
    packOnHost(hostJobs);
    stats_.readMs += msSince(r0);
    for (const Job& j : hostJobs) stats_.bytes += j.sourceBytes();
    stats_.jobs += hostJobs.size();
    stats_.hostJobs += hostJobs.size();
  }
  if (jobs.empty()) {
    stats_.totalMs += msSince(t0);
    return;
  }

  uint64_t largest = 0, total = 0;
  for (const Job& j : jobs) {
    largest = std::max(largest, alignUp(j.bytes()));
    total += alignUp(j.bytes());
  }
  // A batch holds whole tensors: at least the largest one, at most kBatchBytes otherwise.
  const uint64_t batchBytes = std::max<uint64_t>({kAlign, largest, std::min(total, kBatchBytes)});
  std::vector<uint64_t> offsets(jobs.size());
  Batch batches[2];
  size_t next = 0;
  for (uint64_t n = 0; next < jobs.size(); ++n) {
    Batch& b = batches[n % 2];
    b.seq.reset();  // waits for the batch that used this memory before
    b.merged.clear();
    if (!b.staging) {
      b.staging = ctx_.memory().allocate(MemoryKind::Staging, batchBytes, "weight streaming staging");
      b.scratch = ctx_.allocate(batchBytes, "weight streaming scratch");
    }
    const size_t first = next;
    uint64_t used = 0;
    while (next < jobs.size() && used + alignUp(jobs[next].bytes()) <= batchBytes) {
      offsets[next] = used;
      used += alignUp(jobs[next].bytes());
      ++next;
    }
    const auto r0 = std::chrono::steady_clock::now();
    readBatch(jobs, first, next, offsets, b.staging.mapped());
    stats_.readMs += msSince(r0);

    b.seq = std::make_unique<CommandSequence>(ctx_);
    // Only the bytes a pack dispatch reads go to scratch: one copy per run of consecutive such jobs.
    for (size_t i = first; i < next;) {
      if (jobs[i].direct()) {
        ++i;
        continue;
      }
      size_t end = i;
      while (end < next && !jobs[end].direct()) ++end;
      const uint64_t from = offsets[i], to = offsets[end - 1] + jobs[end - 1].bytes();
      if (to > from) b.seq->copy(b.staging, from, b.scratch, from, to - from, "weights to scratch");
      i = end;
    }
    for (size_t i = first; i < next; ++i) {
      const Job& j = jobs[i];
      if (j.direct()) {
        if (j.bytes() > j.dst->size())
          throw Error(j.name + ": " + std::to_string(j.bytes()) + " bytes do not fit the destination of " +
                      std::to_string(j.dst->size()));
        if (j.bytes() > 0) b.seq->copy(b.staging, offsets[i], *j.dst, 0, j.bytes(), "weights " + j.name);
        continue;
      }
      if (!j.updates.empty()) {
        recordMerge(j, b, offsets[i]);
        continue;
      }
      ops::RawTensorView src{b.scratch.address() + offsets[i], j.bytes(), j.dtype()};
      ops::packWeights(ctx_, *b.seq, src, *j.dst, j.storage, j.layout, j.name);
    }
    b.seq->end();
    b.seq->submit();
    stats_.bytes += used;
    stats_.batches++;
  }
  for (Batch& b : batches) b.seq.reset();
  stats_.jobs += jobs.size();
  stats_.totalMs += msSince(t0);
}

}  // namespace sdgen::nn
