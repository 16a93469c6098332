// The autotune's measurement on the device (ops/conv2d_tune.h makeGpuConvTimer).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/command_sequence.h"
#include "engine/error.h"
#include "engine/pipeline.h"
#include "graph/expr.h"
#include "ops/conv2d.h"
#include "ops/conv2d_tune.h"

namespace sdgen::ops {

namespace {

// 0.1 in the storage's encoding: finite, normal values (zeros or NaNs could take faster or slower paths).
constexpr uint32_t kTenthF32 = 0x3DCCCCCDu, kTenthF16Pair = 0x2E662E66u;

void fillAll(CommandSequence& seq, const Allocation& a, uint32_t value, const char* label) {
  if (a && a.size() >= 4) seq.fill(a, 0, a.size() / 4 * 4, value, label);
}

// Scratch input and output of a problem's shape, and scratch memory for split-K and Winograd.
struct Operands {
  Operands(Context& ctx, const ConvProblem& prob, DType dt)
      : ctx(ctx),
        inShape{prob.n, prob.h, prob.w, prob.cin},
        outShape{prob.n, prob.ho, prob.wo, prob.cout},
        in(ctx.allocate(uint64_t(graph::numel(inShape)) * dtypeSize(dt), "autotune input")),
        out(ctx.allocate(uint64_t(graph::numel(outShape)) * dtypeSize(dt), "autotune output")),
        input(graph::buffer(graph::view(in, dt, inShape))),
        sink(graph::bufferSink(graph::view(out, dt, outShape))),
        scratch(ctx, "autotune scratch") {}
  void record(CommandSequence& seq, const Conv2dWeights& weights, const ConvCandidate& c) {
    conv2d(ctx, seq, input, weights, sink, {.scratch = &scratch, .candidate = c, .label = "autotune " + c.name()});
  }
  Context& ctx;
  graph::Shape inShape, outShape;
  Allocation in, out;
  graph::Expr input;
  graph::Sink sink;
  Conv2dScratch scratch;
};

std::string failureNote(const ConvCandidate& c, const Error& e) { return convTuneFailureNote(c.name(), e.what()); }

// Each candidate recorded alone (a candidate that fails to record gets no probe; `failures`, where given, notes
// why). Recording requests the kernels without waiting. `urgent`: they go to the front of the compile queue
// (KernelRegistry::UrgentRequests), as the tuning waits for them now, not for the graphs' kernels requested before;
// a precompile queues them in order.
std::vector<std::unique_ptr<CommandSequence>> recordProbes(Operands& ops, const Conv2dWeights& weights,
                                                           const std::vector<ConvCandidate>& candidates, bool urgent,
                                                           std::vector<std::string>* failures = nullptr) {
  std::vector<std::unique_ptr<CommandSequence>> probes(candidates.size());
  std::optional<KernelRegistry::UrgentRequests> scope;
  if (urgent) scope.emplace();
  for (size_t i = 0; i < candidates.size(); ++i) {
    try {
      probes[i] = std::make_unique<CommandSequence>(ops.ctx);
      ops.record(*probes[i], weights, candidates[i]);
    } catch (const Error& e) {
      probes[i].reset();
      if (failures) failures->push_back(failureNote(candidates[i], e));
    }
  }
  return probes;
}

class GpuConvTimer final : public ConvCandidateTimer {
 public:
  GpuConvTimer(Context& ctx, int reps) : ctx_(ctx), reps_(std::clamp(reps, 1, 100)) {}

  void precompile(const ConvProblem& prob, const Conv2dWeights& weights,
                  const std::vector<ConvCandidate>& candidates) override {
    // The probes are recorded, which requests their kernels, and dropped unsubmitted with their memory: the
    // compiles go on, and time() finds them done or in flight.
    Operands ops(ctx_, prob, weights.storage());
    recordProbes(ops, weights, candidates, false);
  }

