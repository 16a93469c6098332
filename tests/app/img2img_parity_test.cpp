// Image to image and inpainting end to end against diffusers 0.42.1 (fp32, CPU) on the tiny models
// (tests/reference/image_to_image.py, `make_fixtures.py --only img2img,inpaint`): the init image and masks are
// the fixture's PNGs read by sdgen's own decoder, and every run (sampler, strength) must give diffusers' image
// within 1/255 mean absolute difference. A missing fixture fails the test: these are the references of issue 20.
//   fixtures/img2img_sd{1,2}.{json,safetensors}        StableDiffusionImg2ImgPipeline, 4 samplers x 2 strengths
//   fixtures/img2img_sdxl.{json,safetensors}          StableDiffusionXLImg2ImgPipeline on tiny-sdxl, the same runs
//   fixtures/inpaint_sdxl.{json,safetensors}          StableDiffusionXLInpaintPipeline on tiny-sdxl (blending)
//   fixtures/inpaint_sd{1,2}.{json,safetensors}        StableDiffusionInpaintPipeline, ordinary UNets (blending)
//   fixtures/inpaint9_sd1.{json,safetensors}           the same with tiny-sd1-inpaint's 9-channel UNet, from the
//                                                      folder and from a single file
//   fixtures/i2i_init.png, i2i_mask.png, i2i_mask_rgb.png, tiny-sd1-inpaint/, tiny-sd1-inpaint-unet-ldm.safetensors
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "app/image_decode.h"
#include "models/pipeline/image_inputs.h"
#include "models/pipeline/text_to_image.h"
#include "models/safetensors.h"
#include "tests/models/diffusers_request.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string dataPath(const std::string& relative) { return std::string(SDGEN_SOURCE_DIR) + "/tests/data/" + relative; }

constexpr const char* kHowToMake =
    "; the reference fixtures of issue 20 are made on the device machine with scripts/device/make-fixtures.sh "
    "--only img2img,inpaint (docs/reference-fixtures.md)";

// The fixture's json and tensors; ADD_FAILURE and nullopt when a file is missing.
struct Fixture {
  json meta;
  models::SafetensorsFile tensors;
};

std::optional<Fixture> loadFixture(const std::string& name) {
  const std::string j = dataPath("fixtures/" + name + ".json"), t = dataPath("fixtures/" + name + ".safetensors");
  for (const std::string& p : {j, t})
    if (!fs::exists(p)) {
      ADD_FAILURE() << "missing fixture '" << p << "'" << kHowToMake;
      return std::nullopt;
    }
  return Fixture{json::parse(std::ifstream(j)), models::SafetensorsFile::open(t)};
}

std::optional<pipeline::RgbImage> readFixtureImage(const std::string& relative) {
  const std::string p = dataPath(relative);
  if (!fs::exists(p)) {
    ADD_FAILURE() << "missing fixture '" << p << "'" << kHowToMake;
    return std::nullopt;
  }
  return app::readImageFile(p);
}

// 8-bit pixel tensors: the fixture script stores them as int64 (make_fixtures.write_tensors keeps integer
// tensors integral); float32 is accepted too.
std::vector<uint8_t> pixelBytes(const models::SafetensorsFile& f, const std::string& name) {
  const models::TensorInfo& t = f.get(name);
  std::vector<uint8_t> out(t.elementCount());
  if (t.dtype == models::TensorDType::I64) {
    const auto bytes = f.bytes(t);
    for (size_t i = 0; i < out.size(); ++i) {
      int64_t v;
      std::memcpy(&v, bytes.data() + 8 * i, 8);
      out[i] = static_cast<uint8_t>(v);
    }
    return out;
  }
  const std::vector<float> v = f.readAsF32(name);
  for (size_t i = 0; i < v.size(); ++i) out[i] = static_cast<uint8_t>(v[i]);
  return out;
}

sampling::SamplerKind samplerOf(const std::string& name) {
  auto kind = sampling::parseSamplerKind(name);
  if (!kind) throw Error("fixture sampler '" + name + "' is not one of sdgen's");
  return *kind;
}

