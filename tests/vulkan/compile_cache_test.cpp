#include "engine/slang_compiler.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <thread>

#include "engine/command_sequence.h"
#include "engine/context.h"
#include "engine/error.h"
#include "engine/file_util.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

namespace fs = std::filesystem;

// A private shader directory and cache directory per test, so counts are exact.
class CompileCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("sdgen-cache-test-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "shaders");
    fs::copy_file(fs::path(defaultShaderDir()) / "sdgen.slang", root_ / "shaders" / "sdgen.slang");
    write("helper.slang", "module helper;\npublic float scale() { return 2.0; }\n");
    write("kernel.slang",
          "import sdgen;\nimport helper;\n[shader(\"compute\")][numthreads(64,1,1)]\n"
          "void main(uint3 t: SV_DispatchThreadID) { paramPtr<float>(0)[t.x] = scale(); }\n");
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string& name, const std::string& text) { std::ofstream(root_ / "shaders" / name) << text; }
  SlangCompiler compiler() {
    return SlangCompiler(defaultSlangc(), (root_ / "shaders").string(), (root_ / "cache").string());
  }
  fs::path root_;
};

TEST_F(CompileCacheTest, SecondRunCompilesNothing) {
  KernelSource src;
  src.module = "kernel.slang";
  {
    SlangCompiler c = compiler();
    auto spirv = c.compile(src);
    EXPECT_GT(spirv.size(), 5u);
    EXPECT_EQ(spirv[0], 0x07230203u);  // SPIR-V magic
    EXPECT_EQ(c.stats().compiled.load(), 1u);
    EXPECT_EQ(c.stats().cacheHits.load(), 0u);
  }
  SlangCompiler again = compiler();  // a new process would see the same: state is only on disk
  again.compile(src);
  EXPECT_EQ(again.stats().compiled.load(), 0u);
  EXPECT_EQ(again.stats().cacheHits.load(), 1u);
}

// A cache entry changed on disk (a byte of its SPIR-V, its manifest, or its checksum; same sizes, so that the SPIR-V
// still reads as whole words) is compiled again instead of reaching the driver.
TEST_F(CompileCacheTest, ADamagedEntryIsCompiledAgain) {
  KernelSource src;
  src.module = "kernel.slang";
  const std::vector<uint32_t> good = compiler().compile(src);
  std::vector<fs::path> spv, deps, sums;
  for (const auto& e : fs::directory_iterator(root_ / "cache" / "spirv")) {
    const std::string name = e.path().filename().string();
    if (name.size() > 4 && name.substr(name.size() - 4) == ".spv") spv.push_back(e.path());
    else if (name.size() > 5 && name.substr(name.size() - 5) == ".deps") deps.push_back(e.path());
    else if (name.size() > 4 && name.substr(name.size() - 4) == ".sum") sums.push_back(e.path());
  }
  ASSERT_EQ(spv.size(), 1u);
  ASSERT_EQ(deps.size(), 1u);
  ASSERT_EQ(sums.size(), 2u);
  auto flip = [](const fs::path& p, size_t at) {
    std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(at));
    char c = 0;
    f.get(c);
    f.seekp(static_cast<std::streamoff>(at));
    f.put(static_cast<char>(c ^ 0x5a));
  };
  const std::vector<std::pair<fs::path, size_t>> damage = {
      {spv[0], size_t(fs::file_size(spv[0]) / 2)}, {deps[0], 3}, {sums[0], 0}, {sums[1], 31}};
  for (const auto& [file, at] : damage) {
    flip(file, at);
    SlangCompiler c = compiler();
    EXPECT_EQ(c.compile(src), good) << file;
    EXPECT_EQ(c.stats().compiled.load(), 1u) << file;
    EXPECT_EQ(c.stats().cacheHits.load(), 0u) << file;
  }
  SlangCompiler again = compiler();  // rewritten whole
  EXPECT_EQ(again.compile(src), good);
  EXPECT_EQ(again.stats().cacheHits.load(), 1u);
}

// KernelSource::optimize is a distinct request and cache entry; with spirv-opt's library beside slangc (setup.sh
// installs it) the kernel compiles through it to different SPIR-V, without it at -O0 (the same code).
TEST_F(CompileCacheTest, OptimizedKernelIsItsOwnEntry) {
  KernelSource plain, optimized;
  plain.module = optimized.module = "kernel.slang";
  optimized.optimize = true;
  EXPECT_NE(plain.requestKey(), optimized.requestKey());
  SlangCompiler c = compiler();
  auto a = c.compile(plain), b = c.compile(optimized);
  EXPECT_EQ(c.stats().compiled.load(), 2u);
  EXPECT_EQ(b[0], 0x07230203u);
  if (c.optimizerAvailable()) EXPECT_NE(a, b);
  else EXPECT_EQ(a, b);
  c.compile(optimized);
  EXPECT_EQ(c.stats().cacheHits.load(), 1u);
}

