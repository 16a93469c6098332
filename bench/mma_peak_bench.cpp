// The tensor cores' rate through VK_KHR_cooperative_matrix with no global loads (shaders/linear/mma_peak.slang):
// the ceiling of the subgroup-scope design that gemm_coop.slang uses, per accumulator type, warp tile and
// fragment source, timed with GPU timestamps (docs/perf.md, session 23).
//   mma_peak_bench [--rounds N] [--steps N] [--groups N] VARIANT...
// VARIANT: NA,NB,f32|f16,SOURCE[,WARPS[,SLICE,WORDS,BARRIERS]]: NA x NB accumulators of 16 x 16 per subgroup (a
// warp tile of 16 NA x 16 NB), fp32 or fp16 accumulation, WARPS subgroups per workgroup (default 8). SOURCE: regs
// (the fragments kept in registers), shared (loaded from shared memory every step), global / global32 (loaded
// from global memory every step, L1 hits: rows of 48 bytes as in shared memory, or of 32 bytes so that each
// fragment is 512 contiguous bytes), l1 / l2 / mem (shared, plus
// gemm_coop's slice round trip: words per invocation fetched from global memory one slice ahead and stored to
// shared memory between barriers; the same words every slice, or streamed through 16 MB or 256 MB). SLICE: steps
// per round trip (default 2, a 32-deep slice), WORDS per invocation (default 4), BARRIERS 2 (default) or 1 (two
// alternating staging areas, as gemm_coop's DBUF).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
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
#include "ops/linear_gemm.h"

using namespace sdgen;

