#include "app/demo.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include "engine/command_sequence.h"
#include "ops/basic_kernels.h"

namespace sdgen {

int runDemo(Context& ctx, bool verbose) {
  std::printf("sdgen --demo: engine self-check (kernel compile, GPU run, float64 CPU reference); images: sdgen -p PROMPT\n");
  std::printf("device: %s (%s, Vulkan %s)\n", ctx.info().name.c_str(), ctx.info().driverName.c_str(),
              ctx.info().apiVersionString().c_str());
  if (verbose) std::fputs(ctx.info().describe().c_str(), stdout);

  const uint32_t rows = 512, cols = 1024, n = rows * cols;
  std::vector<float> a(n), b(n);
  for (uint32_t i = 0; i < n; ++i) {
    a[i] = std::sin(0.001f * i);
    b[i] = std::cos(0.002f * i);
  }
  auto t0 = std::chrono::steady_clock::now();
  Allocation da = ctx.allocate(n * 4, "demo a"), db = ctx.allocate(n * 4, "demo b");
  Allocation dsum = ctx.allocate(n * 4, "demo a+b"), drows = ctx.allocate(rows * 4, "demo row sums");
  ctx.upload(da, 0, {reinterpret_cast<const uint8_t*>(a.data()), n * 4});
  ctx.upload(db, 0, {reinterpret_cast<const uint8_t*>(b.data()), n * 4});

  CommandSequence seq(ctx, {.timestamps = ctx.info().timestampsSupported});
  ops::add(ctx, seq, da, db, dsum, DType::F32, n);
  ops::rowSum(ctx, seq, dsum, drows, DType::F32, rows, cols);
  seq.run();
  std::vector<float> sums(rows);
  ctx.download(drows, 0, {reinterpret_cast<uint8_t*>(sums.data()), rows * 4});
  auto t1 = std::chrono::steady_clock::now();

  double maxRel = 0;
  for (uint32_t r = 0; r < rows; ++r) {
    double ref = 0;
    for (uint32_t c = 0; c < cols; ++c) ref += double(a[r * cols + c]) + double(b[r * cols + c]);
    maxRel = std::max(maxRel, std::abs(sums[r] - ref) / std::max(1.0, std::abs(ref)));
  }
  std::printf("(a + b) then row sums over %u x %u on the GPU: max relative error vs float64 CPU = %.2e\n", rows, cols,
              maxRel);
  for (auto& t : seq.timings()) std::printf("  %-16s %10.1f us (GPU timestamp)\n", t.label.c_str(), t.ns / 1e3);
  std::printf("kernels: %llu compiled, %llu from cache; wall %.1f ms\n",
              static_cast<unsigned long long>(ctx.compiler().stats().compiled.load()),
              static_cast<unsigned long long>(ctx.compiler().stats().cacheHits.load()),
              std::chrono::duration<double, std::milli>(t1 - t0).count());
  if (maxRel > 1e-4) {
    std::fprintf(stderr, "sdgen: demo result does not match the CPU reference\n");
    return 1;
  }
  std::printf("ok\n");
  return 0;
}

}  // namespace sdgen
