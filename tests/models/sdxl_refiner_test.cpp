// The SDXL refiner (docs/sdxl.md "Refiner") on tests/data/tiny-sdxl-refiner against diffusers 0.42.1
// (tests/reference/sdxl_refiner_fixtures.py, `make_fixtures.py --only sdxlrefiner`, fixtures/refiner_sdxl.*):
//   - the folder and the single file open as a refiner (text_encoder_2 alone, five time ids, no first tokenizer);
//   - the base + refiner split of the schedule (denoising_range.h) on the CPU;
//   - StableDiffusionXLImg2ImgPipeline images with requires_aesthetics_score: the refiner alone on the img2img
//     init image (samplers x strengths, aesthetic scores, size/crop conditioning and its negative, an empty
//     negative prompt), and the ensemble with tiny-sdxl as the base (denoising_end / denoising_start, Euler,
//     Euler a, DPM++ 2M, DDIM, Heun, DPM2 a at 0.8 and 0.5; twice with an image-to-image base): the base's
//     latents at the switch within 1e-3 and every image
//     within 1/255 mean absolute difference, from the diffusers folders and from single files;
//   - the ensemble with DPM++ SDE and DPM++ 2S a (fixtures/refiner_sde_sdxl.*, sdxl_refiner_sde_fixtures.py);
//   - the refiner after inpainting (StableDiffusionXLInpaintPipeline twice, fixtures/refiner_inpaint_sdxl.*).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "models/config/config_files.h"
#include "models/formats/ldm_checkpoint.h"
#include "models/formats/model_files.h"
#include "models/pipeline/denoising_range.h"
#include "models/pipeline/image_inputs.h"
#include "models/pipeline/text_to_image.h"
#include "models/safetensors.h"
#include "models/sampling/sampler.h"
#include "tests/models/diffusers_request.h"
#include "tests/models/network_fixture.h"
#include "tests/models/sdxl_single_file.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

using nlohmann::json;

json fixtureJson() { return json::parse(std::ifstream(test::dataPath("fixtures/refiner_sdxl.json"))); }
models::SafetensorsFile fixtureFile() {
  return models::SafetensorsFile::open(test::dataPath("fixtures/refiner_sdxl.safetensors"));
}

TEST(SdxlRefinerFormats, FolderAndSingleFileOpenAsRefiners) {
  const models::ModelFiles folder = models::openModel(test::dataPath("tiny-sdxl-refiner"));
  EXPECT_TRUE(folder.isSdxlRefiner());
  EXPECT_FALSE(folder.textEncoderWeights);
  EXPECT_FALSE(folder.tokenizer);
  EXPECT_TRUE(folder.tokenizer2);
  EXPECT_FALSE(folder.forceZerosForEmptyPrompt);  // the refiner's model_index.json
  EXPECT_EQ(folder.unetConfig.crossAttentionDim, folder.textEncoder2Config.hiddenSize);
  EXPECT_EQ(folder.unetConfig.projectionClassEmbeddingsInputDim,
            folder.textEncoder2Config.projectionDim + 5 * folder.unetConfig.additionTimeEmbedDim);

  const models::LdmCheckpoint ckpt = models::openLdmCheckpoint(test::tinySdxlRefinerSingleFile());
  EXPECT_EQ(ckpt.family, models::LdmFamily::SDXLRefiner);
  EXPECT_EQ(ckpt.unetConfig.additionTimeEmbedDim, folder.unetConfig.additionTimeEmbedDim);  // (64 - 24) / 5
  EXPECT_EQ(ckpt.textEncoder2Config.projectionDim, folder.textEncoder2Config.projectionDim);
  // The tiny widths are no multiple of 64-channel heads: the folder gives them, as for tiny-sdxl's single file.
  const models::ModelFiles single = models::openModel(
      test::tinySdxlRefinerSingleFile(), {.configPath = test::dataPath("tiny-sdxl-refiner")});
  EXPECT_TRUE(single.isSdxlRefiner());
  EXPECT_FALSE(single.tokenizer);
  EXPECT_FALSE(single.forceZerosForEmptyPrompt);  // stable-diffusion-xl-refiner-1.0's
  EXPECT_EQ(single.unetConfig.normNumGroups, folder.unetConfig.normNumGroups);
}

