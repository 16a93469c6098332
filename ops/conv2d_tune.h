#pragma once
// The on-device micro-autotune of convolutions (docs/dispatch-conv.md "Autotune"). For each distinct problem
// (shape, geometry, storage dtype; NHWC) it times the problem's candidates (ops/conv2d_candidates.h) once on
// scratch tensors with GPU timestamps, keeps the milliseconds in the persistent cache (ops/conv2d_tune_cache.h)
// under this device's key, and plans every ConvAlgo::Auto convolution whose weights it packed with the
// fastest candidate that can run that call. Tuning happens on a problem's first use (when its graph is
// recorded, before the first step runs); at load, the cache decides whether Winograd filters are packed.
// One tuner per loaded model (nn::ParameterStore::setConvTuner); thread-safe.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/context.h"
#include "ops/conv2d_plan.h"
#include "ops/conv2d_tune_cache.h"
#include "ops/conv2d_tune_settings.h"

namespace sdgen::ops {

// Times candidates of one problem (the test seam: tests inject fake timings).
class ConvCandidateTimer {
 public:
  virtual ~ConvCandidateTimer() = default;
  // Milliseconds of each candidate (median of the repetitions), nullopt for one that failed to compile or run.
  // `weights`: scratch weights of the problem with every layout (contents undefined: the timer fills them).
  // `launches` grows by the dispatches submitted.
  virtual std::vector<std::optional<double>> time(const ConvProblem& prob, const Conv2dWeights& weights,
                                                  const std::vector<ConvCandidate>& candidates,
                                                  uint64_t& launches) = 0;
  // Seconds spent so far waiting for (or compiling) candidates' kernels, part of the tuning's wall time.
  virtual double compileSeconds() const { return 0; }
  // Of the last time() call: each candidate that could not be recorded or compiled, as "<name>: <why>" (its
  // error's first line); the tuner reports them (ConvTuner::droppedCandidates), so that a kernel that no longer
  // compiles does not just vanish from the choice.
  virtual std::vector<std::string> failures() const { return {}; }
  // Requests the compiles of the candidates' kernels and returns at once (ConvTuner::precompile).
  virtual void precompile(const ConvProblem& /*prob*/, const Conv2dWeights& /*weights*/,
                          const std::vector<ConvCandidate>& /*candidates*/) {}
};
// Times on this device: scratch input and output of the problem's shape; every candidate
// recorded `reps + 1` times into one sequence with a timestamp after each command, run once untimed (clocks,
// first-submission effects) and once timed.
std::unique_ptr<ConvCandidateTimer> makeGpuConvTimer(Context& ctx, int reps);
// A timer's failure note, "<candidate>: <why>" on one line: the error's lines joined by " | " (a compile error's
// first line names the kernel, its second the first diagnostic; later ones may quote generated source), the reason
// cut at kMaxFailureWhy characters.
inline constexpr size_t kMaxFailureWhy = 240;
std::string convTuneFailureNote(const std::string& candidate, const std::string& error);

// What the tuner did (sdgen -v).
struct ConvTuneStats {
  bool enabled = false;
  int tuned = 0;        // problems measured by this process
  int fromCache = 0;    // problems whose measurements came from the cache file
  int failed = 0;       // problems no candidate could be timed for (the rule runs them)
  int dropped = 0;      // candidates that could not be recorded or compiled (ConvTuner::droppedCandidates)
  uint64_t launches = 0;  // tuning dispatches submitted
  double seconds = 0;   // wall time spent tuning (candidate kernels' compiles included)
  double compileSeconds = 0;  // of which waiting for (or compiling) the candidates' kernels
};

// Per conv label (Conv2dOptions::label): what ran and where the choice came from (sdgen --profile-conv).
struct ConvChoice {
  std::string problem, candidate;
  std::string source;  // "tuner", "cache" or "rule"
};

// "NVIDIA H100 80GB HBM3 | NVIDIA 580.65.06 | 10de:2330 | <pipelineCacheUUID hex>": a device and its driver.
std::string convTuneDeviceKey(const DeviceInfo& device);
// "[2,64,64,320] -> [2,64,64,320] 3x3 s1 p1 d1 | f16 | nhwc": a problem bucket.
std::string convTuneProblemKey(const ConvProblem& prob, DType storage);
// "Cin 320 Cout 320 3x3 s1 p1 d1 f16": the weights a bucket concerns.
std::string convTuneFamily(int64_t cin, int64_t cout, const Conv2dParams& p, DType storage);
// Candidates measured within this fraction of the fastest are ties (docs/dispatch-conv.md "Autotune").
inline constexpr double kConvTuneTieMargin = 0.05;
// The order in which plan() tries a problem's measured candidates: the ties (within kConvTuneTieMargin of the
// fastest) first — `preferred` (the rule's candidate) if it is one of them, then fp32 accumulation before fp16
// ("f16acc"), then by name —, then the rest by
// time. Two fresh tunes whose timings differ by noise thus pick the same candidate (same summation order, same
// bits: issue 24's determinism across processes); only a clearly faster candidate displaces the rule's.
std::vector<std::string> rankTunedCandidates(const std::map<std::string, double>& ms, const std::string& preferred);
// Whether the settings turn tuning on for this device (Auto: GPUs with timestamps; SDGEN_AUTOTUNE overrides).
bool convTuneEnabled(const ConvTuneSettings& settings, const DeviceInfo& device);

class ConvTuner {
 public:
  // `timer` null: makeGpuConvTimer. Loads the cache unless settings.retune.
  ConvTuner(Context& ctx, ConvTuneSettings settings, std::unique_ptr<ConvCandidateTimer> timer = nullptr);
  ConvTuner(const ConvTuner&) = delete;
  ConvTuner& operator=(const ConvTuner&) = delete;

