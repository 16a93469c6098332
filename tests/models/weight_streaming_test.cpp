// Loading a model whose file changes under it: the header was validated when the file was opened, then the file
// is truncated before its weights are streamed (a copy still in progress, a file replaced while loading). The
// load fails with an error naming the file and the tensor, and every weight of the failed component is freed
// (nn::ParameterStore::flush), while the components loaded before it stay usable.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "models/formats/model_files.h"
#include "models/networks/clip_text_encoder.h"
#include "models/networks/unet.h"
#include "tests/models/models_test_util.h"
#include "tests/models/network_fixture.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

using nn::WeightStreamStats;

class WeightStreaming : public test::VulkanTest {};

uint64_t deviceBytesInUse(Context& ctx) { return ctx.memory().pool(MemoryKind::Device).stats().bytesInUse; }

TEST_F(WeightStreaming, FileTruncatedAfterOpenNamesFileAndTensorAndFreesTheComponent) {
  test::TempDir dir;
  const std::string model = dir.file("tiny-sd1");
  std::filesystem::copy(test::dataPath("tiny-sd1"), model, std::filesystem::copy_options::recursive);
  models::ModelFiles files = models::openModel(model, {});  // every header validated here
  const std::string unetFile = model + "/unet/diffusion_pytorch_model.safetensors";
  std::filesystem::resize_file(unetFile, std::filesystem::file_size(unetFile) * 3 / 5);

  const uint64_t before = deviceBytesInUse(ctx());
  {
    nn::ParameterStore params(ctx(), DType::F32);
    networks::ClipTextEncoder text(params, files.textEncoderConfig, *files.textEncoderWeights);
    const uint64_t textBytes = params.bytes();
    const uint64_t withText = deviceBytesInUse(ctx());
    EXPECT_GT(textBytes, 0u);

    std::string message = test::errorOf([&] { networks::UNet(params, files.unetConfig, *files.unetWeights); });
    std::printf("    error: %s\n", message.c_str());
    EXPECT_NE(message.find("'" + unetFile + "'"), std::string::npos) << message;
    EXPECT_NE(message.find("tensor '"), std::string::npos) << message;
    EXPECT_NE(message.find("truncated or replaced after it was opened"), std::string::npos) << message;

    // The UNet's weights are gone; the text encoder's stay (and the streaming memory was returned).
    EXPECT_EQ(params.bytes(), textBytes);
    EXPECT_EQ(deviceBytesInUse(ctx()), withText);
  }
  EXPECT_EQ(deviceBytesInUse(ctx()), before);
}

TEST_F(WeightStreaming, ModelLoadsIntoResidentWeightsOnly) {
  // The packed layouts are all that stays: the stream's staging and scratch memory is freed after each flush.
  models::ModelFiles files = models::openModel(test::dataPath("tiny-sd1"), {});
  const uint64_t before = deviceBytesInUse(ctx());
  const uint64_t stagingBefore = ctx().memory().pool(MemoryKind::Staging).stats().bytesInUse;
  nn::ParameterStore params(ctx(), DType::F16);
  networks::UNet unet(params, files.unetConfig, *files.unetWeights);
  const WeightStreamStats& s = params.streamStats();
  EXPECT_GT(s.jobs, 0u);
  EXPECT_GE(s.batches, 1u);
  EXPECT_EQ(ctx().memory().pool(MemoryKind::Staging).stats().bytesInUse, stagingBefore);
  // In use beyond the weights: at most the pool's 256-byte alignment per allocation (fewer than the jobs), far
  // less than the scratch copy of the streamed bytes would be.
  const uint64_t held = deviceBytesInUse(ctx()) - before;
  EXPECT_GE(held, params.bytes());
  EXPECT_LT(held - params.bytes(), 256 * s.jobs);
  EXPECT_LT(256 * s.jobs, s.bytes / 4);
}

}  // namespace
}  // namespace sdgen