// Runs every entry of meta["runs"] and compares the image with "<id>.image".
void expectRunsMatch(pipeline::TextToImage& t2i, const Fixture& fx, const pipeline::RgbImage& init,
                     const std::optional<pipeline::RgbImage>& mask, const std::string& what, size_t onlyFirst = 0) {
  const json& args = fx.meta.at("args");
  size_t done = 0;
  for (const json& run : fx.meta.at("runs")) {
    if (onlyFirst && done++ == onlyFirst) break;
    const std::string id = run.at("id");
    pipeline::GenerationRequest req = test::diffusersRequest(args);
    req.sampler = samplerOf(run.at("sampler"));
    req.strength = run.at("strength").get<float>();
    req.initImage = init;
    req.mask = mask;
    const int expectedSteps = req.steps - run.at("t_start").get<int>();
    int calls = 0;
    pipeline::Image img = t2i.generate(req, [&](int step, int steps) {
      EXPECT_EQ(step, ++calls);
      EXPECT_EQ(steps, expectedSteps);
    });
    EXPECT_EQ(calls, expectedSteps) << what << " " << id;
    ASSERT_EQ(img.width, init.width);
    ASSERT_EQ(img.height, init.height);
    const std::vector<float> want = fx.tensors.readAsF32(id + ".image");
    ASSERT_EQ(img.pixels.size(), want.size());
    double sum = 0, sumU8 = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      sum += std::abs(double(img.pixels[i]) - want[i]);
      sumU8 += std::abs(double(img.rgb[i]) - std::nearbyint(want[i] * 255.0)) / 255.0;
    }
    std::printf("%-28s %-16s mean absolute difference %.4f/255\n", what.c_str(), id.c_str(), 255 * sum / want.size());
    EXPECT_LE(sum / want.size(), 1.0 / 255) << what << " " << id << ": mean absolute difference " << sum / want.size();
    EXPECT_LE(sumU8 / want.size(), 1.0 / 255) << what << " " << id;
  }
}

class Img2ImgParity : public test::VulkanTest, public testing::WithParamInterface<const char*> {};

TEST_P(Img2ImgParity, SamplersAndStrengthsMatchDiffusers) {
  const std::string model = GetParam();
  auto fx = loadFixture("img2img_" + model);
  auto init = readFixtureImage("fixtures/i2i_init.png");
  if (!fx || !init) return;
  // sdgen's decoder reads PIL's PNG to the pixels diffusers got
  EXPECT_EQ(init->rgb, pixelBytes(fx->tensors, "init_rgb"));
  pipeline::TextToImage t2i(ctx(), {.modelPath = dataPath("tiny-" + model)});
  expectRunsMatch(t2i, *fx, *init, std::nullopt, "img2img " + model);
}

INSTANTIATE_TEST_SUITE_P(Tiny, Img2ImgParity, testing::Values("sd1", "sd2", "sdxl"));

// Inpainting: the mask's conversion (PIL's convert("L"), binarization, nearest downsampling) exactly, then the
// images. `nine`: tiny-sd1-inpaint's 9-channel UNet with tiny-sd1's other components.
struct InpaintCase {
  const char* fixture;
  const char* model;
  bool nine;
};

void PrintTo(const InpaintCase& c, std::ostream* os) { *os << c.fixture; }

class InpaintParity : public test::VulkanTest, public testing::WithParamInterface<InpaintCase> {
 protected:
  void TearDown() override {
    std::error_code ec;
    if (!tmp_.empty()) fs::remove_all(tmp_, ec);
    test::VulkanTest::TearDown();
  }

  // A complete diffusers folder: the inpainting fixture's unet/, scheduler/, model_index.json, tiny-sd1's
  // text_encoder/, tokenizer/ and vae/ (linked).
  std::string assembleFolder() {
    tmp_ = fs::temp_directory_path() / ("sdgen-inpaint9-" + std::to_string(::getpid()));
    fs::remove_all(tmp_);
    const fs::path folder = tmp_ / "tiny-sd1-inpaint";
    fs::create_directories(folder);
    const fs::path inpaint = dataPath("tiny-sd1-inpaint"), base = dataPath("tiny-sd1");
    for (const char* part : {"unet", "scheduler", "model_index.json"}) fs::create_symlink(inpaint / part, folder / part);
    for (const char* part : {"text_encoder", "tokenizer", "vae"}) fs::create_symlink(base / part, folder / part);
    return folder.string();
  }

