// SDXL on the tiny SDXL-shaped model (tests/data/tiny-sdxl, tests/reference/sdxl_fixtures.py) against
// transformers / diffusers: both text encoders' penultimate hidden states and the pooled projection, the UNet with
// text_time added conditioning, the VAE (float64 references: fp32 within 1e-4 of the reference's scale, fp16 within
// 1e-2, as the SD 1.x/2.x network tests), and whole StableDiffusionXLPipeline images (default and explicit
// micro-conditioning, no negative prompt with force_zeros_for_empty_prompt, DPM++ 2M, SDXL-Turbo style without
// guidance) and SD-Turbo-style images on tiny-sd2, within 1/255 mean absolute pixel difference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/tensor_io.h"
#include "graph/executor.h"
#include "models/formats/model_files.h"
#include "models/networks/clip_text_encoder.h"
#include "models/networks/unet.h"
#include "models/networks/vae_decoder.h"
#include "models/pipeline/text_to_image.h"
#include "ops/conv2d_scratch.h"
#include "tests/models/diffusers_request.h"
#include "tests/models/network_fixture.h"
#include "tests/models/sdxl_single_file.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

using graph::Value;
using nlohmann::json;

double tolerance(DType d) { return d == DType::F32 ? 1e-4 : 1e-2; }

// The measured error, printed for docs/sdxl.md's table.
double reported(const std::string& what, double error) {
  std::printf("[parity] %s: %.3g\n", what.c_str(), error);
  return error;
}
std::string label(const std::string& model, DType dt) {
  return std::string(model.find("ldm") != std::string::npos ? "single file" : "folder") +
         (dt == DType::F32 ? " fp32 " : " fp16 ");
}

struct Case {
  std::string model;  // tiny-sdxl (diffusers folder) | tiny-sdxl-ldm.safetensors (single file, sdxl_single_file.h)
  DType dtype;
};
std::string caseName(const testing::TestParamInfo<Case>& info) {
  return std::string(info.param.model.find("ldm") != std::string::npos ? "ldm_" : "folder_") +
         (info.param.dtype == DType::F32 ? "fp32" : "fp16");
}

// The single file's head counts (widths 32/48/64 are no multiple of 64-channel heads) come from the folder it was
// written from, as for the SD 1.x/2.x single-file tests.
std::string modelPath(const std::string& model) {
  return model.find("ldm") != std::string::npos ? test::tinySdxlSingleFile() : test::dataPath(model);
}
models::OpenOptions openOptions(const std::string& model) {
  models::OpenOptions o;
  if (model.find("ldm") != std::string::npos) o.configPath = test::dataPath("tiny-sdxl");
  return o;
}

json fixtureJson(const std::string& name) { return json::parse(std::ifstream(test::dataPath("fixtures/" + name))); }
models::SafetensorsFile fixtureFile(const std::string& name) {
  return models::SafetensorsFile::open(test::dataPath("fixtures/" + name));
}

class SdxlNetworkParity : public test::VulkanTest, public testing::WithParamInterface<Case> {
 protected:
  models::ModelFiles open() { return models::openModel(modelPath(GetParam().model), openOptions(GetParam().model)); }
};