  std::vector<std::optional<double>> time(const ConvProblem& prob, const Conv2dWeights& weights,
                                          const std::vector<ConvCandidate>& candidates, uint64_t& launches) override {
    const DType dt = weights.storage();
    Operands ops(ctx_, prob, dt);
    {
      CommandSequence fill(ctx_);
      const uint32_t tenth = dt == DType::F16 ? kTenthF16Pair : kTenthF32;
      fillAll(fill, ops.in, tenth, "autotune input");
      if (weights.hasGemm()) fillAll(fill, weights.gemm(), tenth, "autotune weights");
      if (weights.hasWinograd()) fillAll(fill, weights.winograd(), kTenthF32, "autotune winograd weights");
      fillAll(fill, weights.bias(), 0, "autotune bias");
      fill.end();
      fill.run();
    }
    auto record = [&](CommandSequence& seq, const ConvCandidate& c) { ops.record(seq, weights, c); };
    // Each candidate alone first (its kernels compiled and checked): one that fails drops out, not the problem.
    // All are recorded before any is ended, so their kernels compile in parallel (recording never waits).
    std::vector<std::optional<double>> result(candidates.size());
    failures_.clear();
    std::vector<std::unique_ptr<CommandSequence>> probes = recordProbes(ops, weights, candidates, true, &failures_);
    std::vector<size_t> runnable;
    const auto compileStart = std::chrono::steady_clock::now();
    for (size_t i = 0; i < candidates.size(); ++i) {
      try {
        if (!probes[i]) continue;
        probes[i]->end();  // waits for its kernels (compiling a still queued one on this thread)
        runnable.push_back(i);
      } catch (const Error& e) {
        failures_.push_back(failureNote(candidates[i], e));
      }
    }
    compileSeconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - compileStart).count();
    probes.clear();
    if (runnable.empty()) return result;
    // Untimed launches of each candidate first: first-submission effects, and clocks. Session 52 (H100): the
    // first problem a cold process tuned measured 4-5x slow on every candidate (clocks still low after idling),
    // with one untimed run of every repetition as before (it doubled the tuning's GPU time) or one launch each,
    // and picked a tile 7 % off the best. So after the GPU idled (the first problem, or a second without
    // timing), the candidates run until kClockRampMs has passed and two runs agree; otherwise once.
    {
      CommandSequence warm(ctx_, {.timestamps = true});
      for (size_t i : runnable) record(warm, candidates[i]);
      warm.end();
      using Clock = std::chrono::steady_clock;
      const auto start = Clock::now();
      const bool ramp = !lastTimed_ || start - *lastTimed_ > std::chrono::seconds(1);
      double previous = 0;
      for (int run = 0; run < kMaxWarmRuns; ++run) {
        warm.run();
        launches += warm.dispatchCount();
        if (!ramp) break;
        double ns = 0;
        for (const CommandTiming& t : warm.timings()) ns += t.ns;
        const bool steady = run > 0 && std::abs(ns - previous) <= 0.03 * previous;
        previous = ns;
        const double elapsed = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
        if ((steady && elapsed >= kClockRampMs) || elapsed >= 3 * kClockRampMs) break;  // noisy clocks: 0.3 s at most
      }
    }
    // Repetitions interleave the candidates, so a clock change mid-run biases none of them.
    CommandSequence seq(ctx_, {.timestamps = true});
    std::vector<std::vector<std::pair<size_t, size_t>>> spans(candidates.size());  // command ranges per rep
    for (int rep = 0; rep < reps_; ++rep)
      for (size_t i : runnable) {
        const size_t first = seq.commandCount();
        record(seq, candidates[i]);
        spans[i].push_back({first, seq.commandCount()});
      }
    seq.end();
    seq.run();
    launches += seq.dispatchCount();
    lastTimed_ = std::chrono::steady_clock::now();
    const std::vector<CommandTiming> t = seq.timings();
    for (size_t i : runnable) {
      std::vector<double> ms;
      for (auto [a, b] : spans[i]) {
        double ns = 0;
        for (size_t j = a; j < b && j < t.size(); ++j) ns += t[j].ns;
        ms.push_back(ns * 1e-6);
      }
      std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
      result[i] = ms[ms.size() / 2];
    }
    return result;
  }

  double compileSeconds() const override { return compileSeconds_; }
  std::vector<std::string> failures() const override { return failures_; }

 private:
  static constexpr double kClockRampMs = 100;
  static constexpr int kMaxWarmRuns = 400;
  Context& ctx_;
  int reps_;
  double compileSeconds_ = 0;
  std::vector<std::string> failures_;  // of the last time() call
  std::optional<std::chrono::steady_clock::time_point> lastTimed_;  // the last timed run's end
};

}  // namespace

std::string convTuneFailureNote(const std::string& candidate, const std::string& error) {
  std::string why;
  for (size_t i = 0; i < error.size() && why.size() < kMaxFailureWhy; ++i) {
    if (error[i] == '\n') {
      if (i + 1 < error.size()) why += " | ";
    } else if (error[i] != '\r') {
      why += error[i];
    }
  }
  if (why.size() > kMaxFailureWhy) why.resize(kMaxFailureWhy);
  return candidate + ": " + why;
}

std::unique_ptr<ConvCandidateTimer> makeGpuConvTimer(Context& ctx, int reps) {
  return std::make_unique<GpuConvTimer>(ctx, reps);
}

}  // namespace sdgen::ops
