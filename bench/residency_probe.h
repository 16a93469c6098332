#pragma once
// The host side of shaders/linear/residency_probe.slang, shared by bench/residency_probe_bench and its test: the
// random cycle the workgroups follow, the kernel's source and one timed launch.
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/command_sequence.h"
#include "engine/context.h"
#include "engine/param_block.h"

namespace sdgen::bench {

// A single cycle through [0, n) (Sattolo's shuffle), so every start walks n distinct entries before repeating.
inline std::vector<uint32_t> randomCycle(uint32_t n, uint32_t seed) {
  std::vector<uint32_t> order(n);
  for (uint32_t i = 0; i < n; ++i) order[i] = i;
  std::mt19937 rng(seed);
  for (uint32_t i = n - 1; i > 0; --i)
    std::swap(order[i], order[std::uniform_int_distribution<uint32_t>(0, i - 1)(rng)]);
  std::vector<uint32_t> next(n);
  for (uint32_t i = 0; i < n; ++i) next[order[i]] = order[(i + 1) % n];
  return next;
}

// Where workgroup g's chain ends after `steps` steps: what the kernel must store for it.
inline uint32_t chainEnd(const std::vector<uint32_t>& next, uint32_t g, int steps) {
  uint32_t i = g % uint32_t(next.size());
  for (int s = 0; s < steps; ++s) i = next[i];
  return i;
}

inline KernelSource residencyProbeSource(int threads, int words) {
  KernelSource src;
  src.generated = "import sdgen;\nimport linear.residency_probe;\n[shader(\"compute\")]\n[numthreads(" +
                  std::to_string(threads) + ", 1, 1)]\nvoid main(uint3 group : SV_GroupID, uint3 local : "
                  "SV_GroupThreadID) {\n  residencyProbeMain<" + std::to_string(words) + ", " +
                  std::to_string(threads) + ">(group, local);\n}\n";
  src.label = "residency probe " + std::to_string(threads) + " x " + std::to_string(words * 16) + " B";
  return src;
}

// One recorded launch of `groups` workgroups over the cycle at `chain` (n entries), storing to `out`.
inline std::unique_ptr<CommandSequence> recordResidencyProbe(Context& ctx, int threads, int words, uint32_t groups,
                                                             int steps, const Allocation& chain, uint32_t n,
                                                             const Allocation& out) {
  KernelSource src = residencyProbeSource(threads, words);
  ParamBlock p;
  p.u32(uint32_t(steps)).u32(0).address(chain.address()).address(out.address()).u32(n);
  auto seq = std::make_unique<CommandSequence>(ctx, SequenceOptions{.timestamps = true});
  seq->dispatch(ctx.kernels().request(src), {groups, 1, 1}, p, {range(chain)}, {range(out)}, src.label);
  return seq;
}

}  // namespace sdgen::bench