TEST_P(SdxlNetworkParity, TextEncoders) {
  models::ModelFiles m = open();
  ASSERT_TRUE(m.isSdxl());
  auto fx = fixtureFile("text_encoder_sdxl.safetensors");
  const json meta = fixtureJson("text_encoder_sdxl.json");
  const DType dt = GetParam().dtype;
  nn::ParameterStore params(ctx(), dt);
  networks::ClipTextEncoder text1(params, m.textEncoderConfig, *m.textEncoderWeights);
  networks::ClipTextEncoder text2(params, m.textEncoder2Config, *m.textEncoder2Weights, true);
  for (int k : {1, 2}) {
    const std::string suffix = k == 1 ? "" : "_2";
    const networks::ClipTextEncoder& enc = k == 1 ? text1 : text2;
    const models::Tokenizer& tok = k == 1 ? *m.tokenizer : *m.tokenizer2;
    test::FixtureTensor ids = test::fixtureTensor(fx, "input_ids" + suffix);
    const int64_t batch = ids.shape[0], seq = ids.shape[1], d = enc.config().hiddenSize;
    // The folder's tokenizers give the fixture's ids (tokenizer_2 pads with "!").
    for (int64_t i = 0; i < batch; ++i) {
      models::Encoding e = tok.encode(meta.at("prompts")[i].get<std::string>());
      for (int64_t j = 0; j < seq; ++j)
        ASSERT_EQ(e.ids[j], int32_t(ids.values[i * seq + j])) << "tokenizer " << k << " prompt " << i << " token " << j;
    }
    std::vector<int32_t> idData(ids.values.begin(), ids.values.end());
    Allocation idMem = ctx().allocate(idData.size() * 4, "token ids");
    ctx().upload(idMem, 0, {reinterpret_cast<const uint8_t*>(idData.data()), idData.size() * 4});
    graph::Graph g;
    graph::TensorId hidden = g.output("penultimate", {batch, seq, d}, DType::F32);
    graph::TensorId last = g.output("last", {batch, seq, d}, DType::F32);
    nn::Builder b(g, dt, nullptr);
    b.store(enc.hiddenState(b, graph::indexView(idMem, {batch, seq}), enc.config().numHiddenLayers - 1, last),
            {"penultimate", hidden});
    Allocation hiddenMem = ctx().allocate(batch * seq * d * 4, "penultimate"), lastMem = ctx().allocate(batch * seq * d * 4, "last");
    graph::CompiledGraph cg(ctx(), g,
                            {{hidden, graph::view(hiddenMem, DType::F32, {batch, seq, d})},
                             {last, graph::view(lastMem, DType::F32, {batch, seq, d})}});
    cg.run();
    EXPECT_LE(reported(label(GetParam().model, dt) + "text encoder " + std::to_string(k) + " hidden_states[-2]",
                       test::relativeError(downloadFloats(ctx(), hiddenMem, batch * seq * d, DType::F32),
                                           test::fixtureTensor(fx, "penultimate" + suffix).values)),
              tolerance(dt))
        << "text encoder " << k << " hidden_states[-2]";
    const std::vector<float> lastGot = downloadFloats(ctx(), lastMem, batch * seq * d, DType::F32);
    EXPECT_LE(reported(label(GetParam().model, dt) + "text encoder " + std::to_string(k) + " last_hidden_state",
                       test::relativeError(lastGot, test::fixtureTensor(fx, "last_hidden_state" + suffix).values)),
              tolerance(dt))
        << "text encoder " << k << " last_hidden_state";
    if (k == 2) {  // the pooled projection of every prompt
      std::vector<float> pooled;
      for (int64_t i = 0; i < batch; ++i) {
        std::vector<float> p = text2.pooledProjection(std::span<const float>(lastGot).subspan(i * seq * d, seq * d),
                                                      std::span<const int32_t>(idData).subspan(i * seq, seq));
        pooled.insert(pooled.end(), p.begin(), p.end());
      }
      EXPECT_LE(reported(label(GetParam().model, dt) + "text encoder 2 text_embeds",
                         test::relativeError(pooled, test::fixtureTensor(fx, "text_embeds_2").values)),
                tolerance(dt));
    }
  }
}

