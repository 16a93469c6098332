// The decode's host post-process (models/pipeline/decoded_image.h) on a 512x512 RGB image as the full VAE decode
// returns it: the copy into a fresh vector (page faults), postprocessDecoded on that vector (its bytes fresh too),
// and postprocessDecoded on memory already touched. No GPU; run it on the machine whose CPU is in question.
//   postprocess_bench [ROUNDS]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "models/pipeline/decoded_image.h"

using namespace sdgen::pipeline;

namespace {
double msSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}
}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 10;
  const size_t n = size_t(512) * 512 * 3;
  std::vector<float> mapped(n);  // stands for the decoder's host-visible output
  for (size_t i = 0; i < n; ++i) mapped[i] = float((i * 7919) % 2000) / 1000.f - 1.f;
  std::vector<float> reused(n);
  std::vector<uint8_t> reusedRgb(n);
  for (int r = 0; r < rounds; ++r) {
    auto t = std::chrono::steady_clock::now();
    std::vector<float> pixels(mapped.begin(), mapped.end());
    const double copy = msSince(t);
    t = std::chrono::steady_clock::now();
    std::vector<uint8_t> rgb;
    postprocessDecoded(pixels, rgb);
    const double fresh = msSince(t);
    std::memcpy(reused.data(), mapped.data(), n * 4);
    t = std::chrono::steady_clock::now();
    postprocessDecoded(reused, reusedRgb);
    std::printf("copy %.3f ms, post-process %.3f ms (fresh bytes), %.3f ms (memory reused)\n", copy, fresh,
                msSince(t));
  }
  return 0;
}
