// Tiled VAE decode and encode on the device against diffusers' AutoencoderKL with enable_tiling() on the tiny
// SD1 VAE (tests/data/fixtures/vae_tiling_sd1.*, tests/reference/vae_tiling_fixtures.py, float64 references):
// fp32 within 1e-4 of the reference's scale, as the untiled VAE parity tests. The tiled decode must also differ
// from the untiled one, so that the comparison shows the tiles and blends, not just the decoder.
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/tensor_io.h"
#include "graph/executor.h"
#include "models/formats/model_files.h"
#include "models/networks/vae_decoder.h"
#include "models/pipeline/image_encoding.h"
#include "models/pipeline/vae_tiling.h"
#include "ops/conv2d_scratch.h"
#include "tests/models/network_fixture.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

constexpr double kTolerance = 1e-4;

class VaeTilingParity : public test::VulkanTest {
 protected:
  models::ModelFiles model = models::openModel(test::dataPath("tiny-sd1"));
  // Opened in the test body: a missing fixture fails the test (it is written on the device machine).
  static models::SafetensorsFile openFixture() {
    return models::SafetensorsFile::open(test::dataPath("fixtures/vae_tiling_sd1.safetensors"));
  }
};

// The sampler's latents for fixture latents given to vae.decode (which are divided by the scaling factor).
std::vector<float> samplerLatents(const test::FixtureTensor& z, float scalingFactor) {
  std::vector<float> v = test::nchwToNhwc(z.values, z.shape);
  for (float& x : v) x *= scalingFactor;
  return v;
}

// The untiled decode of [1, h, w, C] latents already divided by the scaling factor.
std::vector<float> plainDecode(Context& ctx, const networks::VaeDecoder& vae, ops::Conv2dScratch& scratch,
                               const std::vector<float>& latents, int64_t h, int64_t w) {
  const int64_t c = vae.config().latentChannels, s = vae.upscale(), oc = vae.config().outChannels;
  graph::Graph g;
  graph::TensorId in = g.input("latents", {1, h, w, c}, DType::F32);
  graph::TensorId out = g.output("image", {1, h * s, w * s, oc}, DType::F32);
  nn::Builder b(g, DType::F32, &scratch);
  vae.build(b, g.read(in), out);
  Allocation inMem = uploadFloats(ctx, latents, DType::F32, "latents");
  Allocation outMem = ctx.allocate(uint64_t(h * s * w * s * oc) * 4, "image");
  graph::CompiledGraph cg(ctx, g,
                          {{in, graph::view(inMem, DType::F32, {1, h, w, c})},
                           {out, graph::view(outMem, DType::F32, {1, h * s, w * s, oc})}});
  cg.run();
  return downloadFloats(ctx, outMem, size_t(h * s * w * s * oc), DType::F32);
}

TEST_F(VaeTilingParity, TiledDecodeMatchesDiffusers) {
  nn::ParameterStore params(ctx(), DType::F32);
  networks::VaeDecoder vae(params, model.vaeConfig, *model.vaeWeights);
  ops::Conv2dScratch scratch(ctx());
  pipeline::TiledVaeDecoder tiled(ctx(), vae, DType::F32, scratch);
  const pipeline::VaeTileGeometry geometry = pipeline::vaeTileGeometry(model.vaeConfig);
  ASSERT_EQ(geometry.sampleTile, 16);
  ASSERT_EQ(geometry.latentTile, 8);
  const models::SafetensorsFile fixture = openFixture();
  for (std::string c : {"a", "b", "c"}) {
    const test::FixtureTensor z = test::fixtureTensor(fixture, "decode." + c + ".latents");
    const test::FixtureTensor want = test::fixtureTensor(fixture, "decode." + c + ".image");
    const int64_t h = z.shape[2], w = z.shape[3];
    const std::vector<float> plain = test::nhwcToNchw(plainDecode(ctx(), vae, scratch, test::nchwToNhwc(z.values, z.shape), h, w), want.shape);
    if (!geometry.decodeTiles(h, w)) {  // case c: one tile, which diffusers decodes untiled too
      EXPECT_LE(test::relativeError(plain, want.values), kTolerance) << "case " << c;
      continue;
    }
    const std::vector<float> got =
        test::nhwcToNchw(tiled.decode(samplerLatents(z, model.vaeConfig.scalingFactor), h, w), want.shape);
    EXPECT_LE(test::relativeError(got, want.values), kTolerance) << "case " << c;
    EXPECT_GT(test::relativeError(plain, want.values), 100 * kTolerance) << "case " << c << ": tiling changed nothing";
  }
  EXPECT_GT(tiled.arenaBytes(), 0u);
}

TEST_F(VaeTilingParity, TiledEncodeMatchesDiffusers) {
  nn::ParameterStore params(ctx(), DType::F32);
  ops::Conv2dScratch scratch(ctx());
  pipeline::ImageEncoder encoder(ctx(), params, model.vaeConfig, *model.vaeWeights, DType::F32, scratch);
  const models::SafetensorsFile fixture = openFixture();
  const test::FixtureTensor image = test::fixtureTensor(fixture, "encode.image");
  const test::FixtureTensor mean = test::fixtureTensor(fixture, "encode.mean"), logvar = test::fixtureTensor(fixture, "encode.logvar");
  const int height = int(image.shape[2]), width = int(image.shape[3]);
  const int64_t c = mean.shape[1];
  for (bool tiled : {true, false}) {
    const std::vector<float> moments = encoder.moments(test::nchwToNhwc(image.values, image.shape), height, width, tiled);
    ASSERT_EQ(moments.size(), 2 * mean.values.size());
    std::vector<float> gotMean, gotLogvar;  // channels [0, C) and [C, 2C) of each NHWC pixel
    for (size_t px = 0; px < moments.size() / size_t(2 * c); ++px)
      for (int64_t ch = 0; ch < 2 * c; ++ch) {
        const float v = moments[px * size_t(2 * c) + size_t(ch)];
        (ch < c ? gotMean : gotLogvar).push_back(ch < c ? v : std::clamp(v, -30.f, 20.f));  // as diffusers clamps
      }
    const double meanError = test::relativeError(test::nhwcToNchw(gotMean, mean.shape), mean.values);
    if (tiled) {
      EXPECT_LE(meanError, kTolerance);
      EXPECT_LE(test::relativeError(test::nhwcToNchw(gotLogvar, mean.shape), logvar.values), kTolerance);
    } else {
      EXPECT_GT(meanError, 100 * kTolerance) << "the untiled encode matches the tiled reference";
    }
  }
}

}  // namespace
}  // namespace sdgen
