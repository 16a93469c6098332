#pragma once
// The conv autotune tests' fixture (tests/ops/conv2d_tune_test.cpp, conv2d_tune_choice_test.cpp): a fake timer
// from a table of times, a scratch cache directory per test, and an 8 -> 8 channel fp32 layer that Winograd and
// GEMM v2 both run.
#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/file_util.h"
#include "ops/conv2d.h"
#include "ops/conv2d_candidates.h"
#include "ops/conv2d_tune.h"
#include "tests/test_support.h"

namespace sdgen::tunetest {

namespace fs = std::filesystem;
using ops::ConvAlgo;
using ops::ConvCandidate;
using ops::ConvTile;

// Times from a table by candidate name (absent: the candidate "failed", and failures() says so); counts calls
// and launches.
class FakeTimer : public ops::ConvCandidateTimer {
 public:
  explicit FakeTimer(std::map<std::string, double> ms, int* calls) : ms_(std::move(ms)), calls_(calls) {}
  std::vector<std::optional<double>> time(const ops::ConvProblem&, const ops::Conv2dWeights&,
                                          const std::vector<ConvCandidate>& candidates, uint64_t& launches) override {
    ++*calls_;
    failures_.clear();
    std::vector<std::optional<double>> out;
    for (const ConvCandidate& c : candidates) {
      auto it = ms_.find(c.name());
      out.push_back(it == ms_.end() ? std::nullopt : std::optional<double>(it->second));
      if (it == ms_.end()) failures_.push_back(c.name() + ": not in the fake timer's table");
      ++launches;
    }
    return out;
  }
  std::vector<std::string> failures() const override { return failures_; }
  void precompile(const ops::ConvProblem& prob, const ops::Conv2dWeights&,
                  const std::vector<ConvCandidate>& candidates) override {
    precompiled.push_back(prob.str() + " (" + std::to_string(candidates.size()) + " candidates)");
  }
  std::vector<std::string> precompiled;

 private:
  std::map<std::string, double> ms_;
  int* calls_;
  std::vector<std::string> failures_;
};

class ConvTuneTest : public test::VulkanTest {
 protected:
  void SetUp() override {
    VulkanTest::SetUp();
    dir_ = (fs::temp_directory_path() /
            ("sdgen-tune-test-" + std::to_string(getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    fs::remove_all(dir_);
    VulkanTest::TearDown();
  }
  std::string file() const { return dir_ + "/conv-tune-v1.json"; }

  ops::ConvTuneSettings settings(bool retune = false) {
    ops::ConvTuneSettings s;
    s.mode = ops::ConvTuneSettings::Mode::On;
    s.cacheDir = dir_;
    s.retune = retune;
    return s;
  }
  std::unique_ptr<ops::ConvTuner> tuner(std::map<std::string, double> ms, bool retune = false) {
    return std::make_unique<ops::ConvTuner>(ctx(), settings(retune), std::make_unique<FakeTimer>(std::move(ms), &calls_));
  }

  // An 8 -> 8 channel 3x3 layer on [1, 6, 6, 8] (fp32): Winograd, GEMM v2 (and general as a fallback) run it.
  ops::ConvProblem problem() const {
    ops::ConvProblem p;
    p.n = 1, p.h = 6, p.w = 6, p.cin = 8, p.ho = 6, p.wo = 6, p.cout = 8;
    p.p = ops::Conv2dParams::square(3);
    return p;
  }
  std::unique_ptr<ops::Conv2dWeights> weights(bool winograd = true, ops::ConvTuner* t = nullptr) {
    ops::Conv2dWeightsOptions o;
    o.packWinograd = winograd;
    o.tuner = t;
    w_ = test::randomFloats(8 * 8 * 9, 7);
    b_ = test::randomFloats(8, 8);
    return std::make_unique<ops::Conv2dWeights>(ctx(), 8, 8, ops::Conv2dParams::square(3), w_, b_, o);
  }
  ops::ConvContext context(const ops::Conv2dWeights& w) { return {ctx().info(), w, true, {}, false}; }
  std::string name(ConvAlgo a) {  // this device's candidate of algorithm a for problem()
    auto w = weights();
    for (const ConvCandidate& c : ops::convCandidates(problem(), context(*w)))
      if (c.algo == a) return c.name();
    ADD_FAILURE() << "no " << ops::convAlgoName(a) << " candidate";
    return "";
  }
  void writeCache(const std::string& text) { writeFileAtomic(file(), text); }
  std::string readCache() { return readFile(file()).value_or(""); }

  std::string dir_;
  int calls_ = 0;
  std::vector<float> w_, b_;
};

}  // namespace sdgen::tunetest
