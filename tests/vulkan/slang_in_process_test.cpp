// The in-process Slang compiler (engine/slang_library.h) against slangc run as a process: the same SPIR-V byte
// for byte and the same dependency manifest, for a module kernel, a generated kernel with imports, and a
// tensor-core kernel with capabilities compiled through spirv-opt; concurrent compiles; the fallback switch.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "engine/error.h"
#include "engine/slang_compiler.h"
#include "engine/slang_library.h"
#include "ops/linear_gemm.h"
#include "tests/ops/gemm_coop_test_support.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

namespace fs = std::filesystem;

class SlangInProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("sdgen-in-process-test-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
  }
  void TearDown() override {
    ::unsetenv("SDGEN_SLANG_IN_PROCESS");
    fs::remove_all(root_);
  }
  // A compiler with its own cache, in-process or as slangc processes.
  std::unique_ptr<SlangCompiler> compiler(const std::string& name, bool inProcess) {
    if (inProcess) ::unsetenv("SDGEN_SLANG_IN_PROCESS");
    else ::setenv("SDGEN_SLANG_IN_PROCESS", "0", 1);
    auto c = std::make_unique<SlangCompiler>(defaultSlangc(), defaultShaderDir(), (root_ / name).string());
    ::unsetenv("SDGEN_SLANG_IN_PROCESS");
    return c;
  }
  // The dependency manifests of a cache ("<hash> <path>" lines), as one sorted set.
  std::set<std::string> manifests(const std::string& name) {
    std::set<std::string> lines;
    for (const auto& e : fs::directory_iterator(root_ / name / "spirv")) {
      if (e.path().extension() != ".deps") continue;
      std::ifstream in(e.path());
      for (std::string line; std::getline(in, line);) lines.insert(line);
    }
    return lines;
  }
  static std::vector<KernelSource> kernels() {
    std::vector<KernelSource> list(3);
    list[0].module = "basic/fill.slang";
    list[1].generated =  // an fp16 -> fp32 copy through the fusion expressions (what the graph generates)
        "import sdgen;\nimport expr;\nimport elementwise;\ntypealias E = Buf<6,F16Storage,1,0>;\n"
        "typealias S = BufSink<13,F32Storage>;\n[shader(\"compute\")]\n[numthreads(256, 1, 1)]\n"
        "void main(uint3 group : SV_GroupID, uint3 local : SV_GroupThreadID) {\n"
        "  elementwiseMain<E, S, 1, 1, 1>(group, local);\n}\n";
    list[1].label = "elementwise copy";
    ops::GemmTile coop = ops::GemmTile::coopTile(64, 64, 32, 2, 2);
    list[2].generated = ops::gemmWrapperSource(test::coopGemmInfo(1), coop, true);
    list[2].capabilities = {"spvCooperativeMatrixKHR"};
    list[2].optimize = true;  // -O2 where the spirv-opt library is installed (setup.sh), else -O0 in both
    list[2].label = "gemm coop " + coop.describe();
    return list;
  }
  fs::path root_;
};

TEST_F(SlangInProcessTest, MatchesSlangcByteForByte) {
  auto inProcess = compiler("in-process", true);
  auto processes = compiler("processes", false);
  ASSERT_TRUE(inProcess->inProcess()) << inProcess->subprocessReason();
  ASSERT_FALSE(processes->inProcess());
  EXPECT_EQ(processes->subprocessReason(), "SDGEN_SLANG_IN_PROCESS=0");
  EXPECT_EQ(inProcess->version(), processes->version());  // the library's build tag is `slangc -v`'s text
  for (const KernelSource& k : kernels()) {
    const std::vector<uint32_t> a = inProcess->compile(k), b = processes->compile(k);
    ASSERT_GT(a.size(), 5u) << k.displayName();
    EXPECT_EQ(a[0], 0x07230203u);
    EXPECT_TRUE(a == b) << k.displayName() << ": " << a.size() << " words in-process, " << b.size() << " from slangc";
  }
  EXPECT_EQ(inProcess->stats().compiled.load(), 3u);
  // Both record the same files with the same content hashes (the generated sources' paths differ by cache).
  std::set<std::string> a = manifests("in-process"), b = manifests("processes");
  auto shared = [&](const std::set<std::string>& s) {
    std::set<std::string> out;
    for (const std::string& line : s)
      if (line.find(defaultShaderDir()) != std::string::npos || line.find(fs::canonical(defaultShaderDir()).string()) != std::string::npos)
        out.insert(line);
    return out;
  };
  EXPECT_FALSE(shared(a).empty());
  EXPECT_EQ(shared(a), shared(b));
  EXPECT_EQ(a.size(), b.size());
}