TEST(SdxlRefinerTimeIds, AestheticScoresAndNegativeDefaults) {
  pipeline::SdxlMicroConditioning m;
  pipeline::SdxlTimeIds ids = pipeline::sdxlRefinerTimeIdPair(m, 24, 16);
  EXPECT_EQ(ids.positive, (std::vector<float>{16, 24, 0, 0, 6.0f}));
  EXPECT_EQ(ids.negative, (std::vector<float>{16, 24, 0, 0, 2.5f}));
  // The negative crop defaults to (0, 0), not the crop (diffusers' negative_crops_coords_top_left); the negative
  // original size to the original size; no target size.
  m.originalSize = {56, 40};
  m.cropTopLeft = {8, 4};
  m.targetSize = {1, 1};
  m.aestheticScore = 8.5f;
  ids = pipeline::sdxlRefinerTimeIdPair(m, 24, 16);
  EXPECT_EQ(ids.positive, (std::vector<float>{40, 56, 4, 8, 8.5f}));
  EXPECT_EQ(ids.negative, (std::vector<float>{40, 56, 0, 0, 2.5f}));
}

// The split of the schedule on the refiner's scheduler file (leading, steps_offset 1, 10 steps: timesteps 901,
// 801, ..., 1), in UNet evaluations as the fixture's runs recorded diffusers' timesteps: order-2 samplers (Heun,
// DPM2 a) list 19, the base stopping after the first evaluation of a step and the refiner starting it again.
TEST(SdxlRefinerSplit, BaseAndRefinerShareTheScheduleAtTheCutoff) {
  const models::ModelFiles files = models::openModel(test::dataPath("tiny-sdxl-refiner"));
  const json meta = fixtureJson();
  for (const json& run : meta.at("ensemble_runs")) {
    const auto kind = sampling::parseSamplerKind(run.at("sampler").get<std::string>());
    ASSERT_TRUE(kind);
    const models::SchedulerConfig config =
        models::schedulerConfigFor(files.scheduler, sampling::diffusersSchedulerClass(*kind));
    auto sampler = sampling::Sampler::create(config, {*kind, false}, meta.at("ensemble_args").at("num_inference_steps"), 0);
    const double f = run.at("switch");
    const int end = pipeline::evaluationsBeforeDenoisingEnd(*sampler, f, config.numTrainTimesteps);
    const int start = pipeline::firstEvaluationForDenoisingStart(*sampler, f, config.numTrainTimesteps);
    // An image-to-image base starts where strength puts it.
    const int first = run.at("strength").is_null()
                          ? 0
                          : pipeline::firstStepForStrength(sampler->steps(), run.at("strength").get<float>());
    EXPECT_EQ(end - first, int(run.at("base_timesteps").size())) << run.at("id");
    EXPECT_EQ(sampler->evaluations() - start, int(run.at("refiner_timesteps").size())) << run.at("id");
    EXPECT_NEAR(sampler->evaluationTimestep(start), run.at("refiner_timesteps")[0].get<float>(), 1e-3) << run.at("id");
    EXPECT_EQ(sampler->firstEvaluation(sampler->stepOfEvaluation(start)), start) << run.at("id");
  }
  const models::SchedulerConfig euler = models::schedulerConfigFor(files.scheduler, "EulerDiscreteScheduler");
  auto sampler = sampling::Sampler::create(euler, {sampling::SamplerKind::Euler, false}, 10, 0);
  for (double bad : {0.0, 1.0, -0.5, 1.5})
    test::expectErrorContaining([&] { pipeline::evaluationsBeforeDenoisingEnd(*sampler, bad, 1000); },
                                "denoising end must be between 0 and 1");
  // 0.05: cutoff 950 is above every timestep (901): the base would run nothing.
  test::expectErrorContaining([&] { pipeline::evaluationsBeforeDenoisingEnd(*sampler, 0.05, 1000); }, "no step");
  test::expectErrorContaining([&] { pipeline::firstEvaluationForDenoisingStart(*sampler, 0.9999, 1000); }, "no step");
  // DPM++ SDE splits as the other order-2 samplers (fixtures/refiner_sde_sdxl.json: at 0.5 the base runs 9
  // evaluations, the refiner 11 from the first evaluation of the base's last step); DPM++ 2S a (order 1 for the
  // split: one evaluation per step) at its steps.
  const json sdeMeta = json::parse(std::ifstream(test::dataPath("fixtures/refiner_sde_sdxl.json")));
  for (const json& run : sdeMeta.at("ensemble_runs")) {
    std::string name = run.at("sampler");
    const bool karras = name == "dpmpp_sde_karras";
    if (karras) name = "dpmpp_sde";
    const auto kind = sampling::parseSamplerKind(name);
    ASSERT_TRUE(kind) << name;
    const models::SchedulerConfig config =
        models::schedulerConfigFor(files.scheduler, sampling::diffusersSchedulerClass(*kind));
    auto sampler = sampling::Sampler::create(config, {*kind, karras}, 10, 0);
    const double f = run.at("switch");
    const int end = pipeline::evaluationsBeforeDenoisingEnd(*sampler, f, config.numTrainTimesteps);
    const int start = pipeline::firstEvaluationForDenoisingStart(*sampler, f, config.numTrainTimesteps);
    EXPECT_EQ(end, int(run.at("base_timesteps").size())) << run.at("id");
    EXPECT_EQ(sampler->evaluations() - start, int(run.at("refiner_timesteps").size())) << run.at("id");
    EXPECT_NEAR(sampler->evaluationTimestep(start), run.at("refiner_timesteps")[0].get<float>(), 1e-3) << run.at("id");
  }
}

