#pragma once
// Shared by the kernel benchmarks: keep the GPU busy before timing. An H100 idles its clocks between
// submissions, and short layers timed from cold read 2-4x slow (2026-11-24, docs/perf.md "Tensor cores").
#include <chrono>
#include <memory>
#include <vector>

#include "engine/command_sequence.h"

namespace sdgen::bench {

// Replays every (non-null) sequence in turn until at least `seconds` of wall time have passed.
inline void warmUpGpu(const std::vector<std::unique_ptr<CommandSequence>>& seqs, double seconds = 1.0) {
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds)
    for (const auto& seq : seqs)
      if (seq) seq->run();
}

}  // namespace sdgen::bench
