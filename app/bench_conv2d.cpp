#include "app/bench_conv2d.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cmath>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <tuple>

#include "app/atomic_file.h"
#include "app/bench_conv2d_reference.h"
#include "app/conv_tune_report.h"
#include "engine/command_sequence.h"
#include "engine/error.h"
#include "engine/tensor_io.h"
#include "graph/expr.h"
#include "ops/conv2d.h"
#include "ops/conv2d_tune.h"
#include "ops/linear_gemm.h"

namespace sdgen::app {

namespace {

// --quick without --shape: every algorithm appears (Winograd, a strided gemm-v2, a 1x1).
const char* const kQuickLayers[] = {"unet.conv_in", "unet.d0.down", "unet.d1.skip1x1"};
constexpr int kCpuSamples = 256;

std::vector<float> randomVector(size_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-scale, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  double pos = q * double(v.size() - 1);
  size_t lo = size_t(pos), hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
}

struct Geometry {
  int pad, ho, wo;
  size_t inCount, outCount;
  double flop;
};
Geometry geometry(const ConvBenchShape& s) {
  Geometry g;
  g.pad = s.k / 2;
  g.ho = (s.h + 2 * g.pad - s.k) / s.stride + 1;
  g.wo = (s.w + 2 * g.pad - s.k) / s.stride + 1;
  g.inCount = size_t(s.n) * s.h * s.w * s.cin;
  g.outCount = size_t(s.n) * g.ho * g.wo * s.cout;
  g.flop = 2.0 * s.n * g.ho * g.wo * double(s.cout) * s.cin * s.k * s.k;
  return g;
}

// Max |got - ref| and max |got - ref| / max(1, |ref|) (NaN counts as infinitely far).
std::pair<double, double> difference(const std::vector<float>& got, const std::vector<float>& ref) {
  double maxAbs = 0, maxRel = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    double d = std::isnan(got[i]) ? INFINITY : std::abs(double(got[i]) - ref[i]);
    maxAbs = std::max(maxAbs, d);
    maxRel = std::max(maxRel, d / std::max(1.0, std::abs(double(ref[i]))));
  }
  return {maxAbs, maxRel};
}

// Max |gpu - ref| / max(1, |ref|) at `samples` random outputs, against a float64 CPU convolution.
double sampledCpuCheck(const ConvBenchShape& s, const Geometry& g, const std::vector<float>& x,
                       const std::vector<float>& w, const std::vector<float>& b, const std::vector<float>& out) {
  std::mt19937 rng(7);
  double worst = 0;
  for (int i = 0; i < kCpuSamples; ++i) {
    int n = int(rng() % s.n), oy = int(rng() % g.ho), ox = int(rng() % g.wo), co = int(rng() % s.cout);
    double acc = b[co];
    for (int ky = 0; ky < s.k; ++ky)
      for (int kx = 0; kx < s.k; ++kx) {
        int iy = oy * s.stride - g.pad + ky, ix = ox * s.stride - g.pad + kx;
        if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
        const float* px = &x[((size_t(n) * s.h + iy) * s.w + ix) * s.cin];
        for (int ci = 0; ci < s.cin; ++ci) acc += double(px[ci]) * w[((size_t(co) * s.cin + ci) * s.k + ky) * s.k + kx];
      }
    double got = out[((size_t(n) * g.ho + oy) * g.wo + ox) * s.cout + co];
    worst = std::max(worst, std::abs(got - acc) / std::max(1.0, std::abs(acc)));
  }
  return worst;
}

// Records the conv once, replays it warmup times (and for at least warmupMs), then reps times; per replay, the sum
// of its kernels' GPU times (ms), or the host time of the submission on a device without timestamps.
std::vector<double> timeConv(Context& ctx, const ConvBenchSettings& st, const graph::Expr& in,
                             const ops::Conv2dWeights& weights, const graph::Sink& out, const ops::Conv2dOptions& o,
                             ops::Conv2dInfo& info) {
  CommandSequence seq(ctx, {.timestamps = ctx.info().timestampsSupported});
  info = ops::conv2d(ctx, seq, in, weights, out, o);
  seq.end();
  const auto warm0 = std::chrono::steady_clock::now();
  auto warmMs = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - warm0).count();
  };
  constexpr int kMaxWarmupReplays = 100000;
  for (int i = 0; i < st.warmup || (i < kMaxWarmupReplays && warmMs() < st.warmupMs); ++i) seq.run();
  std::vector<double> ms;
  std::vector<std::vector<double>> perKernel;  // SDGEN_BENCH_KERNEL_TIMES=1: each launch's times (stderr)
  for (int i = 0; i < st.reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    seq.run();
    double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    auto t = seq.timings();
    double ns = 0;
    perKernel.resize(t.size());
    for (size_t k = 0; k < t.size(); ++k) ns += t[k].ns, perKernel[k].push_back(t[k].ns * 1e-6);
    ms.push_back(t.empty() ? wall : ns * 1e-6);
  }
  if (const char* v = std::getenv("SDGEN_BENCH_KERNEL_TIMES"); v && std::string(v) == "1") {
    const auto labels = seq.timings();
    for (size_t k = 0; k < perKernel.size() && k < labels.size(); ++k)
      std::fprintf(stderr, "kernel %8.4f ms  %s\n", timingStats(perKernel[k]).medianMs, labels[k].label.c_str());
  }
  return ms;
}

