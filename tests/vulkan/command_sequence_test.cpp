#include "engine/command_sequence.h"

#include <cstdlib>

#include "engine/fault_injection.h"
#include "engine/pipeline.h"
#include "ops/basic_kernels.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

class CommandSequenceTest : public test::VulkanTest {};

TEST_F(CommandSequenceTest, BarriersOnlyBetweenDependentCommands) {
  const uint32_t n = 1024;
  Allocation a = ctx().allocate(n * 4, "a"), b = ctx().allocate(n * 4, "b"), c = ctx().allocate(n * 4, "c");
  CommandSequence independent(ctx());
  size_t base = independent.barrierCount();
  ops::fill(ctx(), independent, a, DType::F32, n, 1.f);
  ops::fill(ctx(), independent, b, DType::F32, n, 2.f);
  ops::fill(ctx(), independent, c, DType::F32, n, 3.f);
  EXPECT_EQ(independent.barrierCount(), base) << "independent fills must not be separated by barriers";

  CommandSequence dependent(ctx());
  base = dependent.barrierCount();
  ops::fill(ctx(), dependent, a, DType::F32, n, 1.f);
  ops::fill(ctx(), dependent, b, DType::F32, n, 2.f);
  ops::add(ctx(), dependent, a, b, c, DType::F32, n);  // reads a and b: one barrier
  EXPECT_EQ(dependent.barrierCount(), base + 1);
  dependent.run();
  auto got = test::downloadFloats(ctx(), c, n, DType::F32);
  for (float v : got) ASSERT_EQ(v, 3.f);
}

TEST_F(CommandSequenceTest, ReplayWithNewUniformWithoutRerecording) {
  const uint32_t n = 777;
  Allocation x = ctx().allocate(n * 4, "x"), y = ctx().allocate(n * 4, "y");
  Allocation ones = test::uploadFloats(ctx(), std::vector<float>(n, 1.f), DType::F32);
  CommandSequence seq(ctx());
  ops::fillFromUniform(ctx(), seq, x, DType::F32, n, /*slot=*/3);
  ops::add(ctx(), seq, x, ones, y, DType::F32, n);
  seq.end();
  size_t commands = seq.commandCount();
  for (float t : {0.5f, 10.f, -2.f}) {
    seq.setUniform(3, t);
    seq.run();
    auto got = test::downloadFloats(ctx(), y, n, DType::F32);
    for (float v : got) ASSERT_EQ(v, t + 1.f);
  }
  EXPECT_EQ(seq.commandCount(), commands);
}

TEST_F(CommandSequenceTest, TimestampsPerCommandInNanoseconds) {
  if (!ctx().info().timestampsSupported) GTEST_SKIP() << "device has no timestamps";
  const uint32_t n = 1 << 16;
  Allocation a = ctx().allocate(n * 4, "a"), b = ctx().allocate(n * 4, "b");
  CommandSequence seq(ctx(), {.timestamps = true});
  ops::fill(ctx(), seq, a, DType::F32, n, 1.f);
  ops::copy(ctx(), seq, a, b, DType::F32, n);
  seq.copy(b, 0, a, 0, n * 4, "buffer copy");
  seq.run();
  auto t = seq.timings();
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].label, "fill_f32");
  EXPECT_EQ(t[1].label, "copy_f32");
  EXPECT_EQ(t[2].label, "buffer copy");
  for (auto& x : t) EXPECT_GE(x.ns, 0.0);
  EXPECT_GT(t[0].ns + t[1].ns + t[2].ns, 0.0);
}

// spanTimestamps: a timestamp at the start and the end only — no per-command timings, the span of the whole
// sequence (at least the per-command sum's order of magnitude: the same commands); spanMs without timestamps,
// or before a run, is an error.
TEST_F(CommandSequenceTest, SpanTimestampsTimeTheWholeSequence) {
  if (!ctx().info().timestampsSupported) GTEST_SKIP() << "device has no timestamps";
  const uint32_t n = 1 << 16;
  Allocation a = ctx().allocate(n * 4, "a"), b = ctx().allocate(n * 4, "b");
  CommandSequence seq(ctx(), {.spanTimestamps = true});
  ops::fill(ctx(), seq, a, DType::F32, n, 1.f);
  ops::copy(ctx(), seq, a, b, DType::F32, n);
  EXPECT_THROW((void)seq.spanMs(), Error);  // not run yet
  seq.run();
  EXPECT_TRUE(seq.timings().empty());
  const double first = seq.spanMs();
  EXPECT_GT(first, 0.0);
  seq.run();  // a replay times itself again
  EXPECT_GT(seq.spanMs(), 0.0);
  for (float v : test::downloadFloats(ctx(), b, n, DType::F32)) ASSERT_EQ(v, 1.f);
  CommandSequence plain(ctx());
  ops::fill(ctx(), plain, a, DType::F32, n, 2.f);
  plain.run();
  EXPECT_THROW((void)plain.spanMs(), Error);
}

