// Workgroup-scope cooperative-matrix GEMM (shaders/linear/gemm_wg.slang, VK_NV_cooperative_matrix2) against the
// engine's own linear kernel (ops::linear, "auto") on the same operands, timed with GPU timestamps.
//   wg_gemm_bench [--rounds N] [--reps N] SHAPE... -- VARIANT...
// SHAPE: M,K,N (A fp16 [M][K] times the packed weights of an [N][K] linear, no bias). VARIANT: BM,BN,BK,THREADS
// [,UNROLL][,f32][,O] (fp16 output unless f32; O: through spirv-opt). Each variant's output is checked against a float64 product of the
// fp16-rounded operands at 4096 sampled entries (max |diff| / max |ref|), and against the engine's output.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench/gpu_warmup.h"
#include "bench/timing_stats.h"
#include "engine/context.h"
#include "engine/dtype.h"
#include "engine/error.h"
#include "engine/param_block.h"
#include "engine/tensor_io.h"
#include "graph/expr.h"
#include "ops/linear.h"
#include "ops/linear_weights.h"

using namespace sdgen;

namespace {

struct Variant {
  int bm = 0, bn = 0, bk = 0, threads = 0, unroll = 1;
  bool f32 = false, optimize = false;
  std::string text;
};

Variant parseVariant(const std::string& v) {
  Variant r;
  r.text = v;
  if (std::sscanf(v.c_str(), "%d,%d,%d,%d", &r.bm, &r.bn, &r.bk, &r.threads) != 4)
    throw Error("wg_gemm_bench: variant '" + v + "' is not BM,BN,BK,THREADS[,UNROLL][,f32][,O]");
  std::istringstream in(v);
  std::string part;
  for (int i = 0; std::getline(in, part, ','); ++i) {
    if (part == "f32") r.f32 = true;
    else if (part == "O") r.optimize = true;
    else if (i == 4) r.unroll = std::max(1, std::atoi(part.c_str()));
  }
  return r;
}

std::vector<float> randomHalfValues(size_t n, float scale, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = halfToFloat(floatToHalf(d(rng)));  // what the GPU multiplies
  return v;
}

using bench::Stats;
using bench::stats;

}  // namespace