const char* precisionName(DType d) { return d == DType::F16 ? "fp16" : "fp32"; }

void printHeader(std::FILE* out, bool reference) {
  std::fprintf(out, "%-17s %-26s %-4s %-8s %9s %9s %8s %9s %9s %9s %8s %9s %9s %9s", "layer", "[N,Cin,Cout,H,W,K,s]",
               "prec", "algo", "median ms", "mean ms", "std ms", "min ms", "p10 ms", "p90 ms", "TFLOP/s", "abs-vs-gen",
               "rel-vs-gen", "cpu rel");
  if (reference) std::fprintf(out, " %10s %7s", "cuDNN ms", "ratio");
  std::fprintf(out, "  tile\n");
}

void printRow(std::FILE* out, const ConvBenchRow& r, bool reference) {
  if (!r.error.empty()) {
    std::fprintf(out, "%-17s %-26s %-4s %-8s skipped: %s\n", r.shape.layer.c_str(), r.shape.str().c_str(),
                 precisionName(r.precision), r.algo.c_str(), r.error.substr(r.error.rfind(": ") + 2).c_str());
    return;
  }
  std::fprintf(out, "%-17s %-26s %-4s %-8s %9.4f %9.4f %8.4f %9.4f %9.4f %9.4f %8.3f %9.2e %9.2e %9.2e",
               r.shape.layer.c_str(), r.shape.str().c_str(), precisionName(r.precision), r.algo.c_str(), r.time.medianMs,
               r.time.meanMs, r.time.stdMs, r.time.minMs, r.time.p10Ms, r.time.p90Ms, r.tflops, r.maxAbs, r.maxRel,
               r.cpuRel);
  if (reference) {
    if (r.haveReference) std::fprintf(out, " %10.4f %7.2f", r.reference.medianMs, r.ratio);
    else std::fprintf(out, " %10s %7s", "-", "-");
  }
  std::fprintf(out, "  %s\n", r.tile.c_str());
  std::fflush(out);
}

