// Atomic output: a failed write leaves no file and no temporary behind, and never damages an existing file.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "app/atomic_file.h"
#include "tests/test_support.h"

namespace sdgen::app {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/sdgen-atomic-test-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::set<std::string> entries() const {
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(path_)) names.insert(e.path().filename().string());
    return names;
  }

 private:
  std::string path_;
};

std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<uint8_t> bytesOf(const std::string& s) { return {s.begin(), s.end()}; }

TEST(AtomicFile, WritesAndReplaces) {
  TempDir dir;
  const std::string path = dir.path() + "/a.png";
  writeFileAtomically(path, bytesOf("first"));
  EXPECT_EQ(readAll(path), "first");
  writeFileAtomically(path, bytesOf("second, longer"));
  EXPECT_EQ(readAll(path), "second, longer");
  EXPECT_EQ(dir.entries(), std::set<std::string>{"a.png"});
  // New files get the usual permissions (0666 less the umask), not mkstemp's 0600.
  mode_t mask = umask(0);
  umask(mask);
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0666u & ~mask);
}

TEST(AtomicFile, MissingDirectoryFailsAndCreatesNothing) {
  TempDir dir;
  const std::string path = dir.path() + "/no/such/dir/out.png";
  test::expectErrorContaining([&] { writeFileAtomically(path, bytesOf("x")); }, path);
  EXPECT_TRUE(dir.entries().empty());
  test::expectErrorContaining([&] { checkOutputDirectory(path); }, dir.path() + "/no/such/dir");
}

TEST(AtomicFile, TargetIsADirectoryFailsAfterTheTemporaryExisted) {
  // rename() onto a directory fails only after the temporary file was created and filled: the temporary must be
  // removed and the directory left as it was.
  TempDir dir;
  const std::string target = dir.path() + "/taken.png";
  fs::create_directory(target);
  test::expectErrorContaining([&] { writeFileAtomically(target, bytesOf("data")); }, target);
  EXPECT_EQ(dir.entries(), std::set<std::string>{"taken.png"});
  EXPECT_TRUE(fs::is_empty(target));
  test::expectErrorContaining([&] { checkOutputDirectory(target); }, "is a directory");
}

// Sets a file-size limit for the process for the duration of a test; writes past it fail with EFBIG (SIGXFSZ is
// ignored meanwhile so it does not kill the test).
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    oldHandler_ = signal(SIGXFSZ, SIG_IGN);
    rlimit limit = saved_;
    limit.rlim_cur = bytes;
    ok_ = setrlimit(RLIMIT_FSIZE, &limit) == 0;
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    signal(SIGXFSZ, oldHandler_);
  }
  bool ok() const { return ok_; }

 private:
  rlimit saved_{};
  sighandler_t oldHandler_;
  bool ok_ = false;
};

TEST(AtomicFile, FailedWriteRemovesTheTemporaryAndKeepsTheOldFile) {
  TempDir dir;
  const std::string path = dir.path() + "/keep.png";
  writeFileAtomically(path, bytesOf("old content"));
  std::vector<uint8_t> big(1 << 20, 0x5A);
  {
    FileSizeLimit limit(4096);
    ASSERT_TRUE(limit.ok());
    test::expectErrorContaining([&] { writeFileAtomically(path, big); }, "write failed");
  }
  EXPECT_EQ(readAll(path), "old content");
  EXPECT_EQ(dir.entries(), std::set<std::string>{"keep.png"});
}

TEST(AtomicFile, ReadOnlyDirectory) {
  TempDir dir;
  const std::string sub = dir.path() + "/ro";
  fs::create_directory(sub);
  fs::permissions(sub, fs::perms::owner_read | fs::perms::owner_exec);
  const std::string path = sub + "/out.png";
  // Root may write anywhere; then the write succeeds and must be complete. Otherwise it fails cleanly.
  bool wrote = false;
  try {
    writeFileAtomically(path, bytesOf("x"));
    wrote = true;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(sub)) names.insert(e.path().filename().string());
  if (wrote) {
    EXPECT_EQ(geteuid(), 0u) << "a read-only directory accepted a file for a non-root user";
    EXPECT_EQ(names, std::set<std::string>{"out.png"});
    EXPECT_EQ(readAll(path), "x");
  } else {
    EXPECT_TRUE(names.empty());
    test::expectErrorContaining([&] { checkOutputDirectory(path); }, "not writable");
  }
}

TEST(AtomicFile, CheckOutputDirectoryAcceptsTheCurrentDirectory) {
  checkOutputDirectory("plain-name.png");  // no directory part: the working directory
  TempDir dir;
  checkOutputDirectory(dir.path() + "/x.png");
  const std::string file = dir.path() + "/f";
  writeFileAtomically(file, bytesOf("x"));
  test::expectErrorContaining([&] { checkOutputDirectory(file + "/x.png"); }, "not a directory");
}

}  // namespace
}  // namespace sdgen::app
