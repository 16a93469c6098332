#include "ops/conv2d_plan.h"

#include "engine/error.h"

namespace sdgen::ops {

static constexpr int64_t kInt32Limit = int64_t(1) << 31;  // kernels index elements with 32-bit ints

const char* convAlgoName(ConvAlgo a) {
  switch (a) {
    case ConvAlgo::Auto: return "auto";
    case ConvAlgo::General: return "general";
    case ConvAlgo::GemmV2: return "gemm-v2";
    case ConvAlgo::Winograd: return "winograd";
  }
  return "?";
}

ConvAlgo parseConvAlgo(const std::string& name) {
  for (ConvAlgo a : {ConvAlgo::Auto, ConvAlgo::General, ConvAlgo::GemmV2, ConvAlgo::Winograd})
    if (name == convAlgoName(a)) return a;
  throw Error("unknown conv algorithm '" + name + "' (expected auto, general, gemm-v2 or winograd)");
}

std::string ConvTile::str() const {
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

uint64_t ConvProblem::winogradMOffset() const {
  uint64_t v = uint64_t(36) * tiles() * cin * 4;
  return (v + 255) / 256 * 256;
}

uint64_t ConvProblem::winogradScratchBytes() const { return winogradMOffset() + uint64_t(36) * tiles() * cout * 4; }

std::string ConvProblem::str() const {
  auto s = [](int64_t a, int64_t b, int64_t c, int64_t d) {
    return "[" + std::to_string(a) + "," + std::to_string(b) + "," + std::to_string(c) + "," + std::to_string(d) + "]";
  };
  return s(n, h, w, cin) + " -> " + s(n, ho, wo, cout) + " " + p.str();
}

ConvTile chooseConvTile(int64_t m, int64_t n, const DeviceInfo& device, int64_t batch) {
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
  if (prob.cin % 4) return "Cin = " + std::to_string(prob.cin) + " is not a multiple of 4";
  if (prob.cout % 4) return "Cout = " + std::to_string(prob.cout) + " is not a multiple of 4";
  const bool winograd = algo == ConvAlgo::Winograd;
  if (winograd && !isWinogradGeometry(prob.p))
    return "the kernel geometry " + prob.p.str() + " is not 3x3 s1 p1 d1";
  if (winograd && !w.hasWinograd()) return "weights '" + w.name() + "' were packed without the Winograd layout";
  if (!winograd && !w.hasGemm()) return "weights '" + w.name() + "' were packed without the gemm layout";
  if (winograd && !cc.haveScratch) return "no scratch memory was given (Conv2dOptions::scratch)";
  if (winograd && 36 * prob.tiles() * std::max(prob.cin, prob.cout) >= kInt32Limit)
    return "the Winograd intermediates have 2^31 elements or more (32-bit indexing)";
  const int64_t rows = winograd ? prob.tiles() : prob.m();
  ConvTile t = tileFor(algo, prob, cc);
  if (!t.valid()) return "no GEMM tile fits the device's shared memory";
  if (t.sharedBytes() > d.sharedMemoryPerWorkgroup)
    return "tile " + t.str() + " needs " + std::to_string(t.sharedBytes()) + " bytes of shared memory, the device has " +
           std::to_string(d.sharedMemoryPerWorkgroup);
  std::string grid = checkGrid((rows + t.bm - 1) / t.bm, (prob.cout + t.bn - 1) / t.bn, winograd ? 36 : 1, d);
  if (!grid.empty()) return grid;
  if (winograd) {  // the transform kernels run one thread per tile and 4 channels on a 2-D grid
    int64_t groups = (prob.tiles() * std::max(prob.cin, prob.cout) / 4 + 255) / 256;
    return checkGrid(std::min<int64_t>(groups, d.maxWorkgroupCount[0]),
                     (groups + d.maxWorkgroupCount[0] - 1) / d.maxWorkgroupCount[0], 1, d);
  }
  return {};
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
  for (ConvAlgo a : {ConvAlgo::Winograd, ConvAlgo::GemmV2, ConvAlgo::General}) {
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

}  // namespace sdgen::ops
