// How many workgroups an SM runs at once, per workgroup size and shared memory (shaders/linear/residency_probe.slang):
// the occupancy that the GEMM tiles' shared memory allows on this device and driver (docs/perf.md, session 24).
//   residency_probe_bench [--sms N] [--steps N] [--rounds N] [--max-k N] THREADS,BYTES...
// For each THREADS,BYTES (invocations per workgroup, shared memory in bytes, a multiple of 16) it times launches
// of k x SMS workgroups for k = 1..max-k (GPU timestamps, median of --rounds) and prints k's time over k = 1's: 1
// while k workgroups fit on every SM at once, about 2 once they take two turns. `resident` is the largest k
// whose time is under 1.5 of k = 1's. Each launch's stores are checked against the host's walk of the chain.
#include <cstdio>
#include <cstdlib>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "bench/gpu_warmup.h"
#include "bench/residency_probe.h"
#include "bench/timing_stats.h"
#include "engine/context.h"
#include "engine/error.h"

using namespace sdgen;

int main(int argc, char** argv) {
  int sms = 132, steps = 256, rounds = 7, maxK = 20;
  std::vector<std::pair<int, int>> configs;  // (threads, bytes)
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--sms" && i + 1 < argc) sms = std::atoi(argv[++i]);
    else if (a == "--steps" && i + 1 < argc) steps = std::atoi(argv[++i]);
    else if (a == "--rounds" && i + 1 < argc) rounds = std::atoi(argv[++i]);
    else if (a == "--max-k" && i + 1 < argc) maxK = std::atoi(argv[++i]);
    else {
      int t = 0, b = 0;
      char comma = 0;
      std::istringstream in(a);
      if (!(in >> t >> comma >> b) || comma != ',' || t < 32 || t > 1024 || t % 32 != 0 || b < 16 || b % 16 != 0) {
        std::fprintf(stderr, "residency_probe_bench: '%s' is not THREADS,BYTES (THREADS a multiple of 32 up to 1024, "
                             "BYTES a positive multiple of 16)\n", a.substr(0, 64).c_str());
        return 2;
      }
      configs.push_back({t, b});
    }
  }
  if (configs.empty() || sms < 1 || steps < 1 || rounds < 1 || maxK < 1 || maxK > 64) {
    std::fprintf(stderr, "usage: residency_probe_bench [--sms N] [--steps N] [--rounds N] [--max-k 1..64] "
                         "THREADS,BYTES...\n");
    return 2;
  }
  bool allRight = true;
  try {
    Context ctx;
    const DeviceInfo& info = ctx.info();
    std::printf("%s", info.describe().c_str());
    const uint32_t n = 1u << 22;  // 16 MB of chain: misses L1, stays in L2
    const std::vector<uint32_t> next = bench::randomCycle(n, 7);
    Allocation chain = ctx.allocate(uint64_t(n) * 4, "residency probe chain");
    ctx.upload(chain, 0, std::span(reinterpret_cast<const uint8_t*>(next.data()), next.size() * 4));
    const uint32_t maxGroups = uint32_t(maxK) * uint32_t(sms);
    if (uint64_t(maxK) * uint64_t(sms) > info.maxWorkgroupCount[0])
      throw Error("--max-k x --sms = " + std::to_string(uint64_t(maxK) * uint64_t(sms)) + " exceeds the device's " +
                  std::to_string(info.maxWorkgroupCount[0]) + " workgroups per grid row");
    Allocation out = ctx.allocate(uint64_t(maxGroups) * 4, "residency probe out");
    std::vector<uint32_t> expected(maxGroups);
    for (uint32_t g = 0; g < maxGroups; ++g) expected[g] = bench::chainEnd(next, g, steps);
    std::printf("%-12s %-10s  time ratio per k (k = 1: ms)\n", "threads,B", "resident");
    for (auto [threads, bytes] : configs) {
      if (uint32_t(bytes) > info.sharedMemoryPerWorkgroup) {
        std::printf("%d,%-7d skipped: the device allows %u bytes per workgroup\n", threads, bytes,
                    info.sharedMemoryPerWorkgroup);
        continue;
      }
      std::vector<double> ms;
      bool right = true;  // this configuration's stores
      for (int k = 1; k <= maxK; ++k) {
        const uint32_t groups = uint32_t(k) * uint32_t(sms);
        std::vector<std::unique_ptr<CommandSequence>> seqs;
        seqs.push_back(bench::recordResidencyProbe(ctx, threads, bytes / 16, groups, steps, chain, n, out));
        seqs[0]->run();
        if (k == 1) bench::warmUpGpu(seqs);
        std::vector<double> t;
        for (int r = 0; r < rounds; ++r) {
          seqs[0]->run();
          t.push_back(seqs[0]->timings().at(0).ns / 1e6);
        }
        ms.push_back(bench::stats(t).median);
        std::vector<uint32_t> got(groups);
        ctx.download(out, 0, std::span(reinterpret_cast<uint8_t*>(got.data()), got.size() * 4));
        for (uint32_t g = 0; g < groups; ++g) right = right && got[g] == expected[g];
      }
      int resident = 0;
      while (resident < maxK && ms[resident] < 1.5 * ms[0]) ++resident;
      std::printf("%4d,%-7d %-10s  %.4f:", threads, bytes,
                  (resident == maxK ? ">=" + std::to_string(maxK) : std::to_string(resident)).c_str(), ms[0]);
      for (double m : ms) std::printf(" %.2f", m / ms[0]);
      std::printf("%s\n", right ? "" : "  WRONG STORES");
      allRight = allRight && right;
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "residency_probe_bench: %s\n", e.what());
    return 1;
  }
  return allRight ? 0 : 1;
}
