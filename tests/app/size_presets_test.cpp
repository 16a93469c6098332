// The GUI's size presets and its SDXL micro-conditioning fields (app/size_presets.h,
// app/micro_conditioning_fields.h): host-only.
#include <gtest/gtest.h>

#include <set>

#include "app/cli_options.h"
#include "app/micro_conditioning_fields.h"
#include "app/size_presets.h"

namespace sdgen::app {
namespace {

TEST(SizePresets, FamiliesAndSdxlBuckets) {
  std::set<std::pair<int, int>> seen;
  int sdxl = 0;
  for (const SizePreset& p : sizePresets()) {
    EXPECT_TRUE(seen.insert({p.width, p.height}).second) << sizePresetLabel(p) << " listed twice";
    EXPECT_EQ(p.width % 64, 0) << sizePresetLabel(p);
    EXPECT_EQ(p.height % 64, 0) << sizePresetLabel(p);
    EXPECT_EQ(findSizePreset(p.width, p.height), &p);
    if (std::string(p.family) == "SDXL") {
      ++sdxl;
      // SDXL's buckets hold about one megapixel (1024^2 = 1,048,576), within 10 %.
      const double pixels = double(p.width) * p.height;
      EXPECT_NEAR(pixels / (1024.0 * 1024.0), 1.0, 0.1) << sizePresetLabel(p);
    }
  }
  EXPECT_EQ(sdxl, 9);
  EXPECT_EQ(sizePresetLabel(*findSizePreset(1216, 832)), "1216 x 832 (SDXL)");
  EXPECT_EQ(sizePresetLabel(*findSizePreset(512, 512)), "512 x 512 (SD 1.x)");
  EXPECT_EQ(findSizePreset(1000, 1000), nullptr);
}

TEST(MicroConditioningFields, RoundTripsTheRequestsForm) {
  MicroConditioningFields none;
  EXPECT_EQ(none.toRequest(), pipeline::SdxlMicroConditioning{});  // nothing set: diffusers' defaults
  pipeline::SdxlMicroConditioning m;
  m.originalSize = {{1024, 768}};
  m.cropTopLeft = {{0, 64}};
  m.negativeOriginalSize = {{512, 512}};
  m.negativeTargetSize = {{1024, 1024}};
  MicroConditioningFields f = MicroConditioningFields::from(m);
  EXPECT_TRUE(f.setOriginal && f.setCrop && !f.setTarget);
  EXPECT_EQ(f.originalSize, (std::array<int, 2>{1024, 768}));
  EXPECT_EQ(f.cropTopLeft, (std::array<int, 2>{0, 64}));
  EXPECT_TRUE(f.setNegative && !f.setNegativeCrop);
  EXPECT_EQ(f.negativeOriginalSize, (std::array<int, 2>{512, 512}));
  EXPECT_EQ(f.toRequest(), m);  // the negative half round-trips
  // A value edited but not set stays out of the request.
  f.targetSize = {640, 480};
  EXPECT_EQ(f.toRequest(), m);
  f.setTarget = true;
  EXPECT_EQ(f.toRequest().targetSize, (std::pair<int, int>{640, 480}));
  // The negative sizes are edited as a pair; the negative crop counts only with them.
  f.negativeCropTopLeft = {8, 16};
  f.setNegativeCrop = true;
  EXPECT_EQ(f.toRequest().negativeCropTopLeft, (std::pair<int, int>{8, 16}));
  f.setNegative = false;
  const pipeline::SdxlMicroConditioning none2 = f.toRequest();
  EXPECT_FALSE(none2.negativeOriginalSize || none2.negativeTargetSize || none2.negativeCropTopLeft);
  // One negative size alone (which diffusers ignores and sdgen refuses) is not taken from a PNG's parameters.
  pipeline::SdxlMicroConditioning half;
  half.negativeOriginalSize = {{512, 512}};
  half.negativeCropTopLeft = {{0, 8}};
  EXPECT_EQ(MicroConditioningFields::from(half).toRequest(), pipeline::SdxlMicroConditioning{});
}

TEST(MicroConditioningFields, ClampKeepsTypedValuesInTheFlagsRange) {
  MicroConditioningFields f;
  f.originalSize = {0, 100000};
  f.cropTopLeft = {-5, 9000};
  f.targetSize = {-1, 8};
  f.negativeOriginalSize = {0, 9000};
  f.negativeCropTopLeft = {-1, 3};
  f.clamp(CliLimits::kMaxSize);
  EXPECT_EQ(f.negativeOriginalSize, (std::array<int, 2>{1, CliLimits::kMaxSize}));
  EXPECT_EQ(f.negativeCropTopLeft, (std::array<int, 2>{0, 3}));
  EXPECT_EQ(f.originalSize, (std::array<int, 2>{1, CliLimits::kMaxSize}));
  EXPECT_EQ(f.cropTopLeft, (std::array<int, 2>{0, CliLimits::kMaxSize}));
  EXPECT_EQ(f.targetSize, (std::array<int, 2>{1, 8}));
}

// The pair parser sdgen-gui shares with the command line: the flag named in every error.
TEST(MicroConditioningFields, PairFlagParsing) {
  EXPECT_EQ(parseIntPairFlag("--crop", "8,0", 0, "X,Y"), (std::pair<int, int>{8, 0}));
  for (const char* bad : {"8", "8,", ",8", "a,b", "8,-1", "1,99999", "8,0,1"}) {
    try {
      parseIntPairFlag("--crop", bad, 0, "X,Y");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("--crop"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace sdgen::app
