#pragma once
// Shared test fixtures: one device context per test process with validation layers forced on; any validation
// message during a test fails that test.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "engine/context.h"
#include "engine/dtype.h"
#include "engine/error.h"

namespace sdgen::test {

Context& context();
size_t validationMessageCount();
void shutdown();  // destroys the shared context (end of main)

// Base fixture for every test that touches the GPU: validation messages during the test fail it.
class VulkanTest : public ::testing::Test {
 protected:
  void SetUp() override { before_ = validationMessageCount(); }
  void TearDown() override;
  Context& ctx() { return context(); }

 private:
  size_t before_ = 0;
};

// Sets (a value) or unsets (nullptr) an environment variable for the scope and restores what it was: the engine's
// knobs are read at recording time, and a failed assertion must not leave one set for the tests after it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_) setenv(name_.c_str(), old_.c_str(), 1);
    else unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_, old_;
  bool had_ = false;
};

// Uploads host floats as `dtype` into a new device allocation.
Allocation uploadFloats(Context& ctx, std::span<const float> values, DType dtype, const char* what = "test input");
// Downloads `count` elements of `dtype` as floats.
std::vector<float> downloadFloats(Context& ctx, const Allocation& a, size_t count, DType dtype);
// How many elements differ bit for bit (a size mismatch counts as one more).
size_t differingBits(const std::vector<float>& a, const std::vector<float>& b);
// Fills an allocation with a NaN pattern so unwritten elements are detectable.
void poison(Context& ctx, const Allocation& a);
std::vector<float> randomFloats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f);
// Rounds through fp16 when dtype is F16 (what the GPU sees after upload).
float roundTo(DType dtype, float v);

// Runs f and expects an sdgen::Error whose message contains `needle` (bad input must be named).
template <class F>
void expectErrorContaining(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one mentioning '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

}  // namespace sdgen::test