TEST_F(CompileCacheTest, EditingAnImportedModuleInvalidates) {
  KernelSource src;
  src.module = "kernel.slang";
  SlangCompiler c = compiler();
  auto first = c.compile(src);
  write("helper.slang", "module helper;\npublic float scale() { return 3.0; }\n");
  auto second = c.compile(src);
  EXPECT_EQ(c.stats().compiled.load(), 2u);
  EXPECT_NE(first, second);
}

// Another shader folder (SDGEN_SHADER_DIR) sharing the cache: its modules compile, not the first folder's cached
// kernel (whose dependencies are still there and unchanged). Before the folder was part of the key, an A/B of two
// shader folders measured the first one's kernel twice (docs/perf.md, session 19).
TEST_F(CompileCacheTest, AnotherShaderFolderIsItsOwnEntry) {
  KernelSource src;
  src.module = "kernel.slang";
  auto first = compiler().compile(src);
  fs::copy(root_ / "shaders", root_ / "other");
  std::ofstream(root_ / "other" / "helper.slang") << "module helper;\npublic float scale() { return 5.0; }\n";
  SlangCompiler other(defaultSlangc(), (root_ / "other").string(), (root_ / "cache").string());
  auto second = other.compile(src);
  EXPECT_EQ(other.stats().compiled.load(), 1u);
  EXPECT_NE(first, second);
  SlangCompiler again = compiler();  // the first folder's entry is still there
  EXPECT_EQ(again.compile(src), first);
  EXPECT_EQ(again.stats().cacheHits.load(), 1u);
}

TEST_F(CompileCacheTest, DefinesAndGeneratedSourcesAreDistinctEntries) {
  SlangCompiler c = compiler();
  KernelSource a;
  a.module = "kernel.slang";
  KernelSource b = a;
  b.defines = {{"UNUSED", "1"}};
  KernelSource g;
  g.generated = "import sdgen;\n[shader(\"compute\")][numthreads(32,1,1)]\n"
                "void main(uint3 t: SV_DispatchThreadID) { paramPtr<float>(0)[t.x] = 1.0; }\n";
  c.compile(a);
  c.compile(b);
  c.compile(g);
  c.compile(g);
  EXPECT_EQ(c.stats().compiled.load(), 3u);
  EXPECT_EQ(c.stats().cacheHits.load(), 1u);
}

TEST_F(CompileCacheTest, DiagnosticsAreShownVerbatimWithTheGeneratedFile) {
  SlangCompiler c = compiler();
  KernelSource g;
  g.generated = "import sdgen;\n[shader(\"compute\")][numthreads(32,1,1)]\nvoid main() { undefined_thing(); }\n";
  try {
    c.compile(g);
    FAIL() << "expected a compile error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("undefined_thing"), std::string::npos) << msg;
    EXPECT_NE(msg.find(".slang"), std::string::npos) << msg;
  }
}

// Parallel test processes and prepare() compile the same kernel into one cache at the same time.
TEST_F(CompileCacheTest, ConcurrentCompilersOfTheSameKernelBothSucceed) {
  KernelSource src;
  src.module = "kernel.slang";
  for (int round = 0; round < 4; ++round) {
    fs::remove_all(root_ / "cache");
    SlangCompiler a = compiler(), b = compiler();
    std::vector<uint32_t> ra, rb;
    std::thread ta([&] { ra = a.compile(src); }), tb([&] { rb = b.compile(src); });
    ta.join();
    tb.join();
    ASSERT_FALSE(ra.empty());
    EXPECT_EQ(ra, rb);
  }
}

TEST(CompileErrors, MissingCompilerOrShaderDirIsNamed) {
  try {
    SlangCompiler c("/nonexistent/slangc", defaultShaderDir(), "/tmp/x");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/slangc"), std::string::npos);
  }
}

}  // namespace
}  // namespace sdgen

