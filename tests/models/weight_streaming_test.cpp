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
#include "models/nn/weight_stream.h"
#include "ops/weight_pack.h"
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
  // Mapped device memory (lavapipe) takes every job on the host, in place; a GPU streams batches.
  if (ctx().memory().pool(MemoryKind::Device).hostMapped()) {
    EXPECT_EQ(s.hostJobs, s.jobs);
    EXPECT_EQ(s.batches, 0u);
  } else {
    EXPECT_GE(s.batches, 1u);
  }
  EXPECT_EQ(ctx().memory().pool(MemoryKind::Staging).stats().bytesInUse, stagingBefore);
  // In use beyond the weights: at most the pool's 256-byte alignment per allocation (fewer than the jobs), far
  // less than the scratch copy of the streamed bytes would be.
  const uint64_t held = deviceBytesInUse(ctx()) - before;
  EXPECT_GE(held, params.bytes());
  EXPECT_LT(held - params.bytes(), 256 * s.jobs);
  EXPECT_LT(256 * s.jobs, s.bytes / 4);
}

TEST_F(WeightStreaming, HostPackingInPlaceEqualsThePackKernel) {
  // Every conv and linear weight and bias of tiny-sd1's UNet (F16 in the file) and some host-computed values,
  // in every layout the loaders use, fp32 and fp16 storage: packed by the host straight into mapped device memory
  // and by the pack kernel through staging, the same bytes.
  if (!ctx().memory().pool(MemoryKind::Device).hostMapped()) GTEST_SKIP() << "device memory is not host visible here";
  models::ModelFiles files = models::openModel(test::dataPath("tiny-sd1"), {});
  const models::WeightSource& w = *files.unetWeights;
  struct Case {
    models::RawWeight raw;
    std::vector<float> values;
    ops::PackLayout layout;
    DType storage;
  };
  std::vector<Case> cases;
  for (const std::string& name : w.names()) {
    const std::vector<int64_t> shape = w.shape(name);
    auto raw = w.raw(name, shape);
    ASSERT_TRUE(raw) << name;
    for (DType storage : {DType::F32, DType::F16}) {
      if (shape.size() == 4) {
        const auto layout = ops::PackLayout::convGemm(int(shape[0]), int(shape[1]), int(shape[2]), int(shape[3]));
        cases.push_back({*raw, {}, layout, storage});
      } else if (shape.size() == 2) {
        cases.push_back({*raw, {}, ops::PackLayout::linear(shape[0], shape[1]), storage});
        // the second of two fused parts (columns from shape[0] on, padding zeroed)
        const int64_t np = (2 * shape[0] + 7) / 8 * 8;
        cases.push_back({*raw, {}, ops::PackLayout::linearPart(shape[0], shape[1], shape[0], np, true), storage});
      } else if (shape.size() == 1) {
        cases.push_back({*raw, {}, ops::PackLayout::vector(shape[0], 3, (shape[0] + 3 + 7) / 8 * 8, true), storage});
      }
    }
  }
  cases.push_back({{}, test::randomFloats(1000, 5), ops::PackLayout::copy(1000), DType::F32});  // a direct copy
  cases.push_back({{}, test::randomFloats(77 * 9, 6), ops::PackLayout::linear(77, 9), DType::F16});
  ASSERT_GT(cases.size(), 100u);

  auto packAll = [&](bool onHost, std::vector<Allocation>& dst) {
    nn::WeightStream stream(ctx());
    stream.setHostPacking(onHost);
    for (const Case& c : cases) {
      const uint64_t bytes = c.layout.destinationElements() * dtypeSize(c.storage);
      dst.push_back(ctx().allocate(bytes, "packed"));
      ctx().upload(dst.back(), 0, std::vector<uint8_t>(bytes, 0xAB));  // unwritten padding shows
    }
    for (size_t i = 0; i < cases.size(); ++i) {
      if (cases[i].raw.file)
        stream.pack(cases[i].raw, dst[i], cases[i].storage, cases[i].layout);
      else
        stream.pack(cases[i].values, dst[i], cases[i].storage, cases[i].layout, "host values " + std::to_string(i));
    }
    stream.flush();
    return stream.stats();
  };
  std::vector<Allocation> host, device;
  const WeightStreamStats hostStats = packAll(true, host), deviceStats = packAll(false, device);
  EXPECT_EQ(hostStats.hostJobs, cases.size());
  EXPECT_EQ(hostStats.batches, 0u);
  EXPECT_EQ(deviceStats.hostJobs, 0u);
  EXPECT_GE(deviceStats.batches, 1u);
  for (size_t i = 0; i < cases.size(); ++i) {
    std::vector<uint8_t> a(host[i].size()), b(device[i].size());
    ctx().download(host[i], 0, a);
    ctx().download(device[i], 0, b);
    ASSERT_EQ(a, b) << "case " << i
                    << (cases[i].raw.file ? " '" + cases[i].raw.name + "'" : std::string(" (host values)"));
  }
}

}  // namespace
}  // namespace sdgen
