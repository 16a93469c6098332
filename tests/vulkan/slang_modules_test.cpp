// Precompiled Slang modules (engine/slang_modules.h): kernels compiled on them are the SPIR-V of kernels compiled
// from the sources, byte for byte; a module compiles once per content (and per define it mentions), is found on
// disk by the next compiler, is compiled again when it or a module below it changes; imports the scan cannot
// follow leave the kernel to the sources and their diagnostics. The real coop kernels: tests/ops
// (ConvWinogradRowsCompile.HaloTilesCompileToSpirv).
#include "engine/slang_modules.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "engine/content_hash.h"
#include "engine/error.h"
#include "engine/file_util.h"
#include "engine/slang_compiler.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

namespace fs = std::filesystem;

TEST(SlangModuleImports, ImportStatementsInOrder) {
  const std::string text =
      "import sdgen;\n  __exported import conv.gemm_core;\n// import commented;\nimporting notone;\n"
      "import\texpr ;\nvoid main() { int important = 1; }\n";
  EXPECT_EQ(SlangModuleCache::importsOf(text), (std::vector<std::string>{"sdgen", "conv.gemm_core", "expr"}));
}

class SlangModulesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("sdgen-modules-test-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "shaders" / "lib");
    fs::copy_file(fs::path(defaultShaderDir()) / "sdgen.slang", root_ / "shaders" / "sdgen.slang");
    // A module below another, a define a module mentions, a part it includes.
    write("lib/base.slang", "module base;\n#ifndef SCALE\n#define SCALE 2.0\n#endif\n"
                            "public float baseScale() { return SCALE; }\n");
    write("helper.slang", "module helper;\nimport lib.base;\n__include \"helper_part.slang\";\n"
                          "public float scale() { return baseScale() + offset(); }\n");
    write("helper_part.slang", "implementing helper;\npublic float offset() { return 0.5; }\n");
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string& name, const std::string& text) { std::ofstream(root_ / "shaders" / name) << text; }
  SlangCompiler compiler(bool modules = true, const std::string& cache = "cache") {
    return SlangCompiler(defaultSlangc(), (root_ / "shaders").string(), (root_ / cache).string(), modules);
  }
  static KernelSource kernel(const std::string& value, std::vector<std::pair<std::string, std::string>> defines = {}) {
    KernelSource k;
    k.generated = "import sdgen;\nimport helper;\n[shader(\"compute\")][numthreads(64,1,1)]\n"
                  "void main(uint3 t: SV_DispatchThreadID) { paramPtr<float>(0)[t.x] = scale() * " + value + "; }\n";
    k.defines = std::move(defines);
    return k;
  }
  fs::path root_;
};

TEST_F(SlangModulesTest, SameSpirvAsFromSourcesAndEachModuleCompilesOnce) {
  SlangCompiler sources = compiler(false, "reference");
  SlangCompiler c = compiler();
  ASSERT_TRUE(c.precompiledModules());
  EXPECT_EQ(c.compile(kernel("1.0")), sources.compile(kernel("1.0")));
  EXPECT_EQ(c.modulesCompiled(), 3u);  // sdgen, lib.base, helper
  EXPECT_EQ(sources.modulesCompiled(), 0u);
  EXPECT_EQ(c.compile(kernel("3.0")), sources.compile(kernel("3.0")));
  EXPECT_EQ(c.modulesCompiled(), 3u);  // the same modules, from this compiler's files
  SlangCompiler next = compiler();     // another process: the modules from disk, the kernel compiled on them
  EXPECT_EQ(next.compile(kernel("5.0")), sources.compile(kernel("5.0")));
  EXPECT_EQ(next.modulesCompiled(), 0u);
  EXPECT_EQ(next.stats().compiled.load(), 1u);
}

TEST_F(SlangModulesTest, ADefineAModuleMentionsIsPartOfItsKey) {
  SlangCompiler sources = compiler(false, "reference");
  SlangCompiler c = compiler();
  const auto three = kernel("1.0", {{"SCALE", "3.0"}}), four = kernel("1.0", {{"SCALE", "4.0"}});
  const auto a = c.compile(three), b = c.compile(four);
  EXPECT_NE(a, b);
  EXPECT_EQ(a, sources.compile(three));
  EXPECT_EQ(b, sources.compile(four));
  EXPECT_EQ(c.modulesCompiled(), 5u);  // sdgen once (it does not mention SCALE); lib.base and helper per value
  // A define no module mentions (the kernel's own, or none at all) reuses the modules of the same values.
  c.compile(kernel("2.0", {{"SCALE", "3.0"}, {"UNUSED_BY_MODULES", "1"}}));
  EXPECT_EQ(c.modulesCompiled(), 5u);
}

TEST_F(SlangModulesTest, AnEditBelowAModuleCompilesItAgain) {
  SlangCompiler sources = compiler(false, "reference");
  SlangCompiler c = compiler();
  const auto before = c.compile(kernel("1.0"));
  write("helper_part.slang", "implementing helper;\npublic float offset() { return 0.25; }\n");  // an included part
  const auto part = c.compile(kernel("1.0"));
  EXPECT_NE(part, before);
  EXPECT_EQ(part, sources.compile(kernel("1.0")));
  EXPECT_EQ(c.modulesCompiled(), 4u);  // helper again; sdgen and lib.base unchanged
  write("lib/base.slang", "module base;\npublic float baseScale() { return 7.0; }\n");  // below helper
  const auto below = c.compile(kernel("1.0"));
  EXPECT_NE(below, part);
  EXPECT_EQ(below, sources.compile(kernel("1.0")));
  EXPECT_EQ(c.modulesCompiled(), 6u);  // lib.base and helper above it
}