namespace sdgen {
namespace {

class KernelPrepareTest : public test::VulkanTest {};

// A model's kernels are compiled concurrently before the first step; afterwards getting them compiles nothing.
TEST_F(KernelPrepareTest, PrepareCompilesInParallelThenGetIsFree) {
  ContextOptions options;
  options.validation = true;
  options.cacheDir = (std::filesystem::temp_directory_path() / ("sdgen-prepare-" + std::to_string(::getpid()))).string();
  std::filesystem::remove_all(options.cacheDir);
  Context local(options);
  std::vector<KernelSource> sources;
  for (const char* module : {"basic/fill.slang", "basic/copy.slang", "basic/binary.slang", "basic/row_sum.slang"})
    for (const char* dtype : {"0", "1"}) {
      KernelSource s;
      s.module = module;
      s.defines = {{"SDGEN_DTYPE", dtype}};
      sources.push_back(s);
    }
  local.kernels().prepare(sources);
  EXPECT_EQ(local.compiler().stats().compiled.load(), sources.size());
  EXPECT_EQ(local.kernels().size(), sources.size());
  for (auto& s : sources) local.kernels().get(s);
  EXPECT_EQ(local.compiler().stats().compiled.load(), sources.size());
  EXPECT_EQ(local.instance().validation().count(), 0u);
  std::filesystem::remove_all(options.cacheDir);
}

// The driver's pipeline cache is saved with a checksum; one damaged on disk is not handed to the driver (which
// checks only its header), and the next registry starts empty, works, and saves a whole one again.
TEST_F(KernelPrepareTest, ADamagedPipelineCacheIsNotGivenToTheDriver) {
  namespace fs = std::filesystem;
  ContextOptions options;
  options.validation = true;
  options.cacheDir = (fs::temp_directory_path() / ("sdgen-pipeline-cache-" + std::to_string(::getpid()))).string();
  fs::remove_all(options.cacheDir);
  KernelSource fill;
  fill.module = "basic/fill.slang";
  fill.defines = {{"SDGEN_DTYPE", "0"}};
  auto pipelineCaches = [&] {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(options.cacheDir)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("pipelines-", 0) == 0 && e.path().extension() == ".bin") files.push_back(e.path());
    }
    return files;
  };
  { Context(options).kernels().get(fill); }
  std::vector<fs::path> files = pipelineCaches();
  ASSERT_EQ(files.size(), 1u);
  ASSERT_TRUE(fs::exists(files[0].string() + ".sum"));
  const auto size = fs::file_size(files[0]);
  {  // its last byte changed (lavapipe's cache may be little more than the header)
    std::fstream f(files[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(size - 1));
    char c = 0;
    f.get(c);
    f.seekp(static_cast<std::streamoff>(size - 1));
    f.put(static_cast<char>(c ^ 0x5a));
  }
  EXPECT_FALSE(readFileChecked(files[0].string()).has_value());
  {
    Context local(options);
    local.kernels().get(fill);
    EXPECT_EQ(local.instance().validation().count(), 0u);
  }
  EXPECT_TRUE(readFileChecked(files[0].string()).has_value());
  fs::remove_all(options.cacheDir);
}

}  // namespace
}  // namespace sdgen

namespace sdgen {
namespace {

class DeferredCompileTest : public test::VulkanTest {};

KernelSource generatedKernel(const std::string& body, const std::string& label) {
  KernelSource s;
  s.generated = "import sdgen;\n[shader(\"compute\")][numthreads(64,1,1)]\nvoid main(uint3 t: SV_DispatchThreadID) {\n" +
                body + "\n}\n";
  s.label = label;
  return s;
}

// Recording never waits for slangc: a kernel that does not compile is reported when the sequence ends (by its
// name), not when it is dispatched, and the sequence stays unrecorded; kernels requested while recording are
// compiled once each and run.
TEST_F(DeferredCompileTest, CompileErrorsSurfaceAtEndAndGoodKernelsRun) {
  ContextOptions options;
  options.validation = true;
  options.cacheDir = (std::filesystem::temp_directory_path() / ("sdgen-deferred-" + std::to_string(::getpid()))).string();
  std::filesystem::remove_all(options.cacheDir);
  {
    Context local(options);
    Allocation out = local.allocate(4 * 64 * 3, "deferred out");
    CommandSequence bad(local);
    const uint32_t params[2] = {uint32_t(out.address()), uint32_t(out.address() >> 32)};
    bad.dispatch(local.kernels().request(generatedKernel("this is not slang;", "broken kernel")), {1, 1, 1}, params, {},
                 {range(out)});
    try {
      bad.end();
      FAIL() << "a kernel that does not compile must fail end()";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("broken kernel"), std::string::npos) << e.what();
    }
    EXPECT_THROW(bad.submit(), Error);  // still open: the same error again, nothing submitted

    CommandSequence good(local);
    for (int i = 0; i < 3; ++i) {
      const uint32_t p[2] = {uint32_t(out.address() + 256 * i), uint32_t((out.address() + 256 * i) >> 32)};
      good.dispatch(local.kernels().request(generatedKernel(
                        "paramPtr<float>(0)[t.x] = " + std::to_string(i + 1) + ".0;", "kernel " + std::to_string(i))),
                    {1, 1, 1}, p, {}, {range(out, 256 * i, 256)});
    }
    good.run();
    std::vector<float> host(64 * 3);
    local.download(out, 0, {reinterpret_cast<uint8_t*>(host.data()), host.size() * 4});
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 64; ++j) ASSERT_EQ(host[64 * i + j], float(i + 1)) << i << " " << j;
    EXPECT_EQ(local.compiler().stats().compiled.load(), 3u);  // the broken one never produced SPIR-V
    EXPECT_EQ(local.instance().validation().count(), 0u);
  }
  std::filesystem::remove_all(options.cacheDir);
}

