#pragma once
// How the convolution autotune runs (ops/conv2d_tune.h; the CLI's --no-autotune and --retune, docs/cli.md).
#include <string>

namespace sdgen::ops {

struct ConvTuneSettings {
  // Auto: on for GPUs, off on CPU devices (lavapipe: its timings of tiny problems are noise and every candidate
  // compiles more llvmpipe kernels than the rule ever runs); SDGEN_AUTOTUNE=1 / 0 overrides Auto (tests).
  enum class Mode { Auto, On, Off };
  Mode mode = Mode::Auto;
  bool retune = false;   // ignore the cache's entries for this device: measure again and rewrite them
  std::string cacheDir;  // empty: the kernel cache's directory (SDGEN_CACHE_DIR, else ~/.cache/sdgen)
  // Timed repetitions per candidate (after one untimed launch of each), their median taken. 15 since session
  // 27: with 5, two tunings on the H200 chose split 8 and split 4 for one problem whose layers take 115 and 103
  // µs in the step (docs/perf.md).
  int reps = 15;
};

}  // namespace sdgen::ops
