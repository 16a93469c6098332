// The tuning run's recorded choice (ops::ConvTuneEntry::chosen): later runs plan the candidate the tuning run
// ranked first, whatever their rule prefers among near-equal candidates, and pack Winograd filters exactly where
// that is Winograd. (Before session 43, a second run whose weights lacked Winograd filters ranked near-equal
// candidates with another rule's preference and could plan another kernel than the first run: the likely cause
// of ProfileConv.AutotuneChoicesComeFromTheTunerThenTheCache's one failure on a loaded CI machine.)
#include <string>

#include "tests/ops/conv2d_tune_test_support.h"

namespace sdgen {
namespace {

using namespace tunetest;

// A cache entry's choice set by hand (the file as a later run reads it).
void setChosen(const std::string& file, const std::string& from, const std::string& to) {
  std::string text = readFile(file).value_or("");
  const std::string key = "\"chosen\": \"" + from + "\"";
  const size_t at = text.find(key);
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, key.size(), "\"chosen\": \"" + to + "\"");
  writeFileAtomic(file, text);
}

TEST_F(ConvTuneTest, LaterRunsPlanTheTuningRunsFirstChoice) {
  const std::string v2 = name(ConvAlgo::GemmV2), wino = name(ConvAlgo::Winograd);
  const ops::Conv2dParams k3 = ops::Conv2dParams::square(3);
  // Winograd fastest but this layer's weights lack its filters: the tuning run plans GEMM v2 and records Winograd.
  auto noWinograd = weights(false);
  auto first = tuner({{v2, 0.9}, {wino, 0.5}});
  EXPECT_EQ(first->plan(problem(), context(*noWinograd), "layer").algo, ConvAlgo::GemmV2);
  EXPECT_NE(readCache().find("\"chosen\": \"" + wino + "\""), std::string::npos) << readCache();
  // The next load packs the filters (whatever the rule wants) and runs Winograd, from the cache.
  auto second = tuner({});
  EXPECT_TRUE(second->packWinogradFilters(8, 8, k3, DType::F32, false));
  auto w = weights();
  ops::ConvPlan plan = second->plan(problem(), context(*w), "layer");
  EXPECT_EQ(plan.algo, ConvAlgo::Winograd);
  EXPECT_EQ(plan.source, "cache");
  EXPECT_EQ(calls_, 1);
  // A recorded GEMM v2: no filters although Winograd was within the tie margin, and GEMM v2 planned even where
  // the weights have them and the rule would prefer Winograd.
  setChosen(file(), wino, v2);
  auto third = tuner({});
  EXPECT_FALSE(third->packWinogradFilters(8, 8, k3, DType::F32, true));
  EXPECT_EQ(third->plan(problem(), context(*w), "layer").algo, ConvAlgo::GemmV2);
  // A recorded choice this layer cannot run (Winograd without filters): the ranking's next.
  setChosen(file(), v2, wino);
  EXPECT_EQ(tuner({})->plan(problem(), context(*noWinograd), "layer").algo, ConvAlgo::GemmV2);
  EXPECT_EQ(calls_, 1);
}

// Entries of earlier files have no choice: the ranking as before, and the tie-margin packing rule.
TEST_F(ConvTuneTest, EntriesWithoutAChoiceRankAsBefore) {
  const std::string v2 = name(ConvAlgo::GemmV2), wino = name(ConvAlgo::Winograd);
  auto w = weights();
  tuner({{v2, 0.5}, {wino, 0.9}})->plan(problem(), context(*w), "layer");
  std::string text = readCache();
  const std::string key = "\"chosen\": \"" + v2 + "\",";
  const size_t at = text.find(key);
  ASSERT_NE(at, std::string::npos) << text;
  writeFileAtomic(file(), text.erase(at, key.size()));
  auto t = tuner({});
  EXPECT_TRUE(t->warnings().empty()) << t->warnings()[0];
  EXPECT_FALSE(t->packWinogradFilters(8, 8, ops::Conv2dParams::square(3), DType::F32, true));
  ops::ConvPlan plan = t->plan(problem(), context(*w), "layer");
  EXPECT_EQ(plan.algo, ConvAlgo::GemmV2);
  EXPECT_EQ(plan.source, "cache");
}

}  // namespace
}  // namespace sdgen