TEST_P(SdxlNetworkParity, UNetWithAddedConditioning) {
  models::ModelFiles m = open();
  auto fx = fixtureFile("unet_sdxl.safetensors");
  const DType dt = GetParam().dtype;
  nn::ParameterStore params(ctx(), dt);
  networks::UNet unet(params, m.unetConfig, *m.unetWeights);
  ASSERT_TRUE(unet.hasAddedConditioning());
  ops::Conv2dScratch scratch(ctx());
  const int64_t width = m.unetConfig.projectionClassEmbeddingsInputDim;
  for (std::string c : {"a", "b"}) {
    test::FixtureTensor sample = test::fixtureTensor(fx, "sample." + c), context = test::fixtureTensor(fx, "context." + c);
    test::FixtureTensor embeds = test::fixtureTensor(fx, "text_embeds." + c), ids = test::fixtureTensor(fx, "time_ids." + c);
    const auto& s = sample.shape;  // NCHW
    const int64_t n = s[0], h = s[2], w = s[3], p = embeds.shape[1];
    std::vector<float> rows;
    for (int64_t i = 0; i < n; ++i) {
      std::array<float, 6> timeIds;
      std::copy_n(ids.values.begin() + i * 6, 6, timeIds.begin());
      std::vector<float> row =
          unet.addedConditioningInput(std::span<const float>(embeds.values).subspan(i * p, p), timeIds);
      rows.insert(rows.end(), row.begin(), row.end());
    }
    graph::Graph g;
    graph::TensorId in = g.input("sample", {n, h, w, s[1]}, DType::F32);
    graph::TensorId ctxT = g.input("context", context.shape, DType::F32);
    graph::TensorId addT = g.input("added conditioning", {n, width}, DType::F32);
    graph::TensorId out = g.output("noise", {n, h, w, s[1]}, DType::F32);
    nn::Builder b(g, dt, &scratch);
    Value t{{n, 1}, {}, [n](const graph::Resolver&) { return graph::broadcast(graph::uniform(0), {n, 1}); }, 0};
    Value added = g.read(addT);
    unet.build(b, g.read(in), t, g.read(ctxT), out, nullptr, &added);
    Allocation inMem = uploadFloats(ctx(), test::nchwToNhwc(sample.values, s), DType::F32, "sample");
    Allocation ctxMem = uploadFloats(ctx(), context.values, DType::F32, "context");
    Allocation addMem = uploadFloats(ctx(), rows, DType::F32, "added conditioning");
    Allocation outMem = ctx().allocate(sample.values.size() * 4, "noise");
    graph::CompiledGraph cg(ctx(), g,
                            {{in, graph::view(inMem, DType::F32, {n, h, w, s[1]})},
                             {ctxT, graph::view(ctxMem, DType::F32, context.shape)},
                             {addT, graph::view(addMem, DType::F32, {n, width})},
                             {out, graph::view(outMem, DType::F32, {n, h, w, s[1]})}});
    for (int ts : {999, 500, 1}) {
      cg.setUniform(0, float(ts));
      cg.run();
      auto got = test::nhwcToNchw(downloadFloats(ctx(), outMem, sample.values.size(), DType::F32), s);
      auto want = test::fixtureTensor(fx, "noise_pred." + c + ".t" + std::to_string(ts)).values;
      EXPECT_LE(reported(label(GetParam().model, dt) + "UNet case " + c + " t " + std::to_string(ts),
                         test::relativeError(got, want)),
                tolerance(dt));
    }
  }
}

TEST_P(SdxlNetworkParity, VaeDecoder) {
  models::ModelFiles m = open();
  EXPECT_FLOAT_EQ(m.vaeConfig.scalingFactor, 0.13025f);
  auto fx = fixtureFile("vae_sdxl.safetensors");
  const DType dt = GetParam().dtype;
  nn::ParameterStore params(ctx(), dt);
  networks::VaeDecoder vae(params, m.vaeConfig, *m.vaeWeights);
  ops::Conv2dScratch scratch(ctx());
  test::FixtureTensor lat = test::fixtureTensor(fx, "latents"), dec = test::fixtureTensor(fx, "decoded");
  const auto& s = lat.shape;
  const auto& o = dec.shape;
  graph::Graph g;
  graph::TensorId in = g.input("latents", {s[0], s[2], s[3], s[1]}, DType::F32);
  graph::TensorId out = g.output("image", {o[0], o[2], o[3], o[1]}, DType::F32);
  nn::Builder b(g, dt, &scratch);
  vae.build(b, g.read(in), out);
  Allocation inMem = uploadFloats(ctx(), test::nchwToNhwc(lat.values, s), DType::F32, "latents");
  Allocation outMem = ctx().allocate(dec.values.size() * 4, "image");
  graph::CompiledGraph cg(ctx(), g,
                          {{in, graph::view(inMem, DType::F32, {s[0], s[2], s[3], s[1]})},
                           {out, graph::view(outMem, DType::F32, {o[0], o[2], o[3], o[1]})}});
  cg.run();
  auto got = test::nhwcToNchw(downloadFloats(ctx(), outMem, dec.values.size(), DType::F32), o);
  EXPECT_LE(reported(label(GetParam().model, dt) + "VAE decode", test::relativeError(got, dec.values)), tolerance(dt));
}

INSTANTIATE_TEST_SUITE_P(Tiny, SdxlNetworkParity,
                         testing::Values(Case{"tiny-sdxl", DType::F32}, Case{"tiny-sdxl", DType::F16},
                                         Case{"tiny-sdxl-ldm.safetensors", DType::F32}),
                         caseName);

double meanAbsDifference(const std::vector<float>& a, const std::vector<float>& b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += std::abs(double(a[i]) - b[i]);
  return sum / double(a.size());
}

