#pragma once
// Helpers shared by the model-loading tests: a scratch folder and error-message capture.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "engine/error.h"

namespace sdgen::test {

// A fresh folder under the system temp directory, removed with everything in it at scope exit.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() / ("sdgen_models_test_" + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string write(const std::string& name, const std::string& bytes) const {
    std::string p = file(name);
    std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return p;
  }

 private:
  std::filesystem::path path_;
};

// The message of the sdgen::Error that `f` throws; fails the test when it throws nothing.
template <typename F>
std::string errorOf(F&& f) {
  try {
    f();
  } catch (const sdgen::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an sdgen::Error";
  return {};
}

inline std::string sourcePath(const std::string& relative) { return std::string(SDGEN_SOURCE_DIR) + "/" + relative; }

}  // namespace sdgen::test