// diffusers' (height, width) / (top, left) pair as the request's (width, height) / (x, y).
std::optional<std::pair<int, int>> swapped(const json& kwargs, const char* key) {
  if (!kwargs.contains(key)) return std::nullopt;
  return std::pair{kwargs.at(key)[1].get<int>(), kwargs.at(key)[0].get<int>()};
}

double meanAbsDifference(const std::vector<float>& a, const std::vector<float>& b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += std::abs(double(a[i]) - b[i]);
  return sum / double(a.size());
}

// Within 1/255 mean absolute difference (the 8-bit image too); the float image within `floatMeanX255` / 255.
void expectSameImage(const pipeline::Image& img, const std::vector<float>& want, const std::string& what,
                     double floatMeanX255 = 1.0) {
  ASSERT_EQ(img.pixels.size(), want.size()) << what;
  double sumU8 = 0;
  for (size_t i = 0; i < want.size(); ++i)
    sumU8 += std::abs(double(img.rgb[i]) - std::nearbyint(want[i] * 255.0)) / 255.0;
  const double mean = meanAbsDifference(img.pixels, want);
  std::printf("[parity] %-40s image mean |difference| x 255: %.3g\n", what.c_str(), 255 * mean);
  EXPECT_LE(mean, floatMeanX255 / 255) << what;
  EXPECT_LE(sumU8 / want.size(), 1.0 / 255) << what;
}

void expectTimeIds(const pipeline::GenerationRequest& req, const models::SafetensorsFile& fx, const std::string& key) {
  const pipeline::SdxlTimeIds ids = pipeline::sdxlRefinerTimeIdPair(req.micro, req.width ? req.width : 24,
                                                                    req.height ? req.height : 16);
  EXPECT_EQ(ids.positive, fx.readAsF32(key + ".add_time_ids")) << key;
  EXPECT_EQ(ids.negative, fx.readAsF32(key + ".add_neg_time_ids")) << key;
}

