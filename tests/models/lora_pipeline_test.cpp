// LoRA merged on the device, end to end on tests/data/tiny-sd1, against a float64 reference that needs no
// diffusers: the test writes LoRAs (kohya with LoCon on every conv, and PEFT) for every linear and conv weight of
// the UNet and text encoder, and a copy of the model whose weights are W + scale * alpha / rank * up . down
// computed in double; the pipeline with the LoRAs must render what the pipeline renders from that copy. This
// covers every packed layout a LoRA lands in (fused q/k/v, the GEGLU interleave, Winograd filters, conv gemm).
// Then: scale 0 is bit-identical to no LoRA, re-merging in place (to none, and back) is bit-identical to loading,
// and a <lora:NAME:SCALE> prompt tag is the same as --lora. The diffusers parity: lora_parity_test.cpp.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>

#include "engine/dtype.h"
#include "models/formats/model_files.h"
#include "models/pipeline/text_to_image.h"
#include "models/safetensors.h"
#include "tests/models/formats_synthetic.h"
#include "tests/models/lora_test_support.h"
#include "tests/models/models_test_util.h"
#include "tests/models/network_fixture.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

namespace fs = std::filesystem;

using test::Factors;
using test::LoraWeights;
using test::meanAbs;

LoraWeights writeLora(const models::ModelFiles& m, const std::string& path, bool kohya, uint32_t seed) {
  std::mt19937 rng(seed);
  test::SafetensorsWriter w;
  LoraWeights out;
  auto key = [](const std::string& prefix) {
    return [prefix](const std::string& module) { return test::kohyaKey(prefix, module); };
  };
  test::addLoraComponent(*m.unetWeights, "unet", kohya ? key("lora_unet_") : test::KohyaKey{}, 4, kohya ? 2.f : 4.f,
                         rng, w, out);
  test::addLoraComponent(*m.textEncoderWeights, "text_encoder", kohya ? key("lora_te_") : test::KohyaKey{}, 4,
                         kohya ? 2.f : 4.f, rng, w, out);
  w.write(path);
  return out;
}

pipeline::GenerationRequest request(const std::string& prompt = "a red circle on a blue background") {
  pipeline::GenerationRequest req;
  req.prompt = prompt;
  req.negativePrompt = "blurry";
  req.steps = 3;
  req.cfgScale = 7.5f;
  req.seed = 1234;
  req.width = req.height = 16;
  req.sampler = sampling::SamplerKind::Euler;
  return req;
}


class LoraPipeline : public test::VulkanTest {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir;
    models::ModelFiles m = models::openModel(test::dataPath("tiny-sd1"));
    fs::create_directories(dir_->file("loras/styles"));
    kohya_ = new LoraWeights(writeLora(m, dir_->file("loras/styles/kohya_locon.safetensors"), true, 7));
    peft_ = new LoraWeights(writeLora(m, dir_->file("loras/peft.safetensors"), false, 8));
  }
  static void TearDownTestSuite() {
    delete kohya_;
    delete peft_;
    delete dir_;
  }
  static std::string kohyaPath() { return dir_->file("loras/styles/kohya_locon.safetensors"); }
  static std::string peftPath() { return dir_->file("loras/peft.safetensors"); }
  // tiny-sd1 with `loras` merged into its weights on the host, in double.
  static std::string mergedModel(const std::string& name, const std::vector<std::pair<const LoraWeights*, float>>& loras) {
    const fs::path dst = dir_->file(name);
    fs::copy(test::dataPath("tiny-sd1"), dst, fs::copy_options::recursive);
    test::writeMergedLoras((dst / "unet" / "diffusion_pytorch_model.safetensors").string(), "unet", loras);
    test::writeMergedLoras((dst / "text_encoder" / "model.safetensors").string(), "text_encoder", loras);
    return dst.string();
  }
  pipeline::Image render(pipeline::TextToImage& t2i, const pipeline::GenerationRequest& req = request()) {
    pipeline::Image img = t2i.generate(req);
    for (float v : img.pixels) EXPECT_TRUE(std::isfinite(v));
    return img;
  }
  static test::TempDir* dir_;
  static LoraWeights *kohya_, *peft_;
};
test::TempDir* LoraPipeline::dir_ = nullptr;
LoraWeights* LoraPipeline::kohya_ = nullptr;
LoraWeights* LoraPipeline::peft_ = nullptr;