void benchShape(Context& ctx, const ConvBenchSettings& st, const ConvBenchShape& s, DType dt, CudnnReference* cudnn,
                ops::ConvTuner* tuner, ConvBenchReport& report, std::FILE* out) {
  using namespace graph;
  const Geometry g = geometry(s);
  // Inputs in [-1, 1]; weights scaled by 1/sqrt(fan-in) so outputs stay O(1) in fp16. Seeds depend on the shape
  // only, so every algorithm, precision and the reference see the same problem.
  std::vector<float> x = randomVector(g.inCount, 1000u + s.cin, 1.0f);
  std::vector<float> w = randomVector(size_t(s.cout) * s.cin * s.k * s.k, 2000u + s.cout,
                                      1.0f / std::sqrt(float(s.cin * s.k * s.k)));
  std::vector<float> b = randomVector(s.cout, 3000u, 0.1f);
  for (auto& v : x) v = roundToStorage(dt, v);  // what the device holds
  for (auto& v : w) v = roundToStorage(dt, v);  // an fp16 checkpoint's values
  Allocation xa = uploadFloats(ctx, x, dt, "bench input");
  ops::Conv2dWeightsOptions wopt;
  wopt.storage = dt;
  wopt.name = s.layer;
  // coop-winograd-rows' filters as a model packs them where the autotune chose it (made once, not per call)
  wopt.packWinogradRows =
      ops::gemmCoopSupported(ctx.info()) &&
      ops::winogradRowsLayoutViolation(s.cout, s.cin, ops::Conv2dParams::square(s.k, s.stride), dt).empty();
  // ... and coop-winograd's, made by its first recording as a model's are
  wopt.winogradF23OnUse =
      ops::gemmCoopSupported(ctx.info()) &&
      ops::winogradF23LayoutViolation(s.cout, s.cin, ops::Conv2dParams::square(s.k, s.stride), dt).empty();
  ops::Conv2dWeights weights(ctx, s.cout, s.cin, ops::Conv2dParams::square(s.k, s.stride), w, b, wopt);
  Allocation general = ctx.allocate(g.outCount * dtypeSize(dt), "bench general output");
  Allocation result = ctx.allocate(g.outCount * dtypeSize(dt), "bench output");
  ops::Conv2dScratch scratch(ctx, "bench conv scratch");
  Expr in = buffer(view(xa, dt, {s.n, s.h, s.w, s.cin}));
  Shape os = {s.n, g.ho, g.wo, s.cout};

  // The general kernel's output: the baseline of the other algorithms and of the reference.
  {
    CommandSequence seq(ctx);
    ops::Conv2dOptions o;
    o.algo = ops::ConvAlgo::General;
    o.label = s.layer;
    ops::conv2d(ctx, seq, in, weights, bufferSink(view(general, dt, os)), o);
    seq.run();
  }
  std::vector<float> ref = downloadFloats(ctx, general, g.outCount, dt);
  const double cpuRel = sampledCpuCheck(s, g, x, w, b, ref);

  // cuDNN once per shape and precision; every algorithm's row carries it.
  std::optional<ReferenceTiming> cudnnTiming;
  std::pair<double, double> cudnnDiff{0, 0};
  if (cudnn) {
    ReferenceConvProblem p{s.n, s.cin, s.cout, s.h, s.w, s.k, s.stride, g.pad, dt == DType::F16, st.warmup, st.reps};
    cudnnTiming = cudnn->run(p, x, w, b);
    cudnnDiff = difference(cudnnTiming->output, ref);
    report.referenceDevice = cudnn->device();
  }

  // One row per algorithm, then (a tuner given) what the product runs: the autotune's plan of the problem
  // (ops::ConvTuner, as generation and --profile-conv run it), its candidate's name and source as the tile.
  const size_t rows = st.algos.size() + (tuner ? 1 : 0);
  for (size_t i = 0; i < rows; ++i) {
    const bool tunedRow = i >= st.algos.size();
    const ops::ConvAlgo algo = tunedRow ? ops::ConvAlgo::Auto : st.algos[i];
    ConvBenchRow r;
    r.shape = s;
    r.precision = dt;
    r.algo = tunedRow ? "tuned" : ops::convAlgoName(algo);
    r.cpuRel = cpuRel;
    try {
      ops::Conv2dOptions o;
      o.algo = algo;
      o.scratch = &scratch;
      o.label = s.layer;
      std::string source = "rule";
      if (tunedRow && tuner->enabled()) {  // as ops::conv2d consults a tuner that is on
        ops::ConvProblem prob;
        prob.n = s.n, prob.h = s.h, prob.w = s.w, prob.cin = s.cin, prob.ho = g.ho, prob.wo = g.wo, prob.cout = s.cout;
        prob.p = ops::Conv2dParams::square(s.k, s.stride);
        const bool rawHalf = dt == DType::F16 && s.cin % 8 == 0;  // a dense fp16 buffer, as the engine's
        const ops::ConvPlan plan = tuner->plan(prob, {ctx.info(), weights, true, {}, rawHalf}, s.layer);
        o.candidate = plan.candidate;  // none: the rule (tuning off, or nothing to choose between)
        source = plan.source;
      }
      ops::Conv2dInfo info;
      std::vector<double> ms = timeConv(ctx, st, in, weights, bufferSink(view(result, dt, os)), o, info);
      r.algo = tunedRow ? "tuned" : ops::convAlgoName(info.algo);
      r.tile = tunedRow ? (info.candidate.empty() ? ops::convAlgoName(info.algo) + std::string(" ") + info.tile
                                                  : info.candidate) + " [" + source + "]"
                        : info.tile;
      for (auto& k : info.kernels) r.kernels += (r.kernels.empty() ? "" : "; ") + k;
      r.time = timingStats(ms);
      r.reps = int(ms.size());
      r.tflops = g.flop / (r.time.medianMs * 1e-3) / 1e12;
      std::tie(r.maxAbs, r.maxRel) = difference(downloadFloats(ctx, result, g.outCount, dt), ref);
      if (cudnnTiming) {
        r.haveReference = true;
        r.reference = {cudnnTiming->medianMs, cudnnTiming->meanMs, cudnnTiming->stdMs,
                       cudnnTiming->minMs,    cudnnTiming->p10Ms,  cudnnTiming->p90Ms};
        r.referenceAlgo = cudnnTiming->algorithm;
        std::tie(r.referenceMaxAbs, r.referenceMaxRel) = cudnnDiff;
        r.ratio = r.time.medianMs / cudnnTiming->medianMs;
      }
    } catch (const Error& e) {
      r.error = e.what();
    }
    printRow(out, r, cudnn != nullptr);
    report.rows.push_back(std::move(r));
  }
}

}  // namespace