struct Models {
  std::string base, baseConfig, refiner, refinerConfig;
};
// nineChannelBase: tiny-sdxl-inpaint (a 9-channel SDXL inpainting UNet) as the base.
Models modelsOf(bool singleFile, bool nineChannelBase = false) {
  if (!singleFile)
    return {nineChannelBase ? test::tinySdxlInpaintFolder() : test::dataPath("tiny-sdxl"), "",
            test::dataPath("tiny-sdxl-refiner"), ""};
  if (nineChannelBase)
    return {test::tinySdxlInpaintSingleFile(), test::tinySdxlInpaintFolder(), test::tinySdxlRefinerSingleFile(),
            test::dataPath("tiny-sdxl-refiner")};
  return {test::tinySdxlSingleFile(), test::dataPath("tiny-sdxl"), test::tinySdxlRefinerSingleFile(),
          test::dataPath("tiny-sdxl-refiner")};
}

// A PNG's pixels, stored by the fixture script as int64: `name` RGB ([h, w, 3]) or grey ([h, w], as R = G = B,
// whose luma is the grey value itself).
pipeline::RgbImage pngPixels(const json& args, const models::SafetensorsFile& fx, const std::string& name = "init_rgb") {
  pipeline::RgbImage image{args.at("width"), args.at("height"), {}};
  const models::TensorInfo& pixels = fx.get(name);
  if (pixels.dtype != models::TensorDType::I64) throw Error(name + " is not int64");
  const auto bytes = fx.bytes(pixels);
  const int copies = pixels.elementCount() == size_t(image.width) * image.height ? 3 : 1;
  for (size_t i = 0; i < pixels.elementCount(); ++i) {
    int64_t v;
    std::memcpy(&v, bytes.data() + 8 * i, 8);
    image.rgb.insert(image.rgb.end(), copies, uint8_t(v));
  }
  return image;
}
pipeline::RgbImage initImage(const json& meta, const models::SafetensorsFile& fx) {
  return pngPixels(meta.at("img2img_args"), fx);
}

double latentsError(const std::vector<float>& got, const std::vector<float>& want) {
  double worst = 0, scale = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    worst = std::max(worst, std::abs(double(got[i]) - want[i]));
    scale = std::max(scale, std::abs(double(want[i])));
  }
  return worst / scale;
}

class SdxlRefinerParity : public test::VulkanTest, public testing::WithParamInterface<bool> {};

TEST_P(SdxlRefinerParity, RefinerAloneMatchesStableDiffusionXLImg2ImgPipeline) {
  const json meta = fixtureJson();
  const models::SafetensorsFile fx = fixtureFile();
  const Models m = modelsOf(GetParam());
  pipeline::TextToImage refiner(ctx(), {.modelPath = m.refiner, .configPath = m.refinerConfig});
  ASSERT_TRUE(refiner.isSdxlRefiner());
  const json& args = meta.at("img2img_args");
  const pipeline::RgbImage init = initImage(meta, fx);
  for (const json& run : meta.at("img2img_runs")) {
    const std::string id = run.at("id");
    const json& kw = run.at("kwargs");
    pipeline::GenerationRequest req = test::diffusersRequest(args);
    req.negativePrompt = run.at("negative_prompt").is_null() ? "" : run.at("negative_prompt").get<std::string>();
    req.sampler = *sampling::parseSamplerKind(run.at("sampler").get<std::string>());
    req.strength = run.at("strength").get<float>();
    req.initImage = init;
    req.micro.originalSize = swapped(kw, "original_size");
    req.micro.cropTopLeft = swapped(kw, "crops_coords_top_left");
    req.micro.negativeOriginalSize = swapped(kw, "negative_original_size");
    req.micro.negativeCropTopLeft = swapped(kw, "negative_crops_coords_top_left");
    req.micro.aestheticScore = kw.value("aesthetic_score", 6.0f);
    req.micro.negativeAestheticScore = kw.value("negative_aesthetic_score", 2.5f);
    expectTimeIds(req, fx, "img2img." + id);
    expectSameImage(refiner.generate(req), fx.readAsF32("img2img." + id + ".image"),
                    std::string(GetParam() ? "single file " : "folder ") + "img2img " + id);
  }
}

