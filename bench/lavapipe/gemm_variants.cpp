// Linear-layer GEMM variants on one shape, timed back to back (interleaved rounds, GPU timestamps, medians):
//   gemm_variants M K N rounds variant...   (variant: "tiled", "lanes:L,R,G" = lanes, rows per lane, 32-column groups,
//   or "coop:BM,BN,BK" = the cooperative-matrix kernel, on devices that have it)
// Prints ms and GFLOP/s per variant. Variants are forced through LinearOptions::tile.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "engine/context.h"
#include "engine/tensor_io.h"
#include "graph/expr.h"
#include "ops/linear.h"
#include "ops/linear_gemm.h"

using namespace sdgen;

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: gemm_variants M K N rounds variant...\n");
    return 2;
  }
  const int64_t M = std::atoll(argv[1]), K = std::atoll(argv[2]), N = std::atoll(argv[3]);
  const int rounds = std::atoi(argv[4]);
  std::vector<std::string> variants(argv + 5, argv + argc);
  try {
    Context ctx;
    std::mt19937 rng(1);
    std::normal_distribution<float> d;
    std::vector<float> x(M * K), w(N * K), b(N);
    for (auto& v : x) v = d(rng);
    for (auto& v : w) v = d(rng);
    for (auto& v : b) v = d(rng);
    Allocation xm = uploadFloats(ctx, x, DType::F32, "x"), ym = ctx.allocate(M * N * 4, "y");
    // The tensor-core kernel reads fp16 weights only.
    const bool anyCoop = std::any_of(variants.begin(), variants.end(), [](auto& v) { return v.rfind("coop:", 0) == 0; });
    ops::LinearWeights lw(ctx, w, N, K, b, anyCoop ? DType::F16 : DType::F32);
    std::vector<std::vector<double>> ms(variants.size());
    std::vector<std::unique_ptr<CommandSequence>> seqs;
    for (auto& v : variants) {
      auto seq = std::make_unique<CommandSequence>(ctx, SequenceOptions{.timestamps = true});
      ops::LinearOptions o;
      if (v.rfind("lanes:", 0) == 0) {
        int l, r, t;
        std::sscanf(v.c_str() + 6, "%d,%d,%d", &l, &r, &t);
        o.tile = ops::GemmTile::lanesTile(l, r, t);
      } else if (v.rfind("coop:", 0) == 0) {
        int bm, bn, bk;
        std::sscanf(v.c_str() + 5, "%d,%d,%d", &bm, &bn, &bk);
        o.tile = ops::GemmTile::coopTile(bm, bn, bk, 2, 2);
      } else {
        o.tile = ops::GemmTile{};
      }
      o.label = v;
      auto info = ops::linear(ctx, *seq, graph::buffer(graph::view(xm, DType::F32, {M, K})), lw,
                              graph::bufferSink(graph::view(ym, DType::F32, {M, N})), o);
      seq->run();  // warm-up (compiles)
      seqs.push_back(std::move(seq));
    }
    for (int r = 0; r < rounds; ++r)
      for (size_t i = 0; i < variants.size(); ++i) {
        seqs[i]->run();
        double t = 0;
        for (auto& tm : seqs[i]->timings()) t += tm.ns / 1e6;
        ms[i].push_back(t);
      }
    for (size_t i = 0; i < variants.size(); ++i) {
      std::sort(ms[i].begin(), ms[i].end());
      double med = ms[i][ms[i].size() / 2];
      std::printf("%-20s M %lld K %lld N %lld: median %8.3f ms (min %8.3f)  %6.2f GFLOP/s\n", variants[i].c_str(),
                  (long long)M, (long long)K, (long long)N, med, ms[i][0], 2.0 * M * N * K / med / 1e6);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gemm_variants: %s\n", e.what());
    return 1;
  }
  return 0;
}
