// One batch-2 UNet step of a model (default: the built-in sdgen-tiny) at its default latent size, as the
// text-to-image pipeline records it (classifier-free guidance doubles the batch), timed per dispatch with GPU
// timestamps. Prints the median over the repeats of the total, per block (label prefix) and the heaviest labels.
//   unet_step_profile [model] [repeats] [top]
#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "engine/context.h"
#include "engine/tensor_io.h"
#include "graph/executor.h"
#include "models/formats/model_files.h"
#include "models/networks/unet.h"
#include "ops/conv2d_scratch.h"

using namespace sdgen;

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

int main(int argc, char** argv) {
  const std::string path = argc > 1 && argv[1][0] ? argv[1] : std::string(SDGEN_SOURCE_DIR) + "/models/builtin/sdgen-tiny";
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 5;
  const int top = argc > 3 ? std::atoi(argv[3]) : 25;
  try {
    Context ctx;
    models::ModelFiles m = models::openModel(path);
    nn::ParameterStore params(ctx, DType::F32);
    networks::UNet unet(params, m.unetConfig, *m.unetWeights);
    ops::Conv2dScratch scratch(ctx);
    const int64_t n = 2, size = m.unetConfig.sampleSize, c = m.unetConfig.inChannels, seq = 77,
                  d = m.unetConfig.crossAttentionDim;
    graph::Graph g;
    graph::TensorId in = g.input("sample", {n, size, size, c}, DType::F32);
    graph::TensorId ctxT = g.input("context", {n, seq, d}, DType::F32);
    graph::TensorId out = g.output("noise", {n, size, size, c}, DType::F32);
    nn::Builder b(g, DType::F32, &scratch);
    graph::Value t{{n, 1}, {}, [n](const graph::Resolver&) { return graph::broadcast(graph::uniform(0), {n, 1}); }, 0};
    unet.build(b, g.read(in), t, g.read(ctxT), out);
    std::mt19937 rng(1);
    std::normal_distribution<float> dist;
    std::vector<float> x(n * size * size * c), e(n * seq * d);
    for (auto& v : x) v = dist(rng);
    for (auto& v : e) v = dist(rng);
    Allocation inMem = uploadFloats(ctx, x, DType::F32, "sample");
    Allocation ctxMem = uploadFloats(ctx, e, DType::F32, "context");
    Allocation outMem = ctx.allocate(x.size() * 4, "noise");
    graph::CompiledGraph cg(ctx, g,
                            {{in, graph::view(inMem, DType::F32, {n, size, size, c})},
                             {ctxT, graph::view(ctxMem, DType::F32, {n, seq, d})},
                             {out, graph::view(outMem, DType::F32, {n, size, size, c})}},
                            true);
    cg.setUniform(0, 500.f);
    cg.run();  // warm-up
    std::map<std::string, std::vector<double>> byLabel, byBlock;
    std::vector<double> totals;
    for (int r = 0; r < repeats; ++r) {
      cg.run();
      std::map<std::string, double> lab, blk;
      double total = 0;
      for (auto& tm : cg.timings()) {
        double ms = tm.ns / 1e6;
        total += ms;
        lab[tm.label] += ms;
        blk[tm.label.substr(0, tm.label.find_first_of(". "))] += ms;
      }
      totals.push_back(total);
      for (auto& [k, v] : lab) byLabel[k].push_back(v);
      for (auto& [k, v] : blk) byBlock[k].push_back(v);
    }
    std::printf("%s: %zu dispatches, step total median %.1f ms (min %.1f) over %d runs\n", ctx.info().name.c_str(),
                cg.launches(), median(totals), *std::min_element(totals.begin(), totals.end()), repeats);
    for (auto& [k, v] : byBlock) std::printf("  block %-12s %8.2f ms\n", k.c_str(), median(v));
    std::vector<std::pair<double, std::string>> rows;
    for (auto& [k, v] : byLabel) rows.push_back({median(v), k});
    std::sort(rows.rbegin(), rows.rend());
    for (int i = 0; i < top && i < int(rows.size()); ++i) std::printf("  %8.2f ms  %s\n", rows[i].first, rows[i].second.c_str());
    // Aggregate by kernel kind: the label with block names stripped (last words).
    std::map<std::string, double> kinds;
    for (auto& [ms, label] : rows) {
      std::string k = label;
      auto sp = k.find(' ');
      if (sp != std::string::npos) k = k.substr(sp + 1);
      kinds[k] += ms;
    }
    std::vector<std::pair<double, std::string>> kr;
    for (auto& [k, v] : kinds) kr.push_back({v, k});
    std::sort(kr.rbegin(), kr.rend());
    std::printf("by kind:\n");
    for (auto& [ms, k] : kr) std::printf("  %8.2f ms  %s\n", ms, k.c_str());
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "unet_step_profile: %s\n", ex.what());
    return 1;
  }
  return 0;
}