// One run of an ensemble fixture: tiny-sdxl with denoising_end (an image-to-image base where the run has a
// strength), its latents at the switch within 1e-3 of diffusers', then the refiner from them with denoising_start,
// its image within 1/255 (expectSameImage; the float image within `floatMeanX255` / 255). `timeIds`: the fixture
// recorded the refiner's add_time_ids.
void expectEnsembleRun(pipeline::TextToImage& base, pipeline::TextToImage& refiner, const json& meta,
                       const models::SafetensorsFile& fx, const json& run, bool singleFile, bool timeIds,
                       double floatMeanX255 = 1.0) {
  const std::string id = run.at("id"), key = "ensemble." + id;
  pipeline::GenerationRequest req = test::diffusersRequest(meta.at("ensemble_args"));
  std::string sampler = run.at("sampler");
  const std::string karras = "_karras";
  req.karras = sampler.size() > karras.size() && sampler.compare(sampler.size() - karras.size(), karras.size(), karras) == 0;
  if (req.karras) sampler.resize(sampler.size() - karras.size());
  req.sampler = *sampling::parseSamplerKind(sampler);
  req.denoisingEnd = run.at("switch").get<double>();
  if (run.contains("strength") && !run.at("strength").is_null()) {  // StableDiffusionXLImg2ImgPipeline as the base
    req.initImage = initImage(meta, fx);
    req.strength = run.at("strength").get<float>();
  }
  // Progress counts steps: the fixture's timesteps for the samplers of one evaluation per step.
  const bool oneEvaluationPerStep = run.at("scheduler_order") == 1;
  int baseSteps = 0;
  const pipeline::Image latents = base.generate(req, [&](int, int steps) { baseSteps = steps; });
  if (oneEvaluationPerStep) {
    EXPECT_EQ(baseSteps, int(run.at("base_timesteps").size())) << id;
  }
  EXPECT_TRUE(latents.rgb.empty()) << id;
  const std::vector<float> want = fx.readAsF32(key + ".base_latents");
  ASSERT_EQ(latents.latents.size(), want.size()) << id;
  const double error = latentsError(latents.latents, want);
  std::printf("[parity] ensemble %-10s base latents at the switch: max |difference| / max |reference| %.3g\n",
              id.c_str(), error);
  EXPECT_LE(error, 1e-3) << id;

  req.denoisingEnd.reset();
  req.initImage.reset();
  req.denoisingStart = run.at("switch").get<double>();
  req.startLatents = latents.latents;
  if (timeIds) expectTimeIds(req, fx, key);
  int refinerSteps = 0;
  const pipeline::Image image = refiner.generate(req, [&](int, int steps) { refinerSteps = steps; });
  if (oneEvaluationPerStep) {
    EXPECT_EQ(refinerSteps, int(run.at("refiner_timesteps").size())) << id;
  }
  expectSameImage(image, fx.readAsF32(key + ".image"), std::string(singleFile ? "single file " : "folder ") + "ensemble " + id,
                  floatMeanX255);
}

