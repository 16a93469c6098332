// Flash attention kernels timed back to back on one shape (interleaved rounds, GPU timestamps):
//   attention_bench BH Lq Lk D rounds [variant...] [--causal] [--reps N] [--json FILE]
// Each round submits `reps` (default 10) copies of the attention back to back; every dispatch is one sample.
// variant: "fp32" (shaders/attention/flash.slang, the default choice of its tile), "coop" (the tensor-core
// kernel, default tile) or "coop:BKV,RT,NSG[,2]" (forced blocks: key rows, 16-row tiles per subgroup,
// subgroups; 2: double-buffered K/V), "cm2:BKV,RT,NSG[,P]" (the accumulator-softmax kernel, flash_coop2.slang;
// P 0 / 1 forces the register prefetch of the next key block off / on, -1 leaves it to the rule; H 1-3 accumulates the
// scores (1), each block's P V (2) or both (3) in fp16: "cm2:32,1,8,-1,3");
// a "/expr" suffix makes the tensor-core kernel read q, k, v through expressions instead of raw fp16 rows.
// Default variants: fp32 coop. Q, K, V and the outputs are fp16 [1, L, BH, D] with N(0, 1) data. Prints one
// line per variant: median, p10, p90 ms and TFLOP/s (4 BH Lq Lk D per launch), and each variant's largest
// difference from the first one's output, relative to the largest magnitude of the first's.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/gpu_warmup.h"
#include "engine/context.h"
#include "engine/error.h"
#include "engine/tensor_io.h"
#include "graph/expr.h"
#include "ops/attention.h"

