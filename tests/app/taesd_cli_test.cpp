// TAESD's command-line flags (docs/taesd.md): --taesd, --vae, --preview, --preview-every, the combinations that
// are usage errors, and the names of the preview PNGs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "app/cli_options.h"
#include "app/generation_plan.h"

namespace sdgen::app {
namespace {

using Args = std::vector<std::string>;

std::string usageErrorOf(const Args& args) {
  try {
    parseCommandLine(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no usage error";
  return {};
}

TEST(TaesdCli, FlagsParse) {
  const CliOptions plain = parseCommandLine(Args{"-p", "x"});
  EXPECT_EQ(plain.vae, pipeline::ImageDecoder::Vae);
  EXPECT_FALSE(plain.preview);
  EXPECT_EQ(plain.previewEvery, 1);
  const CliOptions o = parseCommandLine(
      Args{"-p", "x", "--taesd", "t", "--vae", "taesd", "--preview=taesd", "--preview-every", "5"});
  EXPECT_EQ(o.taesdPath, "t");
  EXPECT_EQ(o.vae, pipeline::ImageDecoder::Taesd);
  EXPECT_EQ(o.preview, pipeline::PreviewDecoder::Taesd);
  EXPECT_EQ(o.previewEvery, 5);
  EXPECT_EQ(parseCommandLine(Args{"-p", "x", "--preview", "approx"}).preview, pipeline::PreviewDecoder::Approx);
  EXPECT_EQ(parseCommandLine(Args{"-p", "x", "--taesd", "t", "--vae", "taesd", "--vae", "full", "--preview", "taesd"}).vae,
            pipeline::ImageDecoder::Vae);
  for (const char* flag : {"--taesd PATH", "--vae full|taesd", "--preview approx|taesd", "--preview-every"})
    EXPECT_NE(usageText().find(flag), std::string::npos) << flag;
}

TEST(TaesdCli, CombinationsThatCannotWorkAreUsageErrors) {
  EXPECT_NE(usageErrorOf({"-p", "x", "--vae", "taesd"}).find("--vae taesd needs --taesd PATH"), std::string::npos);
  EXPECT_NE(usageErrorOf({"-p", "x", "--preview", "taesd"}).find("--preview taesd needs --taesd PATH"), std::string::npos);
  EXPECT_NE(usageErrorOf({"-p", "x", "--taesd", "t"}).find("--taesd PATH is used by"), std::string::npos);
  EXPECT_NE(usageErrorOf({"-p", "x", "--preview-every", "3"}).find("--preview-every needs --preview"), std::string::npos);
  EXPECT_NE(usageErrorOf({"-p", "x", "--taesd", "t", "--vae", "taesd", "--vae-tiling"}).find("cannot be combined"),
            std::string::npos);
  EXPECT_NE(usageErrorOf({"-p", "x", "--vae", "tiny"}).find("--vae: unknown decoder 'tiny'"), std::string::npos);
  EXPECT_NE(usageErrorOf({"-p", "x", "--preview", "full"}).find("accepted: approx, taesd"), std::string::npos);
  EXPECT_NE(usageErrorOf({"-p", "x", "--preview", "approx", "--preview-every", "0"}).find("--preview-every"),
            std::string::npos);
  EXPECT_NE(usageErrorOf({"-p", "x", "--taesd", ""}).find("--taesd: expected"), std::string::npos);
  EXPECT_NE(usageErrorOf({"--demo", "--vae", "full"}).find("--vae does not apply to --demo"), std::string::npos);
}

TEST(TaesdCli, PreviewPathsSortByStep) {
  EXPECT_EQ(previewPath("out.png", 5, 20), "out.step005.png");
  EXPECT_EQ(previewPath("dir/a-2.PNG", 12, 1000), "dir/a-2.step0012.PNG");
  EXPECT_EQ(previewPath("sdgen-7.png", 100, 100), "sdgen-7.step100.png");
}

}  // namespace
}  // namespace sdgen::app
