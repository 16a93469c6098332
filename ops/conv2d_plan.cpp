#include "ops/conv2d_plan.h"

#include <algorithm>

#include "engine/error.h"
#include "ops/conv2d_candidates.h"
#include "ops/linear_gemm.h"

namespace sdgen::ops {

static constexpr int64_t kInt32Limit = int64_t(1) << 31;  // kernels index elements with 32-bit ints
// shaders/conv/conv_direct.slang: 16 x 16 output pixels per workgroup, an 18 x 18 x 16-channel fp32 halo and
// 9 x 16 float4 weights in shared memory.
static constexpr int kDirectConvTile = 16;
static constexpr uint32_t kDirectConvSharedBytes = (18 * 18 * 16 + 9 * 16 * 4) * 4;

const char* convAlgoName(ConvAlgo a) {
  switch (a) {
    case ConvAlgo::Auto: return "auto";
    case ConvAlgo::General: return "general";
    case ConvAlgo::GemmV2: return "gemm-v2";
    case ConvAlgo::Winograd: return "winograd";
    case ConvAlgo::Coop: return "coop";
    case ConvAlgo::Direct: return "direct";
    case ConvAlgo::CoopWinograd: return "coop-winograd";
    case ConvAlgo::CoopWinogradRows: return "coop-winograd-rows";
  }
  return "?";
}

ConvAlgo parseConvAlgo(const std::string& name) {
  for (ConvAlgo a : {ConvAlgo::Auto, ConvAlgo::General, ConvAlgo::GemmV2, ConvAlgo::Winograd, ConvAlgo::Coop,
                     ConvAlgo::Direct, ConvAlgo::CoopWinograd, ConvAlgo::CoopWinogradRows})
    if (name == convAlgoName(a)) return a;
  throw Error("unknown conv algorithm '" + name.substr(0, 64) +
              "' (expected auto, general, gemm-v2, winograd, coop, direct, coop-winograd or coop-winograd-rows)");
}

std::string ConvTile::str() const {
  if (lanes) return std::to_string(bm) + "x" + std::to_string(bn) + " lanes (" + std::to_string(tm) + " rows per lane)";
  return std::to_string(bm) + "x" + std::to_string(bn) + " (" + std::to_string(tm) + "x" + std::to_string(tn) +
         " per thread)";
}

const std::vector<ConvTile>& convTiles() {
  // (BM / TM) * (BN / TN) == 256 threads and BM % 64 == 0 (gemm_core.slang's load pattern).
  static const std::vector<ConvTile> tiles = {
      {128, 128, 8, 8}, {128, 64, 8, 4}, {64, 128, 4, 8}, {64, 64, 4, 4}, {256, 32, 8, 4}, {256, 16, 4, 4},
  };
  return tiles;
}

ConvTile findConvTile(int bm, int bn) {
  for (auto& t : convTiles())
    if (t.bm == bm && t.bn == bn) return t;
  return {};
}

int64_t ConvProblem::winogradBandTiles(int64_t forced) const {
  const int64_t all = std::max<int64_t>(tiles(), 1);
  if (forced > 0) return std::min(all, forced);
  const uint64_t perTile = uint64_t(36) * uint64_t(std::max<int64_t>(cin + cout, 1)) * 4;
  const int64_t fit = int64_t(kWinogradBandBytes / perTile);
  if (fit >= all) return all;
  return std::max<int64_t>(256, fit / 256 * 256);
}

uint64_t ConvProblem::winogradMOffset(int64_t band) const {
  uint64_t v = uint64_t(36) * band * cin * 4;
  return (v + 255) / 256 * 256;
}

uint64_t ConvProblem::winogradScratchBytes(int64_t band) const {
  return winogradMOffset(band) + uint64_t(36) * band * cout * 4;
}

std::string ConvProblem::str() const {
  auto s = [](int64_t a, int64_t b, int64_t c, int64_t d) {
    return "[" + std::to_string(a) + "," + std::to_string(b) + "," + std::to_string(c) + "," + std::to_string(d) + "]";
  };
  return s(n, h, w, cin) + " -> " + s(n, ho, wo, cout) + " " + p.str();
}

// CPU devices with 8-lane subgroups (lavapipe): the lanes kernel; rows per lane by M (fewer for few rows,
// where most of a tall tile would be clamped padding), one or two 32-column groups by N.
static ConvTile cpuConvTile(int64_t m, int64_t n) {
  int tm = m <= 8 ? 1 : m <= 16 ? 2 : 4;  // 8 rows x 2 groups: faster, but minutes of llvmpipe compile
  return ConvTile::lanesTile(tm, 1);         // with fused sinks (docs/perf.md "lavapipe")
}

bool useCpuGemmKernels(const DeviceInfo& device) { return device.type == "cpu" && device.subgroupSize == 8; }

ConvTile chooseConvTile(int64_t m, int64_t n, const DeviceInfo& device, int64_t batch) {
  if (useCpuGemmKernels(device)) return cpuConvTile(m, n);
  // Narrow outputs take tall tiles so few columns are wasted; otherwise the largest tile that still gives
  // enough workgroups to occupy a large GPU (about two per multiprocessor of an H100), else the smallest.
  std::vector<std::pair<int, int>> prefs;
  if (n <= 16) prefs = {{256, 16}};
  else if (n <= 32) prefs = {{256, 32}};
  else if (n <= 64) prefs = {{128, 64}, {64, 64}};
  else prefs = {{128, 128}, {64, 128}, {64, 64}};
  constexpr int64_t kTargetGroups = 256;
  ConvTile fallback;
  for (auto [bm, bn] : prefs) {
    ConvTile t = findConvTile(bm, bn);
    if (t.sharedBytes() > device.sharedMemoryPerWorkgroup) continue;
    fallback = t;
    if (batch * ((m + bm - 1) / bm) * ((n + bn - 1) / bn) >= kTargetGroups) return t;
  }
  return fallback;
}

ConvTile generalConvTile(int64_t cout) { return cout <= 16 ? ConvTile{256, 16, 4, 4} : ConvTile{64, 64, 4, 4}; }

// The tile an algorithm runs with: the general kernel's own, a forced GEMM tile, or the shape's choice.
static ConvTile tileFor(ConvAlgo a, const ConvProblem& prob, const ConvContext& cc) {
  if (a == ConvAlgo::General) return generalConvTile(prob.cout);
  if (a == ConvAlgo::Direct) return ConvTile{kDirectConvTile, kDirectConvTile, 1, 4};  // 16 x 16 pixels, 1 x 4 each
  if (a == ConvAlgo::Coop) {  // the GEMM's own tile rule (ops/gemm_tile_choice.cpp); tm x tn unused
    GemmTile t = chooseGemmTile(prob.m(), prob.cout, prob.k(), cc.device, true);
    return ConvTile{t.bm, t.bn, 0, 0};
  }
  if (a == ConvAlgo::CoopWinograd) {
    GemmTile t = coopWinogradGemmTile(prob);
    return ConvTile{t.bm, t.bn, 0, 0};
  }
  if (a == ConvAlgo::CoopWinogradRows) {
    GemmTile t = coopWinogradRowsGemmTile(prob);
    return ConvTile{t.bm, t.bn, 0, 0};
  }
  if (cc.forcedTile.valid()) return cc.forcedTile;
  if (a == ConvAlgo::Winograd) return chooseConvTile(prob.tiles(), prob.cout, cc.device, 36);
  return chooseConvTile(prob.m(), prob.cout, cc.device);
}

static std::string checkGrid(int64_t gx, int64_t gy, int64_t gz, const DeviceInfo& d) {
  if (gx > d.maxWorkgroupCount[0] || gy > d.maxWorkgroupCount[1] || gz > d.maxWorkgroupCount[2])
    return "the grid " + std::to_string(gx) + "x" + std::to_string(gy) + "x" + std::to_string(gz) +
           " exceeds the device's workgroup count limits";
  return {};
}

// What both Winograd-on-tensor-core algorithms (coop-winograd, coop-winograd-rows) ask before their own checks.
static std::string coopWinogradCommonViolation(const ConvProblem& prob, const Conv2dWeights& w, const ConvContext& cc,
                                               const DeviceInfo& d) {
  if (!gemmCoopSupported(d)) return "the device has no 16x16x16 f16 x f16 -> f32 subgroup matrices with 32-wide subgroups";
  if (!w.hasGemm()) return "weights '" + w.name() + "' were packed without the gemm layout";
  if (w.storage() != DType::F16) return "weights '" + w.name() + "' are not stored in fp16";
  if (!isWinogradGeometry(prob.p)) return "the kernel geometry " + prob.p.str() + " is not 3x3 s1 p1 d1";
  if (prob.cin % 8) return "Cin = " + std::to_string(prob.cin) + " is not a multiple of 8";
  if (prob.cout % 8) return "Cout = " + std::to_string(prob.cout) + " is not a multiple of 8";
  if (!cc.haveScratch) return "no scratch memory was given (Conv2dOptions::scratch) for its filters and products";
  return {};
}

std::string contractViolation(ConvAlgo algo, const ConvProblem& prob, const ConvContext& cc) {
  const Conv2dWeights& w = cc.weights;
  const DeviceInfo& d = cc.device;
  if (prob.m() * prob.cout >= kInt32Limit || prob.n * prob.h * prob.w * prob.cin >= kInt32Limit)
    return "the input or output has 2^31 elements or more (32-bit indexing)";
  if (algo == ConvAlgo::General) {
    if (!w.hasGemm()) return "weights '" + w.name() + "' were packed without the gemm layout";
    if (d.sharedMemoryPerWorkgroup < kGeneralConvSharedBytes)
      return "the device has less than " + std::to_string(kGeneralConvSharedBytes) +
             " bytes of shared memory per workgroup";
    ConvTile t = tileFor(algo, prob, cc);
    return checkGrid((prob.m() + t.bm - 1) / t.bm, (prob.cout + t.bn - 1) / t.bn, 1, d);
  }
  if (algo == ConvAlgo::Direct) {
    if (!w.hasGemm()) return "weights '" + w.name() + "' were packed without the gemm layout";
    if (prob.cout > 4) return "Cout = " + std::to_string(prob.cout) + " is more than 4";
    if (prob.cin % 4) return "Cin = " + std::to_string(prob.cin) + " is not a multiple of 4";
    const Conv2dParams& p = prob.p;
    if (p.kh > 3 || p.kw > 3 || p.strideH != 1 || p.strideW != 1 || p.dilationH != 1 || p.dilationW != 1)
      return "the kernel geometry " + p.str() + " is not at most 3x3 with stride 1 and dilation 1";
    if (d.sharedMemoryPerWorkgroup < kDirectConvSharedBytes)
      return "the device has less than " + std::to_string(kDirectConvSharedBytes) + " bytes of shared memory per workgroup";
    return checkGrid((prob.wo + kDirectConvTile - 1) / kDirectConvTile, (prob.ho + kDirectConvTile - 1) / kDirectConvTile,
                     prob.n, d);
  }
  if (algo == ConvAlgo::CoopWinograd || algo == ConvAlgo::CoopWinogradRows) {
    if (std::string v = coopWinogradCommonViolation(prob, w, cc, d); !v.empty()) return v;
  }
  if (algo == ConvAlgo::CoopWinograd) {
    if (16 * prob.cin * prob.cout >= kInt32Limit) return "the transformed filters have 2^31 elements or more";
    return checkGrid((prob.cout + 63) / 64, (coopWinogradBandTiles(prob, 64) + 63) / 64, 16, d);
  }
  if (algo == ConvAlgo::CoopWinogradRows) {
    if (int64_t(kWinogradRowsProducts) * 3 * prob.cin * prob.cout >= kInt32Limit)
      return "the transformed filters have 2^31 elements or more";
    const GemmTile t = coopWinogradRowsGemmTile(prob);
    const int64_t band = winogradRowsBandRows(prob, t, 0);
    if (int64_t(kWinogradRowsProducts) * prob.n * band * prob.w * std::max(prob.cin, prob.cout) >= kInt32Limit)
      return "the transformed input or products of a band have 2^31 elements or more";
    return checkGrid((prob.cout + t.bn - 1) / t.bn, (prob.n * band * prob.w + t.bm - 1) / t.bm, 1, d);
  }
  if (algo == ConvAlgo::Coop) {
    if (!gemmCoopSupported(d)) return "the device has no 16x16x16 f16 x f16 -> f32 subgroup matrices with 32-wide subgroups";
    if (!w.hasGemm()) return "weights '" + w.name() + "' were packed without the gemm layout";
    if (w.storage() != DType::F16) return "weights '" + w.name() + "' are not stored in fp16";
    if (prob.cin % 8) return "Cin = " + std::to_string(prob.cin) + " is not a multiple of 8";
    if (prob.cout % 8) return "Cout = " + std::to_string(prob.cout) + " is not a multiple of 8";
    const Conv2dParams& p = prob.p;
    if (std::max({p.strideH, p.strideW, p.padH, p.padW, p.dilationH, p.dilationW}) > 255)
      return "strides, paddings and dilations must be below 256";
    if (!cc.inputRawHalf && !cc.haveScratch)
      return "the input is not a dense fp16 NHWC tensor and no scratch memory was given to stage it";
    if (prob.k() * prob.cout >= kInt32Limit) return "the weights have 2^31 elements or more (32-bit indexing)";
    GemmTile t = chooseGemmTile(prob.m(), prob.cout, prob.k(), d, true);
    return checkGrid((prob.cout + t.bn - 1) / t.bn, (prob.m() + t.bm - 1) / t.bm, 1, d);
  }
  if (prob.cin % 4) return "Cin = " + std::to_string(prob.cin) + " is not a multiple of 4";
  if (prob.cout % 4) return "Cout = " + std::to_string(prob.cout) + " is not a multiple of 4";
  const bool winograd = algo == ConvAlgo::Winograd;
  if (winograd && !isWinogradGeometry(prob.p))
    return "the kernel geometry " + prob.p.str() + " is not 3x3 s1 p1 d1";
  if (winograd && !w.hasWinograd()) return "weights '" + w.name() + "' were packed without the Winograd layout";
  if (!winograd && !w.hasGemm()) return "weights '" + w.name() + "' were packed without the gemm layout";
  if (winograd && !cc.haveScratch) return "no scratch memory was given (Conv2dOptions::scratch)";
  const int64_t band = prob.winogradBandTiles();  // Winograd's launches run per band of tiles
  if (winograd && 36 * band * std::max(prob.cin, prob.cout) >= kInt32Limit)
    return "the Winograd intermediates of a band have 2^31 elements or more (32-bit indexing)";
  const int64_t rows = winograd ? band : prob.m();
  ConvTile t = tileFor(algo, prob, cc);
  if (!t.valid()) return "no GEMM tile fits the device's shared memory";
  if (t.sharedBytes() > d.sharedMemoryPerWorkgroup)
    return "tile " + t.str() + " needs " + std::to_string(t.sharedBytes()) + " bytes of shared memory, the device has " +
           std::to_string(d.sharedMemoryPerWorkgroup);
  std::string grid = checkGrid((rows + t.bm - 1) / t.bm, (prob.cout + t.bn - 1) / t.bn, winograd ? 36 : 1, d);
  if (!grid.empty()) return grid;
  if (winograd) {  // the transform kernels run one thread per tile and 4 channels on a 2-D grid
    int64_t groups = (band * std::max(prob.cin, prob.cout) / 4 + 255) / 256;
    return checkGrid(std::min<int64_t>(groups, d.maxWorkgroupCount[0]),
                     (groups + d.maxWorkgroupCount[0] - 1) / d.maxWorkgroupCount[0], 1, d);
  }
  return {};
}

bool coopConvChosen(const DeviceInfo& device, DType storage, int64_t cin, int64_t cout) {
  // The conditions of contractViolation(Coop) that do not depend on the input or the image size (a layer
  // built by nn::Builder always has scratch memory to stage a computed input).
  return gemmCoopSupported(device) && storage == DType::F16 && cin % 8 == 0 && cout % 8 == 0;
}

ConvPlan planConv(ConvAlgo requested, const ConvProblem& prob, const ConvContext& cc, const std::string& label) {
  ConvPlan plan;
  if (requested != ConvAlgo::Auto) {
    std::string why = contractViolation(requested, prob, cc);
    if (!why.empty())
      throw Error(label + ": algorithm " + convAlgoName(requested) + " was forced but its contract does not hold for " +
                  prob.str() + ": " + why);
    plan.algo = requested;
    plan.tile = tileFor(requested, prob, cc);
    return plan;
  }
  // Tensor cores are a candidate only where the device has them and the weights are fp16 (the fp16
  // precision); elsewhere they are not listed among the skipped algorithms.
  const bool coopCandidate = gemmCoopSupported(cc.device) && cc.weights.storage() == DType::F16;
  // Direct on GPUs where its 16 x 16 pixel blocks fill the device: the H100 ran the VAE's conv_out (Cout 3,
  // 1024 blocks) in 0.30 ms instead of the general kernel's 1.78, but the UNet's (Cout 4, 64 x 64 latents
  // x 2: 32 blocks) in 0.12 ms against Winograd's 0.06. CPU devices (lavapipe) keep their measured lanes
  // kernels, and take direct only where Cout is not a multiple of 4, i.e. where the general kernel would run
  // instead: the built-in model's VAE conv_out (32 -> 3 channels, 64 x 64) 85 -> 9.8 ms alone, 393 -> 40 ms
  // with its group norm + SiLU input (session 32).
  constexpr int64_t kDirectMinBlocks = 256;
  const int64_t directBlocks = prob.n * ((prob.ho + kDirectConvTile - 1) / kDirectConvTile) *
                               ((prob.wo + kDirectConvTile - 1) / kDirectConvTile);
  const bool directCandidate =
      useCpuGemmKernels(cc.device) ? prob.cout % 4 != 0 : directBlocks >= kDirectMinBlocks;
  for (ConvAlgo a : {ConvAlgo::Direct, ConvAlgo::Coop, ConvAlgo::Winograd, ConvAlgo::GemmV2, ConvAlgo::General}) {
    if (a == ConvAlgo::Coop && !coopCandidate) continue;
    if (a == ConvAlgo::Direct && !directCandidate) continue;
    std::string why = contractViolation(a, prob, cc);
    if (why.empty()) {
      plan.algo = a;
      plan.tile = tileFor(a, prob, cc);
      return plan;
    }
    plan.skipped.push_back(std::string(convAlgoName(a)) + ": " + why);
  }
  throw Error(label + ": no convolution algorithm can run " + prob.str() + " (" + plan.skipped.back() + ")");
}

const char* convKernelRoleName(ConvKernelRole r) {
  switch (r) {
    case ConvKernelRole::Direct: return "gemm";
    case ConvKernelRole::InputTransform: return "input transform";
    case ConvKernelRole::Gemm: return "gemm";
    case ConvKernelRole::OutputTransform: return "output transform";
    case ConvKernelRole::SplitSum: return "split-K sum";
    case ConvKernelRole::FilterTransform: return "filter transform";
    case ConvKernelRole::NormTable: return "norm table";
  }
  return "?";
}

namespace {
// The kernel names of ops/conv2d_kernels.cpp; those with a tile are followed by "BMxBN" and optional variant
// words ("64x64", "32x32 lanes").
struct ConvKernelPattern {
  const char* name;
  ConvAlgo algo;
  ConvKernelRole role;
  bool tiled;
};
constexpr ConvKernelPattern kConvKernelPatterns[] = {
    {"coop-winograd-rows input transform", ConvAlgo::CoopWinogradRows, ConvKernelRole::InputTransform, false},  // V
    {"coop-winograd-rows input", ConvAlgo::CoopWinogradRows, ConvKernelRole::InputTransform, false},  // staged
    {"coop-winograd-rows affine", ConvAlgo::CoopWinogradRows, ConvKernelRole::NormTable, false},
    {"coop-winograd-rows filter", ConvAlgo::CoopWinogradRows, ConvKernelRole::FilterTransform, false},
    {"coop-winograd-rows output", ConvAlgo::CoopWinogradRows, ConvKernelRole::OutputTransform, false},
    {"coop-winograd-rows gemm", ConvAlgo::CoopWinogradRows, ConvKernelRole::Gemm, true},
    {"coop-winograd input transform", ConvAlgo::CoopWinograd, ConvKernelRole::InputTransform, false},  // V
    {"coop-winograd input", ConvAlgo::CoopWinograd, ConvKernelRole::InputTransform, false},  // staged into fp16
    {"coop-winograd affine", ConvAlgo::CoopWinograd, ConvKernelRole::NormTable, false},  // a group norm's table
    {"coop-winograd filter", ConvAlgo::CoopWinograd, ConvKernelRole::FilterTransform, false},
    {"coop-winograd output", ConvAlgo::CoopWinograd, ConvKernelRole::OutputTransform, false},
    {"coop-winograd gemm", ConvAlgo::CoopWinograd, ConvKernelRole::Gemm, true},
    {"winograd input", ConvAlgo::Winograd, ConvKernelRole::InputTransform, false},
    {"winograd output", ConvAlgo::Winograd, ConvKernelRole::OutputTransform, false},
    {"winograd gemm", ConvAlgo::Winograd, ConvKernelRole::Gemm, true},
    {"gemm-v2", ConvAlgo::GemmV2, ConvKernelRole::Direct, true},
    {"general", ConvAlgo::General, ConvKernelRole::Direct, true},
    {"coop input", ConvAlgo::Coop, ConvKernelRole::InputTransform, false},  // the input staged into fp16
    {"coop affine", ConvAlgo::Coop, ConvKernelRole::NormTable, false},  // a group norm's [N, 2 Cin] table
    {"coop split-K sum", ConvAlgo::Coop, ConvKernelRole::SplitSum, false},
    {"coop phase filters", ConvAlgo::Coop, ConvKernelRole::FilterTransform, false},  // an upsampling's phases
    {"coop phases", ConvAlgo::Coop, ConvKernelRole::Direct, true},
    {"coop", ConvAlgo::Coop, ConvKernelRole::Direct, true},
    {"direct affine", ConvAlgo::Direct, ConvKernelRole::NormTable, false},  // a group norm's table
    {"direct split sum", ConvAlgo::Direct, ConvKernelRole::SplitSum, false},
    {"direct", ConvAlgo::Direct, ConvKernelRole::Direct, true},
};

// "BMxBN[ variant...]" -> BM, BN (both positive, at most 5 digits each).
bool parseTileText(const std::string& s, int& bm, int& bn) {
  const std::string first = s.substr(0, s.find(' '));
  const size_t x = first.find('x');
  if (x == std::string::npos || x == 0 || x + 1 == first.size() || x > 5 || first.size() - x - 1 > 5) return false;
  for (size_t i = 0; i < first.size(); ++i)
    if (i != x && (first[i] < '0' || first[i] > '9')) return false;
  bm = std::stoi(first.substr(0, x));
  bn = std::stoi(first.substr(x + 1));
  return bm > 0 && bn > 0;
}
}  // namespace

std::optional<ConvKernelId> parseConvKernelLabel(const std::string& kernel) {
  for (const auto& p : kConvKernelPatterns) {
    const std::string name = p.name;
    ConvKernelId id{p.algo, p.role};
    if (!p.tiled) {
      // Elementwise launches (coop's input staging) may add " (interior)" / " (border)" to the label.
      if (kernel == name || kernel.rfind(name + " (", 0) == 0) return id;
      continue;
    }
    if (kernel.size() > name.size() + 1 && kernel.compare(0, name.size() + 1, name + " ") == 0) {
      id.tile = kernel.substr(name.size() + 1);
      if (parseTileText(id.tile, id.bm, id.bn)) return id;
    }
  }
  return std::nullopt;
}

std::optional<std::pair<std::string, ConvKernelId>> splitConvDispatchLabel(const std::string& label) {
  // The kernel name is the label's tail: the right-most kernel name that parses wins.
  std::optional<std::pair<std::string, ConvKernelId>> best;
  size_t bestCut = 0;
  for (const auto& p : kConvKernelPatterns) {
    const size_t cut = label.rfind(std::string(" ") + p.name);
    if (cut == std::string::npos || cut == 0 || (best && cut <= bestCut)) continue;
    if (auto id = parseConvKernelLabel(label.substr(cut + 1))) {
      best = std::make_pair(label.substr(0, cut), *id);
      bestCut = cut;
    }
  }
  return best;
}

double convDirectFlops(const ConvProblem& p) { return 2.0 * double(p.m()) * double(p.cout) * double(p.k()); }

ConvKernelCost convKernelCost(const ConvProblem& p, ConvKernelRole role, DType activations, DType weights,
                              ConvAlgo algo) {
  const double act = dtypeSize(activations), wt = dtypeSize(weights);
  const double in = double(p.n) * p.h * p.w * p.cin, out = double(p.m()) * p.cout;
  const double t = double(p.tiles());
  if (role == ConvKernelRole::NormTable) return {0.0, double(p.n) * 2 * p.cin * 4};
  if (algo == ConvAlgo::Coop && role == ConvKernelRole::InputTransform) return {0.0, in * act + in * 2};
  if (algo == ConvAlgo::CoopWinograd) {
    const double t2 = double(p.tilesF23()), u = 16.0 * p.cin * p.cout;
    switch (role) {
      case ConvKernelRole::FilterTransform:  // (G g G^T) from the gemm layout: up to 9 reads per value
        return {2.0 * 9 * u / 4, 9.0 * p.cin * p.cout * 2 + u * 2};
      case ConvKernelRole::InputTransform:  // the input staged into fp16 (one elementwise launch)
        return {0.0, in * act + in * 2};
      case ConvKernelRole::Gemm:  // V (made from the input while staging) x U -> M, fp16
        return {2.0 * 16 * t2 * p.cin * p.cout, in * 2 + u * 2 + 16.0 * t2 * p.cout * 2};
      case ConvKernelRole::OutputTransform:  // M -> Y (2x2 per tile) + bias
        return {24.0 * t2 * p.cout, 16.0 * t2 * p.cout * 2 + out * act + p.cout * 4.0};
      default: return {};
    }
  }
  if (algo == ConvAlgo::CoopWinogradRows) {  // F(6,3) along the rows: T tile rows of 6, 8 products each
    const double e = kWinogradRowsProducts, cells = double(p.n) * ((p.ho + 5) / 6) * p.w;
    const double u = e * 3 * p.cin * p.cout, v = e * cells * p.cin, m = e * cells * p.cout;
    switch (role) {
      case ConvKernelRole::FilterTransform:  // U_e(kx) = sum_ky G[e][ky] g(ky, kx) from the gemm layout
        return {2.0 * 3 * u, 9.0 * p.cin * p.cout * 2 + u * 2};
      case ConvKernelRole::InputTransform:  // 8 input rows per tile row -> V [8][N][T][W][Cin] fp16
        return {2.0 * 8 * v, in * act * 8 / 6 + v * 2};
      case ConvKernelRole::Gemm:  // 8 1x3 convolutions: V x U -> M, fp16
        return {2.0 * m * 3 * p.cin, v * 2 + u * 2 + m * 2};
      case ConvKernelRole::OutputTransform:  // M -> Y (6 rows per tile row) + bias
        return {2.0 * 6 * m, m * 2 + out * act + p.cout * 4.0};
      default: return {};
    }
  }
  switch (role) {
    case ConvKernelRole::Direct:
      return {convDirectFlops(p), in * act + double(p.k()) * p.cout * wt + out * act + p.cout * 4.0};
    case ConvKernelRole::InputTransform:  // d (6x6 per tile, read once) -> V [36, T, Cin] fp32
      return {2.0 * 2 * 6 * 6 * 6 * t * p.cin, in * act + 36.0 * t * p.cin * 4};
    case ConvKernelRole::Gemm:  // V [36, T, Cin] x U [36, Cin, Cout] -> M [36, T, Cout], all fp32
      return {2.0 * 36 * t * p.cin * p.cout, 36.0 * (t * p.cin + double(p.cin) * p.cout + t * p.cout) * 4};
    case ConvKernelRole::OutputTransform:  // M -> Y (4x4 per tile) + bias
      return {2.0 * (4 * 6 * 6 + 4 * 6 * 4) * t * p.cout, 36.0 * t * p.cout * 4 + out * act + p.cout * 4.0};
    case ConvKernelRole::SplitSum:  // at least two fp32 partials read, the output written (the adds uncounted)
      return {0.0, 2.0 * out * 4 + out * act + p.cout * 4.0};
    case ConvKernelRole::FilterTransform: return {};
  }
  return {};
}

}  // namespace sdgen::ops