namespace {

struct Variant {
  int na = 0, nb = 0, warps = 8, stage = 0, slice = 2, words = 4, barriers = 2;  // mma_peak.slang's parameters
  uint64_t regionBytes = 0;
  bool f16 = false;
  int shared = 0;  // mma_peak.slang's SHARED: 0 registers, 1 shared memory, 2 / 3 global memory
  std::string text;
};

Variant parseVariant(const std::string& v) {
  Variant r;
  r.text = v;
  std::vector<std::string> parts;
  std::istringstream in(v);
  for (std::string p; std::getline(in, p, ',');) parts.push_back(p);
  const std::vector<std::string> sources = {"regs", "shared", "global", "global32", "l1", "l2", "mem"};
  if ((parts.size() != 4 && parts.size() != 5 && parts.size() != 8) || (parts[2] != "f32" && parts[2] != "f16") ||
      std::find(sources.begin(), sources.end(), parts[3]) == sources.end())
    throw Error("variant '" + v.substr(0, 64) +
                "' is not NA,NB,f32|f16,regs|shared|global|global32|l1|l2|mem[,WARPS[,SLICE,WORDS,BARRIERS]]");
  r.na = std::atoi(parts[0].c_str());
  r.nb = std::atoi(parts[1].c_str());
  r.f16 = parts[2] == "f16";
  r.shared = parts[3] == "regs" ? 0 : parts[3] == "global" ? 2 : parts[3] == "global32" ? 3 : 1;
  r.stage = parts[3] == "l1" ? 1 : parts[3] == "l2" || parts[3] == "mem" ? 2 : 0;
  r.regionBytes = parts[3] == "l2" ? uint64_t(16) << 20 : parts[3] == "mem" ? uint64_t(256) << 20 : 0;
  if (parts.size() >= 5) r.warps = std::atoi(parts[4].c_str());
  if (parts.size() == 8) {
    r.slice = std::atoi(parts[5].c_str());
    r.words = std::atoi(parts[6].c_str());
    r.barriers = std::atoi(parts[7].c_str());
  }
  if (r.shared >= 2 && r.stage) throw Error("variant '" + v.substr(0, 64) + "': global fragments take no staging");
  if (r.slice < 1 || r.slice > 16 || r.words < 1 || r.words > 16 || (r.barriers != 1 && r.barriers != 2))
    throw Error("variant '" + v.substr(0, 64) + "': SLICE 1 to 16, WORDS 1 to 16, BARRIERS 1 or 2");
  if (r.na < 1 || r.na > 8 || r.nb < 1 || r.nb > 8 || r.warps < 1 || r.warps > 32)
    throw Error("variant '" + v.substr(0, 64) + "': NA and NB must be 1 to 8, WARPS 1 to 32");
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 20, steps = 4096, groups = 132 * 8;
  std::vector<std::string> texts;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--rounds" && i + 1 < argc) rounds = std::atoi(argv[++i]);
    else if (a == "--steps" && i + 1 < argc) steps = std::atoi(argv[++i]);
    else if (a == "--groups" && i + 1 < argc) groups = std::atoi(argv[++i]);
    else texts.push_back(a);
  }
  if (texts.empty() || rounds < 1 || steps < 1 || groups < 1) {
    std::fprintf(stderr, "usage: mma_peak_bench [--rounds N] [--steps N] [--groups N] "
                         "NA,NB,f32|f16,regs|shared|global|global32|l1|l2|mem[,WARPS[,SLICE,WORDS,BARRIERS]]...\n");
    return 2;
  }
  bool allConsistent = true;
  try {
    Context ctx;
    const DeviceInfo& info = ctx.info();
    if (uint32_t(groups) > info.maxWorkgroupCount[0])
      throw Error("--groups " + std::to_string(groups) + " exceeds the device's " +
                  std::to_string(info.maxWorkgroupCount[0]) + " workgroups per grid row");
    std::printf("%s", info.describe().c_str());
    std::printf("%-24s %9s %9s %9s %9s  %s\n", "variant", "median", "p10", "p90", "TFLOP/s", "check");
    for (const std::string& t : texts) {
      const Variant v = parseVariant(t);
      if (!ops::gemmCoopSupported(info) || (v.f16 && !info.hasCoopMatrix(16, 16, 16, "f16", "f16"))) {
        std::printf("%-24s skipped: no 16x16x16 f16 x f16 -> %s subgroup matrices\n", t.c_str(), v.f16 ? "f16" : "f32");
        continue;
      }
      const uint32_t sharedBytes = v.stage ? uint32_t((v.na + v.nb + 1) * 768 + (v.barriers == 1 ? 2 : 1) * v.words *
                                                      32 * v.warps * 16)
                                           : uint32_t(v.warps * (v.na + v.nb + 1) * 768);  // mma_peak.slang's layout
      if (sharedBytes > info.sharedMemoryPerWorkgroup) {
        std::printf("%-24s skipped: %u bytes of shared memory, the device allows %u\n", t.c_str(), sharedBytes,
                    info.sharedMemoryPerWorkgroup);
        continue;
      }
      const uint64_t outFloats = uint64_t(groups) * v.warps * 256;
      Allocation out = ctx.allocate(outFloats * 4, "mma peak out");
      // STAGE's source: a whole number of slices (WORDS per invocation); 4 slices for l1.
      const uint64_t sliceBytes = uint64_t(v.words) * 32 * v.warps * 16;
      // Global fragments: every subgroup's NA + NB + 1 fragments in rows of 48 bytes (the larger layout).
      const uint64_t fragBytes = uint64_t(v.warps) * (v.na + v.nb + 1) * 768;
      const uint64_t srcBytes =
          std::max(std::max(v.regionBytes / sliceBytes, uint64_t(4)) * sliceBytes, v.shared >= 2 ? fragBytes : 0);
      Allocation source = ctx.allocate(srcBytes, "mma peak source");
      if (v.shared >= 2) {  // small values, exact in fp16, as the kernel writes into shared memory
        std::vector<float> init(srcBytes / 2);
        for (size_t i = 0; i < init.size(); ++i) init[i] = float(int(i % 7) - 3) * 0.0625f;
        writeFloats(ctx, source, init, DType::F16);
      }
      KernelSource src;
      src.generated = "import sdgen;\nimport linear.mma_peak;\n[shader(\"compute\")]\n[numthreads(" +
                      std::to_string(32 * v.warps) + ", 1, 1)]\nvoid main(uint3 group : SV_GroupID, uint3 local : "
                      "SV_GroupThreadID) {\n  mmaPeakMain<" + std::to_string(v.na) + ", " + std::to_string(v.nb) +
                      ", " +
                      (v.f16 ? "1" : "0") + ", " + std::to_string(v.shared) + ", " + std::to_string(v.warps) + ", " +
                      std::to_string(v.stage) + ", " + std::to_string(v.slice) + ", " + std::to_string(v.words) + ", " +
                      std::to_string(v.barriers) + ">(group, local);\n}\n";
      src.capabilities = {"spvCooperativeMatrixKHR"};
      src.label = "mma peak " + t;
      ParamBlock p;
      p.u32(uint32_t(steps)).u32(0).address(out.address()).address(source.address()).u32(uint32_t(srcBytes / 16));
      auto seq = std::make_unique<CommandSequence>(ctx, SequenceOptions{.timestamps = true});
      seq->dispatch(ctx.kernels().request(src), {uint32_t(groups), 1, 1}, p, {range(source)}, {range(out)}, src.label);
      seq->run();
      std::vector<std::unique_ptr<CommandSequence>> seqs;
      seqs.push_back(std::move(seq));
      bench::warmUpGpu(seqs);
      std::vector<double> ms;
      for (int r = 0; r < rounds; ++r) {
        seqs[0]->run();
        ms.push_back(seqs[0]->timings().at(0).ns / 1e6);
      }
      // A consistency check, not a reference: every subgroup's sum is finite and the same as that of every other
      // subgroup with the same inputs (the same warp index). A mismatch makes the bench exit 1.
      std::vector<float> got = downloadFloats(ctx, out, size_t(outFloats), DType::F32);
      bool ok = true;
      for (size_t i = 0; i < got.size(); ++i)
        ok = ok && std::isfinite(got[i]) && got[i] == got[i % (size_t(v.warps) * 256)];
      const double flops = 2.0 * 16 * 16 * 16 * double(v.na) * v.nb * double(steps) * double(v.warps) * groups;
      const bench::Stats st = bench::stats(ms);
      std::printf("%-24s %9.4f %9.4f %9.4f %9.1f  %s\n", t.c_str(), st.median, st.p10, st.p90,
                  flops / (st.median * 1e-3) / 1e12, ok ? "ok" : "MISMATCH");
      allConsistent = allConsistent && ok;
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mma_peak_bench: %s\n", e.what());
    return 1;
  }
  return allConsistent ? 0 : 1;
}