int main(int argc, char** argv) {
  int rounds = 20, reps = 5;
  std::vector<std::string> shapes, variantTexts;
  bool afterDash = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--rounds" && i + 1 < argc) rounds = std::atoi(argv[++i]);
    else if (a == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (a == "--") afterDash = true;
    else (afterDash ? variantTexts : shapes).push_back(a);
  }
  if (shapes.empty() || variantTexts.empty() || rounds < 1 || reps < 1) {
    std::fprintf(stderr, "usage: wg_gemm_bench [--rounds N] [--reps N] M,K,N... -- BM,BN,BK,THREADS[,UNROLL][,f32][,O]...\n");
    return 2;
  }
  setenv("SDGEN_COOP_WORKGROUP_SCOPE", "1", 0);  // the device features these kernels need (engine/device.cpp)
  try {
    Context ctx;
    const DeviceInfo& info = ctx.info();
    std::printf("%s", info.describe().c_str());
    std::printf("%-18s %-22s %9s %9s %9s %8s %10s %10s\n", "shape M,K,N", "variant", "median", "p10", "p90",
                "TFLOP/s", "vs f64", "vs engine");
    for (const std::string& shape : shapes) {
      int64_t M = 0, K = 0, N = 0;
      if (std::sscanf(shape.c_str(), "%lld,%lld,%lld", (long long*)&M, (long long*)&K, (long long*)&N) != 3 ||
          M <= 0 || K <= 0 || N <= 0)
        throw Error("wg_gemm_bench: shape '" + shape + "' is not M,K,N");
      std::vector<float> av = randomHalfValues(size_t(M * K), 1.f, 1),
                         wv = randomHalfValues(size_t(N * K), 1.f / std::sqrt(float(K)), 2);
      Allocation a = uploadFloats(ctx, av, DType::F16, "A");
      ops::LinearWeights w(ctx, wv, N, K, {}, DType::F16, "B");
      // float64 reference at sampled entries
      std::mt19937 rng(7);
      std::vector<std::pair<int64_t, int64_t>> at(4096);
      std::vector<double> ref(at.size());
      double refScale = 0;
      for (size_t s = 0; s < at.size(); ++s) {
        at[s] = {int64_t(rng() % uint64_t(M)), int64_t(rng() % uint64_t(N))};
        double sum = 0;
        for (int64_t k = 0; k < K; ++k) sum += double(av[at[s].first * K + k]) * double(wv[at[s].second * K + k]);
        ref[s] = sum;
        refScale = std::max(refScale, std::abs(sum));
      }
      std::vector<std::unique_ptr<CommandSequence>> seqs;
      std::vector<Allocation> outs;
      std::vector<std::string> names;
      std::vector<bool> halfOut;
      // the engine's linear (auto tile), fp16 out
      {
        outs.push_back(ctx.allocate(uint64_t(M * N * 2), "engine out"));
        auto seq = std::make_unique<CommandSequence>(ctx, SequenceOptions{.timestamps = true});
        graph::Expr x = graph::buffer(graph::view(a, DType::F16, {M, K}));
        graph::Sink sink = graph::bufferSink(graph::view(outs.back(), DType::F16, {M, N}));
        ops::GemmInfo gi;
        for (int r = 0; r < reps; ++r) gi = ops::linear(ctx, *seq, x, w, sink, ops::LinearOptions{.label = "engine"});
        names.push_back("engine: " + gi.kernel);
        halfOut.push_back(true);
        seq->run();
        seqs.push_back(std::move(seq));
      }
      for (const std::string& vt : variantTexts) {
        Variant v = parseVariant(vt);
        std::string why;
        if (!info.hasWorkgroupCoopMatrix(uint32_t(v.bm), uint32_t(v.bn), uint32_t(v.bk), "f32", uint32_t(v.threads)))
          why = "no workgroup-scope f16 -> f32 shape of this size and workgroup";
        else if (M % v.bm || N % v.bn || K % v.bk)
          why = "tiles not whole";
        else if (w.paddedOut() % 8 || K % 8 || N % 8)
          why = "rows not 16-byte multiples";
        if (!why.empty()) {
          std::printf("%-18s %-22s skipped: %s\n", shape.c_str(), vt.c_str(), why.c_str());
          continue;
        }
        outs.push_back(ctx.allocate(uint64_t(M * N * (v.f32 ? 4 : 2)), "wg out"));
        KernelSource src;
        src.generated = "import sdgen;\nimport linear.gemm_wg;\n[shader(\"compute\")]\n[numthreads(" +
                        std::to_string(v.threads) + ", 1, 1)]\nvoid main(uint3 group : SV_GroupID) {\n  gemmWgMain<" +
                        std::to_string(v.bm) + ", " + std::to_string(v.bn) + ", " + std::to_string(v.bk) + ", " +
                        std::to_string(v.unroll) + ", " + (v.f32 ? "0" : "1") + ">(group);\n}\n";
        src.capabilities = {"spvCooperativeMatrixKHR", "spvTensorAddressingNV", "spvCooperativeMatrixTensorAddressingNV"};
        if (!v.f32) src.capabilities.push_back("spvCooperativeMatrixConversionsNV");
        src.label = "wg " + vt;
        src.optimize = v.optimize;
        ParamBlock p;
        p.u32(uint32_t(M)).u32(uint32_t(N)).u32(uint32_t(K)).u32(0);
        p.address(a.address()).address(w.weightAddress()).address(outs.back().address());
        p.u32(uint32_t(K)).u32(uint32_t(w.paddedOut())).u32(uint32_t(N));
        auto seq = std::make_unique<CommandSequence>(ctx, SequenceOptions{.timestamps = true});
        try {
          for (int r = 0; r < reps; ++r)
            seq->dispatch(ctx.kernels().request(src), {uint32_t(N / v.bn), uint32_t(M / v.bm), 1}, p, {range(a)},
                          {range(outs.back())}, src.label);
          seq->run();
        } catch (const std::exception& e) {
          std::printf("%-18s %-22s failed: %s\n", shape.c_str(), vt.c_str(), e.what());
          outs.pop_back();
          continue;
        }
        names.push_back(vt);
        halfOut.push_back(!v.f32);
        seqs.push_back(std::move(seq));
      }
      bench::warmUpGpu(seqs);
      std::vector<std::vector<double>> ms(seqs.size());
      for (int r = 0; r < rounds; ++r)
        for (size_t i = 0; i < seqs.size(); ++i) {
          seqs[i]->run();
          auto t = seqs[i]->timings();
          const size_t per = t.size() / size_t(reps);
          for (int rep = 0; rep < reps; ++rep) {
            double sum = 0;
            for (size_t d = 0; d < per; ++d) sum += t[rep * per + d].ns / 1e6;
            ms[i].push_back(sum);
          }
        }
      std::vector<float> engine;
      for (size_t i = 0; i < seqs.size(); ++i) {
        std::vector<float> got = downloadFloats(ctx, outs[i], size_t(M * N), halfOut[i] ? DType::F16 : DType::F32);
        if (i == 0) engine = got;
        double d64 = 0, dEngine = 0, engineScale = 0;
        for (size_t s = 0; s < at.size(); ++s)
          d64 = std::max(d64, std::abs(double(got[at[s].first * N + at[s].second]) - ref[s]));
        for (size_t j = 0; j < got.size(); ++j) {
          if (!std::isfinite(got[j])) d64 = dEngine = INFINITY;
          dEngine = std::max(dEngine, double(std::abs(got[j] - engine[j])));
          engineScale = std::max(engineScale, double(std::abs(engine[j])));
        }
        Stats st = stats(ms[i]);
        std::printf("%-18s %-22s %9.4f %9.4f %9.4f %8.1f %10.2e %10.2e\n", shape.c_str(), names[i].c_str(),
                    st.median, st.p10, st.p90, 2.0 * M * N * K / (st.median * 1e-3) / 1e12,
                    d64 / std::max(refScale, 1e-30), dEngine / std::max(engineScale, 1e-30));
      }
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wg_gemm_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
