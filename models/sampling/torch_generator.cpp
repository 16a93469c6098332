#include "models/sampling/exact_float.h"  // first: Box-Muller must round exactly as torch does
#include "models/sampling/torch_generator.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <thread>
#include <vector>

#include "models/sampling/torch_vector_math.h"

namespace sdgen::sampling {

namespace {
constexpr size_t kParallelChunks = 512;  // 8192 values: below this a thread costs more than it saves
}  // namespace

TorchCpuGenerator::TorchCpuGenerator(uint64_t seed, Math math) : math_(math) { manualSeed(seed); }

void TorchCpuGenerator::manualSeed(uint64_t seed) {
  // torch's mt19937 takes the seed's low 32 bits and initializes the state exactly as std::mt19937 does, and
  // its output function is the standard one, so the standard engine gives the same stream.
  engine_.seed(static_cast<std::mt19937::result_type>(seed & 0xffffffffu));
  seed_ = seed;
  nextDoubleNormal_.reset();
}

uint32_t TorchCpuGenerator::random() { return static_cast<uint32_t>(engine_()); }

uint64_t TorchCpuGenerator::random64() {
  const uint64_t high = random();
  const uint64_t low = random();
  return (high << 32) | low;
}

float TorchCpuGenerator::uniformFloat() {
  // (value & (2^24 - 1)) * 2^-24, both exact in float.
  return static_cast<float>(random() & 0xFFFFFFu) * (1.0f / 16777216.0f);
}

double TorchCpuGenerator::uniformDouble() {
  return static_cast<double>(random64() & ((uint64_t{1} << 53) - 1)) * (1.0 / 9007199254740992.0);
}

double TorchCpuGenerator::normalDouble() {
  if (nextDoubleNormal_) {
    const double cached = *nextDoubleNormal_;
    nextDoubleNormal_.reset();
    return cached;
  }
  const double u1 = uniformDouble();
  const double u2 = uniformDouble();
  const double radius = std::sqrt(-2.0 * std::log1p(-u2));
  const double theta = 2.0 * std::numbers::pi * u1;
  nextDoubleNormal_ = radius * std::sin(theta);
  return radius * std::cos(theta);
}

// One chunk of 16 uniforms in place: element j (j < 8) gives the radius, element j + 8 the angle.
void TorchCpuGenerator::boxMuller16(float* data) const {
  for (int j = 0; j < 8; ++j) {
    const float u1 = 1.0f - data[j];  // (0, 1] for the logarithm
    const float u2 = data[j + 8];
    float radius, sine, cosine;
    if (math_ == Math::Avx2) {
      radius = std::sqrt(-2.0f * detail::cephesLog(u1));
      // 2*pi rounded to float first, then one float multiply (the vector code's order).
      const float theta = static_cast<float>(2.0 * std::numbers::pi) * u2;
      detail::cephesSinCos(theta, &sine, &cosine);
    } else {
      radius = std::sqrt(-2.0f * std::log(u1));
      // Scalar code: the product is formed in double and rounded once.
      const float theta = static_cast<float>(2.0 * std::numbers::pi * static_cast<double>(u2));
      sine = std::sin(theta);
      cosine = std::cos(theta);
    }
    // torch then computes fma(n, std, mean) with std 1 and mean 0: the product itself.
    data[j] = radius * cosine;
    data[j + 8] = radius * sine;
  }
}

void TorchCpuGenerator::randn(std::span<float> out) {
  const size_t n = out.size();
  if (n < 16) {
    for (float& v : out) v = static_cast<float>(normalDouble());
    return;
  }
  for (float& v : out) v = uniformFloat();
  // The chunks of 16 are independent once the uniforms are drawn: a latent's worth (64x64x4, ~1 ms on one core
  // with torch's exact Cephes roundings) is transformed on up to 4 threads, each a contiguous run of chunks.
  const size_t chunks = n / 16;
  const unsigned threads = chunks >= kParallelChunks ? std::clamp(std::thread::hardware_concurrency(), 1u, 4u) : 1u;
  auto transform = [&](size_t first, size_t last) {
    for (size_t c = first; c < last; ++c) boxMuller16(out.data() + 16 * c);
  };
  {
    std::vector<std::jthread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(transform, chunks * t / threads, chunks * (t + 1) / threads);
    transform(0, chunks / threads);
  }
  if (n % 16 != 0) {
    // torch redraws the last 16 elements (overlapping the last whole chunk) and transforms them again.
    float* tail = out.data() + n - 16;
    for (int i = 0; i < 16; ++i) tail[i] = uniformFloat();
    boxMuller16(tail);
  }
}

std::vector<float> TorchCpuGenerator::randn(size_t count) {
  std::vector<float> out(count);
  randn(out);
  return out;
}

}  // namespace sdgen::sampling