// Mean absolute difference of the float pixels and of the 8-bit ones, both against diffusers' float image.
void expectSameImage(const pipeline::Image& img, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(img.pixels.size(), want.size()) << what;
  double sumU8 = 0;
  for (size_t i = 0; i < want.size(); ++i)
    sumU8 += std::abs(double(img.rgb[i]) - std::nearbyint(want[i] * 255.0)) / 255.0;
  EXPECT_LE(reported(what + " image mean |difference| x 255", 255 * meanAbsDifference(img.pixels, want)), 1.0) << what;
  EXPECT_LE(sumU8 / want.size(), 1.0 / 255) << what;
}

sampling::SamplerKind samplerOf(const std::string& name) {
  if (name == "euler") return sampling::SamplerKind::Euler;
  if (name == "euler_a") return sampling::SamplerKind::EulerAncestral;
  if (name == "dpmpp_2m") return sampling::SamplerKind::DpmPP2M;
  throw Error("no sampler for fixture run '" + name + "'");
}

// diffusers' (height, width) / (top, left) pair as the request's (width, height) / (x, y).
std::optional<std::pair<int, int>> swapped(const json& args, const char* key) {
  if (!args.contains(key) || args.at(key).is_null()) return std::nullopt;
  return std::pair<int, int>{args.at(key)[1].get<int>(), args.at(key)[0].get<int>()};
}

// A fixture run's StableDiffusionXLPipeline arguments as sdgen's request (negative micro-conditioning included).
pipeline::GenerationRequest requestOf(const json& run) {
  const json& args = run.at("args");
  pipeline::GenerationRequest req = test::diffusersRequest(args);
  req.sampler = samplerOf(run.at("sampler"));
  req.micro = {swapped(args, "original_size"), swapped(args, "crops_coords_top_left"), swapped(args, "target_size"),
               swapped(args, "negative_original_size"), swapped(args, "negative_crops_coords_top_left"),
               swapped(args, "negative_target_size")};
  return req;
}

class SdxlPipelineParity : public test::VulkanTest, public testing::WithParamInterface<std::string> {};

TEST_P(SdxlPipelineParity, EveryRunMatchesDiffusers) {
  const json meta = fixtureJson("pipeline_sdxl.json");
  auto fx = fixtureFile("pipeline_sdxl.safetensors");
  const models::OpenOptions o = openOptions(GetParam());
  pipeline::TextToImage t2i(ctx(), {.modelPath = modelPath(GetParam()), .configPath = o.configPath});
  ASSERT_TRUE(t2i.isSdxlModel());
  // The conditioning each run changes (time ids, zero negative, sampler) moves diffusers' image by more than twice
  // the tolerance (1/255) from the default run's, so an sdgen that ignored the change could not match that run.
  const std::vector<float> base = fx.readAsF32("default.image");
  for (const char* other : {"microcond", "no_negative", "dpmpp_2m", "turbo"})
    EXPECT_GT(reported(std::string("diffusers ") + other + " vs default image mean |difference| x 255",
                       255 * meanAbsDifference(fx.readAsF32(std::string(other) + ".image"), base)),
              2.0)
        << other;
  for (const json& run : meta.at("runs")) {
    const std::string name = run.at("name");
    pipeline::GenerationRequest req = requestOf(run);
    req.sgmUniform = run.at("config").at("timestep_spacing") == "trailing";
    // The time ids diffusers built for this run.
    const std::array<float, 6> ids = pipeline::sdxlTimeIds(req.micro, req.width, req.height);
    const std::vector<float> want = fx.readAsF32(name + ".add_time_ids");
    EXPECT_EQ(std::vector<float>(ids.begin(), ids.end()), want) << name;
    expectSameImage(t2i.generate(req), fx.readAsF32(name + ".image"), GetParam() + " " + name);
  }
}

INSTANTIATE_TEST_SUITE_P(Tiny, SdxlPipelineParity, testing::Values("tiny-sdxl", "tiny-sdxl-ldm.safetensors"),
                         [](const testing::TestParamInfo<std::string>& i) {
                           return std::string(i.param.find("ldm") != std::string::npos ? "ldm" : "folder");
                         });

class SdxlNegativeMicroConditioning : public test::VulkanTest {};