  // tiny-sd1-ldm.safetensors with its UNet replaced by the inpainting UNet's LDM-named tensors: an inpainting
  // single-file checkpoint as the LDM code saves one.
  std::string assembleSingleFile() {
    const auto base = models::SafetensorsFile::open(dataPath("tiny-sd1-ldm.safetensors"));
    const auto unet = models::SafetensorsFile::open(dataPath("tiny-sd1-inpaint-unet-ldm.safetensors"));
    json header = json::object();
    std::string data;
    auto add = [&](const models::SafetensorsFile& f, const std::string& name) {
      const models::TensorInfo& t = f.get(name);
      const auto bytes = f.bytes(t);
      header[name] = {{"dtype", models::tensorDTypeName(t.dtype)},
                      {"shape", t.shape},
                      {"data_offsets", {data.size(), data.size() + bytes.size()}}};
      data.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    };
    const std::string prefix = "model.diffusion_model.";
    for (const std::string& n : base.names())
      if (n.rfind(prefix, 0) != 0) add(base, n);
    for (const std::string& n : unet.names()) add(unet, n);
    std::string h = header.dump();
    h.append((8 - h.size() % 8) % 8, ' ');
    const fs::path path = tmp_ / "tiny-sd1-inpaint.safetensors";
    std::ofstream out(path, std::ios::binary);
    const uint64_t n = h.size();
    for (int i = 0; i < 8; ++i) out.put(char((n >> (8 * i)) & 0xff));
    out << h << data;
    return path.string();
  }

  fs::path tmp_;
};

TEST_P(InpaintParity, MaskAndImagesMatchDiffusers) {
  const InpaintCase c = GetParam();
  auto fx = loadFixture(c.fixture);
  auto init = readFixtureImage("fixtures/i2i_init.png");
  if (!fx || !init) return;
  auto mask = readFixtureImage(fx->meta.at("args").at("mask_image").get<std::string>());
  if (!mask) return;
  if (c.nine)
    for (const char* p : {"tiny-sd1-inpaint/unet/config.json", "tiny-sd1-inpaint-unet-ldm.safetensors"})
      ASSERT_TRUE(fs::exists(dataPath(p))) << "missing fixture '" << dataPath(p) << "'" << kHowToMake;

  const int w = mask->width, h = mask->height;
  EXPECT_EQ(pipeline::luma(*mask), pixelBytes(fx->tensors, "mask_as_l"));
  const std::vector<float> binary = pipeline::binaryMask(*mask);
  EXPECT_EQ(binary, fx->tensors.readAsF32("mask_condition"));
  EXPECT_EQ(pipeline::downsampleNearest(binary, h, w, 2), fx->tensors.readAsF32("mask_latent"));
  const std::vector<float> masked = pipeline::maskedPixels(pipeline::normalizedPixels(*init), binary);
  EXPECT_EQ(pipeline::nhwcToNchw(masked, 3, h, w), fx->tensors.readAsF32("masked_image"));

  const std::string modelPath = c.nine ? assembleFolder() : dataPath(std::string("tiny-") + c.model);
  {
    pipeline::TextToImage t2i(ctx(), {.modelPath = modelPath});
    EXPECT_EQ(t2i.isInpaintingModel(), c.nine);
    if (c.nine) {  // an inpainting UNet has nothing to read without a mask
      pipeline::GenerationRequest req;
      req.prompt = "x";
      req.steps = 1;
      test::expectErrorContaining([&] { t2i.generate(req); }, "is an inpainting model");
      req.initImage = *init;
      test::expectErrorContaining([&] { t2i.generate(req); }, "it needs an init image and a mask");
    }
    expectRunsMatch(t2i, *fx, *init, mask, c.fixture);
  }
  if (c.nine) {  // the same UNet from an LDM single file (the tiny widths need the folder's configs, as tiny-sd1's)
    pipeline::TextToImage single(ctx(), {.modelPath = assembleSingleFile(), .configPath = modelPath});
    EXPECT_TRUE(single.isInpaintingModel());
    expectRunsMatch(single, *fx, *init, mask, std::string(c.fixture) + " (single file)", 1);
  }
}

INSTANTIATE_TEST_SUITE_P(Tiny, InpaintParity,
                         testing::Values(InpaintCase{"inpaint_sd1", "sd1", false},
                                         InpaintCase{"inpaint_sd2", "sd2", false},
                                         InpaintCase{"inpaint9_sd1", "sd1", true},
                                         InpaintCase{"inpaint_sdxl", "sdxl", false}),
                         [](const testing::TestParamInfo<InpaintCase>& i) { return std::string(i.param.fixture); });

}  // namespace
}  // namespace sdgen
