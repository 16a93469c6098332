// The decode's host post-process (models/pipeline/decoded_image.h) on a 512x512 RGB image as the full VAE decode
// returns it (a view of host memory): postprocessDecoded into fresh vectors (page faults), into vectors already
// touched, the bytes alone (what the CLI, the server and the GUI ask for), and, for comparison, the copy into a
// fresh vector that the decode made before session 19. No GPU; run it on the machine whose CPU is in question.
//   postprocess_bench [ROUNDS]
#include <chrono>
#include <cstdio>
#include <cstdlib>
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
    std::vector<float> copied(mapped.begin(), mapped.end());
    const double copy = msSince(t);
    t = std::chrono::steady_clock::now();
    std::vector<float> pixels;
    std::vector<uint8_t> rgb;
    postprocessDecoded(mapped, &pixels, rgb);
    const double fresh = msSince(t);
    t = std::chrono::steady_clock::now();
    postprocessDecoded(mapped, &reused, reusedRgb);
    const double reuse = msSince(t);
    t = std::chrono::steady_clock::now();
    std::vector<uint8_t> bytes;
    postprocessDecoded(mapped, nullptr, bytes);
    std::printf("post-process %.3f ms (fresh vectors), %.3f ms (vectors reused), %.3f ms (bytes only, fresh); a copy "
                "into a fresh vector %.3f ms\n", fresh, reuse, msSince(t), copy);
  }
  return 0;
}
