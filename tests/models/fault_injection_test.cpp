// Fault injection (issue 24, engine/fault_injection.h): a device allocation, a weight read, a pipeline creation
// or a queue submission (device loss) fails in the middle of loading the tiny SD 1.x model or in the middle of a
// generation. Each must surface as an sdgen::Error saying what failed, and the same process must then load and
// generate again with a result bit-identical to a run that saw no fault (what the GUI and the server rely on).
// Every pass uses its own Context, so the operation counts do not depend on what other tests compiled or
// allocated before; LeakSanitizer (scripts/test.sh --sanitize) checks that failed passes leak nothing.
#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "engine/fault_injection.h"
#include "models/pipeline/text_to_image.h"
#include "tests/models/network_fixture.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

constexpr std::array<FaultKind, kFaultKindCount> kKinds = {FaultKind::Alloc, FaultKind::Read, FaultKind::Pipeline,
                                                          FaultKind::SubmitLost};
constexpr std::array<const char*, kFaultKindCount> kNames = {"alloc", "read", "pipeline", "submit-lost"};
// What each fault's message must say (the real failure's wording).
constexpr std::array<const char*, kFaultKindCount> kMessages = {"VK_ERROR_OUT_OF_DEVICE_MEMORY", "Input/output error",
                                                               "vkCreateComputePipelines", "device lost"};
// Far beyond any count: counts operations without failing one.
const std::string kCountOnly = "alloc:1000000000,read:1000000000,pipeline:1000000000,submit-lost:1000000000";

std::unique_ptr<Context> freshContext() {
  ContextOptions options;
  options.validation = true;
  return std::make_unique<Context>(options);
}

pipeline::GenerationRequest request() {
  pipeline::GenerationRequest req;
  req.prompt = "a red circle";
  req.steps = 2;
  req.width = req.height = 16;
  req.seed = 11;
  req.sampler = sampling::SamplerKind::EulerAncestral;
  return req;
}

std::array<uint64_t, kFaultKindCount> counts() {
  std::array<uint64_t, kFaultKindCount> c{};
  for (size_t k = 0; k < kKinds.size(); ++k) c[k] = faultOperationCount(kKinds[k]);
  return c;
}

class FaultInjection : public ::testing::Test {
 protected:
  void TearDown() override {
    setFaultPlan("");
    ::unsetenv("SDGEN_HOST_PACKING");
  }
};

TEST_F(FaultInjection, PlanSyntax) {
  EXPECT_NO_THROW(setFaultPlan("alloc:3,submit-lost:1"));
  test::expectErrorContaining([] { setFaultPlan("alloc:0"); }, "'alloc:0' is not KIND:N");
  test::expectErrorContaining([] { setFaultPlan("disk:1"); }, "'disk:1' is not KIND:N");
  test::expectErrorContaining([] { setFaultPlan("read:x"); }, "'read:x' is not KIND:N");
}