TEST_F(LoraPipeline, TwoLorasMatchTheirFloat64MergeIntoTheWeights) {
  pipeline::TextToImage reference(ctx(), {.modelPath = mergedModel("merged2", {{kohya_, 0.7f}, {peft_, -0.4f}})});
  const pipeline::Image want = render(reference);
  pipeline::TextToImage plain(ctx(), {.modelPath = test::dataPath("tiny-sd1")});
  const pipeline::Image none = render(plain);
  pipeline::TextToImage withLoras(
      ctx(), {.modelPath = test::dataPath("tiny-sd1"),
              .loras = {{kohyaPath(), 0.7f, 0.7f}, {peftPath(), -0.4f, -0.4f}}});
  const pipeline::Image got = render(withLoras);
  ASSERT_EQ(got.pixels.size(), want.pixels.size());
  EXPECT_GT(meanAbs(none.pixels, want.pixels), 5.0 / 255) << "the LoRAs must change the image for this to test";
  EXPECT_LE(meanAbs(got.pixels, want.pixels), 1e-4);
  EXPECT_LE(test::relativeError(got.pixels, want.pixels), 2e-3);
  EXPECT_EQ(withLoras.mergedLoras().size(), 2u);
}

TEST_F(LoraPipeline, HalfPrecisionStorageTakesTheMergedWeights) {
  // fp16 storage: the merge runs in fp32 and the packing rounds once, as loading the merged model does.
  const std::string merged = mergedModel("merged_f16", {{kohya_, 0.7f}});
  pipeline::TextToImage reference(ctx(), {.modelPath = merged, .precision = DType::F16});
  pipeline::TextToImage withLora(ctx(), {.modelPath = test::dataPath("tiny-sd1"), .precision = DType::F16,
                                         .loras = {{kohyaPath(), 0.7f, 0.7f}}});
  pipeline::TextToImage plain(ctx(), {.modelPath = test::dataPath("tiny-sd1"), .precision = DType::F16});
  const pipeline::Image want = render(reference), got = render(withLora), none = render(plain);
  EXPECT_GT(meanAbs(none.pixels, want.pixels), 5.0 / 255);
  std::printf("    fp16: mean |LoRA - merged model| = %.2e\n", meanAbs(got.pixels, want.pixels));
  EXPECT_LE(meanAbs(got.pixels, want.pixels), 1.0 / 255 / 4);  // a few fp16 roundings may differ by one unit
}

TEST_F(LoraPipeline, ScaleZeroIsBitIdenticalToNoLora) {
  pipeline::TextToImage plain(ctx(), {.modelPath = test::dataPath("tiny-sd1")});
  pipeline::TextToImage zero(ctx(), {.modelPath = test::dataPath("tiny-sd1"), .loras = {{kohyaPath(), 0.f, 0.f}}});
  const pipeline::Image a = render(plain), b = render(zero);
  EXPECT_EQ(a.pixels, b.pixels);
  EXPECT_EQ(a.rgb, b.rgb);
}

TEST_F(LoraPipeline, RemergeInPlaceIsBitIdenticalToLoading) {
  pipeline::TextToImage loaded(ctx(), {.modelPath = test::dataPath("tiny-sd1"), .loras = {{kohyaPath(), 0.7f, 0.7f}}});
  const pipeline::Image withLora = render(loaded);
  pipeline::TextToImage t2i(ctx(), {.modelPath = test::dataPath("tiny-sd1")});
  const pipeline::Image none = render(t2i);
  ASSERT_NE(none.pixels, withLora.pixels);
  t2i.setLoras({{kohyaPath(), 0.7f, 0.7f}});
  EXPECT_EQ(render(t2i).pixels, withLora.pixels);  // merged into the resident weights, the same bits as a load
  t2i.setLoras({{kohyaPath(), 0.f, 0.f}});
  EXPECT_EQ(render(t2i).pixels, none.pixels);  // restored from the checkpoint's bytes, not by subtracting
  t2i.setLoras({{peftPath(), 0.5f, 0.5f}, {kohyaPath(), 0.7f, 0.7f}});
  const pipeline::Image two = render(t2i);
  EXPECT_NE(two.pixels, withLora.pixels);
  t2i.setLoras({});
  EXPECT_EQ(render(t2i).pixels, none.pixels);
  EXPECT_TRUE(t2i.mergedLoras().empty());
}

