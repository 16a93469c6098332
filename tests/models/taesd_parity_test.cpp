// TAESD on the device against diffusers' AutoencoderTiny (tests/reference/taesd_fixtures.py, float64 references,
// fixtures/taesd.* and fixtures/taesd_pipeline_sd1.*): the decoder and encoder from each layout (diffusers folder,
// the bare diffusers file, madebyollin's files) within 1e-4 of the reference's scale; tiny-sd1 with
// vae=AutoencoderTiny: text to image, its per-step previews and image to image within 1/255 mean absolute
// difference. The fixtures are made on the device machine (scripts/device/make-fixtures.sh --only taesd); without
// them these tests fail.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/tensor_io.h"
#include "graph/executor.h"
#include "models/formats/taesd_files.h"
#include "models/networks/taesd.h"
#include "models/pipeline/text_to_image.h"
#include "ops/conv2d_scratch.h"
#include "tests/models/diffusers_request.h"
#include "tests/models/formats_synthetic.h"
#include "tests/models/models_test_util.h"
#include "tests/models/network_fixture.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

constexpr double kTolerance = 1e-4;

models::SafetensorsFile openFixture(const std::string& name) {
  const std::string path = test::dataPath("fixtures/" + name);
  if (!std::filesystem::exists(path))
    throw Error(path + " is missing: make it with scripts/device/make-fixtures.sh --only taesd (docs/taesd.md)");
  return models::SafetensorsFile::open(path);
}

class TaesdParity : public test::VulkanTest {
 protected:
  // Runs the decoder on NCHW fixture latents; returns NCHW.
  std::vector<float> decode(const models::TaesdFiles& t, const test::FixtureTensor& z) {
    nn::ParameterStore params(ctx(), DType::F32);
    networks::TaesdDecoder dec(params, t.config, *t.decoderWeights);
    const int64_t h = z.shape[2], w = z.shape[3], c = z.shape[1], s = dec.upscale();
    return run(c, h, w, 3, h * s, w * s, test::nchwToNhwc(z.values, z.shape),
               [&](nn::Builder& b, const graph::Value& in, graph::TensorId out) { dec.build(b, in, out); },
               {1, 3, h * s, w * s});
  }
  std::vector<float> encode(const models::TaesdFiles& t, const test::FixtureTensor& image) {
    nn::ParameterStore params(ctx(), DType::F32);
    networks::TaesdEncoder enc(params, t.config, *t.encoderWeights);
    const int64_t h = image.shape[2], w = image.shape[3], s = enc.downscale(), lc = t.config.latentChannels;
    return run(3, h, w, lc, h / s, w / s, test::nchwToNhwc(image.values, image.shape),
               [&](nn::Builder& b, const graph::Value& in, graph::TensorId out) { enc.build(b, in, out); },
               {1, lc, h / s, w / s});
  }

 private:
  template <class Build>
  std::vector<float> run(int64_t c, int64_t h, int64_t w, int64_t oc, int64_t oh, int64_t ow,
                         const std::vector<float>& input, Build build, const std::vector<int64_t>& outNchw) {
    ops::Conv2dScratch scratch(ctx());
    graph::Graph g;
    graph::TensorId in = g.input("in", {1, h, w, c}, DType::F32);
    graph::TensorId out = g.output("out", {1, oh, ow, oc}, DType::F32);
    nn::Builder b(g, DType::F32, &scratch);
    build(b, g.read(in), out);
    Allocation inMem = test::uploadFloats(ctx(), input, DType::F32);
    Allocation outMem = ctx().allocate(uint64_t(oh * ow * oc) * 4, "out");
    graph::CompiledGraph cg(ctx(), g,
                            {{in, graph::view(inMem, DType::F32, {1, h, w, c})},
                             {out, graph::view(outMem, DType::F32, {1, oh, ow, oc})}});
    cg.run();
    return test::nhwcToNchw(test::downloadFloats(ctx(), outMem, size_t(oh * ow * oc), DType::F32), outNchw);
  }
};