TEST_F(CommandSequenceTest, BadDispatchesAreErrors) {
  Allocation a = ctx().allocate(64, "a");
  CommandSequence seq(ctx());
  EXPECT_THROW(seq.copy(a, 0, a, 32, 64, "overrun"), Error);
  EXPECT_THROW(seq.fill(a, 2, 8, 0), Error);
}

// A kernel reads the parameter block's first words from the push constants (as many as the device holds) and
// the rest from memory: every word reads back as stored, at constant and at computed indices, on either side of
// the boundary.
TEST_F(CommandSequenceTest, ParameterWordsFromPushConstantsAndMemory) {
  EXPECT_EQ(pushParamWords(128), 28u);  // Vulkan's minimum (lavapipe)
  EXPECT_EQ(pushParamWords(256), 60u);
  EXPECT_EQ(pushParamWords(16), 0u);
  EXPECT_EQ(pushParamWords(4096), kMaxPushParamWords);
  if (!std::getenv("SDGEN_PUSH_PARAM_WORDS"))
    EXPECT_EQ(ctx().kernels().pushWords(), pushParamWords(ctx().info().maxPushConstantsSize));
  const uint32_t words = 72;
  Allocation out = ctx().allocate(words * 4, "parameter words");
  std::vector<uint32_t> params(words);
  params[0] = uint32_t(out.address());
  params[1] = uint32_t(out.address() >> 32);
  for (uint32_t i = 2; i < words; ++i) params[i] = 1000 + 7 * i;
  KernelSource src;
  src.generated =
      "import sdgen;\n[shader(\"compute\")]\n[numthreads(64, 1, 1)]\nvoid main(uint3 t : SV_DispatchThreadID) {\n"
      "  uint* out = (uint*)paramAddress(0);\n"
      "  int i = int(t.x) + 2;\n"
      "  if (i < 70) out[i] = paramU32(i);\n"
      "  if (t.x == 0) {\n"
      "    out[0] = paramU32(27);\n"
      "    out[1] = paramU32(59) + paramU32(60);\n"
      "    out[70] = paramU32(2);\n"
      "    out[71] = paramU32(71);\n"
      "  }\n}\n";
  src.label = "parameter words";
  CommandSequence seq(ctx());
  seq.dispatch(ctx().kernels().request(src), {2, 1, 1}, params, {}, {range(out)}, src.label);
  seq.run();
  std::vector<uint32_t> got(words);
  ctx().download(out, 0, std::span(reinterpret_cast<uint8_t*>(got.data()), words * 4));
  for (uint32_t i = 2; i < 70; ++i) EXPECT_EQ(got[i], params[i]) << "word " << i;
  EXPECT_EQ(got[0], params[27]);
  EXPECT_EQ(got[1], params[59] + params[60]);
  EXPECT_EQ(got[70], params[2]);
  EXPECT_EQ(got[71], params[71]);
}

// Finding 6 (docs/reliability.md): a compile that fails while nothing waits for it (one queued ahead) is forgotten,
// so the next request compiles the kernel again and gets a working pipeline; a request that shared the failed
// compile reports its error.
TEST_F(CommandSequenceTest, AFailedCompileNothingWaitedForIsCompiledAgainWhenAskedFor) {
  Allocation out = ctx().allocate(4, "compiled again");
  KernelSource src;
  src.generated =
      "import sdgen;\n[shader(\"compute\")]\n[numthreads(1, 1, 1)]\nvoid main(uint3 t : SV_DispatchThreadID) {\n"
      "  *(uint*)paramAddress(0) = 4242u;  // AFailedCompileNothingWaitedForIsCompiledAgainWhenAskedFor\n}\n";
  src.label = "compiled again";
  ctx().kernels().waitForRequested();  // no other compile in flight: the fault's count is this kernel's
  setFaultPlan("pipeline:1");
  KernelRef failed = ctx().kernels().request(src);  // queued ahead, not waited for
  ctx().kernels().waitForRequested();
  EXPECT_EQ(faultOperationCount(FaultKind::Pipeline), 1u);
  KernelRef again = ctx().kernels().request(src);
  CommandSequence seq(ctx());
  const std::vector<uint32_t> params = {uint32_t(out.address()), uint32_t(out.address() >> 32)};
  seq.dispatch(again, {1, 1, 1}, params, {}, {range(out)}, src.label);
  EXPECT_NO_THROW(seq.run());
  EXPECT_EQ(faultOperationCount(FaultKind::Pipeline), 2u);  // compiled again
  setFaultPlan("");
  uint32_t got = 0;
  ctx().download(out, 0, std::span(reinterpret_cast<uint8_t*>(&got), 4));
  EXPECT_EQ(got, 4242u);
  test::expectErrorContaining([&] { failed.wait(); }, "vkCreateComputePipelines");
}

}  // namespace
}  // namespace sdgen
