// Linear layers of an SD 1.5 UNet step on the GEMM kernels, timed with GPU timestamps. Neutral: every variant
// is forced through LinearOptions::tile (or "auto", the engine's own choice), no heuristic lives here.
//   linear_bench SHAPES.json [--rounds N] [--reps N] [--warmup N] [--only SUBSTRING] [--json FILE] [--geglu MODE]
//                [--cold] [--interleave] VARIANT...
// VARIANT: "auto" (or "auto,X": with the shape words compiled in, SDGEN_GEMM_FIXED_SHAPE), "tiled" (fp32 CUDA-core
// kernel), "coop:BM,BN,BK,WM,WN" or "coop:BM,BN,BK,WM,WN,h" (fp16 accumulation within a slice), ",H" fp16
// accumulators throughout, ",H,F1024" fp16 accumulators added into an fp16 running total every 1024 elements of K,
// ",d" double-buffered shared slices, ",sP" split-K in P parts, ",tCxP" the tail split (the column tiles from column
// C in P K parts, the others whole-K, one launch), ",O" compiled through spirv-opt, ",X" the shape's header words
// compiled in (GemmTile::fixedShape); a trailing ",n" stages a layer norm instead of reading it in the GEMM
// (LinearOptions::fuseNorm off; also "auto,n"); a trailing ",e" keeps a computed prologue inside the GEMM instead of staging
// it (no scratch memory given). Each shape runs with fp16 activations and fp16 weights, its prologue (layer
// norm from statistics, GEGLU gate) and epilogue (bias, residual add) as the UNet records them, with the
// engine's scratch memory for staging. One submission holds `reps` copies of the layer back to back (the GPU
// stays busy, as in a recorded step); the time of a layer is the sum of its dispatches (staging included),
// medians, p10, p90 over rounds x reps after warm-up, rounds interleaved across variants. Every variant's
// output is compared with the first variant's (max |diff| / max |ref|). --geglu auto|fused|unfused: GEGLU
// as the engine runs it on this device (auto), or forced either way (the rows marked geglu_proj, and the
// rows whose prologue is the gate).
// --cold: every copy of the layer in a submission reads its own copy of the weights, and there are enough copies
// (at least `reps`, more for small layers, up to 64) that they span >= 160 MB, three times the H100/H200's L2: each
// GEMM reads its weights from memory, as in a step, where a layer's weights are read once; without it the
// repeated layer finds them in L2. (Session 35 built it to explain why the 256 x 256 fp16-accumulator tile gained
// 3.0 ms per SDXL step here and 1.0 ms in the step: it does not, the cold bench gains 2.9 ms; small layers read
// ~5-10 % slower cold.)
// --interleave: after every layer copy, an element-wise launch of another kernel (GELU over 16 M fp16 values, 32 MB
// read and written; not timed), so that the layer's kernel follows other work, as in a step, instead of itself.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/gpu_warmup.h"
#include "bench/scoped_knob.h"
#include "bench/timing_stats.h"
#include "engine/context.h"
#include "engine/error.h"
#include "engine/tensor_io.h"
#include "graph/expr.h"
#include "ops/conv2d_scratch.h"
#include "ops/elementwise.h"
#include "ops/linear.h"
#include "ops/linear_geglu.h"
#include "ops/linear_gemm.h"
#include "ops/norm.h"

using namespace sdgen;
using json = nlohmann::json;