TEST_F(SdxlNegativeMicroConditioning, TheUnconditionalHalfTakesItsOwnTimeIds) {
  // diffusers' negative_original_size / negative_crops_coords_top_left / negative_target_size (section
  // sdxlnegmicro): each run's image moves by more than 2/255 from the same run without them (the fixture checks),
  // so an sdgen that gave both halves the same ids could not pass.
  const json meta = fixtureJson("pipeline_sdxl_negmicro.json");
  auto fx = fixtureFile("pipeline_sdxl_negmicro.safetensors");
  pipeline::TextToImage t2i(ctx(), {.modelPath = modelPath("tiny-sdxl")});
  for (const json& run : meta.at("runs")) {
    const std::string name = run.at("name");
    const pipeline::GenerationRequest req = requestOf(run);
    const pipeline::SdxlTimeIds ids = pipeline::sdxlTimeIdPair(req.micro, req.width, req.height);
    EXPECT_EQ(std::vector<float>(ids.positive.begin(), ids.positive.end()), fx.readAsF32(name + ".add_time_ids"));
    EXPECT_EQ(std::vector<float>(ids.negative.begin(), ids.negative.end()),
              fx.readAsF32(name + ".negative_add_time_ids"));
    expectSameImage(t2i.generate(req), fx.readAsF32(name + ".image"), "negative micro-conditioning " + name);
  }
  // One negative size alone is refused (diffusers would ignore it), before anything runs.
  pipeline::GenerationRequest req;
  req.prompt = "x";
  req.micro.negativeOriginalSize = std::pair{8, 8};
  test::expectErrorContaining([&] { t2i.generate(req); }, "the target size is missing");
}

class SdTurboParity : public test::VulkanTest {};

TEST_F(SdTurboParity, OneAndTwoStepsWithoutGuidanceMatchDiffusers) {
  // SD-Turbo: SD 2.1's architecture (tiny-sd2), guidance 0 (one UNet half), Euler ancestral, trailing timesteps.
  const json meta = fixtureJson("sdturbo_sd2.json");
  auto fx = fixtureFile("sdturbo_sd2.safetensors");
  pipeline::TextToImage t2i(ctx(), {.modelPath = test::dataPath("tiny-sd2")});
  for (const json& run : meta.at("runs")) {
    pipeline::GenerationRequest req;
    req.prompt = meta.at("prompt");
    req.steps = run.at("steps");
    req.cfgScale = 0.f;
    req.seed = meta.at("seed");
    req.width = meta.at("width");
    req.height = meta.at("height");
    req.sampler = sampling::SamplerKind::EulerAncestral;
    req.sgmUniform = true;
    expectSameImage(t2i.generate(req), fx.readAsF32(run.at("name").get<std::string>() + ".image"),
                    "sd-turbo " + run.at("name").get<std::string>());
  }
}

}  // namespace
}  // namespace sdgen

namespace sdgen {
namespace {

class SdxlPrecision : public test::VulkanTest {};

TEST_F(SdxlPrecision, Fp16PipelinesKeepAForceUpcastVaeInFp32) {
  // diffusers' SDXL pipelines run a force_upcast VAE (the config default, and the original SDXL VAE's) in fp32:
  // its fp16 activations overflow. The VAE's weights are then as large as in an fp32 pipeline; the UNet's shrink.
  pipeline::TextToImage fp32(ctx(), {.modelPath = test::dataPath("tiny-sdxl"), .precision = DType::F32});
  pipeline::TextToImage fp16(ctx(), {.modelPath = test::dataPath("tiny-sdxl"), .precision = DType::F16});
  auto weights = [](const pipeline::TextToImage& t, const std::string& name) {
    for (const pipeline::ComponentMemory& c : t.memoryReport().components)
      if (c.name == name) return c.weightBytes;
    ADD_FAILURE() << "no component " << name;
    return uint64_t(0);
  };
  EXPECT_EQ(weights(fp16, "VAE decoder"), weights(fp32, "VAE decoder"));
  EXPECT_LT(weights(fp16, "UNet"), weights(fp32, "UNet"));  // fp16 (packed for the GEMMs, so not exactly half)
  EXPECT_GT(weights(fp16, "text encoder 2"), 0u);
  pipeline::GenerationRequest req;
  req.prompt = "a red circle on a blue background";
  req.steps = 2;
  req.width = 24;
  req.height = 16;
  req.sampler = sampling::SamplerKind::Euler;
  const pipeline::Image a = fp32.generate(req), b = fp16.generate(req);
  EXPECT_LE(reported("fp16 pipeline vs fp32 image mean |difference| x 255", 255 * meanAbsDifference(b.pixels, a.pixels)),
            2.0);
}

}  // namespace
}  // namespace sdgen