TEST_F(TaesdParity, DecoderAndEncoderMatchDiffusersFromEveryLayout) {
  const models::SafetensorsFile fx = openFixture("taesd.safetensors");
  const std::string folder = test::dataPath("tiny-taesd");
  const std::vector<std::pair<std::string, std::string>> layouts = {
      {"diffusers folder", folder},
      {"diffusers file", folder + "/diffusion_pytorch_model.safetensors"},
      {"madebyollin files", test::dataPath("tiny-taesd-madebyollin/taesd_decoder.safetensors")},
      {"madebyollin files", test::dataPath("tiny-taesd-madebyollin")}};
  const models::TaesdConfig reference = models::openTaesd(folder).config;
  for (const auto& [layout, path] : layouts) {
    const models::TaesdFiles t = models::openTaesd(path);
    EXPECT_EQ(t.layout, layout) << path;
    EXPECT_EQ(t.config.numDecoderBlocks, reference.numDecoderBlocks) << path;
    EXPECT_EQ(t.config.numEncoderBlocks, reference.numEncoderBlocks) << path;
    EXPECT_EQ(t.config.decoderBlockOutChannels, reference.decoderBlockOutChannels) << path;
    ASSERT_TRUE(t.decoderWeights && t.encoderWeights) << path;
    for (std::string c : {"a", "b"}) {
      const test::FixtureTensor want = test::fixtureTensor(fx, "decode." + c + ".image");
      const double err = test::relativeError(decode(t, test::fixtureTensor(fx, "decode." + c + ".latents")), want.values);
      std::printf("    %-40s decode.%s relative error %.2e\n", path.substr(path.find("tests/data")).c_str(), c.c_str(), err);
      EXPECT_LE(err, kTolerance) << path << " decode." << c;
    }
    const test::FixtureTensor want = test::fixtureTensor(fx, "encode.latents");
    const double err = test::relativeError(encode(t, test::fixtureTensor(fx, "encode.image")), want.values);
    std::printf("    %-40s encode relative error %.2e\n", path.substr(path.find("tests/data")).c_str(), err);
    EXPECT_LE(err, kTolerance) << path << " encode";
  }
}

TEST_F(TaesdParity, ScaleFactorTwoModelMatchesDiffusers) {
  const models::SafetensorsFile fx = openFixture("taesd.safetensors");
  for (const std::string& path : {test::dataPath("tiny-taesd-sd1"), test::dataPath("tiny-taesd-sd1-madebyollin")}) {
    const models::TaesdFiles t = models::openTaesd(path);
    EXPECT_EQ(t.config.upscale(), 2);
    const double err = test::relativeError(decode(t, test::fixtureTensor(fx, "sd1.decode.latents")),
                                           test::fixtureTensor(fx, "sd1.decode.image").values);
    std::printf("    %s decode relative error %.2e\n", path.substr(path.find("tests/data")).c_str(), err);
    EXPECT_LE(err, kTolerance) << path;
    if (t.encoderWeights) {
      const double encodeErr = test::relativeError(encode(t, test::fixtureTensor(fx, "sd1.encode.image")),
                                                   test::fixtureTensor(fx, "sd1.encode.latents").values);
      std::printf("    %s encode relative error %.2e\n", path.substr(path.find("tests/data")).c_str(), encodeErr);
      EXPECT_LE(encodeErr, kTolerance) << path;
    }
  }
}

