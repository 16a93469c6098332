// Convolution benchmark over the Stable Diffusion 1.5 conv layers of /work/shared/anchors/h100-pytorch.json
// (UNet at batch 2, VAE decoder at 512x512; padding K/2). For each row, precision and eligible algorithm it
// records one CommandSequence with timestamps holding the conv, replays it `--warmup` times, then `--reps`
// timed times, and reports the median / p10 / p90 of the conv's GPU time (the sum over its kernels),
// TFLOP/s = 2*N*Ho*Wo*Cout*Cin*K*K / time, and the difference from the general kernel's output (max abs, and
// max |x - general| / max(1, |general|)). The general kernel itself is checked against a float64 CPU
// convolution at 256 sampled outputs ("cpu rel"). PyTorch/cuDNN times of the anchor are printed alongside.
//
//   bench_conv2d [--precision fp32|fp16|both] [--algo all|auto|general|gemm-v2|winograd] [--quick]
//                [--rows SUBSTRING] [--reps N] [--warmup N] [--json FILE]
// On lavapipe: bench_conv2d --quick --reps 1 --warmup 1 (slow, a smoke check).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "engine/command_sequence.h"
#include "engine/tensor_io.h"
#include "engine/context.h"
#include "engine/error.h"
#include "graph/expr.h"
#include "ops/conv2d.h"

using namespace sdgen;

namespace {

// [N, Cin, Cout, H, W, K, stride] and the anchor's PyTorch times (fp32 with TF32 off, fp16), milliseconds.
struct Row {
  const char* layer;
  int n, cin, cout, h, w, k, stride;
  double torchFp32Ms, torchFp16Ms;
};

const Row kRows[] = {
    {"unet.conv_in", 2, 4, 320, 64, 64, 3, 1, 0.0538, 0.0285},
    {"unet.d0.res", 2, 320, 320, 64, 64, 3, 1, 0.5629, 0.0539},
    {"unet.d0.down", 2, 320, 320, 64, 64, 3, 2, 0.2143, 0.0329},
    {"unet.d1.res1", 2, 320, 640, 32, 32, 3, 1, 0.3353, 0.0424},
    {"unet.d1.res", 2, 640, 640, 32, 32, 3, 1, 0.6422, 0.0563},
    {"unet.d1.skip1x1", 2, 320, 640, 32, 32, 1, 1, 0.073, 0.0347},
    {"unet.d2.res1", 2, 640, 1280, 16, 16, 3, 1, 0.4257, 0.0415},
    {"unet.d2.res", 2, 1280, 1280, 16, 16, 3, 1, 0.9032, 0.0619},
    {"unet.d3.res", 2, 1280, 1280, 8, 8, 3, 1, 0.4933, 0.0401},
    {"unet.u0.res", 2, 2560, 1280, 8, 8, 3, 1, 0.9598, 0.0577},
    {"unet.u1.res", 2, 2560, 1280, 16, 16, 3, 1, 1.6335, 0.0848},
    {"unet.u1.res3", 2, 1920, 1280, 16, 16, 3, 1, 1.2359, 0.0741},
    {"unet.u2.res1", 2, 1920, 640, 32, 32, 3, 1, 1.8897, 0.1145},
    {"unet.u2.res3", 2, 960, 640, 32, 32, 3, 1, 0.9521, 0.0746},
    {"unet.u3.res1", 2, 960, 320, 64, 64, 3, 1, 1.606, 0.1028},
    {"unet.u3.res", 2, 640, 320, 64, 64, 3, 1, 1.0848, 0.0723},
    {"unet.conv_out", 2, 320, 4, 64, 64, 3, 1, 0.1059, 0.045},
    {"vae.conv_in", 1, 4, 512, 64, 64, 3, 1, 0.0405, 0.0279},
    {"vae.512@64", 1, 512, 512, 64, 64, 3, 1, 0.5362, 0.0528},
    {"vae.512@128", 1, 512, 512, 128, 128, 3, 1, 1.8822, 0.1394},
    {"vae.512@256", 1, 512, 512, 256, 256, 3, 1, 7.4072, 0.5584},
    {"vae.512to256@256", 1, 512, 256, 256, 256, 3, 1, 3.7673, 0.2704},
    {"vae.256@512", 1, 256, 256, 512, 512, 3, 1, 7.7807, 0.6394},
    {"vae.256to128@512", 1, 256, 128, 512, 512, 3, 1, 4.0726, 0.3425},
    {"vae.128@512", 1, 128, 128, 512, 512, 3, 1, 2.1527, 0.2365},
    {"vae.conv_out", 1, 128, 3, 512, 512, 3, 1, 0.7708, 0.1258},
};
// --quick: a 3x3 with 4 input channels, a strided 3x3 and a 1x1 (every algorithm appears).
const char* const kQuickRows[] = {"unet.conv_in", "unet.d0.down", "unet.d1.skip1x1"};

struct Args {
  std::vector<DType> precisions = {DType::F32, DType::F16};
  std::vector<ops::ConvAlgo> algos = {ops::ConvAlgo::General, ops::ConvAlgo::GemmV2, ops::ConvAlgo::Winograd};
  bool quick = false;
  std::string rows, json;
  int reps = 20, warmup = 3;
};

Args parseArgs(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string f = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw Error("bench_conv2d: " + f + " needs a value");
      return argv[++i];
    };
    if (f == "--precision") {
      std::string p = value();
      if (p == "fp32") a.precisions = {DType::F32};
      else if (p == "fp16") a.precisions = {DType::F16};
      else if (p == "both") a.precisions = {DType::F32, DType::F16};
      else throw Error("bench_conv2d: --precision must be fp32, fp16 or both, got '" + p + "'");
    } else if (f == "--algo") {
      std::string v = value();
      if (v != "all") a.algos = {ops::parseConvAlgo(v)};
    } else if (f == "--quick") {
      a.quick = true;
    } else if (f == "--rows") {
      a.rows = value();
    } else if (f == "--json") {
      a.json = value();
    } else if (f == "--reps") {
      a.reps = std::stoi(value());
    } else if (f == "--warmup") {
      a.warmup = std::stoi(value());
    } else if (f == "--help" || f == "-h") {
      std::printf("usage: bench_conv2d [--precision fp32|fp16|both] [--algo all|auto|general|gemm-v2|winograd]\n"
                  "                    [--quick] [--rows SUBSTRING] [--reps N] [--warmup N] [--json FILE]\n");
      std::exit(0);
    } else {
      throw Error("bench_conv2d: unknown flag '" + f + "' (try --help)");
    }
  }
  if (a.reps < 1 || a.warmup < 0) throw Error("bench_conv2d: --reps must be >= 1 and --warmup >= 0");
  return a;
}

