// The decoded image's postprocess (models/pipeline/decoded_image.h) against diffusers' definition computed the
// slow way: (x / 2 + 0.5).clamp(0, 1) and std::nearbyint (round half to even) of x * 255, on every float value
// that matters (each byte's rounding boundary and its neighbours, ties), sizes that take the threaded path, and
// non-finite values.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include <gtest/gtest.h>

#include "models/pipeline/decoded_image.h"

namespace sdgen::pipeline {
namespace {

uint8_t slowByte(float x) { return static_cast<uint8_t>(std::nearbyint(std::clamp(x / 2.f + 0.5f, 0.f, 1.f) * 255.f)); }

TEST(DecodedImage, MatchesDiffusersRoundingAtEveryBoundary) {
  std::vector<float> in;
  for (int b = 0; b <= 255; ++b) {
    // x with (x / 2 + 0.5) * 255 near b + 0.5 (the rounding boundary) and near b, plus the float neighbours.
    for (float target : {b + 0.5f, float(b)}) {
      float x = (target / 255.f - 0.5f) * 2.f;
      for (int k = 0; k < 8; ++k) {
        in.push_back(x);
        x = std::nextafter(x, 2.f);
      }
      x = (target / 255.f - 0.5f) * 2.f;
      for (int k = 0; k < 8; ++k) in.push_back(x = std::nextafter(x, -2.f));
    }
  }
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> d(-1.3f, 1.3f);
  while (in.size() < (size_t(1) << 20) + 17) in.push_back(d(rng));  // several threads' chunks and a partial one
  std::vector<float> px;
  std::vector<uint8_t> rgb;
  ASSERT_TRUE(postprocessDecoded(in, &px, rgb));
  ASSERT_EQ(px.size(), in.size());
  ASSERT_EQ(rgb.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    ASSERT_EQ(rgb[i], slowByte(in[i])) << "x = " << in[i] << " at " << i;
    ASSERT_EQ(px[i], std::clamp(in[i] / 2.f + 0.5f, 0.f, 1.f)) << "x = " << in[i];
  }
  EXPECT_EQ(decodedToRgb8(in), rgb);
  std::vector<uint8_t> bytesOnly;
  ASSERT_TRUE(postprocessDecoded(in, nullptr, bytesOnly));  // the frontends' form: no floats
  EXPECT_EQ(bytesOnly, rgb);
}

TEST(DecodedImage, NonFiniteValuesAreReportedAndStillConverted) {
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()}) {
    for (size_t n : {size_t(5), size_t(1) << 19}) {  // one chunk, several
      std::vector<float> in(n, 0.25f), px;
      in[n - 2] = bad;
      std::vector<uint8_t> rgb;
      EXPECT_FALSE(postprocessDecoded(in, &px, rgb)) << bad << " in " << n;
      std::vector<uint8_t> bytesOnly;
      EXPECT_FALSE(postprocessDecoded(in, nullptr, bytesOnly)) << bad << " in " << n << ", bytes only";
      EXPECT_EQ(px[n - 2], std::isnan(bad) ? 0.f : bad > 0 ? 1.f : 0.f);
      EXPECT_EQ(rgb[0], slowByte(0.25f));
      EXPECT_EQ(rgb[n - 2], std::isnan(bad) ? 0 : bad > 0 ? 255 : 0);
    }
  }
  std::vector<float> empty, px(3, 1.f);
  std::vector<uint8_t> rgb(3);
  EXPECT_TRUE(postprocessDecoded(empty, &px, rgb));
  EXPECT_TRUE(rgb.empty());
  EXPECT_TRUE(px.empty());
}

TEST(DecodedImage, NonFiniteDecodeMessageNamesTheModelAndTheFp16Cause) {
  const std::string fp16 = nonFiniteDecodeMessage("sdxl-base", true), fp32 = nonFiniteDecodeMessage("sdxl-base", false);
  for (const std::string& m : {fp16, fp32}) {
    EXPECT_NE(m.find("'sdxl-base'"), std::string::npos) << m;
    EXPECT_NE(m.find("inf/NaN"), std::string::npos) << m;
  }
  EXPECT_NE(fp16.find("--precision fp32"), std::string::npos) << fp16;
  EXPECT_EQ(fp32.find("fp16"), std::string::npos) << fp32;
}

}  // namespace
}  // namespace sdgen::pipeline