TEST_P(SdxlRefinerParity, BaseAndRefinerEnsembleMatchesDiffusers) {
  const json meta = fixtureJson();
  const models::SafetensorsFile fx = fixtureFile();
  const Models m = modelsOf(GetParam());
  pipeline::TextToImage base(ctx(), {.modelPath = m.base, .configPath = m.baseConfig});
  pipeline::TextToImage refiner(ctx(), {.modelPath = m.refiner, .configPath = m.refinerConfig});
  for (const json& run : meta.at("ensemble_runs")) expectEnsembleRun(base, refiner, meta, fx, run, GetParam(), true);
  // The refiner continues only latents of its size.
  pipeline::GenerationRequest req;
  req.prompt = "x";
  req.width = 24;
  req.height = 16;
  req.denoisingStart = 0.8;
  req.startLatents = std::vector<float>(10, 0.f);
  test::expectErrorContaining([&] { refiner.generate(req); }, "the latents to refine hold 10 values");
}

// DPM++ SDE and DPM++ 2S a across the switch (fixtures/refiner_sde_sdxl, tests/reference/sdxl_refiner_sde_fixtures.py):
// diffusers' DPMSolverSDEScheduler with its noise drawn from each part's generator as sdgen draws it
// (docs/samplers.md), at 0.8 and 0.5 and with Karras sigmas (order 2: the refiner starts again at the base's last
// step); DPMSolverSinglestepScheduler with the refiner starting at a second-order step (lowered to first order:
// no outputs before the switch) and at a first-order one.
TEST_P(SdxlRefinerParity, BaseAndRefinerEnsembleWithDpmppSdeAnd2sAMatchesDiffusers) {
  const json meta = json::parse(std::ifstream(test::dataPath("fixtures/refiner_sde_sdxl.json")));
  const models::SafetensorsFile fx = models::SafetensorsFile::open(test::dataPath("fixtures/refiner_sde_sdxl.safetensors"));
  const Models m = modelsOf(GetParam());
  pipeline::TextToImage base(ctx(), {.modelPath = m.base, .configPath = m.baseConfig});
  pipeline::TextToImage refiner(ctx(), {.modelPath = m.refiner, .configPath = m.refinerConfig});
  ASSERT_EQ(meta.at("ensemble_runs").size(), 5u);
  // The tiny refiner moves the image little: a refiner whose first 2S a step kept its second order read 0.53/255
  // from diffusers' image, this split 2e-4/255 (both fp32 on the CPU). Hence 0.05/255 here.
  for (const json& run : meta.at("ensemble_runs"))
    expectEnsembleRun(base, refiner, meta, fx, run, GetParam(), false, 0.05);
}

