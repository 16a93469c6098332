// The CLIP text encoder, UNet and VAE decoder of the tiny SD1- and SD2-style models against diffusers /
// transformers (float64 references, tests/data/fixtures): fp32 within 1e-4 of the reference's scale, fp16
// storage within 1e-2. Both model layouts (diffusers folder, single-file LDM checkpoint) load the same networks.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <fstream>

#include "engine/tensor_io.h"
#include "graph/executor.h"
#include "models/formats/model_files.h"
#include "models/networks/clip_text_encoder.h"
#include "models/networks/unet.h"
#include "models/networks/vae_decoder.h"
#include "models/networks/vae_encoder.h"
#include "ops/conv2d_scratch.h"
#include "tests/models/network_fixture.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

using graph::Value;

struct Case {
  std::string model;  // tiny-sd1 | tiny-sd2 | tiny-sd1-ldm.safetensors | ...
  std::string fixture;  // sd1 | sd2
  DType dtype;
};

std::string caseName(const testing::TestParamInfo<Case>& info) {
  std::string m = info.param.model.find("ldm") != std::string::npos ? "ldm_" : "folder_";
  return m + info.param.fixture + (info.param.dtype == DType::F32 ? "_fp32" : "_fp16");
}

double tolerance(DType d) { return d == DType::F32 ? 1e-4 : 1e-2; }

class NetworkParity : public test::VulkanTest, public testing::WithParamInterface<Case> {
 protected:
  models::ModelFiles open() {
    models::OpenOptions o;
    if (GetParam().model.find("ldm") != std::string::npos) {
      // Tiny widths (32) are no multiple of the 64-channel heads LDM checkpoints imply: the head counts come
      // from the configs of the folder the checkpoint was made from; the weights from the single file.
      o.configPath = test::dataPath("tiny-" + GetParam().fixture);
    }
    return models::openModel(test::dataPath(GetParam().model), o);
  }
  void checkUNet();  // the UNet against its fixture, at three timesteps of one recording
  models::SafetensorsFile fixture(const std::string& component) {
    return models::SafetensorsFile::open(test::dataPath("fixtures/" + component + "_" + GetParam().fixture + ".safetensors"));
  }
};

TEST_P(NetworkParity, TextEncoder) {
  models::ModelFiles m = open();
  auto fx = fixture("text_encoder");
  test::FixtureTensor ids = test::fixtureTensor(fx, "input_ids");
  const int64_t batch = ids.shape[0], seq = ids.shape[1];

  // The model's own tokenizer gives the fixture's ids.
  nlohmann::json meta = nlohmann::json::parse(std::ifstream(test::dataPath("fixtures/text_encoder_" + GetParam().fixture + ".json")));
  if (GetParam().model.find("ldm") == std::string::npos) {
    const auto& prompts = meta.at("prompts");
    ASSERT_EQ(static_cast<int64_t>(prompts.size()), batch);
    for (int64_t i = 0; i < batch; ++i) {
      models::Encoding e = m.tokenizer->encode(prompts[i].get<std::string>());
      for (int64_t j = 0; j < seq; ++j)
        ASSERT_EQ(e.ids[j], static_cast<int32_t>(ids.values[i * seq + j])) << "prompt " << i << " token " << j;
    }
  }

  const DType dt = GetParam().dtype;
  nn::ParameterStore params(ctx(), dt);
  networks::ClipTextEncoder encoder(params, m.textEncoderConfig, *m.textEncoderWeights);
  std::vector<int32_t> idData(ids.values.begin(), ids.values.end());
  Allocation idMem = ctx().allocate(idData.size() * 4, "token ids");
  ctx().upload(idMem, 0, {reinterpret_cast<const uint8_t*>(idData.data()), idData.size() * 4});
  const int64_t d = m.textEncoderConfig.hiddenSize;
  for (int skip : {0, 1}) {
    graph::Graph g;
    graph::TensorId out = g.output("hidden", {batch, seq, d}, DType::F32);
    nn::Builder b(g, dt, nullptr);
    encoder.build(b, graph::indexView(idMem, {batch, seq}), skip, out);
    Allocation outMem = ctx().allocate(batch * seq * d * 4, "text out");
    graph::CompiledGraph cg(ctx(), g, {{out, graph::view(outMem, DType::F32, {batch, seq, d})}});
    cg.run();
    auto got = downloadFloats(ctx(), outMem, batch * seq * d, DType::F32);
    auto want = test::fixtureTensor(fx, skip ? "clip_skip1" : "last_hidden_state").values;
    EXPECT_LE(test::relativeError(got, want), tolerance(dt)) << "clip skip " << skip;
  }
}

TEST_P(NetworkParity, UNet) { checkUNet(); }

// The transformer blocks' norms (nn::Builder::linearThenLayerNorm) in the forms the default (2) is not: their own
// nodes (SDGEN_SPLIT_SUM_NORM=0) and a subgroup per row (=1): the same parity.
TEST_P(NetworkParity, UNetWithNormsBesideProducts) {
  for (const char* form : {"0", "1"}) {
    test::ScopedEnv knob("SDGEN_SPLIT_SUM_NORM", form);
    SCOPED_TRACE(std::string("SDGEN_SPLIT_SUM_NORM=") + form);
    checkUNet();
  }
}