std::string ConvBenchShape::str() const {
  return "[" + std::to_string(n) + "," + std::to_string(cin) + "," + std::to_string(cout) + "," + std::to_string(h) +
         "," + std::to_string(w) + "," + std::to_string(k) + "," + std::to_string(stride) + "]";
}

const std::vector<ConvBenchShape>& sdConvShapes() {
  // [N, Cin, Cout, H, W, K, stride] and the anchor's PyTorch times (fp32 with TF32 off, fp16), milliseconds.
  static const std::vector<ConvBenchShape> rows = {
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
  return rows;
}

std::vector<ConvBenchShape> quickConvShapes() {
  std::vector<ConvBenchShape> out;
  for (const auto& s : sdConvShapes())
    if (std::find(std::begin(kQuickLayers), std::end(kQuickLayers), s.layer) != std::end(kQuickLayers)) out.push_back(s);
  return out;
}

TimingStats timingStats(const std::vector<double>& ms) {
  if (ms.empty()) throw Error("timingStats: no samples");
  TimingStats t;
  double sum = 0, sq = 0;
  for (double v : ms) sum += v;
  t.meanMs = sum / double(ms.size());
  for (double v : ms) sq += (v - t.meanMs) * (v - t.meanMs);
  t.stdMs = std::sqrt(sq / double(ms.size()));
  t.minMs = *std::min_element(ms.begin(), ms.end());
  t.medianMs = percentile(ms, 0.5);
  t.p10Ms = percentile(ms, 0.1);
  t.p90Ms = percentile(ms, 0.9);
  return t;
}

ConvBenchSettings benchSettings(const CliOptions& o) {
  ConvBenchSettings st;
  switch (o.precision) {
    case PrecisionChoice::F32: st.precisions = {DType::F32}; break;
    case PrecisionChoice::F16: st.precisions = {DType::F16}; break;
    case PrecisionChoice::Auto: st.precisions = {DType::F32, DType::F16}; break;
  }
  if (o.benchAlgo == "all") {  // coop rows say why where the device or the precision has no tensor cores
    st.algos = {ops::ConvAlgo::General, ops::ConvAlgo::GemmV2, ops::ConvAlgo::Winograd, ops::ConvAlgo::Coop,
                ops::ConvAlgo::Direct, ops::ConvAlgo::CoopWinograd};
    st.tuned = true;
  } else if (o.benchAlgo == "tuned") {
    st.tuned = true;
  } else {
    st.algos = {ops::parseConvAlgo(o.benchAlgo)};
  }
  st.autotune = autotuneSettings(o);
  st.autotune.retune = !o.noAutotune;  // a benchmark measures afresh (and rewrites the cache's entries, as --retune)
  if (o.benchShape) {
    const ConvShapeArg& a = *o.benchShape;
    st.shapes = {{"shape", a.n, a.cin, a.cout, a.h, a.w, a.k, a.stride}};
  } else {
    st.shapes = o.quick ? quickConvShapes() : sdConvShapes();
  }
  st.warmup = o.warmup.value_or(o.quick ? 1 : 3);
  st.warmupMs = o.quick || st.warmup == 0 ? 0 : 300;
  st.reps = o.reps.value_or(o.quick ? 3 : 20);
  st.cudnn = o.reference == "cudnn";
  return st;
}

ConvBenchReport runConvBench(Context& ctx, const ConvBenchSettings& st, std::FILE* out) {
  ConvBenchReport report;
  report.device = ctx.info().name + " (" + ctx.info().driverInfo + ")";
  report.warmup = st.warmup;
  report.warmupMs = st.warmupMs;
  report.reps = st.reps;
  std::unique_ptr<CudnnReference> cudnn;
  if (st.cudnn) cudnn = CudnnReference::open();  // fails before any row when the plugin or device is missing

  std::fprintf(out, "device: %s\n%d warm-up (and at least %d ms of them) + %d timed replays per row; time = sum of "
               "the conv's kernels (%s)\n",
               report.device.c_str(), st.warmup, st.warmupMs, st.reps,
               ctx.info().timestampsSupported ? "GPU timestamps" : "host time: the device has no timestamps");
  if (cudnn) std::fprintf(out, "reference: cuDNN's fastest forward algorithm (%s), bias not timed\n", cudnn->pluginPath().c_str());
  printHeader(out, cudnn != nullptr);
  std::unique_ptr<ops::ConvTuner> tuner;
  if (st.tuned) tuner = std::make_unique<ops::ConvTuner>(ctx, st.autotune);
  for (const ConvBenchShape& s : st.shapes)
    for (DType dt : st.precisions) benchShape(ctx, st, s, dt, cudnn.get(), tuner.get(), report, out);
  // (the tuned rows: candidates the tuner could not record or compile are named, not just left out)
  if (tuner && tuner->stats().dropped > 0)
    for (const std::string& d : tuner->droppedCandidates()) std::fprintf(out, "autotune dropped: %s\n", d.c_str());

  if (cudnn) {
    for (DType dt : st.precisions) {
      // The best of our algorithms per shape against cuDNN, geometric mean over the shapes.
      std::map<std::string, double> best;
      for (const auto& r : report.rows)
        if (r.precision == dt && r.haveReference && r.error.empty()) {
          auto key = r.shape.layer + r.shape.str();
          auto it = best.find(key);
          if (it == best.end() || r.ratio < it->second) best[key] = r.ratio;
        }
      if (best.empty()) continue;
      double logSum = 0;
      for (auto& [k, v] : best) logSum += std::log(v);
      double gm = std::exp(logSum / double(best.size()));
      report.geomeanBest.push_back({precisionName(dt), gm});
      std::fprintf(out, "%s: geometric mean of ours/cuDNN (best algorithm per row) over %zu rows: %.3f\n",
                   precisionName(dt), best.size(), gm);
    }
  }
  return report;
}

std::string convBenchJson(const ConvBenchReport& report) {
  using nlohmann::json;
  json rows = json::array();
  auto stats = [](const TimingStats& t) {
    return json{{"median_ms", t.medianMs}, {"mean_ms", t.meanMs}, {"std_ms", t.stdMs},
                {"min_ms", t.minMs},       {"p10_ms", t.p10Ms},   {"p90_ms", t.p90Ms}};
  };
  for (const auto& r : report.rows) {
    json j{{"layer", r.shape.layer},
           {"shape", r.shape.str()},
           {"n", r.shape.n}, {"cin", r.shape.cin}, {"cout", r.shape.cout}, {"h", r.shape.h}, {"w", r.shape.w},
           {"k", r.shape.k}, {"stride", r.shape.stride},
           {"precision", precisionName(r.precision)},
           {"algo", r.algo},
           {"error", r.error}};
    if (r.error.empty()) {
      j.update(stats(r.time));
      j["reps"] = r.reps;
      j["tile"] = r.tile;
      j["kernels"] = r.kernels;
      j["tflops"] = r.tflops;
      j["max_abs_vs_general"] = r.maxAbs;
      j["max_rel_vs_general"] = r.maxRel;
      j["cpu_rel"] = r.cpuRel;
      j["anchor_torch_ms"] = r.precision == DType::F16 ? r.shape.anchorFp16Ms : r.shape.anchorFp32Ms;
      if (r.haveReference) {
        j["cudnn"] = stats(r.reference);
        j["cudnn"]["algo"] = r.referenceAlgo;
        j["cudnn"]["max_abs_vs_general"] = r.referenceMaxAbs;
        j["cudnn"]["max_rel_vs_general"] = r.referenceMaxRel;
        j["ratio_vs_cudnn"] = r.ratio;
      }
    }
    rows.push_back(std::move(j));
  }
  json root{{"device", report.device}, {"warmup", report.warmup}, {"warmup_ms", report.warmupMs}, {"reps", report.reps},
            {"rows", rows}};
  if (!report.referenceDevice.empty()) root["reference_device"] = report.referenceDevice;
  if (!report.geomeanBest.empty()) {
    json gm = json::object();
    for (auto& [p, v] : report.geomeanBest) gm[p] = v;
    root["geomean_ratio_vs_cudnn_best"] = gm;
  }
  return root.dump(1) + "\n";
}

int runBenchConv2d(const CliOptions& options, std::FILE* out, std::FILE*) {
  ConvBenchSettings st = benchSettings(options);
  ContextOptions co;
  co.deviceIndex = options.device;
  Context ctx(co);
  ConvBenchReport report = runConvBench(ctx, st, out);
  if (!options.jsonPath.empty()) {
    std::string json = convBenchJson(report);
    writeFileAtomically(options.jsonPath, std::span(reinterpret_cast<const uint8_t*>(json.data()), json.size()));
  }
  return 0;
}

}  // namespace sdgen::app
