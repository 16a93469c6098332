// The sdgen binary as a user runs it: exit codes (0 ok, 1 runtime error, 2 usage error) and the messages on
// stderr. Nothing here needs a GPU: every case stops before a device is opened.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "app/generation_params.h"
#include "app/png_writer.h"

extern char** environ;

namespace sdgen::app {
namespace {

namespace fs = std::filesystem;

struct RunResult {
  int exitCode = -1;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class SdgenBinary : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sdgen-binary-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // Runs sdgen with `args`, stdout and stderr captured in files.
  RunResult run(const std::vector<std::string>& args) {
    const std::string outPath = dir_ + "/stdout", errPath = dir_ + "/stderr";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<std::string> argvStrings = {SDGEN_BINARY};
    argvStrings.insert(argvStrings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argvStrings) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    RunResult r;
    int rc = posix_spawn(&pid, SDGEN_BINARY, &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
      ADD_FAILURE() << "cannot start " << SDGEN_BINARY << ": " << std::strerror(rc);
      return r;
    }
    int status = 0;
    waitpid(pid, &status, 0);
    r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurp(outPath);
    r.err = slurp(errPath);
    return r;
  }

  void expectUsageError(const std::vector<std::string>& args, const std::string& needle) {
    auto r = run(args);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_EQ(r.exitCode, 2) << joined << "\n" << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << joined << ": stderr does not mention '" << needle
                                                      << "':\n" << r.err;
    EXPECT_NE(r.err.find("sdgen --help"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "") << joined;
  }

  std::string dir_;
};

TEST_F(SdgenBinary, HelpAndVersion) {
  auto help = run({"--help"});
  EXPECT_EQ(help.exitCode, 0);
  EXPECT_NE(help.out.find("--prompt"), std::string::npos);
  EXPECT_NE(help.out.find("Exit codes"), std::string::npos);
  auto version = run({"--version"});
  EXPECT_EQ(version.exitCode, 0);
  EXPECT_EQ(version.out, std::string("sdgen ") + SDGEN_VERSION + "\n");
}

TEST_F(SdgenBinary, UsageErrorsExitWithTwoAndNameTheFlag) {
  expectUsageError({}, "-p/--prompt");
  expectUsageError({"--no-such-flag"}, "--no-such-flag");
  expectUsageError({"-p", "x", "--steps"}, "--steps needs a value");
  expectUsageError({"-p", "x", "--steps", "many"}, "--steps");
  expectUsageError({"-p", "x", "--cfg-scale=1e9"}, "--cfg-scale");
  expectUsageError({"-p", "x", "--seed", "-7"}, "-s/--seed");
  expectUsageError({"-p", "x", "-W", "100"}, "multiple of 8");
  expectUsageError({"-p", "x", "--sampler", "plms"}, "ddim, euler, euler_a, dpmpp_2m");
  expectUsageError({"-p", "x", "--precision", "int8"}, "auto, fp32, fp16");
  expectUsageError({"-p", "x", "-o", "x.jpg"}, ".png");
  expectUsageError({"--demo", "--list-devices"}, "cannot be combined");
  expectUsageError({"--demo", "--steps", "4"}, "--steps does not apply to --demo");
  expectUsageError({"a", "cat"}, "unexpected argument 'a'");
}

TEST_F(SdgenBinary, ShowParamsPrintsTheStoredText) {
  const std::string png = dir_ + "/img.png";
  const std::string params = "a cat\nSteps: 4, Sampler: Euler a, CFG scale: 7.5, Seed: 1, Size: 8x8";
  std::vector<uint8_t> rgb(8 * 8 * 3, 128);
  writePngFile(png, 8, 8, rgb, {{kParametersKeyword, params}, {"Software", "test"}});
  auto r = run({"--show-params", png});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out, params + "\nSoftware: test\n");

  const std::string bare = dir_ + "/bare.png";
  writePngFile(bare, 8, 8, rgb, {});
  r = run({"--show-params", bare});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find("no text chunks"), std::string::npos) << r.err;
}

TEST_F(SdgenBinary, RuntimeErrorsExitWithOneAndNameTheFile) {
  const std::string notPng = dir_ + "/text.png";
  std::ofstream(notPng) << "not a png";
  auto r = run({"--show-params", notPng});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find("sdgen: error: '" + notPng + "' is not a valid PNG"), std::string::npos) << r.err;

  r = run({"--show-params", dir_ + "/missing.png"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find(dir_ + "/missing.png"), std::string::npos) << r.err;

  // Generation checks the model and the output folder before it opens a device.
  r = run({"-p", "x", "-m", dir_ + "/no-model"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find("model '" + dir_ + "/no-model' does not exist"), std::string::npos) << r.err;

  r = run({"-p", "x", "-m", dir_, "-o", dir_ + "/no/such/dir/out.png"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find(dir_ + "/no/such/dir"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ + "/no"));
}

}  // namespace
}  // namespace sdgen::app
