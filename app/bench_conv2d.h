#pragma once
// `sdgen --bench-conv2d`: the conv layers of Stable Diffusion 1.5 (the rows of shared/anchors/h100-pytorch.json:
// the UNet at 64x64 latents, batch 2, and the VAE decoder at 512x512; padding K/2), or one --shape, timed per
// precision and algorithm from GPU timestamps: fixed seeds, warm-up, then timed replays of one recorded sequence.
// Every result is checked against the general kernel's output (max abs, max rel), which is itself checked against
// a float64 CPU convolution at sampled outputs. With --reference cudnn, cuDNN's fastest forward algorithm runs on
// the same data in the same process (app/bench_conv2d_reference.h).
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "app/cli_options.h"
#include "engine/context.h"
#include "engine/dtype.h"
#include "ops/conv2d_plan.h"
#include "ops/conv2d_tune_settings.h"

namespace sdgen::app {

struct ConvBenchShape {
  std::string layer;
  int n = 1, cin = 1, cout = 1, h = 1, w = 1, k = 3, stride = 1;
  double anchorFp32Ms = 0, anchorFp16Ms = 0;  // PyTorch/cuDNN on the H100 (shared/anchors), 0 when unknown
  std::string str() const;                    // "[N,Cin,Cout,H,W,K,s]"
};

// The SD1.5 table, and the rows --quick runs (a 3x3 with 4 input channels, a strided 3x3, a 1x1).
const std::vector<ConvBenchShape>& sdConvShapes();
std::vector<ConvBenchShape> quickConvShapes();

struct TimingStats {
  double medianMs = 0, meanMs = 0, stdMs = 0, minMs = 0, p10Ms = 0, p90Ms = 0;
};
TimingStats timingStats(const std::vector<double>& ms);  // requires at least one sample

struct ConvBenchRow {
  ConvBenchShape shape;
  DType precision = DType::F32;
  std::string algo, tile, kernels, error;  // error: the algorithm's contract does not hold (row skipped)
  TimingStats time;
  int reps = 0;
  double tflops = 0;
  double maxAbs = 0, maxRel = 0;  // against the general kernel's output
  double cpuRel = -1;             // the general kernel against a float64 CPU convolution (sampled)
  // --reference cudnn
  bool haveReference = false;
  TimingStats reference;
  std::string referenceAlgo;
  double referenceMaxAbs = 0, referenceMaxRel = 0;  // cuDNN against the general kernel
  double ratio = 0;                                 // our median / cuDNN's median
};

struct ConvBenchReport {
  std::string device, referenceDevice;
  int warmup = 0, warmupMs = 0, reps = 0;
  std::vector<ConvBenchRow> rows;
  // Geometric mean of ratio over the rows with a reference, per precision ("fp32"/"fp16"), of the best
  // algorithm per shape and of every row.
  std::vector<std::pair<std::string, double>> geomeanBest;
};

struct ConvBenchSettings {
  std::vector<DType> precisions;
  std::vector<ops::ConvAlgo> algos;
  std::vector<ConvBenchShape> shapes;
  int warmup = 3, reps = 20;
  // The warm-up replays go on until this much wall time has passed too: an idle H100 ran whole rows of replays at
  // low clocks (session 48: the first two processes of a call 3.7 and 2.4 ms, the third 0.91), and the GPU idles
  // while the host checks the previous row. 0 with --quick or --warmup 0.
  int warmupMs = 300;
  bool cudnn = false;
  // A "tuned" row per shape (--algo all or tuned): the autotune's plan, with these settings (measured afresh unless
  // --no-autotune; the rule where tuning is off, as on CPU devices).
  bool tuned = false;
  ops::ConvTuneSettings autotune;
};
// From the command line: --precision (auto = both), --algo, --shape / --quick, --reps, --warmup, --reference.
ConvBenchSettings benchSettings(const CliOptions& options);

// Runs the benchmark, printing each row to `out` as it completes. Throws sdgen::Error when --reference cudnn
// cannot be honoured (no plugin, no CUDA device) before any row runs.
ConvBenchReport runConvBench(Context& ctx, const ConvBenchSettings& settings, std::FILE* out);
std::string convBenchJson(const ConvBenchReport& report);

// The mode: opens the device, runs, writes --json. Returns the exit code.
int runBenchConv2d(const CliOptions& options, std::FILE* out, std::FILE* err);

}  // namespace sdgen::app
