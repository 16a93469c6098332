#include "ops/conv2d_tune.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "engine/error.h"
#include "ops/conv2d_candidates.h"

namespace sdgen::ops {

std::string convTuneDeviceKey(const DeviceInfo& d) {
  char ids[32];
  std::snprintf(ids, sizeof ids, "%04x:%04x", d.vendorId, d.deviceId);
  std::string uuid;
  for (uint8_t b : d.pipelineCacheUUID) {
    char hex[3];
    std::snprintf(hex, sizeof hex, "%02x", b);
    uuid += hex;
  }
  return d.name + " | " + d.driverName + " " + d.driverInfo + " | " + ids + " | " + uuid;
}

std::string convTuneProblemKey(const ConvProblem& prob, DType storage) {
  return prob.str() + " | " + dtypeName(storage) + " | nhwc";
}

std::string convTuneFamily(int64_t cin, int64_t cout, const Conv2dParams& p, DType storage) {
  return "Cin " + std::to_string(cin) + " Cout " + std::to_string(cout) + " " + p.str() + " " + dtypeName(storage);
}

std::vector<std::string> rankTunedCandidates(const std::map<std::string, double>& ms, const std::string& preferred) {
  std::vector<std::pair<double, std::string>> byTime;
  for (const auto& [name, t] : ms) byTime.push_back({t, name});
  std::sort(byTime.begin(), byTime.end());
  std::vector<std::string> ties, rest;
  const double limit = byTime.empty() ? 0 : byTime.front().first * (1 + kConvTuneTieMargin);
  for (const auto& [t, name] : byTime) (t <= limit ? ties : rest).push_back(name);
  // Within the ties fp32 accumulation before fp16 (" f16acc"): the same speed with the more accurate sum
  // (session 45: the fp32 halo tile 0.999 ms against 1.039 for the fp16 one, which its name put first).
  auto halfAcc = [](const std::string& n) { return n.find(" f16acc") != std::string::npos; };
  std::sort(ties.begin(), ties.end(), [&](const std::string& a, const std::string& b) {
    if ((a == preferred) != (b == preferred)) return a == preferred;
    if (halfAcc(a) != halfAcc(b)) return !halfAcc(a);
    return a < b;
  });
  ties.insert(ties.end(), rest.begin(), rest.end());
  return ties;
}

bool convTuneEnabled(const ConvTuneSettings& s, const DeviceInfo& device) {
  if (!device.timestampsSupported) return false;  // nothing to measure with
  if (s.mode != ConvTuneSettings::Mode::Auto) return s.mode == ConvTuneSettings::Mode::On;
  if (const char* v = std::getenv("SDGEN_AUTOTUNE"); v && *v) {
    if (!std::strcmp(v, "1") || !std::strcmp(v, "on")) return true;
    if (!std::strcmp(v, "0") || !std::strcmp(v, "off")) return false;
  }
  return device.type != "cpu";
}

static std::string cacheFile(Context& ctx, const ConvTuneSettings& s) {
  return (s.cacheDir.empty() ? ctx.compiler().cacheDir() : s.cacheDir) + "/conv-tune-v" +
         std::to_string(ConvTuneCache::kVersion) + ".json";
}

// SDGEN_AUTOTUNE_REPS=N (1-100) replaces settings.reps: a developer knob for measuring the tuning's stability.
static int timedReps(const ConvTuneSettings& s) {
  if (const char* env = std::getenv("SDGEN_AUTOTUNE_REPS"); env && *env) return std::clamp(std::atoi(env), 1, 100);
  return s.reps;
}

ConvTuner::ConvTuner(Context& ctx, ConvTuneSettings settings, std::unique_ptr<ConvCandidateTimer> timer)
    : ctx_(ctx),
      settings_(std::move(settings)),
      enabled_(convTuneEnabled(settings_, ctx.info())),
      timer_(timer ? std::move(timer) : makeGpuConvTimer(ctx, timedReps(settings_))),
      cache_(cacheFile(ctx, settings_), convTuneDeviceKey(ctx.info())) {
  stats_.enabled = enabled_;
  if (enabled_ && !settings_.retune) cache_.load();
}

std::optional<ConvTuneEntry> ConvTuner::entryFor(const ConvProblem& prob, const ConvContext& cc, bool& measured) {
  const DType storage = cc.weights.storage();
  const std::string key = convTuneProblemKey(prob, storage);
  measured = false;
  if (const ConvTuneEntry* e = cache_.find(key)) {
    measured = tunedHere_.count(key) > 0;  // by this process (an earlier layer of the same shape)
    if (counted_.insert(key).second) ++stats_.fromCache;
    return *e;
  }
  if (!counted_.insert(key).second) return std::nullopt;  // tried before: nothing could be timed
  // Candidates as they run on scratch memory: every weight layout, a raw fp16 input, scratch for split-K and
  // Winograd. The call's own contract is checked when choosing (its weights may lack the Winograd layout).
  const auto start = std::chrono::steady_clock::now();
  std::vector<ConvCandidate> candidates;
  std::vector<std::optional<double>> ms;
  try {
    Conv2dWeights layouts = tuningLayouts(prob, cc.device, storage, candidates);
    if (candidates.size() > 1) {
      ms = timer_->time(prob, layouts, candidates, stats_.launches);
      for (const std::string& why : timer_->failures()) {
        ++stats_.dropped;
        if (dropped_.size() < kMaxDroppedNotes) dropped_.push_back(key + ": " + why);
      }
    }
  } catch (const Error& e) {  // out of device memory for the scratch tensors, a broken candidate list
    warnings_.push_back("autotune of " + key + " failed: " + e.what() + " (the rule runs it)");
    ms.clear();
  }
  stats_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ConvTuneEntry entry{convTuneFamily(prob.cin, prob.cout, prob.p, storage), {}};
  for (size_t i = 0; i < candidates.size() && i < ms.size(); ++i)
    if (ms[i] && *ms[i] > 0) entry.ms[candidates[i].name()] = *ms[i];
  if (candidates.size() == 1) return std::nullopt;  // nothing to choose between: the rule, no launch, no entry
  if (entry.ms.empty()) {
    ++stats_.failed;
    return std::nullopt;
  }
  ++stats_.tuned;
  measured = true;
  tunedHere_.insert(key);
  cache_.put(key, entry);  // saved by plan() with its choice
  return entry;
}

Conv2dWeights ConvTuner::tuningLayouts(const ConvProblem& prob, const DeviceInfo& device, DType storage,
                                       std::vector<ConvCandidate>& candidates) {
  // The Winograd layout (fp32 filters, 8x an fp16 gemm layout) only where a Winograd candidate is timed, i.e.
  // where no coop candidate runs (convCandidates): the gemm layout first, every layout if that list has no coop.
  Conv2dWeightsOptions options;
  options.storage = storage;
  options.packWinograd = false;
  auto allocate = [&] { return Conv2dWeights::allocate(ctx_, int(prob.cout), int(prob.cin), prob.p, options); };
  Conv2dWeights layouts = allocate();
  candidates = convCandidates(prob, ConvContext{device, layouts, true, ConvTile{}, storage == DType::F16});
  const bool coop = std::any_of(candidates.begin(), candidates.end(),
                                [](const ConvCandidate& c) { return c.algo == ConvAlgo::Coop; });
  // coop-winograd-rows timed as the layers run it, on its filters packed at load (contents left undefined: timing)
  const bool rows = std::any_of(candidates.begin(), candidates.end(),
                                [](const ConvCandidate& c) { return c.algo == ConvAlgo::CoopWinogradRows; });
  options.packWinogradRows =
      rows && winogradRowsLayoutViolation(int(prob.cout), int(prob.cin), prob.p, storage).empty();
  // ... and coop-winograd on its filters made on first use, as the layers run it (no filter launch per call)
  const bool f23 = std::any_of(candidates.begin(), candidates.end(),
                               [](const ConvCandidate& c) { return c.algo == ConvAlgo::CoopWinograd; });
  options.winogradF23OnUse = f23 && winogradF23LayoutViolation(int(prob.cout), int(prob.cin), prob.p, storage).empty();
  if (!coop && isWinogradGeometry(prob.p)) options.packWinograd = true;
  if (options.packWinograd || options.packWinogradRows || options.winogradF23OnUse) {
    layouts = allocate();
    candidates = convCandidates(prob, ConvContext{device, layouts, true, ConvTile{}, storage == DType::F16});
  }
  return layouts;
}

void ConvTuner::precompile(const ConvProblem& prob, DType storage) {
  if (!enabled_) return;
  std::lock_guard lock(mutex_);
  const std::string key = convTuneProblemKey(prob, storage);
  if (cache_.find(key) || counted_.count(key) || !precompiled_.insert(key).second) return;
  try {
    std::vector<ConvCandidate> candidates;
    Conv2dWeights layouts = tuningLayouts(prob, ctx_.info(), storage, candidates);
    if (candidates.size() > 1) timer_->precompile(prob, layouts, candidates);
  } catch (const Error&) {  // out of memory for the scratch tensors: plan() tunes (or reports) it as before
  }
}

ConvPlan ConvTuner::plan(const ConvProblem& prob, const ConvContext& cc, const std::string& label) {
  std::lock_guard lock(mutex_);
  bool measured = false;
  std::optional<ConvTuneEntry> entry = entryFor(prob, cc, measured);
  const std::string key = convTuneProblemKey(prob, cc.weights.storage());
  std::optional<ConvCandidate> rule = ruleCandidate(prob, cc);
  if (entry) {
    std::vector<std::string> order = rankTunedCandidates(entry->ms, rule ? rule->name() : std::string());
    // The tuning run records its ranking's first (ConvTuneEntry::chosen, whether or not this layer can run it),
    // and every later run tries it first: a run whose rule prefers another of near-equal candidates (its weights
    // packed without Winograd filters: packWinogradFilters) plans the same kernels; one whose first run lacked
    // the filters of a Winograd that won gets them and runs it.
    if (measured && entry->chosen.empty() && !order.empty()) {
      entry->chosen = order.front();
      cache_.put(key, *entry);
      cache_.save();
    }
    if (!entry->chosen.empty()) order.insert(order.begin(), entry->chosen);
    for (const std::string& name : order) {
      std::optional<ConvCandidate> c = parseConvCandidate(name);
      if (!c || !candidateViolation(*c, prob, cc).empty()) continue;  // e.g. Winograd without its filters
      ConvPlan p = planConvCandidate(*c, prob, cc, label);
      p.source = measured ? "tuner" : "cache";
      choices_[label] = {key, c->name(), p.source};
      return p;
    }
  }
  ConvPlan p = planConv(ConvAlgo::Auto, prob, cc, label);
  choices_[label] = {key, rule ? rule->name() : convAlgoName(p.algo), "rule"};
  return p;
}

bool ConvTuner::familyMayChoose(int64_t cin, int64_t cout, const Conv2dParams& p, DType storage, ConvAlgo algo,
                                bool& seen) const {
  std::lock_guard lock(mutex_);
  const std::string family = convTuneFamily(cin, cout, p, storage);
  seen = false;
  for (const auto& [key, entry] : cache_.entries()) {
    if (entry.family != family || entry.ms.empty()) continue;
    seen = true;
    if (!entry.chosen.empty()) {  // the tuning run's first: filters exactly where that is `algo`
      std::optional<ConvCandidate> c = parseConvCandidate(entry.chosen);
      if (c && c->algo == algo) return true;
      continue;
    }
    const double fastest = std::min_element(entry.ms.begin(), entry.ms.end(), [](const auto& a, const auto& b) {
                             return a.second < b.second;
                           })->second;
    for (const auto& [name, ms] : entry.ms) {
      std::optional<ConvCandidate> c = parseConvCandidate(name);
      if (c && c->algo == algo && ms <= fastest * (1 + kConvTuneTieMargin)) return true;
    }
  }
  return false;
}

bool ConvTuner::packWinogradFilters(int64_t cin, int64_t cout, const Conv2dParams& p, DType storage,
                                    bool ruleWants) const {
  if (!enabled_ || !isWinogradGeometry(p)) return ruleWants;
  bool seen = false;
  if (familyMayChoose(cin, cout, p, storage, ConvAlgo::Winograd, seen)) return true;
  return seen ? false : ruleWants;
}

ConvTuneStats ConvTuner::stats() const {
  std::lock_guard lock(mutex_);
  ConvTuneStats s = stats_;
  s.compileSeconds = timer_->compileSeconds();
  return s;
}

std::map<std::string, ConvChoice> ConvTuner::choices() const {
  std::lock_guard lock(mutex_);
  return choices_;
}

std::vector<std::string> ConvTuner::droppedCandidates() const {
  std::lock_guard lock(mutex_);
  return dropped_;
}

std::vector<std::string> ConvTuner::warnings() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> all = cache_.warnings();
  all.insert(all.end(), warnings_.begin(), warnings_.end());
  return all;
}

}  // namespace sdgen::ops