  bool enabled() const { return enabled_; }
  // The plan of an Auto convolution: the first measured candidate in rankTunedCandidates' order that passes its
  // contract in `cc` (tuning the problem first when it has no measurements), else planConv's rule. Records the
  // choice under `label`.
  ConvPlan plan(const ConvProblem& prob, const ConvContext& cc, const std::string& label);
  // A problem plan() will tune (no cache entry): starts compiling its candidates' kernels and returns at once.
  // nn::Builder calls it for every conv as a network's graph is built, so all of a network's candidates compile
  // together on the compile workers before the recording tunes its problems one by one (each of which waited
  // for its own candidates' compiles before: 5.4 s of the H100's 6.7 s of cold tuning for SD 1.5).
  void precompile(const ConvProblem& prob, DType storage);
  // At load: whether to pack Winograd filters for these weights. Tuning off, a geometry that is not
  // Winograd's, or no measurement of this family yet: `ruleWants`. Else whether the tuning run ranked Winograd
  // first for a problem of the family (ConvTuneEntry::chosen; so a later run plans the same kernels), or, for entries
  // of earlier files without that, whether a Winograd candidate was the fastest or tied with it
  // (kConvTuneTieMargin): wherever plan() may choose Winograd, its filters exist.
  bool packWinogradFilters(int64_t cin, int64_t cout, const Conv2dParams& p, DType storage, bool ruleWants) const;

  ConvTuneStats stats() const;
  std::map<std::string, ConvChoice> choices() const;
  std::vector<std::string> warnings() const;  // the cache's, and problems whose tuning failed
  // "<problem key>: <candidate>: <why>" for each candidate the timer could not record or compile (at most
  // kMaxDroppedNotes kept; stats().dropped counts them all): sdgen -v and --profile-conv list them.
  std::vector<std::string> droppedCandidates() const;
  static constexpr size_t kMaxDroppedNotes = 64;
  std::string cachePath() const { return cache_.path(); }

 private:
  // The problem's entry: from memory, the cache, or measured now (nullopt when nothing could be timed).
  std::optional<ConvTuneEntry> entryFor(const ConvProblem& prob, const ConvContext& cc, bool& measured);
  // Scratch weights of the problem in the layouts its candidates read (the Winograd layout only where a
  // Winograd candidate is timed, i.e. where no coop candidate runs; coop-winograd-rows' filters where it is timed),
  // and those candidates.
  Conv2dWeights tuningLayouts(const ConvProblem& prob, const DeviceInfo& device, DType storage,
                              std::vector<ConvCandidate>& candidates);
  // Whether a measured problem of this family ranked `algo` first (or, entries without that, had it the fastest
  // or tied with it); `seen`: whether the family has measurements at all.
  bool familyMayChoose(int64_t cin, int64_t cout, const Conv2dParams& p, DType storage, ConvAlgo algo,
                       bool& seen) const;

  Context& ctx_;
  ConvTuneSettings settings_;
  bool enabled_ = false;
  std::unique_ptr<ConvCandidateTimer> timer_;
  mutable std::mutex mutex_;
  ConvTuneCache cache_;
  std::set<std::string> counted_;    // problems counted as tuned, from the cache or failed
  std::set<std::string> tunedHere_;  // problems measured by this process
  std::set<std::string> precompiled_;  // problems whose candidates' compiles were requested
  std::map<std::string, ConvChoice> choices_;
  std::vector<std::string> warnings_;
  std::vector<std::string> dropped_;
  ConvTuneStats stats_;
};

}  // namespace sdgen::ops
