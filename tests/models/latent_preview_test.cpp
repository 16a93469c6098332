// The live preview's latent -> RGB projection: a least-squares fit recovers a known linear map from latents and
// the image it produced, and applying a projection clamps to [0, 255].
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "engine/error.h"
#include "models/pipeline/text_to_image.h"

namespace sdgen::pipeline {
namespace {

constexpr int kChannels = 4;

// A known projection: 3 rows of 4 weights and a bias, small enough to keep the image inside [0, 1].
std::vector<float> knownWeights() {
  return {0.10f, -0.05f, 0.02f, 0.03f, 0.50f,   // R
          -0.02f, 0.08f, 0.04f, -0.06f, 0.45f,  // G
          0.03f, 0.01f, -0.09f, 0.05f, 0.55f};  // B
}

TEST(LatentPreview, FitRecoversAKnownLinearMap) {
  const std::vector<float> m = knownWeights();
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0.f, 1.f);
  const int h = 6, w = 5, scale = 2;
  LatentRgbFit fit{kChannels};
  for (int image = 0; image < 2; ++image) {  // two images refine one fit
    std::vector<float> latents(size_t(h * w * kChannels));
    for (float& v : latents) v = nd(rng);
    std::vector<float> pixels(size_t(h * scale * w * scale * 3));
    for (int y = 0; y < h * scale; ++y)
      for (int x = 0; x < w * scale; ++x)
        for (int k = 0; k < 3; ++k) {
          const float* z = &latents[size_t((y / scale) * w + x / scale) * kChannels];
          double v = m[k * 5 + 4];
          for (int c = 0; c < kChannels; ++c) v += m[k * 5 + c] * z[c];
          pixels[size_t(y * w * scale + x) * 3 + k] = float(v);
        }
    fit.add(latents, h, w, pixels, scale);
  }
  LatentRgbProjection p = fit.solve();
  ASSERT_EQ(p.channels, kChannels);
  ASSERT_EQ(p.weights.size(), m.size());
  for (size_t i = 0; i < m.size(); ++i) EXPECT_NEAR(p.weights[i], m[i], 1e-4) << "weight " << i;
}

TEST(LatentPreview, ProjectionAppliesWeightsAndClamps) {
  LatentRgbProjection p{kChannels, knownWeights()};
  const std::vector<float> latents = {1, 2, -1, 0.5f,  // an ordinary pixel
                                      100, 0, 0, 0};   // far outside: R saturates at 255, G at 0
  std::vector<uint8_t> rgb = projectLatents(p, latents);
  ASSERT_EQ(rgb.size(), 6u);
  const std::vector<float> m = knownWeights();
  for (int k = 0; k < 3; ++k) {
    double v = m[k * 5 + 4];
    for (int c = 0; c < kChannels; ++c) v += m[k * 5 + c] * latents[c];
    EXPECT_NEAR(rgb[k], std::clamp(v, 0.0, 1.0) * 255, 1.0) << "channel " << k;
  }
  EXPECT_EQ(rgb[3], 255);
  EXPECT_EQ(rgb[4], 0);
}

TEST(LatentPreview, TooLittleDataKeepsTheDefaultAndMismatchedSizesAreErrors) {
  LatentRgbFit fit{kChannels};
  EXPECT_EQ(fit.solve().weights, defaultLatentRgbProjection(kChannels).weights);
  std::vector<float> latents(2 * 2 * kChannels, 0.f), image(3 * 3 * 3, 0.f);  // a 2x2 latent needs a 4x4 image
  EXPECT_THROW(fit.add(latents, 2, 2, image, 2), Error);
}

}  // namespace
}  // namespace sdgen::pipeline