std::vector<float> randomVector(size_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-scale, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// Host values rounded to `dtype` (what the device holds) and uploaded.
Allocation upload(Context& ctx, std::vector<float>& v, DType dtype, const char* what) {
  for (auto& x : v) x = roundToStorage(dtype, x);
  return uploadFloats(ctx, v, dtype, what);
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  double pos = q * (v.size() - 1);
  size_t lo = size_t(pos);
  size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - lo);
}

struct Result {
  std::string layer, shape, algo, precision, tile, kernels, error;
  double medianMs = 0, p10Ms = 0, p90Ms = 0, tflops = 0, maxAbs = 0, maxRel = 0, cpuRel = -1, torchMs = 0;
};

std::string jsonEscape(const std::string& s) {
  std::string o;
  for (char c : s) o += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return o;
}

void writeJson(const std::string& path, const std::string& device, const std::vector<Result>& results) {
  std::ofstream f(path);
  if (!f) throw Error("bench_conv2d: cannot write " + path);
  f << "{\n  \"device\": \"" << jsonEscape(device) << "\",\n  \"rows\": [\n";
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    f << "    {\"layer\": \"" << r.layer << "\", \"shape\": \"" << r.shape << "\", \"algo\": \"" << r.algo
      << "\", \"precision\": \"" << r.precision << "\", \"tile\": \"" << jsonEscape(r.tile) << "\", \"kernels\": \""
      << jsonEscape(r.kernels) << "\", \"median_ms\": " << r.medianMs << ", \"p10_ms\": " << r.p10Ms
      << ", \"p90_ms\": " << r.p90Ms << ", \"tflops\": " << r.tflops << ", \"max_abs_vs_general\": " << r.maxAbs
      << ", \"max_rel_vs_general\": " << r.maxRel << ", \"cpu_rel\": " << r.cpuRel << ", \"torch_ms\": " << r.torchMs
      << ", \"error\": \"" << jsonEscape(r.error) << "\"}" << (i + 1 < results.size() ? "," : "") << "\n";
  }
  f << "  ]\n}\n";
}