// A thread waiting for a kernel whose compile is still queued compiles it itself (KernelRegistry::
// compileQueuedNow): with one worker busy on eight earlier kernels, the ninth is ready long before the queue
// drains, where first come, first served would make it wait for all eight. The earlier ones still compile.
TEST_F(DeferredCompileTest, AWaitedKernelIsCompiledByTheWaitingThread) {
  ::setenv("SDGEN_COMPILE_THREADS", "1", 1);
  // Each compile parses its imports (~0.3 s here): with precompiled modules the worker's eight take ~30 ms each
  // and can drain before the waiting thread's one is done, which this test cannot tell from waiting in line.
  ::setenv("SDGEN_SLANG_MODULES", "0", 1);
  ContextOptions options;
  options.cacheDir = (std::filesystem::temp_directory_path() / ("sdgen-help-" + std::to_string(::getpid()))).string();
  std::filesystem::remove_all(options.cacheDir);
  {
    Context local(options);
    ::unsetenv("SDGEN_COMPILE_THREADS");
    ::unsetenv("SDGEN_SLANG_MODULES");
    ASSERT_EQ(local.kernels().workerCount(), 1);
    ASSERT_FALSE(local.compiler().precompiledModules());
    std::vector<KernelRef> earlier;
    for (int i = 0; i < 8; ++i)
      earlier.push_back(local.kernels().request(
          generatedKernel("paramPtr<float>(0)[t.x] = " + std::to_string(i) + ".5;", "queued " + std::to_string(i))));
    KernelRef wanted = local.kernels().request(generatedKernel("paramPtr<float>(0)[t.x] = 42.0;", "wanted"));
    wanted.wait();
    // The worker had eight compiles ahead of `wanted`; the waiting thread compiled it beside the first ones.
    EXPECT_LT(local.compiler().stats().compiled.load(), 9u) << "the waited kernel sat behind the whole queue";
    EXPECT_FALSE(local.kernels().compileQueuedNow(generatedKernel("paramPtr<float>(0)[t.x] = 42.0;", "wanted")
                                                       .requestKey()));  // compiled: nothing left to run
    for (const KernelRef& r : earlier) r.wait();
    EXPECT_EQ(local.compiler().stats().compiled.load(), 9u);

    // Requests under KernelRegistry::UrgentRequests go ahead of everything queued (the autotune's candidates).
    std::vector<KernelSource> normal, urgent;
    for (int i = 0; i < 6; ++i)
      normal.push_back(generatedKernel("paramPtr<float>(0)[t.x] = " + std::to_string(i) + ".25;", "normal"));
    for (int i = 0; i < 2; ++i)
      urgent.push_back(generatedKernel("paramPtr<float>(0)[t.x] = " + std::to_string(i) + ".75;", "urgent"));
    std::vector<KernelRef> refs;
    for (const KernelSource& k : normal) refs.push_back(local.kernels().request(k));
    {
      KernelRegistry::UrgentRequests scope;
      for (const KernelSource& k : urgent) refs.push_back(local.kernels().request(k));
    }
    refs.push_back(local.kernels().request(generatedKernel("paramPtr<float>(0)[t.x] = 9.5;", "after the scope")));
    // The one worker may already have taken a job or two from the front (whichever it woke up to): every urgent
    // request still queued comes before every normal one still queued, and the request after the scope is last.
    const std::vector<std::string> queued = local.kernels().queuedKeys();
    ASSERT_GE(queued.size(), 6u);
    auto isIn = [](const std::vector<KernelSource>& set, const std::string& key) {
      return std::any_of(set.begin(), set.end(), [&](const KernelSource& k) { return k.requestKey() == key; });
    };
    size_t lastUrgent = 0, firstNormal = queued.size();
    bool anyUrgent = false;
    for (size_t i = 0; i < queued.size(); ++i) {
      if (isIn(urgent, queued[i])) anyUrgent = true, lastUrgent = i;
      if (isIn(normal, queued[i])) firstNormal = std::min(firstNormal, i);
    }
    EXPECT_TRUE(anyUrgent) << "both urgent requests gone before a normal one";
    EXPECT_LT(lastUrgent, firstNormal) << "an urgent request queued behind a normal one";
    EXPECT_EQ(queued.back(), generatedKernel("paramPtr<float>(0)[t.x] = 9.5;", "after the scope").requestKey())
        << "a request after the scope is urgent too";
    for (const KernelRef& r : refs) r.wait();
  }
  std::filesystem::remove_all(options.cacheDir);
}

}  // namespace
}  // namespace sdgen