using namespace sdgen;

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc), variants;
  std::string jsonPath;
  int reps = 10;
  bool causal = false;
  std::vector<std::string> positional;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--json" && i + 1 < args.size()) jsonPath = args[++i];
    else if (args[i] == "--reps" && i + 1 < args.size()) reps = std::max(1, std::atoi(args[++i].c_str()));
    else if (args[i] == "--causal") causal = true;
    else positional.push_back(args[i]);
  }
  if (positional.size() < 5) {
    std::fprintf(stderr, "usage: attention_bench BH Lq Lk D rounds [fp32|coop|coop:BKV,RT,NSG ...] [--causal] "
                         "[--reps N] [--json FILE]\n");
    return 2;
  }
  const int64_t BH = std::atoll(positional[0].c_str()), Lq = std::atoll(positional[1].c_str()),
                Lk = std::atoll(positional[2].c_str()), D = std::atoll(positional[3].c_str());
  const int rounds = std::max(1, std::atoi(positional[4].c_str()));
  variants.assign(positional.begin() + 5, positional.end());
  if (variants.empty()) variants = {"fp32", "coop"};
  try {
    Context ctx;
    std::mt19937 rng(1);
    std::normal_distribution<float> nd;
    auto randomTensor = [&](int64_t L, const char* what) {
      std::vector<float> x(size_t(L * BH * D));
      for (auto& v : x) v = nd(rng);
      return uploadFloats(ctx, x, DType::F16, what);
    };
    Allocation qm = randomTensor(Lq, "q"), km = randomTensor(Lk, "k"), vm = randomTensor(Lk, "v");
    const graph::Shape qs{1, Lq, BH, D}, ks{1, Lk, BH, D};
    std::vector<Allocation> outs;
    std::vector<std::unique_ptr<CommandSequence>> seqs;
    std::vector<std::string> tiles, kept;
    for (const std::string& variant : variants) try {
      ops::AttentionOptions o;
      o.causal = causal;
      o.label = variant;
      // "/expr": the tensor-core kernel reads q, k and v through their expressions, not as raw fp16 rows.
      const bool exprLoads = variant.size() > 5 && variant.compare(variant.size() - 5, 5, "/expr") == 0;
      const std::string v = exprLoads ? variant.substr(0, variant.size() - 5) : variant;
      o.allowRawInputs = !exprLoads;
      if (v == "fp32") {
        o.coop = false;
      } else if (v == "coop") {
        o.coop = true;
      } else if (v.rfind("coop:", 0) == 0) {
        ops::FlashCoopBlocks b;
        int stages = 1;
        if (std::sscanf(v.c_str() + 5, "%d,%d,%d,%d", &b.bkv, &b.rowTiles, &b.subgroups, &stages) < 3)
          throw Error("variant '" + v + "': expected coop:BKV,RT,NSG[,STAGES]");
        b.doubleBuffer = stages == 2;
        o.coopBlocks = b;
      } else if (v.rfind("cm2:", 0) == 0) {
        ops::FlashCoopBlocks b;
        if (std::sscanf(v.c_str() + 4, "%d,%d,%d,%d,%d", &b.bkv, &b.rowTiles, &b.subgroups, &b.prefetch,
                        &b.halfAccumulate) < 3 ||
            b.prefetch < -1 || b.prefetch > 1 || b.halfAccumulate < 0 || b.halfAccumulate > 3)
          throw Error("variant '" + v + "': expected cm2:BKV,RT,NSG[,PREFETCH -1|0|1[,HALF 0-3]]");
        b.accumulatorSoftmax = true;
        o.coopBlocks = b;
      } else {
        throw Error("unknown variant '" + v + "' (fp32, coop, coop:BKV,RT,NSG, cm2:BKV,RT,NSG[,PREFETCH[,HALF]])");
      }
      outs.push_back(ctx.allocate(size_t(Lq * BH * D * 2), "out " + v));
      auto seq = std::make_unique<CommandSequence>(ctx, SequenceOptions{.timestamps = true});
      ops::AttentionInfo info;
      for (int r = 0; r < reps; ++r)  // back to back in one submission: the GPU stays busy, as in a step
        info = ops::attention(ctx, *seq, graph::buffer(graph::view(qm, DType::F16, qs)),
                              graph::buffer(graph::view(km, DType::F16, ks)),
                              graph::buffer(graph::view(vm, DType::F16, ks)),
                              graph::bufferSink(graph::view(outs.back(), DType::F16, qs)), o);
      tiles.push_back(info.coopMatrix ? info.coopTile.describe() + (info.rawInputs ? ", raw fp16 rows" : "")
                      : info.lanesRowsPerLane ? "lanes kernel" : info.tile.describe());
      seq->run();  // warm-up (compiles)
      seqs.push_back(std::move(seq));
      kept.push_back(variant);
    } catch (const Error& e) {  // a tile the device cannot run: say so, time the others
      if (outs.size() > kept.size()) outs.pop_back();
      std::printf("%-16s skipped: %s\n", variant.c_str(), e.what());
    }
    variants = kept;
    if (variants.empty()) throw Error("no variant can run");
    bench::warmUpGpu(seqs);  // at least a second of this shape's work before timing
    std::vector<std::vector<double>> ms(variants.size());
    for (int r = 0; r < rounds; ++r)
      for (size_t i = 0; i < variants.size(); ++i) {
        seqs[i]->run();
        for (auto& tm : seqs[i]->timings()) ms[i].push_back(tm.ns / 1e6);  // one per dispatch
      }
    // Differences from the first variant's output.
    std::vector<float> first = downloadFloats(ctx, outs[0], size_t(Lq * BH * D), DType::F16);
    double scale = 0;
    for (float x : first) scale = std::max(scale, double(std::abs(x)));
    const double flops = 4.0 * double(BH) * double(Lq) * double(Lk) * double(D) * (causal ? 0.5 : 1.0);
    std::string json = "[";
    for (size_t i = 0; i < variants.size(); ++i) {
      std::vector<float> got = downloadFloats(ctx, outs[i], size_t(Lq * BH * D), DType::F16);
      double diff = 0;
      for (size_t j = 0; j < got.size(); ++j) diff = std::max(diff, double(std::abs(got[j] - first[j])));
      const double rel = std::isnan(diff) ? NAN : diff / std::max(scale, 1e-30);
      std::sort(ms[i].begin(), ms[i].end());
      auto pct = [&](double p) { return ms[i][std::min(ms[i].size() - 1, size_t(p * double(ms[i].size())))]; };
      const double med = pct(0.5), p10 = pct(0.1), p90 = pct(0.9);
      std::printf("%-16s BH %lld Lq %lld Lk %lld D %lld%s: median %8.4f ms (p10 %8.4f, p90 %8.4f) %7.2f TFLOP/s  "
                  "max rel diff vs %s %.2e  [%s]\n",
                  variants[i].c_str(), (long long)BH, (long long)Lq, (long long)Lk, (long long)D,
                  causal ? " causal" : "", med, p10, p90, flops / med / 1e9, variants[0].c_str(), rel,
                  tiles[i].c_str());
      char buf[1024];
      std::snprintf(buf, sizeof buf,
                    "%s{\"variant\": \"%s\", \"BH\": %lld, \"Lq\": %lld, \"Lk\": %lld, \"D\": %lld, \"causal\": %s, "
                    "\"median_ms\": %.5f, \"p10_ms\": %.5f, \"p90_ms\": %.5f, \"tflops\": %.3f, "
                    "\"max_rel_diff\": %.3e, \"tile\": \"%s\"}",
                    i ? ", " : "", variants[i].c_str(), (long long)BH, (long long)Lq, (long long)Lk, (long long)D,
                    causal ? "true" : "false", med, p10, p90, flops / med / 1e9, std::isnan(rel) ? -1.0 : rel,
                    tiles[i].c_str());
      json += buf;
    }
    json += "]\n";
    if (!jsonPath.empty()) std::ofstream(jsonPath) << json;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attention_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