// Each concurrent compile takes its own session (Slang's are not thread-safe); the results are those of one
// thread, and the idle sessions are freed on request.
TEST_F(SlangInProcessTest, ConcurrentCompilesAgreeAndSessionsAreTrimmed) {
  auto sequential = compiler("sequential", true);
  auto parallel = compiler("parallel", true);
  ASSERT_TRUE(parallel->inProcess());
  std::vector<KernelSource> list = kernels();
  std::vector<std::vector<uint32_t>> expected, got(list.size());
  for (const KernelSource& k : list) expected.push_back(sequential->compile(k));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < list.size(); ++i) threads.emplace_back([&, i] { got[i] = parallel->compile(list[i]); });
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < list.size(); ++i) EXPECT_TRUE(got[i] == expected[i]) << list[i].displayName();
  parallel->trimIdleSessions();
  // A trimmed compiler makes a new session for its next compile.
  KernelSource again = list[0];
  again.defines = {{"SDGEN_TEST_AFTER_TRIM", "1"}};
  EXPECT_GT(parallel->compile(again).size(), 5u);
}

// Sessions are made at most 2 at once by default (16 compile threads making theirs together contend inside Slang:
// docs/perf.md, session 54), SDGEN_SLANG_SESSION_CREATORS overrides; every compile still gets its own session.
TEST_F(SlangInProcessTest, SessionsAreMadeAFewAtOnce) {
  fs::create_directories(root_);
  const std::string file = (root_ / "tiny.slang").string();
  std::ofstream(file) << "RWStructuredBuffer<float> b;\n[shader(\"compute\")][numthreads(64, 1, 1)]\n"
                         "void main(uint3 t: SV_DispatchThreadID) { b[t.x] = 2.0 * b[t.x]; }\n";
  const std::string slangcDir = fs::path(defaultSlangc()).parent_path().string();
  for (const char* setting : {static_cast<const char*>(nullptr), "1"}) {
    if (setting) ::setenv("SDGEN_SLANG_SESSION_CREATORS", setting, 1);
    std::string why;
    std::unique_ptr<SlangLibrary> library = SlangLibrary::open(slangcDir, &why);
    ::unsetenv("SDGEN_SLANG_SESSION_CREATORS");
    ASSERT_TRUE(library) << why;
    const int limit = setting ? 1 : 2;
    EXPECT_EQ(library->sessionStats().limit, limit);
    constexpr int kThreads = 6;
    std::vector<SlangLibrary::Result> results(kThreads);
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i)
      threads.emplace_back([&, i] { results[i] = library->compile({file, "-target", "spirv", "-entry", "main"}); });
    for (std::thread& t : threads) t.join();
    for (const SlangLibrary::Result& r : results) {
      EXPECT_TRUE(r.ok) << r.diagnostics;
      EXPECT_EQ(r.code, results[0].code);
    }
    const SlangLibrary::SessionStats stats = library->sessionStats();
    EXPECT_GE(stats.made, 1);
    EXPECT_LE(stats.made, kThreads);
    EXPECT_GE(stats.mostAtOnce, 1);
    EXPECT_LE(stats.mostAtOnce, limit);
    EXPECT_EQ(static_cast<int>(library->idleSessions()), stats.made);  // every session back in the pool
  }
}

// A Slang error in-process: the compile throws with Slang's diagnostics and the generated file's path, and the
// compiler goes on working.
TEST_F(SlangInProcessTest, ErrorsCarrySlangsDiagnostics) {
  auto c = compiler("errors", true);
  ASSERT_TRUE(c->inProcess());
  KernelSource bad;
  bad.generated = "import sdgen;\n[shader(\"compute\")][numthreads(64,1,1)]\nvoid main() { undefinedName(); }\n";
  bad.label = "broken kernel";
  try {
    c->compile(bad);
    FAIL() << "a kernel with an undefined name compiled";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("broken kernel"), std::string::npos) << msg;
    EXPECT_NE(msg.find("undefinedName"), std::string::npos) << msg;
    EXPECT_NE(msg.find((root_ / "errors" / "generated").string()), std::string::npos) << msg;
  }
  EXPECT_GT(c->compile(kernels()[0]).size(), 5u);
}

}  // namespace
}  // namespace sdgen