TEST_F(LoraPipeline, PromptTagsAreLorasTheTextEncoderNeverSees) {
  pipeline::TextToImage loaded(ctx(), {.modelPath = test::dataPath("tiny-sd1"), .loras = {{kohyaPath(), 0.7f, 0.7f}}});
  const pipeline::Image want = render(loaded);
  pipeline::TextToImage t2i(ctx(), {.modelPath = test::dataPath("tiny-sd1"), .loraDir = dir_->file("loras")});
  // found in a subfolder of --lora-dir, cut out of the prompt (the text is the same as without the tag)
  const pipeline::Image got = render(t2i, request("a red circle on a <lora:kohya_locon:0.7>blue background"));
  EXPECT_EQ(got.pixels, want.pixels);
  ASSERT_EQ(t2i.mergedLoras().size(), 1u);
  // the next prompt without the tag goes back to no LoRA
  pipeline::TextToImage plain(ctx(), {.modelPath = test::dataPath("tiny-sd1")});
  EXPECT_EQ(render(t2i).pixels, render(plain).pixels);
  test::expectErrorContaining([&] { t2i.generate(request("x <lora:missing:1>")); },
                              "prompt tag '<lora:missing:1>': no missing.safetensors in the LoRA folder");
  // the plain syntax leaves tags as text, as diffusers would
  pipeline::GenerationRequest plainSyntax = request("a <lora:kohya_locon:0.7>");
  plainSyntax.promptSyntax = prompt::PromptSyntax::Plain;
  render(t2i, plainSyntax);
  EXPECT_TRUE(t2i.mergedLoras().empty());
}

TEST_F(LoraPipeline, ErrorsLeaveTheModelUsable) {
  pipeline::TextToImage t2i(ctx(), {.modelPath = test::dataPath("tiny-sd1")});
  const pipeline::Image none = render(t2i);
  // a norm is not a weight sdgen merges into
  test::SafetensorsWriter w;
  w.add("lora_unet_conv_norm_out.lora_down.weight", {2, 1}, {0.5f, 0.25f});
  w.add("lora_unet_conv_norm_out.lora_up.weight", {1, 2}, {0.5f, 0.25f});
  const std::string norm = dir_->file("norm.safetensors");
  w.write(norm);
  const std::string msg = test::errorOf([&] { t2i.setLoras({{norm, 1.f, 1.f}}); });
  EXPECT_NE(msg.find("do not fit"), std::string::npos) << msg;  // conv_norm_out.weight is [32]
  test::SafetensorsWriter emb;  // the token embedding: a weight of fitting shape, but no layer LoRAs adapt
  emb.add("lora_te_text_model_embeddings_token_embedding.lora_down.weight", {2, 32}, std::vector<float>(64, 0.25f));
  emb.add("lora_te_text_model_embeddings_token_embedding.lora_up.weight", {49408, 2},
          std::vector<float>(49408 * 2, 0.25f));
  const std::string embedding = dir_->file("embedding.safetensors");
  emb.write(embedding);
  test::expectErrorContaining([&] { t2i.setLoras({{embedding, 1.f, 1.f}}); },
                              "1 adapted weights are not ones sdgen merges into (text encoder weight "
                              "'text_model.embeddings.token_embedding.weight')");
  test::expectErrorContaining([&] { t2i.setLoras({{dir_->file("absent.safetensors"), 1.f, 1.f}}); },
                              "absent.safetensors");
  EXPECT_EQ(render(t2i).pixels, none.pixels);
  test::expectErrorContaining(
      [&] { pipeline::TextToImage(ctx(), {.modelPath = test::dataPath("tiny-sd1"), .loras = {{norm, 1.f, 1.f}}}); },
      "norm.safetensors");
}

TEST_F(LoraPipeline, AFailedRemergeIsRepairedByTheNextOne) {
  // The checkpoint shrinks while a re-merge streams it (a file replaced under a running GUI): that generation
  // fails naming the file; with the file back, the next generation re-packs every weight, whatever the set.
  const fs::path model = dir_->file("shrinking");
  fs::copy(test::dataPath("tiny-sd1"), model, fs::copy_options::recursive);
  const std::string unetFile = (model / "unet" / "diffusion_pytorch_model.safetensors").string();
  std::string bytes;
  {
    std::ifstream in(unetFile, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  pipeline::TextToImage t2i(ctx(), {.modelPath = model.string()});
  const pipeline::Image none = render(t2i);
  fs::resize_file(unetFile, bytes.size() / 2);
  t2i.setLoras({{kohyaPath(), 0.7f, 0.7f}});
  test::expectErrorContaining([&] { t2i.generate(request()); }, unetFile);
  std::ofstream(unetFile, std::ios::binary | std::ios::in | std::ios::out).write(bytes.data(), std::streamsize(bytes.size()));
  t2i.setLoras({});
  EXPECT_EQ(render(t2i).pixels, none.pixels);
}

}  // namespace
}  // namespace sdgen
