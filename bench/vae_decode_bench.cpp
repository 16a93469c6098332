// Peak device memory and time of one VAE decode, tiled or not (issue 21: a 2048x2048 SD 1.5 decode within 3 GB):
//   vae_decode_bench MODEL WIDTH HEIGHT [--tiling on|off] [--precision fp16|fp32] [--runs N] [--json FILE]
// Loads only the model's VAE decoder, decodes seeded N(0, 1) latents (as the sampler leaves them) `runs` times
// (default 2: the first records and compiles) and prints the decode times, the VAE weights, the decode's graph
// arenas, and the process's peak: sdgen's own device blocks and, with VK_EXT_memory_budget, the heap usage the
// driver reports (sampled after every block and after each decode). nvidia-smi's view of the same process is
// taken by the caller (scripts/device/vae-tiling.sh).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/context.h"
#include "engine/error.h"
#include "engine/tensor_io.h"
#include "graph/executor.h"
#include "models/formats/model_files.h"
#include "models/networks/vae_decoder.h"
#include "models/pipeline/vae_tiling.h"
#include "ops/conv2d_scratch.h"

using namespace sdgen;

namespace {

double mib(uint64_t bytes) { return double(bytes) / (1 << 20); }

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc), positional;
  std::string jsonPath, tiling = "on", precision = "fp16";
  int runs = 2;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--json" && i + 1 < args.size()) jsonPath = args[++i];
    else if (args[i] == "--tiling" && i + 1 < args.size()) tiling = args[++i];
    else if (args[i] == "--precision" && i + 1 < args.size()) precision = args[++i];
    else if (args[i] == "--runs" && i + 1 < args.size()) runs = std::max(1, std::atoi(args[++i].c_str()));
    else positional.push_back(args[i]);
  }
  if (positional.size() != 3 || (tiling != "on" && tiling != "off") || (precision != "fp16" && precision != "fp32")) {
    std::fprintf(stderr, "usage: vae_decode_bench MODEL WIDTH HEIGHT [--tiling on|off] [--precision fp16|fp32] "
                         "[--runs N] [--json FILE]\n");
    return 2;
  }
  try {
    Context ctx;
    const DType dtype = precision == "fp16" ? DType::F16 : DType::F32;
    models::ModelFiles files = models::openModel(positional[0]);
    nn::ParameterStore params(ctx, dtype);
    networks::VaeDecoder vae(params, files.vaeConfig, *files.vaeWeights);
    ops::Conv2dScratch scratch(ctx, "VAE conv scratch");
    const int s = vae.upscale(), width = std::atoi(positional[1].c_str()), height = std::atoi(positional[2].c_str());
    if (width <= 0 || height <= 0 || width % s || height % s) throw Error("WIDTH and HEIGHT: positive multiples of " + std::to_string(s));
    const int64_t h = height / s, w = width / s, c = files.vaeConfig.latentChannels, oc = files.vaeConfig.outChannels;
    std::vector<float> latents(size_t(h * w * c));
    std::mt19937 rng(7);
    std::normal_distribution<float> normal;
    for (float& v : latents) v = normal(rng);

    MemoryPool& pool = ctx.memory().pool(MemoryKind::Device);
    const uint64_t weightBytes = params.bytes();
    std::unique_ptr<pipeline::TiledVaeDecoder> tiled;
    std::unique_ptr<graph::CompiledGraph> full;
    Allocation latentMem, imageMem;
    if (tiling == "on") {
      tiled = std::make_unique<pipeline::TiledVaeDecoder>(ctx, vae, dtype, scratch);
    } else {
      latentMem = uploadFloats(ctx, latents, DType::F32, "latents");
      imageMem = ctx.allocate(uint64_t(height) * width * oc * 4, "image");
      graph::Graph g;
      graph::TensorId out = g.output("image", {1, height, width, oc}, DType::F32);
      nn::Builder b(g, dtype, &scratch);
      const graph::TensorView in = graph::view(latentMem, DType::F32, {1, h, w, c});
      graph::Value z{in.shape, {}, [in](const graph::Resolver&) { return graph::buffer(in); }, 0};
      vae.build(b, pipeline::decoderInput(b, z, files.vaeConfig), out);
      full = std::make_unique<graph::CompiledGraph>(
          ctx, g, std::map<graph::TensorId, graph::TensorView>{{out, graph::view(imageMem, DType::F32, {1, height, width, oc})}});
    }
    std::vector<double> ms;
    std::vector<float> image;
    for (int r = 0; r < runs; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      if (tiled) {
        image = tiled->decode(latents, h, w);
      } else {
        full->run();
        image = downloadFloats(ctx, imageMem, size_t(height) * width * oc, DType::F32);
      }
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      pool.sampleHeapUsage();
    }
    const MemoryStats stats = pool.stats();
    const uint64_t arena = tiled ? tiled->arenaBytes() : full->memoryPlan().peakBytes;
    double sum = 0;
    for (float v : image) sum += v;
    std::printf("VAE decode %dx%d %s tiling %s: runs", width, height, precision.c_str(), tiling.c_str());
    for (double t : ms) std::printf(" %.1f", t);
    std::printf(" ms\n  weights %.1f MiB, graph arenas %.1f MiB, conv scratch %.1f MiB\n", mib(weightBytes), mib(arena),
                mib(scratch.bytesHeld()));
    std::printf("  peak: sdgen blocks %.1f MiB, process heap usage %.1f MiB (VK_EXT_memory_budget; 0 = unavailable)\n",
                mib(stats.peakBytesReserved), mib(stats.peakHeapUsage));
    std::printf("  image mean %.6f\n", sum / double(image.size()));
    if (!jsonPath.empty()) {
      nlohmann::json j = {{"width", width},           {"height", height},
                          {"precision", precision},   {"tiling", tiling},
                          {"ms", ms},                 {"weights_mib", mib(weightBytes)},
                          {"arena_mib", mib(arena)},  {"conv_scratch_mib", mib(scratch.bytesHeld())},
                          {"peak_sdgen_mib", mib(stats.peakBytesReserved)},
                          {"peak_heap_mib", mib(stats.peakHeapUsage)}, {"device", ctx.info().name}};
      std::ofstream(jsonPath) << j.dump(1) << "\n";
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vae_decode_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
