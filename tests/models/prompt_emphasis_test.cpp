// webui's emphasis on the text encoder's output: z * w per token, then z * (mean before / mean after) per
// window. The expected values are worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "models/prompt/emphasis.h"
#include "tests/models/models_test_util.h"

namespace sdgen::prompt {
namespace {

TEST(PromptEmphasis, WeightsThenTheWindowsMeanRestored) {
  // One window of 2 tokens x 2 channels: [[1, 2], [3, 4]] with weights [1, 2].
  // Weighted: [[1, 2], [6, 8]], mean 17/4 instead of 10/4; scaled by 10/17.
  std::vector<float> z{1, 2, 3, 4};
  applyEmphasis(z, std::vector<float>{1.f, 2.f}, 2, 2);
  const std::vector<double> want{10.0 / 17, 20.0 / 17, 60.0 / 17, 80.0 / 17};
  for (size_t i = 0; i < z.size(); ++i) EXPECT_NEAR(z[i], want[i], 1e-6) << i;

  // Negative values: [[-1, 3], [2, 0]] with weights [0.5, 1.1]: weighted [[-0.5, 1.5], [2.2, 0]], sum 3.2
  // instead of 4: scaled by 1.25.
  z = {-1, 3, 2, 0};
  applyEmphasis(z, std::vector<float>{0.5f, 1.1f}, 2, 2);
  const std::vector<double> want2{-0.625, 1.875, 2.75, 0};
  for (size_t i = 0; i < z.size(); ++i) EXPECT_NEAR(z[i], want2[i], 1e-6) << i;
}

TEST(PromptEmphasis, EachWindowKeepsItsOwnMean) {
  // Two windows of 3 tokens x 1 channel; only the second is weighted, and its mean alone is restored.
  std::vector<float> z{0.1f, -0.7f, 1e-3f, 1, 2, 3};
  const std::vector<float> first(z.begin(), z.begin() + 3);
  applyEmphasis(z, std::vector<float>{1, 1, 1, 1, 1, 3}, 3, 1);
  EXPECT_EQ(std::vector<float>(z.begin(), z.begin() + 3), first);  // untouched, bit for bit
  // [1, 2, 9] * 6/12
  EXPECT_NEAR(z[3], 0.5, 1e-6);
  EXPECT_NEAR(z[4], 1.0, 1e-6);
  EXPECT_NEAR(z[5], 4.5, 1e-6);
}

TEST(PromptEmphasis, WeightsThatCancelTheMeanAreAnError) {
  std::vector<float> z{1, 1, 1, 1};
  std::string message =
      test::errorOf([&] { applyEmphasis(z, std::vector<float>{1.f, -1.f}, 2, 2, "the negative prompt"); });
  EXPECT_NE(message.find("the negative prompt: the weights of chunk 1 cancel the mean"), std::string::npos) << message;
  EXPECT_NE(test::errorOf([&] { applyEmphasis(z, std::vector<float>{1.f, 1.f, 1.f}, 2, 2); }).find("do not match"),
            std::string::npos);
}

}  // namespace
}  // namespace sdgen::prompt