// Every fault kind in the middle of a load and of a generation. hostPacking false: the weights go through the
// device's pack kernel even where device memory is mapped (lavapipe), so that a pipeline fault mid-load is
// exercised there too.
void everyFaultMidLoadAndMidGeneration(bool hostPacking) {
  const std::string model = test::dataPath("tiny-sd1");
  // The counting pass: how many operations of each kind loading and one generation take, and the reference image.
  std::array<uint64_t, kFaultKindCount> load{}, generation{};
  std::vector<float> reference;
  bool hostPacked = false;  // weights packed by the host into mapped device memory: the load compiles no kernel
  {
    auto ctx = freshContext();
    hostPacked = hostPacking && ctx->memory().pool(MemoryKind::Device).hostMapped();
    setFaultPlan(kCountOnly);
    pipeline::TextToImage t2i(*ctx, {.modelPath = model});
    load = counts();
    reference = t2i.generate(request()).pixels;
    const auto all = counts();
    for (size_t k = 0; k < kKinds.size(); ++k) generation[k] = all[k] - load[k];
  }
  for (size_t k = 0; k < kKinds.size(); ++k)
    std::printf("    %-12s load %4llu  generation %4llu\n", kNames[k], (unsigned long long)load[k],
                (unsigned long long)generation[k]);
  // Weights are read while loading only; pipelines are created, memory allocated and work submitted in both.
  EXPECT_GT(load[size_t(FaultKind::Read)], 0u);
  EXPECT_EQ(generation[size_t(FaultKind::Read)], 0u);
  for (FaultKind kind : {FaultKind::Alloc, FaultKind::Pipeline, FaultKind::SubmitLost}) {
    if (kind == FaultKind::Pipeline && hostPacked)
      EXPECT_EQ(load[size_t(kind)], 0u);  // lavapipe: no pack kernel (nn::WeightStream packs on the host)
    else
      EXPECT_GT(load[size_t(kind)], 0u) << kNames[size_t(kind)];
    EXPECT_GT(generation[size_t(kind)], 0u) << kNames[size_t(kind)];
  }

  for (size_t k = 0; k < kKinds.size(); ++k) {
    for (bool duringLoad : {true, false}) {
      const uint64_t n = duringLoad ? load[k] : generation[k];
      if (n == 0) continue;  // checked above: only reads have no generation phase
      const uint64_t nth = (duringLoad ? 0 : load[k]) + (n + 1) / 2;  // the middle operation of the phase
      SCOPED_TRACE(std::string(kNames[k]) + (duringLoad ? " mid-load" : " mid-generation") + ", operation " +
                   std::to_string(nth));
      auto ctx = freshContext();
      setFaultPlan(std::string(kNames[k]) + ":" + std::to_string(nth));
      std::unique_ptr<pipeline::TextToImage> t2i;
      std::string error;
      std::vector<float> first;  // the image of a generation that the fault did not stop
      try {
        t2i = std::make_unique<pipeline::TextToImage>(*ctx, pipeline::LoadOptions{.modelPath = model});
        first = t2i->generate(request()).pixels;
      } catch (const Error& e) {
        error = e.what();
      }
      if (error.empty() && kKinds[k] == FaultKind::Pipeline) {
        // The designed recovery of a compile queued ahead (by the load, or earlier in the generation) that failed
        // before anything waited for it: the registry forgets a failed compile, so the generation's own request
        // compiled that kernel again, and the generation ran without an error (finding 6, docs/reliability.md).
        // Which compile the Nth creation is depends on the compile workers' timing. The fault must have fired,
        // and the image must be the reference's, bit for bit.
        ctx->kernels().waitForRequested();
        EXPECT_GE(faultOperationCount(kKinds[k]), nth) << "the planned pipeline fault never happened";
        ASSERT_EQ(first.size(), reference.size());
        EXPECT_EQ(std::memcmp(first.data(), reference.data(), first.size() * sizeof(float)), 0);
        std::printf("    %s: no error; the failed compile was compiled again when asked for\n",
                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
      } else {
        EXPECT_NE(error.find(kMessages[k]), std::string::npos) << "error: '" << error << "'";
      }
      // Loading mostly queues the compiles, so a pipeline that fails while the model loads may surface at the
      // first generate() (the loaded model stays usable) or fail the load (a kernel the load itself waits for).
      if (kKinds[k] != FaultKind::Pipeline) {
        EXPECT_EQ(t2i == nullptr, duringLoad) << error;
      }
      // The same process and Context carry on: the loaded pipeline (or a fresh one after a failed load)
      // generates the reference image bit for bit. For a failed pipeline creation this is the same TextToImage,
      // whose recorded graphs ask the registry for the failed kernel again (finding 2, docs/reliability.md).
      setFaultPlan("");
      try {
        if (!t2i) t2i = std::make_unique<pipeline::TextToImage>(*ctx, pipeline::LoadOptions{.modelPath = model});
        const std::vector<float> again = t2i->generate(request()).pixels;
        ASSERT_EQ(again.size(), reference.size());
        EXPECT_EQ(std::memcmp(again.data(), reference.data(), again.size() * sizeof(float)), 0);
      } catch (const Error& e) {
        ADD_FAILURE() << "the generation after the fault failed: " << e.what();
      }
      t2i.reset();
      EXPECT_EQ(ctx->instance().validation().count(), 0u) << "validation messages after the fault";
    }
  }
}

TEST_F(FaultInjection, EveryFaultMidLoadAndMidGenerationThenTheProcessRecovers) {
  everyFaultMidLoadAndMidGeneration(true);
}

TEST_F(FaultInjection, TheSameWithWeightsPackedByTheDevice) {
  ::setenv("SDGEN_HOST_PACKING", "0", 1);  // TearDown unsets it
  everyFaultMidLoadAndMidGeneration(false);
}

}  // namespace
}  // namespace sdgen