// The refiner after inpainting (fixtures/refiner_inpaint_sdxl, tests/reference/sdxl_refiner_inpaint_fixtures.py):
// tiny-sdxl as StableDiffusionXLInpaintPipeline with denoising_end, the refiner as one too with the base's latents as
// its image and the same mask, its noise drawn first and the kept region blended from those latents; and
// (fixtures/refiner_inpaint9_sdxl, sdxl_inpaint9_fixtures.py) the same after tiny-sdxl-inpaint's 9-channel base.
void expectRefinerAfterInpainting(Context& ctx, const std::string& fixture, bool singleFile, bool nineChannelBase) {
  const json meta = json::parse(std::ifstream(test::dataPath("fixtures/" + fixture + ".json")));
  const models::SafetensorsFile fx = models::SafetensorsFile::open(test::dataPath("fixtures/" + fixture + ".safetensors"));
  const Models m = modelsOf(singleFile, nineChannelBase);
  pipeline::TextToImage base(ctx, {.modelPath = m.base, .configPath = m.baseConfig});
  ASSERT_EQ(base.isInpaintingModel(), nineChannelBase);
  pipeline::TextToImage refiner(ctx, {.modelPath = m.refiner, .configPath = m.refinerConfig});
  const json& args = meta.at("args");
  const pipeline::RgbImage init = pngPixels(args, fx), mask = pngPixels(args, fx, "mask_as_l");
  for (const json& run : meta.at("runs")) {
    const std::string id = run.at("id"), what = fixture + (singleFile ? " single file " : " folder ") + id;
    pipeline::GenerationRequest req = test::diffusersRequest(args);
    req.sampler = *sampling::parseSamplerKind(run.at("sampler").get<std::string>());
    req.initImage = init;
    req.mask = mask;
    req.strength = run.at("strength").get<float>();
    req.denoisingEnd = run.at("switch").get<double>();
    int baseSteps = 0;
    const pipeline::Image latents = base.generate(req, [&](int, int steps) { baseSteps = steps; });
    // Progress counts steps: the fixture's timesteps for the samplers of one evaluation per step.
    const bool oneEvaluationPerStep = run.at("scheduler_order") == 1;
    if (oneEvaluationPerStep) EXPECT_EQ(baseSteps, int(run.at("base_timesteps").size())) << what;
    const std::vector<float> wantLatents = fx.readAsF32(id + ".base_latents");
    ASSERT_EQ(latents.latents.size(), wantLatents.size()) << what;
    const double error = latentsError(latents.latents, wantLatents);
    std::printf("[parity] %-50s base latents at the switch: max |difference| / max |reference| %.3g\n",
                what.c_str(), error);
    EXPECT_LE(error, 1e-3) << what;

    req.denoisingEnd.reset();
    req.initImage.reset();
    req.denoisingStart = run.at("switch").get<double>();
    req.startLatents = latents.latents;
    expectTimeIds(req, fx, id);
    int refinerSteps = 0;
    const pipeline::Image image = refiner.generate(req, [&](int, int steps) { refinerSteps = steps; });
    if (oneEvaluationPerStep) EXPECT_EQ(refinerSteps, int(run.at("refiner_timesteps").size())) << what;
    const std::vector<float> want = fx.readAsF32(id + ".image");
    expectSameImage(image, want, what);
    // The mask moves diffusers' image by 0.55-22.8/255 from the refiner's without it: sdgen's must be far closer.
    EXPECT_LT(4 * meanAbsDifference(image.pixels, want), meanAbsDifference(image.pixels, fx.readAsF32(id + ".unmasked_image")))
        << what << ": the image is not nearer diffusers' with the refiner's mask than without it";
  }
  if (nineChannelBase) {  // a 9-channel model cannot refine masked latents (diffusers has no masked image latents)
    pipeline::GenerationRequest req = test::diffusersRequest(args);
    req.denoisingStart = 0.8;
    req.startLatents = std::vector<float>(4 * 8 * 12, 0.f);
    req.mask = mask;
    test::expectErrorContaining([&] { base.generate(req); }, "(9 input channels) cannot refine latents with a mask");
    return;
  }
  // The refiner's mask must be of the image's size, and an inpainting (9-channel) model cannot refine with one.
  pipeline::GenerationRequest req = test::diffusersRequest(args);
  req.denoisingStart = 0.8;
  req.startLatents = std::vector<float>(4 * 8 * 12, 0.f);
  req.mask = pipeline::RgbImage{12, 8, std::vector<uint8_t>(12 * 8 * 3, 255)};
  test::expectErrorContaining([&] { refiner.generate(req); },
                              "the mask is 12x8 but the latents to refine are of a 24x16 image");
}

TEST_P(SdxlRefinerParity, RefinerAfterInpaintingMatchesStableDiffusionXLInpaintPipeline) {
  expectRefinerAfterInpainting(ctx(), "refiner_inpaint_sdxl", GetParam(), false);
}

TEST_P(SdxlRefinerParity, RefinerAfterANineChannelInpaintingBaseMatchesDiffusers) {
  expectRefinerAfterInpainting(ctx(), "refiner_inpaint9_sdxl", GetParam(), true);
}

INSTANTIATE_TEST_SUITE_P(Tiny, SdxlRefinerParity, testing::Values(false, true),
                         [](const testing::TestParamInfo<bool>& info) { return info.param ? "single_file" : "folder"; });

}  // namespace
}  // namespace sdgen