TEST_F(SlangModulesTest, AnEditToAPreprocessorIncludeCompilesTheModuleAgain) {
  write("lib/base.slang", "module base;\n#include \"base_value.slang\"\npublic float baseScale() { return BASE; }\n");
  write("lib/base_value.slang", "#define BASE 2.0\n");
  SlangCompiler sources = compiler(false, "reference");
  SlangCompiler c = compiler();
  const auto before = c.compile(kernel("1.0"));
  EXPECT_EQ(before, sources.compile(kernel("1.0")));
  write("lib/base_value.slang", "#define BASE 6.0\n");  // only the included file changes
  const auto after = c.compile(kernel("1.0"));
  EXPECT_NE(after, before);
  EXPECT_EQ(after, sources.compile(kernel("1.0")));
  EXPECT_EQ(c.modulesCompiled(), 5u);  // lib.base and helper above it again
}

TEST_F(SlangModulesTest, AModuleCompilerThatThrowsLeavesTheKernelToTheSources) {
  int calls = 0;
  SlangModuleCache cache((root_ / "shaders").string(), (root_ / "cache").string(), "v", {},
                         [&](const std::vector<std::string>&) -> std::optional<std::string> {
                           ++calls;
                           throw std::runtime_error("disk full");
                         });
  const std::string text = kernel("1.0").generated;
  EXPECT_EQ(cache.prepare(text, (root_ / "shaders").string(), {}, {}), std::nullopt);
  EXPECT_EQ(calls, 1);  // the first module failed; nothing above it was tried
  // The failure is remembered for this process (no second attempt, no broken promise for a waiter).
  EXPECT_EQ(cache.prepare(text, (root_ / "shaders").string(), {}, {}), std::nullopt);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(cache.compiled(), 0u);
}

// The cache folder is hostile: a module file that is cut short, emptied or overwritten (Slang aborts on some such
// files instead of reading the sources) is compiled again, as is one that passes its checksum but that Slang
// rejects, and a link folder whose links were changed is made again.
TEST_F(SlangModulesTest, CorruptModuleFilesAreCompiledAgain) {
  SlangCompiler sources = compiler(false, "reference");
  const fs::path dir = root_ / "cache" / "slang-modules";
  auto moduleFiles = [&] {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".slang-module") files.push_back(e.path());
    return files;
  };
  auto overwrite = [](const fs::path& p) {  // 64 bytes of garbage a third of the way in
    std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(p) / 3));
    f << std::string(64, 'x');
  };
  compiler().compile(kernel("1.0"));
  ASSERT_EQ(moduleFiles().size(), 3u);
  int value = 2;
  for (const std::string mode : {"overwritten", "cut short", "emptied"}) {
    for (const fs::path& p : moduleFiles()) {
      if (mode == "overwritten") overwrite(p);
      else fs::resize_file(p, mode == "emptied" ? 0 : fs::file_size(p) / 2);
    }
    SlangCompiler c = compiler();
    const auto k = kernel(std::to_string(value++) + ".0");
    EXPECT_EQ(c.compile(k), sources.compile(k)) << mode;
    EXPECT_EQ(c.modulesCompiled(), 3u) << mode;  // each failed its checksum
  }
  // Overwritten with a matching checksum: the kernel compiles from the sources, and the modules are made again.
  for (const fs::path& p : moduleFiles()) {
    overwrite(p);
    std::ofstream(p.string() + ".sum", std::ios::trunc) << hashHex(*readFile(p.string()));
  }
  {
    SlangCompiler c = compiler();
    const auto k = kernel("7.0");
    EXPECT_EQ(c.compile(k), sources.compile(k));
    EXPECT_EQ(c.modulesCompiled(), 0u);
  }
  SlangCompiler again = compiler();
  EXPECT_EQ(again.compile(kernel("8.0")), sources.compile(kernel("8.0")));
  EXPECT_EQ(again.modulesCompiled(), 3u);
  // A link pointed elsewhere: the folder is made again, the modules are used as they are.
  for (const auto& e : fs::recursive_directory_iterator(dir / "links"))
    if (e.path().filename() == "sdgen.slang-module") {
      fs::remove(e.path());
      fs::create_symlink(root_ / "shaders" / "sdgen.slang", e.path());
    }
  SlangCompiler relinked = compiler();
  EXPECT_EQ(relinked.compile(kernel("9.0")), sources.compile(kernel("9.0")));
  EXPECT_EQ(relinked.modulesCompiled(), 0u);
}

TEST_F(SlangModulesTest, WhatTheScanCannotFollowCompilesFromTheSources) {
  SlangCompiler c = compiler();
  KernelSource missing = kernel("1.0");
  missing.generated = "import no_such_module;\n" + missing.generated;
  try {
    c.compile(missing);
    FAIL() << "expected Slang's error for the missing module";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_module"), std::string::npos) << e.what();
  }
  // A module that does not compile: the kernel's error is Slang's, naming the module's line, not a missing file.
  write("helper_part.slang", "implementing helper;\npublic float offset() { return undefined_name; }\n");
  try {
    c.compile(kernel("1.0"));
    FAIL() << "expected Slang's error from the module";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("undefined_name"), std::string::npos) << e.what();
  }
  // A module beside an importing file in a subfolder shadows the shader folder's (Slang searches there first).
  write("lib/helper.slang", "module helper;\npublic float scale() { return 11.0; }\n");
  KernelSource nested;
  write("lib/kernel.slang", "import sdgen;\nimport helper;\n[shader(\"compute\")][numthreads(64,1,1)]\n"
                            "void main(uint3 t: SV_DispatchThreadID) { paramPtr<float>(0)[t.x] = scale(); }\n");
  nested.module = "lib/kernel.slang";
  EXPECT_EQ(c.compile(nested), compiler(false, "reference").compile(nested));
}

}  // namespace
}  // namespace sdgen