// Max |gpu - ref| / max(1, |ref|) at `samples` random outputs of the conv, with a float64 CPU reference.
double sampledCpuCheck(const Row& row, const std::vector<float>& x, const std::vector<float>& w,
                       const std::vector<float>& b, const std::vector<float>& out, int ho, int wo, int samples) {
  std::mt19937 rng(7);
  const int pad = row.k / 2;
  double worst = 0;
  for (int s = 0; s < samples; ++s) {
    int n = int(rng() % row.n), oy = int(rng() % ho), ox = int(rng() % wo), co = int(rng() % row.cout);
    double acc = b[co];
    for (int ky = 0; ky < row.k; ++ky)
      for (int kx = 0; kx < row.k; ++kx) {
        int iy = oy * row.stride - pad + ky, ix = ox * row.stride - pad + kx;
        if (iy < 0 || iy >= row.h || ix < 0 || ix >= row.w) continue;
        const float* px = &x[((size_t(n) * row.h + iy) * row.w + ix) * row.cin];
        for (int ci = 0; ci < row.cin; ++ci)
          acc += double(px[ci]) * w[((size_t(co) * row.cin + ci) * row.k + ky) * row.k + kx];
      }
    double got = out[((size_t(n) * ho + oy) * wo + ox) * row.cout + co];
    worst = std::max(worst, std::abs(got - acc) / std::max(1.0, std::abs(acc)));
  }
  return worst;
}

// Records the conv once, replays it warmup + reps times and returns the per-replay GPU times (ms).
std::vector<double> timeConv(Context& ctx, const Args& args, const graph::Expr& in, const ops::Conv2dWeights& weights,
                             const graph::Sink& out, ops::Conv2dOptions options, ops::Conv2dInfo& info) {
  CommandSequence seq(ctx, {.timestamps = ctx.info().timestampsSupported});
  info = ops::conv2d(ctx, seq, in, weights, out, options);
  seq.end();
  for (int i = 0; i < args.warmup; ++i) seq.run();
  std::vector<double> ms;
  for (int i = 0; i < args.reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    seq.run();
    double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    auto t = seq.timings();
    if (t.empty()) {
      ms.push_back(wall);  // no timestamps on this device: host wall time of the submission
      continue;
    }
    double ns = 0;
    for (auto& c : t) ns += c.ns;
    ms.push_back(ns * 1e-6);
  }
  return ms;
}