TEST_F(TaesdParity, WrongShapedTensorIsAnErrorNamingFileAndTensor) {
  test::TempDir dir;
  test::SafetensorsWriter w;
  // The tiny-taesd-sd1 decoder's tensors, the first conv with 5 instead of 4 input channels.
  const models::TaesdFiles good = models::openTaesd(test::dataPath("tiny-taesd-sd1"));
  for (const std::string& n : good.decoderWeights->names()) {
    std::vector<int64_t> shape = good.decoderWeights->shape(n);
    if (n == "decoder.layers.2.conv.0.weight") shape[1] += 1;
    w.add(n, shape, test::patternValues(n, test::elementCount(shape)));
  }
  const std::string path = dir.file("bad.safetensors");
  w.write(path);
  const models::TaesdFiles bad = models::openTaesd(path);  // the names are right
  nn::ParameterStore params(ctx(), DType::F32);
  const std::string msg = test::errorOf([&] { networks::TaesdDecoder(params, bad.config, *bad.decoderWeights); });
  EXPECT_NE(msg.find("decoder.layers.2.conv.0.weight"), std::string::npos) << msg;
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
}

// ---------------------------------------------------------------------------------------------------------------
// whole pipelines

double meanAbs(const std::vector<float>& got, const std::vector<float>& want) {
  double sum = 0;
  for (size_t i = 0; i < want.size(); ++i) sum += std::abs(double(got[i]) - want[i]);
  return sum / double(want.size());
}

class TaesdPipeline : public test::VulkanTest {
 protected:
  nlohmann::json meta() {
    const std::string json = test::dataPath("fixtures/taesd_pipeline_sd1.json");
    if (!std::filesystem::exists(json)) throw Error(json + " is missing: scripts/device/make-fixtures.sh --only taesd");
    return nlohmann::json::parse(std::ifstream(json));
  }
  pipeline::TextToImage& model() {
    if (!t2i_)
      t2i_ = std::make_unique<pipeline::TextToImage>(
          ctx(), pipeline::LoadOptions{.modelPath = test::dataPath("tiny-sd1"), .taesdPath = test::dataPath("tiny-taesd-sd1")});
    return *t2i_;
  }

 private:
  std::unique_ptr<pipeline::TextToImage> t2i_;
};

TEST_F(TaesdPipeline, TextToImageAndPreviewsMatchDiffusers) {
  const nlohmann::json m = meta();
  const models::SafetensorsFile fx = openFixture("taesd_pipeline_sd1.safetensors");
  ASSERT_EQ(m.at("sampler"), "euler");
  const auto& a = m.at("txt2img_args");
  pipeline::GenerationRequest req = test::diffusersRequest(a);
  req.sampler = sampling::SamplerKind::Euler;
  req.decoder = pipeline::ImageDecoder::Taesd;
  req.preview = pipeline::PreviewDecoder::Taesd;
  std::vector<pipeline::LatentPreview> previews;
  pipeline::GenerationHooks hooks;
  hooks.preview = [&](const pipeline::LatentPreview& p) { previews.push_back(p); };
  const pipeline::Image img = model().generate(req, hooks);
  const std::vector<float> want = fx.readAsF32("txt2img.image");
  ASSERT_EQ(img.pixels.size(), want.size());
  const double err = meanAbs(img.pixels, want);
  std::printf("    txt2img mean |sdgen - diffusers| = %.2e\n", err);
  EXPECT_LE(err, 1.0 / 255);
  // Each step's preview is diffusers' postprocess(taesd.decode(latents after that step)), as 8-bit RGB.
  const test::FixtureTensor wantPreviews = test::fixtureTensor(fx, "txt2img.previews");
  ASSERT_EQ(int64_t(previews.size()), wantPreviews.shape[0]);
  const size_t n = want.size();
  for (size_t k = 0; k < previews.size(); ++k) {
    const pipeline::LatentPreview& p = previews[k];
    EXPECT_EQ(p.step, int(k) + 1);
    EXPECT_EQ(p.pixelScale, 1);
    ASSERT_EQ(p.width, req.width);
    ASSERT_EQ(p.rgb.size(), n);
    std::vector<float> got(n), ref(wantPreviews.values.begin() + long(k * n), wantPreviews.values.begin() + long((k + 1) * n));
    for (size_t i = 0; i < n; ++i) got[i] = float(p.rgb[i]) / 255.f;
    const double previewErr = meanAbs(got, ref);
    std::printf("    preview after step %zu: mean |sdgen - diffusers| = %.2e (8-bit)\n", k + 1, previewErr);
    EXPECT_LE(previewErr, 1.0 / 255) << "preview after step " << k + 1;
  }
  EXPECT_EQ(previews.back().rgb, img.rgb) << "the last preview is the final image";

  // The same request decoded by the VAE differs: the test sees TAESD's decode, not the VAE's.
  req.decoder = pipeline::ImageDecoder::Vae;
  EXPECT_GT(meanAbs(model().generate(req).pixels, want), 4.0 / 255);
}