namespace {

std::optional<ops::GemmTile> parseVariant(std::string v) {
  if (v.size() > 2 && v.compare(v.size() - 2, 2, ",n") == 0) v.resize(v.size() - 2);  // see main: fuseNorm off
  if (v == "auto" || v == "auto,X") return std::nullopt;  // ",X": SDGEN_GEMM_FIXED_SHAPE while it records (main)
  if (v == "tiled") return ops::GemmTile{};
  int bm, bn, bk, wm, wn;
  if (v.rfind("coop:", 0) == 0 && std::sscanf(v.c_str() + 5, "%d,%d,%d,%d,%d", &bm, &bn, &bk, &wm, &wn) == 5) {
    const size_t s = v.find(",s");  // split-K parts
    const int split = s == std::string::npos ? 1 : std::atoi(v.c_str() + s + 2);
    ops::GemmTile t = ops::GemmTile::coopTile(bm, bn, bk, wm, wn, v.find(",h") != std::string::npos, split);
    t.f16Accumulators = v.find(",H") != std::string::npos;
    t.doubleBuffer = v.find(",d") != std::string::npos;
    if (const size_t f = v.find(",F"); f != std::string::npos) t.flushK = std::atoi(v.c_str() + f + 2);
    t.spirvOpt = v.find(",O") != std::string::npos;
    t.fixedShape = v.find(",X") != std::string::npos;
    if (const size_t c = v.find(",t"); c != std::string::npos) {
      int start = 0, parts = 0;
      if (std::sscanf(v.c_str() + c + 2, "%dx%d", &start, &parts) != 2)
        throw Error("linear_bench: variant '" + v + "': the tail split is ,tSTARTxPARTS (e.g. ,t8448x2)");
      t.tailStart = start;
      t.tailParts = parts;
    }
    return t;
  }
  throw Error("linear_bench: unknown variant '" + v + "' (auto, tiled, coop:BM,BN,BK,WM,WN[,h][,H][,FFLUSH_K][,d][,sPARTS][,tSTARTxPARTS][,O][,X])");
}

std::vector<float> randomValues(size_t n, float scale, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

using bench::Stats;
using bench::stats;

}  // namespace

int main(int argc, char** argv) {
  std::string shapesPath, only, jsonPath, gegluMode = "auto";
  int rounds = 10, reps = 10, warmup = 3;
  bool cold = false, interleave = false;
  std::vector<std::string> variants;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw Error("linear_bench: " + a + " needs a value");
      return argv[++i];
    };
    try {
      if (a == "--rounds") rounds = std::stoi(next());
      else if (a == "--warmup") warmup = std::stoi(next());
      else if (a == "--reps") reps = std::stoi(next());
      else if (a == "--only") only = next();
      else if (a == "--json") jsonPath = next();
      else if (a == "--geglu") gegluMode = next();
      else if (a == "--cold") cold = true;
      else if (a == "--interleave") interleave = true;
      else if (shapesPath.empty()) shapesPath = a;
      else variants.push_back(a);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
      return 2;
    }
  }
  if (shapesPath.empty() || variants.empty() || rounds < 1 || reps < 1) {
    std::fprintf(stderr, "usage: linear_bench SHAPES.json [--rounds N] [--warmup N] [--only S] [--json F] [--geglu auto|fused|unfused] [--cold] [--interleave] VARIANT...\n");
    return 2;
  }
  try {
    std::ifstream in(shapesPath);
    if (!in) throw Error("linear_bench: cannot read " + shapesPath);
    json shapes = json::parse(in);
    Context ctx;
    ops::Conv2dScratch scratch(ctx, "linear_bench scratch");
    const bool gegluEpilogue = gegluMode == "fused" || (gegluMode == "auto" && ops::gegluEpilogueChosen(ctx.info(), DType::F16));
    json out = {{"device", ctx.info().name}, {"rows", json::array()}};
    // --interleave's other work: GELU of a 16 M-element fp16 tensor into another (its own buffers, never timed).
    constexpr int64_t kInterleaveElements = int64_t(1) << 24;
    const std::string interleaveLabel = "interleaved gelu";
    std::optional<Allocation> interleaveIn, interleaveOut;
    if (interleave) {
      interleaveIn = ctx.allocate(uint64_t(kInterleaveElements) * 2, "interleave in");
      interleaveOut = ctx.allocate(uint64_t(kInterleaveElements) * 2, "interleave out");
    }
    std::printf("%-18s %6s %6s %6s  %-34s %9s %9s %9s %8s %9s\n", "shape", "M", "K", "N", "variant", "median",
                "p10", "p90", "TFLOP/s", "max diff");
    for (const json& s : shapes.at("gemm")) {
      const std::string name = s.at("name");
      if (!only.empty() && name.find(only) == std::string::npos) continue;
      const int64_t M = s.at("M"), K = s.at("K"), N = s.at("N");
      const std::string prologue = s.at("prologue");
      const bool residual = s.at("residual"), bias = s.at("bias");
      // GEGLU as the engine runs it (ops/linear_geglu.h): where the tensor-core epilogue computes the gate, the
      // projection (geglu_proj) writes [M, N / 2] and the next layer reads that raw; else the projection writes
      // [M, N] and the next layer's prologue gates it.
      const bool gegluProj = gegluEpilogue && s.value("geglu_proj", false);
      const bool gegluIn = prologue == "geglu" && !gegluEpilogue;
      const int64_t NO = gegluProj ? N / 2 : N;  // output columns
      const int64_t KA = gegluIn ? 2 * K : K;     // GEGLU reads [M, 2K]
      Allocation x = uploadFloats(ctx, randomValues(M * KA, 1.f, 1), DType::F16, "x");
      Allocation res = uploadFloats(ctx, randomValues(M * NO, 1.f, 2), DType::F16, "residual");
      std::vector<float> st(M * 2);  // layer-norm statistics as the stats kernel leaves them: sum, sum of squares
      for (int64_t r = 0; r < M; ++r) { st[2 * r] = 0.1f * K; st[2 * r + 1] = 1.2f * K; }
      Allocation stm = uploadFloats(ctx, st, DType::F32, "stats");
      Allocation gamma = uploadFloats(ctx, randomValues(K, 1.f, 3), DType::F32, "gamma");
      Allocation beta = uploadFloats(ctx, randomValues(K, 0.1f, 4), DType::F32, "beta");
      std::vector<float> wv = randomValues(N * K, 1.f / std::sqrt(float(K)), 5),
                         bv = bias ? randomValues(N, 0.1f, 6) : std::vector<float>{};
      if (gegluProj) ops::interleaveGegluRows(wv, bv, N / 2, K);
      // One copy of the weights per layer copy in a submission with --cold (see the top), else one for all.
      constexpr uint64_t kColdBytes = 160ull << 20;
      const uint64_t weightBytes = uint64_t(N) * uint64_t(K) * 2;
      const int shapeReps = cold ? int(std::min<uint64_t>(64, std::max<uint64_t>(uint64_t(reps),
                                                                          (kColdBytes + weightBytes - 1) / weightBytes)))
                                 : reps;
      std::vector<std::unique_ptr<ops::LinearWeights>> ws;
      for (int c = 0; c < (cold ? shapeReps : 1); ++c)
        ws.push_back(std::make_unique<ops::LinearWeights>(ctx, wv, N, K, bv, DType::F16, name));
      graph::Expr xa = graph::buffer(graph::view(x, DType::F16, {M, KA}));
      graph::Expr a = xa;
      if (prologue == "layernorm")
        a = ops::layerNormFromStats(xa, graph::view(stm, DType::F32, {M, 2}), 1e-5f,
                                    graph::buffer(graph::view(gamma, DType::F32, {K})),
                                    graph::buffer(graph::view(beta, DType::F32, {K})));
      else if (gegluIn)
        a = graph::sliceLastDim(xa, 0, K) * graph::gelu(graph::sliceLastDim(xa, K, K));
      std::vector<Allocation> outs;
      std::vector<std::unique_ptr<CommandSequence>> seqs;
      std::vector<std::string> kinds;
      for (const std::string& v : variants) {
        outs.push_back(ctx.allocate(uint64_t(M * NO * 2), "y"));
        graph::Sink sink = graph::bufferSink(graph::view(outs.back(), DType::F16, {M, NO}));
        if (residual) sink = graph::residualAdd(sink, graph::buffer(graph::view(res, DType::F16, {M, NO})));
        auto seq = std::make_unique<CommandSequence>(ctx, SequenceOptions{.timestamps = true});
        const bool fused = v.size() > 2 && v.compare(v.size() - 2, 2, ",e") == 0;
        ops::LinearOptions o{.tile = parseVariant(v), .scratch = fused ? nullptr : &scratch, .gegluOutput = gegluProj,
                             .fuseNorm = v.size() < 2 || v.compare(v.size() - 2, 2, ",n") != 0, .label = name};
        ops::GemmInfo info;
        try {
          // "auto,X": the engine's own choice with the shape words compiled in (its knob, read when a GEMM records).
          const bool fixedAuto = v.rfind("auto", 0) == 0 && v.find(",X") != std::string::npos;
          bench::ScopedKnob knob("SDGEN_GEMM_FIXED_SHAPE", "1", fixedAuto);
          for (int r = 0; r < shapeReps; ++r) {
            info = ops::linear(ctx, *seq, a, *ws[size_t(r) % ws.size()], sink, o);
            if (interleave)
              ops::elementwise(ctx, *seq, graph::gelu(graph::buffer(graph::view(*interleaveIn, DType::F16, {kInterleaveElements}))),
                               graph::bufferSink(graph::view(*interleaveOut, DType::F16, {kInterleaveElements})),
                               {.label = interleaveLabel});
          }
        } catch (const std::exception& e) {
          std::printf("%-18s %6lld %6lld %6lld  %-34s skipped: %s\n", name.c_str(), (long long)M, (long long)K,
                      (long long)N, v.c_str(), e.what());
          seqs.push_back(nullptr);
          kinds.push_back("");
          continue;
        }
        kinds.push_back((v.rfind("auto", 0) == 0 ? "auto: " : "") + info.kernel + (info.stagedInput ? " staged" : "") +
                        (info.rawA ? " raw" : ""));
        for (int r = 0; r < warmup; ++r) seq->run();
        seqs.push_back(std::move(seq));
      }
      bench::warmUpGpu(seqs);  // at least a second of this shape's work before timing
      std::vector<std::vector<double>> ms(variants.size());
      for (int r = 0; r < rounds; ++r)
        for (size_t i = 0; i < variants.size(); ++i) {
          if (!seqs[i]) continue;
          seqs[i]->run();
          auto tms = seqs[i]->timings();
          std::erase_if(tms, [&](const CommandTiming& t) { return t.label.rfind(interleaveLabel, 0) == 0; });
          const size_t per = tms.size() / size_t(shapeReps);  // dispatches per layer (staging + GEMM)
          for (int rep = 0; rep < shapeReps; ++rep) {
            double t = 0;
            for (size_t d = 0; d < per; ++d) t += tms[rep * per + d].ns / 1e6;
            ms[i].push_back(t);
          }
        }
      std::vector<float> ref;
      for (size_t i = 0; i < variants.size(); ++i) {
        if (!seqs[i]) continue;
        std::vector<float> got = downloadFloats(ctx, outs[i], size_t(M * NO), DType::F16);
        double diff = 0, scale = 0;
        if (ref.empty()) ref = got;
        for (size_t j = 0; j < got.size(); ++j) {
          diff = std::max(diff, double(std::abs(got[j] - ref[j])));
          scale = std::max(scale, double(std::abs(ref[j])));
        }
        for (float g : got)
          if (!std::isfinite(g)) diff = INFINITY;
        Stats st2 = stats(ms[i]);
        const double tflops = 2.0 * M * N * K / (st2.median * 1e-3) / 1e12;
        std::printf("%-18s %6lld %6lld %6lld  %-34s %9.4f %9.4f %9.4f %8.1f %9.2e\n", name.c_str(), (long long)M,
                    (long long)K, (long long)N, kinds[i].c_str(), st2.median, st2.p10, st2.p90, tflops,
                    diff / std::max(scale, 1e-30));
        out["rows"].push_back({{"name", name}, {"M", M}, {"K", K}, {"N", N}, {"variant", variants[i]},
                               {"kernel", kinds[i]}, {"ms", st2.median}, {"p10_ms", st2.p10},
                               {"p90_ms", st2.p90}, {"tflops", tflops}, {"samples", ms[i].size()},
                               {"max_rel_diff_vs_first", diff / std::max(scale, 1e-30)},
                               {"prologue", gegluIn || prologue != "geglu" ? prologue : "none (gated upstream)"},
                               {"geglu_epilogue", gegluProj}, {"residual", residual}, {"bias", bias},
                               {"per_step", s.value("per_step", 0)}, {"cold_weights", cold},
                               {"interleaved", interleave}});
      }
      std::fflush(stdout);
    }
    if (!jsonPath.empty()) std::ofstream(jsonPath) << out.dump(1) << "\n";
  } catch (const std::exception& e) {
    std::fprintf(stderr, "linear_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