void benchRow(Context& ctx, const Args& args, const Row& row, DType dt, std::vector<Result>& results) {
  using namespace graph;
  const int pad = row.k / 2;
  const int ho = (row.h + 2 * pad - row.k) / row.stride + 1, wo = (row.w + 2 * pad - row.k) / row.stride + 1;
  const size_t inCount = size_t(row.n) * row.h * row.w * row.cin, outCount = size_t(row.n) * ho * wo * row.cout;
  const double flop = 2.0 * row.n * ho * wo * row.cout * double(row.cin) * row.k * row.k;
  char shape[96];
  std::snprintf(shape, sizeof shape, "[%d,%d,%d,%d,%d,%d,%d]", row.n, row.cin, row.cout, row.h, row.w, row.k,
                row.stride);

  // Inputs in [-1, 1]; weights scaled by 1/sqrt(fan-in) so outputs stay O(1) in fp16.
  std::vector<float> x = randomVector(inCount, 1000u + row.cin, 1.0f);
  std::vector<float> w = randomVector(size_t(row.cout) * row.cin * row.k * row.k, 2000u + row.cout,
                                      1.0f / std::sqrt(float(row.cin * row.k * row.k)));
  std::vector<float> b = randomVector(row.cout, 3000u, 0.1f);
  for (auto& v : w) v = dt == DType::F16 ? halfToFloat(floatToHalf(v)) : v;  // an fp16 checkpoint's values
  Allocation xa = upload(ctx, x, dt, "bench input");
  ops::Conv2dWeightsOptions wo16;
  wo16.storage = dt;
  wo16.name = row.layer;
  ops::Conv2dWeights weights(ctx, row.cout, row.cin, ops::Conv2dParams::square(row.k, row.stride), w, b, wo16);
  Allocation general = ctx.allocate(outCount * dtypeSize(dt), "bench general output");
  Allocation result = ctx.allocate(outCount * dtypeSize(dt), "bench output");
  ops::Conv2dScratch scratch(ctx, "bench conv scratch");
  Expr in = buffer(view(xa, dt, {row.n, row.h, row.w, row.cin}));
  Shape os = {row.n, ho, wo, row.cout};

  // The general kernel's output: the correctness baseline of the other algorithms.
  {
    CommandSequence seq(ctx);
    ops::Conv2dOptions o;
    o.algo = ops::ConvAlgo::General;
    ops::conv2d(ctx, seq, in, weights, bufferSink(view(general, dt, os)), o);
    seq.run();
  }
  std::vector<float> ref = downloadFloats(ctx, general, outCount, dt);
  double cpuRel = sampledCpuCheck(row, x, w, b, ref, ho, wo, 256);

  for (ops::ConvAlgo algo : args.algos) {
    Result r;
    r.layer = row.layer, r.shape = shape, r.algo = ops::convAlgoName(algo), r.precision = dt == DType::F16 ? "fp16" : "fp32";
    r.torchMs = dt == DType::F16 ? row.torchFp16Ms : row.torchFp32Ms;
    r.cpuRel = cpuRel;
    try {
      ops::Conv2dOptions o;
      o.algo = algo;
      o.scratch = &scratch;
      o.label = row.layer;
      ops::Conv2dInfo info;
      std::vector<double> ms = timeConv(ctx, args, in, weights, bufferSink(view(result, dt, os)), o, info);
      r.algo = ops::convAlgoName(info.algo);
      r.tile = info.tile;
      for (auto& k : info.kernels) r.kernels += (r.kernels.empty() ? "" : "; ") + k;
      r.medianMs = percentile(ms, 0.5), r.p10Ms = percentile(ms, 0.1), r.p90Ms = percentile(ms, 0.9);
      r.tflops = flop / (r.medianMs * 1e-3) / 1e12;
      std::vector<float> got = downloadFloats(ctx, result, outCount, dt);
      for (size_t i = 0; i < outCount; ++i) {
        double d = std::abs(double(got[i]) - ref[i]);
        if (std::isnan(got[i])) d = INFINITY;
        r.maxAbs = std::max(r.maxAbs, d);
        r.maxRel = std::max(r.maxRel, d / std::max(1.0, std::abs(double(ref[i]))));
      }
    } catch (const Error& e) {
      r.error = e.what();
    }
    if (r.error.empty())
      std::printf("%-17s %-26s %-5s %-9s %9.4f %9.4f %9.4f %8.3f %8.4f %9.2e %9.2e %9.2e  %s\n", r.layer.c_str(),
                  r.shape.c_str(), r.precision.c_str(), r.algo.c_str(), r.medianMs, r.p10Ms, r.p90Ms, r.tflops,
                  r.torchMs, r.maxAbs, r.maxRel, r.cpuRel, r.tile.c_str());
    else
      std::printf("%-17s %-26s %-5s %-9s skipped: %s\n", r.layer.c_str(), r.shape.c_str(), r.precision.c_str(),
                  r.algo.c_str(), r.error.substr(r.error.rfind(": ") + 2).c_str());  // the failing condition
    std::fflush(stdout);
    results.push_back(r);
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Args args = parseArgs(argc, argv);
    Context ctx;
    std::printf("device: %s (%s)\n", ctx.info().name.c_str(), ctx.info().driverInfo.c_str());
    std::printf("%d warm-up + %d timed replays per row; time = sum of the conv's kernels (GPU timestamps)\n",
                args.warmup, args.reps);
    std::printf("%-17s %-26s %-5s %-9s %9s %9s %9s %8s %8s %9s %9s %9s  %s\n", "layer", "[N,Cin,Cout,H,W,K,s]", "prec",
                "algo", "median ms", "p10 ms", "p90 ms", "TFLOP/s", "torch ms", "abs-vs-gen", "rel-vs-gen", "cpu rel",
                "tile");
    std::vector<Result> results;
    for (const Row& row : kRows) {
      if (args.quick && std::find_if(std::begin(kQuickRows), std::end(kQuickRows),
                                     [&](const char* q) { return std::strcmp(q, row.layer) == 0; }) == std::end(kQuickRows))
        continue;
      if (!args.rows.empty() && std::string(row.layer).find(args.rows) == std::string::npos) continue;
      for (DType dt : args.precisions) {
        try {
          benchRow(ctx, args, row, dt, results);
        } catch (const Error& e) {
          std::printf("%-17s %s: %s\n", row.layer, dtypeName(dt), e.what());
        }
      }
    }
    if (!args.json.empty()) writeJson(args.json, ctx.info().name, results);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_conv2d: %s\n", e.what());
    return 1;
  }
}