void NetworkParity::checkUNet() {
  models::ModelFiles m = open();
  auto fx = fixture("unet");
  const DType dt = GetParam().dtype;
  nn::ParameterStore params(ctx(), dt);
  networks::UNet unet(params, m.unetConfig, *m.unetWeights);
  ops::Conv2dScratch scratch(ctx());
  for (std::string c : {"a", "b"}) {
    test::FixtureTensor sample = test::fixtureTensor(fx, "sample." + c), context = test::fixtureTensor(fx, "context." + c);
    const auto& s = sample.shape;  // NCHW
    const int64_t n = s[0], h = s[2], w = s[3];
    graph::Graph g;
    graph::TensorId in = g.input("sample", {n, h, w, s[1]}, DType::F32);
    graph::TensorId ctxT = g.input("context", {context.shape[0], context.shape[1], context.shape[2]}, DType::F32);
    graph::TensorId out = g.output("noise", {n, h, w, s[1]}, DType::F32);
    nn::Builder b(g, dt, &scratch);
    Value t{{n, 1}, {}, [n](const graph::Resolver&) { return graph::broadcast(graph::uniform(0), {n, 1}); }, 0};
    unet.build(b, g.read(in), t, g.read(ctxT), out);
    Allocation inMem = uploadFloats(ctx(), test::nchwToNhwc(sample.values, s), DType::F32, "sample");
    Allocation ctxMem = uploadFloats(ctx(), context.values, DType::F32, "context");
    Allocation outMem = ctx().allocate(sample.values.size() * 4, "noise");
    graph::CompiledGraph cg(ctx(), g,
                            {{in, graph::view(inMem, DType::F32, {n, h, w, s[1]})},
                             {ctxT, graph::view(ctxMem, DType::F32, context.shape)},
                             {out, graph::view(outMem, DType::F32, {n, h, w, s[1]})}});
    for (int ts : {999, 500, 1}) {  // one recording, replayed with the timestep as a runtime scalar
      cg.setUniform(0, float(ts));
      cg.run();
      auto got = test::nhwcToNchw(downloadFloats(ctx(), outMem, sample.values.size(), DType::F32), s);
      auto want = test::fixtureTensor(fx, "noise_pred." + c + ".t" + std::to_string(ts)).values;
      EXPECT_LE(test::relativeError(got, want), tolerance(dt)) << "case " << c << " t " << ts;
    }
  }
}

TEST_P(NetworkParity, VaeDecoder) {
  models::ModelFiles m = open();
  auto fx = fixture("vae");
  const DType dt = GetParam().dtype;
  nn::ParameterStore params(ctx(), dt);
  networks::VaeDecoder vae(params, m.vaeConfig, *m.vaeWeights);
  ops::Conv2dScratch scratch(ctx());
  for (std::string c : {"a", "b"}) {
    test::FixtureTensor lat = test::fixtureTensor(fx, "latents." + c), dec = test::fixtureTensor(fx, "decoded." + c);
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
    EXPECT_LE(test::relativeError(got, dec.values), tolerance(dt)) << "case " << c;
  }
}

TEST_P(NetworkParity, VaeEncoder) {
  models::ModelFiles m = open();
  auto fx = fixture("vae");
  const DType dt = GetParam().dtype;
  nn::ParameterStore params(ctx(), dt);
  networks::VaeEncoder vae(params, m.vaeConfig, *m.vaeWeights);
  ops::Conv2dScratch scratch(ctx());
  test::FixtureTensor image = test::fixtureTensor(fx, "image");
  test::FixtureTensor mean = test::fixtureTensor(fx, "encoded.mean"), logvar = test::fixtureTensor(fx, "encoded.logvar");
  const auto& s = image.shape;  // NCHW
  const auto& l = mean.shape;
  const int64_t c = l[1];
  graph::Graph g;
  graph::TensorId in = g.input("image", {s[0], s[2], s[3], s[1]}, DType::F32);
  graph::TensorId out = g.output("moments", {l[0], l[2], l[3], 2 * c}, DType::F32);
  nn::Builder b(g, dt, &scratch);
  vae.build(b, g.read(in), out);
  Allocation inMem = uploadFloats(ctx(), test::nchwToNhwc(image.values, s), DType::F32, "image");
  Allocation outMem = ctx().allocate(2 * mean.values.size() * 4, "moments");
  graph::CompiledGraph cg(ctx(), g,
                          {{in, graph::view(inMem, DType::F32, {s[0], s[2], s[3], s[1]})},
                           {out, graph::view(outMem, DType::F32, {l[0], l[2], l[3], 2 * c})}});
  cg.run();
  std::vector<float> moments = downloadFloats(ctx(), outMem, 2 * mean.values.size(), DType::F32);
  std::vector<float> gotMean, gotLogvar;  // channels [0, C) and [C, 2C) of each NHWC pixel
  for (size_t px = 0; px < moments.size() / (2 * c); ++px)
    for (int64_t ch = 0; ch < 2 * c; ++ch) {
      const float v = moments[px * 2 * c + ch];
      (ch < c ? gotMean : gotLogvar).push_back(ch < c ? v : std::clamp(v, -30.f, 20.f));  // as diffusers clamps
    }
  EXPECT_LE(test::relativeError(test::nhwcToNchw(gotMean, l), mean.values), tolerance(dt));
  EXPECT_LE(test::relativeError(test::nhwcToNchw(gotLogvar, l), logvar.values), tolerance(dt));
}

INSTANTIATE_TEST_SUITE_P(Tiny, NetworkParity,
                         testing::Values(Case{"tiny-sd1", "sd1", DType::F32}, Case{"tiny-sd2", "sd2", DType::F32},
                                         Case{"tiny-sd1", "sd1", DType::F16}, Case{"tiny-sd2", "sd2", DType::F16},
                                         Case{"tiny-sd1-ldm.safetensors", "sd1", DType::F32},
                                         Case{"tiny-sd2-ldm.safetensors", "sd2", DType::F32}),
                         caseName);

}  // namespace
}  // namespace sdgen