TEST_F(TaesdPipeline, ImageToImageEncodesWithTaesdWithoutADraw) {
  const nlohmann::json m = meta();
  const models::SafetensorsFile fx = openFixture("taesd_pipeline_sd1.safetensors");
  const auto& a = m.at("img2img_args");
  const test::FixtureTensor init = test::fixtureTensor(fx, "img2img.init_image");  // [1,3,H,W] in [-1, 1]
  pipeline::RgbImage image;
  image.height = int(init.shape[2]);
  image.width = int(init.shape[3]);
  const std::vector<float> nhwc = test::nchwToNhwc(init.values, init.shape);
  for (float v : nhwc) image.rgb.push_back(uint8_t(std::lround((v + 1.f) / 2.f * 255.f)));
  pipeline::GenerationRequest req = test::diffusersRequest(a);
  req.strength = a.at("strength");
  req.sampler = sampling::SamplerKind::Euler;
  req.initImage = image;
  req.decoder = pipeline::ImageDecoder::Taesd;
  const pipeline::Image img = model().generate(req);
  const std::vector<float> want = fx.readAsF32("img2img.image");
  ASSERT_EQ(img.pixels.size(), want.size());
  const double err = meanAbs(img.pixels, want);
  std::printf("    img2img mean |sdgen - diffusers| = %.2e\n", err);
  EXPECT_LE(err, 1.0 / 255);
}

TEST_F(TaesdPipeline, RequestsTheModelCannotServeAreErrors) {
  pipeline::TextToImage plain(ctx(), pipeline::LoadOptions{.modelPath = test::dataPath("tiny-sd1")});
  pipeline::GenerationRequest req;
  req.prompt = "x";
  req.steps = 1;
  req.width = req.height = 16;
  req.decoder = pipeline::ImageDecoder::Taesd;
  test::expectErrorContaining([&] { plain.generate(req); }, "--taesd");
  // A TAESD of scale factor 8 does not fit tiny-sd1's VAE (scale 2).
  pipeline::TextToImage wrongScale(
      ctx(), pipeline::LoadOptions{.modelPath = test::dataPath("tiny-sd1"), .taesdPath = test::dataPath("tiny-taesd")});
  test::expectErrorContaining([&] { wrongScale.generate(req); }, "scales by 8");
  // What the GUI asks before TAESD previews (it falls back to the projection when they cannot work).
  EXPECT_NE(plain.taesdPreviewProblem().find("--taesd"), std::string::npos);
  EXPECT_NE(wrongScale.taesdPreviewProblem().find("scales by 8"), std::string::npos);
  EXPECT_EQ(model().taesdPreviewProblem(), "");
  req.decoder = pipeline::ImageDecoder::Vae;
  EXPECT_EQ(wrongScale.generate(req).width, 16) << "the VAE decode still works";
  // No encoder: image to image with the TAESD decode is refused before any work.
  pipeline::TextToImage decoderOnly(
      ctx(), pipeline::LoadOptions{.modelPath = test::dataPath("tiny-sd1"),
                                   .taesdPath = test::dataPath("tiny-taesd-sd1-madebyollin/taesd_decoder.safetensors")});
  req.decoder = pipeline::ImageDecoder::Taesd;
  req.initImage = pipeline::RgbImage{16, 16, std::vector<uint8_t>(16 * 16 * 3, 128)};
  test::expectErrorContaining([&] { decoderOnly.generate(req); }, "no encoder");
}

}  // namespace
}  // namespace sdgen
