#include "ops/conv2d_candidates.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "engine/error.h"
#include "ops/linear_gemm.h"

namespace sdgen::ops {

static constexpr int64_t kInt32Limit = int64_t(1) << 31;
static constexpr int kCoopBk = 32;  // the coop tiles' K slice (ops/gemm_tile_choice.cpp chooseCoopTile)
// K per part of the 256x256 fp16-accumulator tile: one fp16 chunk, no flush (as ops::chooseSplitHalfTile).
static constexpr int64_t kHalfTileMaxPartK = kHalfTileChunkK;
// The fewest K parts (whole slices) of an fp16-accumulator tile: each part one fp16 chunk.
static int fewestHalfParts(int64_t slices) {
  return normalizedSplitParts((slices * kCoopBk + kHalfTileMaxPartK - 1) / kHalfTileMaxPartK, slices);
}

std::string ConvCandidate::name() const {
  std::string s = convAlgoName(algo);
  if (algo == ConvAlgo::Direct && splitK > 1) return s + " split " + std::to_string(splitK);
  if (algo == ConvAlgo::General || algo == ConvAlgo::Direct) return s;
  s += " " + std::to_string(tile.bm) + "x" + std::to_string(tile.bn);
  if (tile.lanes) s += " lanes";
  if (halfAccumulators) s += " f16acc";
  if (halo) s += haloWinograd ? " halo-f23" : haloTaps == 3 ? " halo3" : " halo";
  if (algo == ConvAlgo::Coop && splitK > 1) s += " split " + std::to_string(splitK);
  return s;
}

std::optional<ConvCandidate> parseConvCandidate(const std::string& name) {
  if (name.size() > 64) return std::nullopt;
  std::istringstream in(name);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  if (words.empty()) return std::nullopt;
  ConvCandidate c;
  try {
    c.algo = parseConvAlgo(words[0]);
  } catch (const Error&) {
    return std::nullopt;
  }
  if (c.algo == ConvAlgo::Auto) return std::nullopt;
  // "split P" (P of 2 to 64) after a coop tile or after "direct".
  auto parseSplit = [&](size_t at) {
    if (words.size() != at + 2 || words[at] != "split") return false;
    try {
      size_t used = 0;
      c.splitK = std::stoi(words[at + 1], &used);
      return used == words[at + 1].size() && c.splitK >= 2 && c.splitK <= 64;
    } catch (const std::exception&) {
      return false;
    }
  };
  if (c.algo == ConvAlgo::Direct && words.size() > 1)
    return parseSplit(1) ? std::optional<ConvCandidate>(c) : std::nullopt;
  if (c.algo == ConvAlgo::General || c.algo == ConvAlgo::Direct)
    return words.size() == 1 ? std::optional<ConvCandidate>(c) : std::nullopt;
  if (words.size() < 2) return std::nullopt;
  int bm = 0, bn = 0;
  char x = 0, rest = 0;
  std::istringstream tile(words[1]);
  if (!(tile >> bm >> x >> bn) || x != 'x' || (tile >> rest) || bm <= 0 || bn <= 0 || bm > 4096 || bn > 4096)
    return std::nullopt;
  size_t next = 2;
  if (c.algo == ConvAlgo::CoopWinograd) {
    c.tile = ConvTile{bm, bn, 0, 0};
    if (!convCoopGemmTile(c).bm) return std::nullopt;
  } else if (c.algo == ConvAlgo::CoopWinogradRows) {
    c.tile = ConvTile{bm, bn, 0, 0};
    if (words.size() > next && (words[next] == "halo" || words[next] == "halo3")) {
      c.halo = true;
      c.haloTaps = words[next] == "halo3" ? 3 : 1;
      ++next;
    }
    if (!convCoopGemmTile(c).bm) return std::nullopt;
  } else if (c.algo == ConvAlgo::Coop) {
    c.tile = ConvTile{bm, bn, 0, 0};
    if (words.size() > next && words[next] == "f16acc") {
      c.halfAccumulators = true;
      ++next;
    }
    if (words.size() > next && (words[next] == "halo" || words[next] == "halo3" || words[next] == "halo-f23")) {
      c.halo = true;
      c.haloTaps = words[next] == "halo3" ? 3 : 1;
      c.haloWinograd = words[next] == "halo-f23";
      ++next;
    }
    if (!convCoopGemmTile(c).bm) return std::nullopt;
    if (words.size() == next + 2 && words[next] == "split") {
      if (!parseSplit(next)) return std::nullopt;
      next += 2;
    }
  } else if (words.size() > 2 && words[2] == "lanes") {
    const int tm = bm / 8, cb = bn / 32;
    if (bm != 8 * tm || bn != 32 * cb || (tm != 1 && tm != 2 && tm != 4 && tm != 8) || (cb != 1 && cb != 2))
      return std::nullopt;
    c.tile = ConvTile::lanesTile(tm, cb);
    next = 3;
  } else {
    c.tile = findConvTile(bm, bn);
    if (!c.tile.valid()) return std::nullopt;
  }
  if (words.size() != next) return std::nullopt;
  return c;
}

GemmTile convCoopGemmTile(const ConvCandidate& c) {
  GemmTile t;
  if (c.algo == ConvAlgo::CoopWinogradRows) {
    // fp32 accumulators only: fp16 ones over K = 3 Cin put the products' error past 5e-3 (a float64 model of
    // F(6,3) along the rows with fp16 V, U and M: 2.6e-3 with fp32 sums, 7.8e-3 with fp16 ones; session 47).
    // The halo form: the 1x3 convolution's window staged once per 32 channels for its 3 taps (A_MODE 8).
    // "halo3": 16-channel slices, each step the 3 taps of one (a third fewer barriers per K than 32-deep one-tap
    // steps). (A 128x256 halo tile of 16 subgroups, half the window words per MMA, measured slower on the H100:
    // 0.927 against 0.854 ms on 256 channels at 512^2; session 47.)
    if (c.halfAccumulators || c.splitK != 1 || (c.haloTaps != 1 && !(c.haloTaps == 3 && c.halo)) || c.haloWinograd)
      return GemmTile{0, 0, 0};
    if (c.tile.bm == 128 && c.tile.bn == 128) t = GemmTile::coopTile(128, 128, c.haloTaps == 3 ? 16 : kCoopBk, 4, 2);
    else if (c.tile.bm == 64 && c.tile.bn == 64 && !c.halo) t = GemmTile::coopTile(64, 64, kCoopBk, 2, 2);
    else return GemmTile{0, 0, 0};
    t.haloConv = c.halo;
    return t;
  }
  if (c.halo && c.haloWinograd) {
    // "halo-f23" (session 46): Winograd F(2,3) along y on 16-channel slices, a step the 3 taps of a column of the
    // filter; 8 subgroups of 2 pairs of rows x 32 channels (128x128) or of one pair x 32 (128x64: half the
    // products' registers); products in fp32, or fp16 ("f16acc") through spirv-opt as the other fp16 tiles (H100:
    // 180 registers and 0.66 ms on 256 -> 128 at 512^2, against 188 and 0.81 at -O0).
    if (c.algo != ConvAlgo::Coop || c.tile.bm != 128 || (c.tile.bn != 128 && c.tile.bn != 64) || c.haloTaps != 1)
      return GemmTile{0, 0, 0};
    t = c.tile.bn == 128 ? GemmTile::coopTile(128, 128, 16, 4, 2) : GemmTile::coopTile(128, 64, 16, 2, 2);
    t.f16Accumulators = c.halfAccumulators;
    t.spirvOpt = c.halfAccumulators;
    t.splitK = c.splitK;
    t.haloConv = true;
    t.haloWinograd = true;
    return t;
  }
  if (c.halo) {
    // The halo tiles: 128x128 (8 subgroups of 64x32) or 256x128 (16 of 64x32: one B slice per 256 pixels, two
    // 16-byte words staged per invocation and step), fp32 accumulators or fp16 ones through spirv-opt (as the
    // 256x256 tile). Session 45 swept other layouts on the H100 (128x256 in 16 subgroups of 64x32, fp16 256x256 in
    // 8 of 128x64, 128x256 and 128x128 in subgroups of 64x64 or 128x32): each lost to the 128x128 fp32 tile, the
    // fp16 ones with 181-255 registers and spills (docs/perf.md).
    if (c.algo != ConvAlgo::Coop || c.tile.bn != 128 || (c.tile.bm != 128 && c.tile.bm != 256) ||
        (c.haloTaps != 1 && c.haloTaps != 3))
      return GemmTile{0, 0, 0};
    // "halo3": 16-channel slices, a K step the column of 3 taps at one kx (one B slice of 48 rows; a third fewer
    // barriers per K than 32-deep one-tap steps, and each window row loaded once for the three taps: session 58.
    // As a row of taps, with no loads shared, it lost: 1.044 / 0.539 ms against 0.999 / 0.515 in session 45)
    t = GemmTile::coopTile(c.tile.bm, 128, c.haloTaps == 3 ? 16 : kCoopBk, 4, 2);
    t.f16Accumulators = c.halfAccumulators;
    // (the fp32 tiles at -O0: through spirv-opt the 128x128 one took 166 registers instead of 123, one workgroup
    // per SM, 0.709 against 0.521 ms on 256 -> 128 at 512^2; session 46, H100)
    t.spirvOpt = c.halfAccumulators;
    t.splitK = c.splitK;
    t.haloConv = true;
    return t;
  }
  if (c.halfAccumulators) {  // the 128x128 tile with fp16 accumulators (ACC 2), spirv-opt as the 256x256 one
    if (c.algo != ConvAlgo::Coop || c.tile.bm != 128 || c.tile.bn != 128) return GemmTile{0, 0, 0};
    t = GemmTile::coopTile(128, 128, kCoopBk, 4, 2);
    t.f16Accumulators = true;
    t.spirvOpt = true;
  } else if (c.tile.bm == 256 && c.tile.bn == 256) {
    // fp16 accumulators, spirv-opt; each part's K (coop-winograd: Cin) fits one fp16 chunk (candidateViolation)
    t = largeHalfTile();
    t.flushK = 0;
  } else if (c.tile.bm == 256 && (c.tile.bn == 128 || (c.tile.bn == 160 && c.algo == ConvAlgo::Coop))) {
    // 8 subgroups of 64 x 64 or 64 x 80 (16 or 20 fp16 accumulators each; the 256 x 256 tile's are 32), fp16
    // throughout, spirv-opt
    t = GemmTile::coopTile(256, c.tile.bn, kCoopBk, 4, c.tile.bn / 32);
    t.f16Accumulators = true;
    t.spirvOpt = true;
  } else if (c.tile.bm == 128 && c.tile.bn == 128) t = GemmTile::coopTile(128, 128, kCoopBk, 4, 2);
  else if (c.tile.bm == 128 && c.tile.bn == 64) t = GemmTile::coopTile(128, 64, kCoopBk, 4, 2);
  else if (c.tile.bm == 64 && c.tile.bn == 64) t = GemmTile::coopTile(64, 64, kCoopBk, 2, 2);
  else return GemmTile{0, 0, 0};
  t.splitK = c.splitK;
  return t;
}

int haloFlushK(const GemmTile& t, int64_t cin) {
  // A split tile's parts are each one fp16 sum (candidateViolation keeps them within a chunk).
  // (halo-f23 never flushes: its fp16 products are bounded by candidateViolation instead)
  if (!t.haloConv || t.haloWinograd || !t.f16Accumulators || t.splitK > 1 || 9 * cin <= kHalfTileChunkK) return 0;
  const int64_t slices = (cin + t.bk - 1) / t.bk, step = 9 * int64_t(t.bk);
  for (int64_t chunks = (9 * cin + kHalfTileChunkK - 1) / kHalfTileChunkK;; ++chunks) {
    const int64_t perChunk = (slices + chunks - 1) / chunks;
    if (perChunk * step <= kHalfTileChunkK) return int(perChunk * step);
  }
}

int halfTileFlushK(const GemmTile& t, int64_t k) {
  if (t.bm != 256 || t.bn != 256 || !t.f16Accumulators || t.splitK != 1 || k <= kHalfTileChunkK) return 0;
  const int64_t slices = (k + t.bk - 1) / t.bk, chunks = (k + kHalfTileChunkK - 1) / kHalfTileChunkK;
  return int((slices + chunks - 1) / chunks) * t.bk;
}

GemmTile coopWinogradRowsGemmTile(const ConvProblem& prob) {
  return prob.cout % 128 == 0 ? GemmTile::coopTile(128, 128, kCoopBk, 4, 2) : GemmTile::coopTile(64, 64, kCoopBk, 2, 2);
}

GemmTile coopWinogradGemmTile(const ConvProblem& prob) {
  const int64_t band = coopWinogradBandTiles(prob, 128);
  const int64_t bigTiles = 16 * ((band + 127) / 128) * ((prob.cout + 127) / 128);
  return bigTiles >= 240 && prob.cout % 128 == 0 ? GemmTile::coopTile(128, 128, kCoopBk, 4, 2)
                                                 : GemmTile::coopTile(64, 64, kCoopBk, 2, 2);
}

int64_t coopWinogradBandTiles(const ConvProblem& prob, int bm, int64_t forced) {
  const int64_t tiles = prob.tilesF23();
  if (forced > 0) return std::min(tiles, (forced + bm - 1) / bm * bm);
  const int64_t fit = int64_t(kCoopWinogradBandBytes / (16 * 2 * uint64_t(std::max<int64_t>(prob.cout, 1))));
  return std::min(tiles, std::max<int64_t>(bm, fit / bm * bm));
}

std::string candidateViolation(const ConvCandidate& c, const ConvProblem& prob, const ConvContext& cc) {
  const DeviceInfo& d = cc.device;
  if (c.algo == ConvAlgo::Auto) return "auto is no candidate";
  if (c.algo != ConvAlgo::Coop && c.algo != ConvAlgo::Direct && c.splitK != 1)
    return "split-K is only for the coop and direct algorithms";
  ConvContext forced = cc;
  if (c.algo == ConvAlgo::GemmV2 || c.algo == ConvAlgo::Winograd) {
    if (!c.tile.valid()) return "no GEMM tile given";
    if (c.tile.lanes && d.subgroupSize != 8) return "lanes tiles need 8-wide subgroups";
    forced.forcedTile = c.tile;
  }
  std::string why = contractViolation(c.algo, prob, forced);
  if (!why.empty()) return why;
  if (c.algo == ConvAlgo::Direct && c.splitK > 1) {  // parts of the input channels, in 16-channel slices
    if (!cc.haveScratch) return "a split direct convolution needs scratch memory for its partials";
    if (c.splitK > (prob.cin + 15) / 16) return "more parts than 16-channel slices of the input";
    if (prob.n * c.splitK > int64_t(d.maxWorkgroupCount[2])) return "N x parts exceeds the device's grid";
    if (prob.n * c.splitK * prob.ho * prob.wo * 4 >= kInt32Limit) return "its partials have 2^31 elements or more";
    return {};
  }
  if (c.algo == ConvAlgo::CoopWinograd) {
    const GemmTile t = convCoopGemmTile(c);
    if (!t.bm) return "no coop-winograd tile " + c.tile.str() + " (256x256, 256x128, 128x128 or 64x64)";
    if (std::string p = coopTileProblem(t, d); !p.empty()) return "coop tile " + t.describe() + ": " + p;
    // The 16 products' K is Cin: with fp16 accumulators, one fp16 chunk (the Coop tiles' bound per part)
    if (t.f16Accumulators && (prob.cin + kCoopBk - 1) / kCoopBk * kCoopBk > kHalfTileMaxPartK)
      return "the fp16-accumulator tile " + t.describe() + " takes at most " + std::to_string(kHalfTileMaxPartK) +
             " input channels (Cin " + std::to_string(prob.cin) + ")";
    // Weights with upsample phase filters read a nearest 2x upsampling, which coop computes as four 2x2
    // convolutions of the tensor itself (4/9 of the MMAs, no staged upsampling): faster in the product than this
    // candidate's time on a plain input (the VAE's 256^2 upsampler: 0.63 ms by phases, 0.77 for Winograd with the
    // upsampled input still to stage), so a tuned problem of that shape skips it there.
    if (t.f16Accumulators && cc.weights.hasUpsamplePhases())
      return "the convolution reads a 2x upsampling, which coop runs by output phases";
    const int64_t band = coopWinogradBandTiles(prob, t.bm);
    if ((prob.cout + t.bn - 1) / t.bn > d.maxWorkgroupCount[0] || (band + t.bm - 1) / t.bm > d.maxWorkgroupCount[1])
      return "the grid of tile " + t.describe() + " exceeds the device's workgroup count limits";
    return {};
  }
  if (c.algo == ConvAlgo::CoopWinogradRows) {
    const GemmTile t = convCoopGemmTile(c);
    if (!t.bm) return "no coop-winograd-rows tile " + c.tile.str() + " (128x128 [halo|halo3] or 64x64)";
    if (std::string p = coopTileProblem(t, d); !p.empty()) return "coop tile " + t.describe() + ": " + p;
    // As coop-winograd's: an upsampled input runs faster by coop's output phases than staged for the transform.
    if (cc.weights.hasUpsamplePhases())
      return "the convolution reads a 2x upsampling, which coop runs by output phases";
    if (t.haloConv && (prob.w % 16 || prob.cin % t.bk || prob.cout % t.bn))
      return "the halo tile " + c.tile.str() + " of coop-winograd-rows needs W % 16 == 0, Cin % " +
             std::to_string(t.bk) + " == 0 and Cout % " + std::to_string(t.bn) + " == 0";
    const int64_t band = winogradRowsBandRows(prob, t);  // this tile's band (the halo's: whole blocks of 8 rows)
    if (int64_t(kWinogradRowsProducts) * prob.n * band * prob.w * std::max(prob.cin, prob.cout) >= kInt32Limit)
      return "the transformed input or products of a band of tile " + t.describe() + " have 2^31 elements or more";
    if ((prob.cout + t.bn - 1) / t.bn > d.maxWorkgroupCount[0] ||
        (prob.n * band * prob.w + t.bm - 1) / t.bm > d.maxWorkgroupCount[1])
      return "the grid of tile " + t.describe() + " exceeds the device's workgroup count limits";
    return {};
  }
  if (c.algo != ConvAlgo::Coop) return why;
  const GemmTile t = convCoopGemmTile(c);
  if (!t.bm) return "no coop tile " + c.tile.str() + " (256x256, 256x160, 256x128, 128x128, 128x64 or 64x64)";
  if (std::string p = coopTileProblem(t, d); !p.empty()) return "coop tile " + t.describe() + ": " + p;
  // The fp16-accumulator tiles sum each part in fp16: at most one 2048-deep chunk; but the unsplit 256x256 tile
  // flushes each chunk to a plane of scratch (recordConvCoop; session 42).
  if (c.halo) {  // gemm_coop.slang A_MODE 6's contract, checked again by ops::recordGemm
    const Conv2dParams& q = prob.p;
    if (q.kh != 3 || q.kw != 3 || q.strideH != 1 || q.strideW != 1 || q.padH != 1 || q.padW != 1 ||
        q.dilationH != 1 || q.dilationW != 1)
      return "the halo tile takes 3x3 convolutions with stride 1, padding 1 and dilation 1";
    if (prob.wo % 16 || prob.ho % (t.bm / 16) || prob.cin % t.bk || prob.cout % t.bn)
      return "the halo tile " + c.tile.str() + " needs W % 16 == 0, H % " + std::to_string(t.bm / 16) + " == 0, Cin % " +
             std::to_string(t.bk) + " == 0 and Cout % " + std::to_string(t.bn) + " == 0";
    if (c.splitK > 1) {  // parts of whole channel slices (all 9 taps each), none empty, fp16 sums within a chunk
      const int64_t slices = prob.cin / t.bk, perPart = (slices + c.splitK - 1) / c.splitK;
      if (normalizedSplitParts(c.splitK, slices) != c.splitK)
        return "the halo tile splits whole slices of " + std::to_string(t.bk) + " input channels: " +
               std::to_string(c.splitK) + " parts of " + std::to_string(slices) + " slices would leave one empty";
      if (c.halfAccumulators && 9 * perPart * t.bk > kHalfTileMaxPartK)
        return "the fp16-accumulator halo tile takes at most " + std::to_string(kHalfTileMaxPartK) + " of K per part (" +
               std::to_string(9 * perPart * t.bk) + " in " + std::to_string(c.splitK) + ")";
    }
    if (c.haloWinograd && c.halfAccumulators && 3 * prob.cin > kHaloWinogradMaxProductK)
      return "the halo-f23 tile sums its products in fp16 over 3 x Cin <= " + std::to_string(kHaloWinogradMaxProductK) +
             " (Cin " + std::to_string(prob.cin) + ")";
    if (cc.weights.hasUpsamplePhases()) return "the convolution reads a 2x upsampling, which coop runs by output phases";
    if (haloFlushK(t, prob.cin) > 0 && !cc.haveScratch) return "the halo tile past 2048 of K needs scratch memory for its fp16 chunks";
  }
  const bool flushing = c.halo ? haloFlushK(t, prob.cin) > 0 : halfTileFlushK(t, prob.k()) > 0;
  if (flushing && !cc.haveScratch) return "the 256x256 tile past 2048 of K needs scratch memory for its fp16 chunks";
  if (t.f16Accumulators && !flushing && !t.haloWinograd) {  // (halo-f23's products: 3 Cin, checked above)
    const int64_t slices = (prob.k() + kCoopBk - 1) / kCoopBk, perPart = (slices + c.splitK - 1) / c.splitK;
    if (perPart * kCoopBk > kHalfTileMaxPartK)
      return "the fp16-accumulator tile " + std::to_string(t.bm) + "x" + std::to_string(t.bn) + " takes at most " +
             std::to_string(kHalfTileMaxPartK) +
             " of K per part (" + std::to_string(perPart * kCoopBk) + " in " + std::to_string(c.splitK) + ")";
  }
  const int64_t gx = (prob.cout + t.bn - 1) / t.bn, gy = (prob.m() + t.bm - 1) / t.bm;
  if (gx > d.maxWorkgroupCount[0] || gy > d.maxWorkgroupCount[1] || c.splitK > int64_t(d.maxWorkgroupCount[2]))
    return "the grid of tile " + t.describe() + " exceeds the device's workgroup count limits";
  if (c.splitK > 1) {
    if (!cc.haveScratch) return "split-K needs scratch memory for its partials";
    if (prob.cout % 4) return "split-K needs Cout % 4 == 0";
    if (c.splitK * prob.m() * prob.cout >= kInt32Limit) return "split-K partials have 2^31 elements or more";
    if (c.splitK > (prob.k() + kCoopBk - 1) / kCoopBk) return "more split-K parts than K slices";
  }
  return {};
}

ConvPlan planConvCandidate(const ConvCandidate& c, const ConvProblem& prob, const ConvContext& cc,
                           const std::string& label) {
  std::string why = candidateViolation(c, prob, cc);
  if (!why.empty())
    throw Error(label + ": candidate '" + c.name() + "' cannot run " + prob.str() + ": " + why);
  ConvPlan plan;
  plan.algo = c.algo;
  if (c.algo == ConvAlgo::General) plan.tile = generalConvTile(prob.cout);
  else if (c.algo == ConvAlgo::Direct) plan.tile = ConvTile{16, 16, 1, 4};  // conv2d_plan.cpp kDirectConvTile
  else plan.tile = c.tile;
  plan.candidate = c;
  plan.source = "forced";
  return plan;
}

std::optional<ConvCandidate> ruleCandidate(const ConvProblem& prob, const ConvContext& cc) {
  ConvPlan plan = planConv(ConvAlgo::Auto, prob, cc, "rule");
  ConvCandidate c{plan.algo, plan.tile, 1};
  if (plan.algo == ConvAlgo::Coop) {  // as recordConvCoop chooses without a candidate
    GemmTile t = chooseGemmTile(prob.m(), prob.cout, prob.k(), cc.device, true);
    c.tile = ConvTile{t.bm, t.bn, 0, 0};
    if (cc.haveScratch && prob.cout % 4 == 0) c.splitK = chooseSplitK(t, prob.m(), prob.cout, prob.k(), 1);
    GemmTile mine = convCoopGemmTile(c);
    if (!mine.bm || mine.bk != t.bk || mine.warpRows != t.warpRows || mine.warpCols != t.warpCols ||
        t.halfAccumulate || t.f16Accumulators || t.doubleBuffer)
      return std::nullopt;
  }
  if (plan.algo == ConvAlgo::General || plan.algo == ConvAlgo::Direct) c.tile = ConvTile{};
  return c;
}

// A candidate family's knob: `variable`=0 leaves it out, for the A/B that decided it (docs/perf.md).
// SDGEN_CONV_WIDE_SPLIT: session 28's 128x128 tiles in 8, 16 or 32 parts; SDGEN_CONV_MID_TILE: session 33's 128x64.
static bool candidateFamilyOn(const char* variable) {
  const char* v = std::getenv(variable);
  return !v || std::strcmp(v, "0") != 0;
}

std::vector<ConvCandidate> convCandidates(const ConvProblem& prob, const ConvContext& cc) {
  std::vector<ConvCandidate> out;
  auto add = [&](const ConvCandidate& c) {
    if (std::find(out.begin(), out.end(), c) == out.end() && candidateViolation(c, prob, cc).empty())
      out.push_back(c);
  };
  if (std::optional<ConvCandidate> rule = ruleCandidate(prob, cc)) add(*rule);
  add(ConvCandidate{ConvAlgo::Direct});
  // Direct with its input channels split where its 16 x 16 blocks are few (the UNet's conv_out: 32 blocks of 320
  // channels; Winograd's 0.12 ms there is mostly its input transform): up to ~1024 workgroups, whole slices.
  const int64_t blocks = prob.n * ((prob.ho + 15) / 16) * ((prob.wo + 15) / 16);
  const int64_t channelSlices = (prob.cin + 15) / 16;
  if (blocks < 256)
    for (int parts : {2, 4, 8, 16})
      if (parts <= channelSlices && blocks * parts <= 1024)
        add(ConvCandidate{ConvAlgo::Direct, ConvTile{}, normalizedSplitParts(parts, channelSlices)});
  if (gemmCoopSupported(cc.device) && cc.weights.storage() == DType::F16) {
    add(ConvCandidate{ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, 1});
    const int64_t slices = (prob.k() + kCoopBk - 1) / kCoopBk;
    // 128x128 tiles split K where they are few and K is deep (the VAE's 512 channels at 64^2: 128 tiles, K
    // 4608, under one workgroup per SM of the H100): 2 to 4 parts of at least 8 slices, at most 1024 workgroups.
    // 3 parts since session 33, where the tiles are at least 100: 1.2 waves of tiles (SDXL's 32^2 level, 160
    // tiles for an H200's 264 slots) in 3 parts fill two waves, the balance that took a linear layer of that shape
    // from 0.167 to 0.124 ms (ops::chooseWaveSplit). (An existing cache keeps its entries: `--retune` times it.)
    const int64_t bigTiles = ((prob.m() + 127) / 128) * ((prob.cout + 127) / 128);
    for (int parts : {2, 3, 4})
      if (slices / parts >= 8 && bigTiles * parts <= 1024 && (parts != 3 || bigTiles >= 100))
        add(ConvCandidate{ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, normalizedSplitParts(parts, slices)});
    // ... and in 8, 16 or 32 parts where the deep K of the up blocks' concatenations meets few tiles (session 28,
    // H200: up 2 resnet 0 conv1, K 17280 on 16x5 tiles, 0.283 -> 0.257 ms in 8 parts; up 1's conv1s 0.196 ->
    // 0.189 in 16). 128x64 tiles and 64x64 in 32 parts were timed beside them and never chosen.
    if (candidateFamilyOn("SDGEN_CONV_WIDE_SPLIT"))
      for (int parts : {8, 16, 32})
        if (slices / parts >= 8 && bigTiles * parts <= 1024)
          add(ConvCandidate{ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, normalizedSplitParts(parts, slices)});
    // 128x128 tiles with fp16 accumulators (session 39; SDGEN_CONV_HALF_128=0 leaves them out): the products at the
    // fp16 MMA rate where each part's K is one fp16 sum (<= 2048): unsplit where K is (the VAE's 128-channel convs at
    // 512^2, K 1152: 0.41-0.45 -> 0.36-0.40 ms), else in the fewest such parts where the 128x128 split candidates run
    // (SD 1.5's UNet from 32^2 down: 0.098 -> 0.074 ms in 3 parts, 0.103 -> 0.073 in 6, 0.185 -> 0.139 in 12).
    // Not in 2 parts (2048 < K <= 4096): the tuner took them for SD 1.5's 64^2 320-channel convs, all seven slower in
    // the step (0.099 -> 0.103-0.110 ms).
    if (candidateFamilyOn("SDGEN_CONV_HALF_128") && cc.device.hasCoopMatrix(16, 16, 16, "f16", "f16")) {
      const int p = fewestHalfParts(slices);
      if (p == 1 || (p >= 3 && cc.haveScratch && slices / p >= 8 && bigTiles * p <= 1024))
        add(ConvCandidate{ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, p, true});
    }
    // 256x128 tiles with fp16 accumulators (session 40; SDGEN_CONV_HALF_256x128=0 leaves them out): where Cout is
    // a multiple of 128 and the rows are many, the 128-wide columns the 256x256 tile cannot take, with 64 x 64 warp
    // tiles (the 128x128 tile's are 64 x 32: 6 fragment loads per 8 MMAs against 8 per 16). The fewest parts of
    // <= 2048 of K, and one more. ... and 256x160 tiles (8 subgroups of 64x80; SDGEN_CONV_HALF_256x160=0) where
    // Cout is a multiple of 160 but not of 256: SDXL's 128^2 and 64^2 levels, SD 1.5's 64^2 convs. Session 41
    // (H100, --profile-conv with fresh tuning): SD 1.5's 64^2 convs 0.097-0.099 -> 0.068-0.082 ms (256x160 in 2
    // parts), up 3 resnet 0 conv1 0.246 -> 0.208, its UNet step conv 4.25 -> 3.97 ms; SDXL's convs 13.98 -> 12.09 ms.
    // The tuner took no 256x128 tile in the VAE (its 128x128 ones stayed faster).
    auto addWideHalf = [&](int bn) {
      const int fewest = fewestHalfParts(slices);
      const int64_t tiles = ((prob.m() + 255) / 256) * (prob.cout / bn);
      for (int parts : {fewest, fewest + 1}) {
        const int p = normalizedSplitParts(parts, slices);
        if (p == 1 || (cc.haveScratch && slices / p >= 8 && tiles * p <= 8192))
          add(ConvCandidate{ConvAlgo::Coop, ConvTile{256, bn, 0, 0}, p});
      }
    };
    const bool halfShape = cc.device.hasCoopMatrix(16, 16, 16, "f16", "f16");
    if (candidateFamilyOn("SDGEN_CONV_HALF_256x128") && prob.m() >= 8192 && prob.cout % 128 == 0 && halfShape)
      addWideHalf(128);
    if (candidateFamilyOn("SDGEN_CONV_HALF_256x160") && prob.m() >= 8192 && prob.cout % 160 == 0 &&
        prob.cout % 256 != 0 && halfShape)
      addWideHalf(160);
    // 128x64 tiles (4 subgroups of 64x32) where Cout is a multiple of 64 but not of 128, so that the 128-wide
    // tile leaves half its last column of tiles idle (SDXL's 128^2 level: 320 channels, M 32768, 5.1 ms of the
    // step on 64x64 tiles at ~165 TFLOP/s; session 33). Session 27 timed this tile on every SD 1.5 problem from
    // 1024 rows: never chosen there, so it is a candidate only in this bucket.
    if (prob.m() >= 8192 && prob.cout % 128 != 0 && prob.cout % 64 == 0 && candidateFamilyOn("SDGEN_CONV_MID_TILE"))
      add(ConvCandidate{ConvAlgo::Coop, ConvTile{128, 64, 0, 0}, 1});
    // The 256x256 fp16-accumulator tile (the linear layers' large tile, spirv-opt) in K parts of <= 2048, where
    // its few tiles in 2-8 parts fill one wave (one workgroup per SM) to >= 60 %: the VAE's 64^2 convolutions
    // (4096 x 512, K 4608: 32 tiles in 4 parts of 1152, 128 workgroups) run 0.100 ms on 128x128 in 2 parts; as
    // ops::chooseSplitHalfTile took SDXL's 32^2 ff out from 0.123 to 0.092 ms. Session 37; measured in session 38
    // (H200): the tuner takes it for the ten, 0.100 -> ~0.076 ms each, the decode's conv 10.22-10.29 -> 9.98-10.07 ms
    // with the direct conv on tensor cores. SDGEN_CONV_HALF_SPLIT=0 leaves it out (docs/dispatch-conv.md).
    if (candidateFamilyOn("SDGEN_CONV_HALF_SPLIT") && cc.device.multiprocessors && prob.m() >= 2048 &&
        prob.cout % 256 == 0 && cc.device.hasCoopMatrix(16, 16, 16, "f16", "f16")) {
      const int64_t halfTiles = ((prob.m() + 255) / 256) * (prob.cout / 256), sms = cc.device.multiprocessors;
      for (int parts : {2, 3, 4, 6, 8}) {
        const int p = normalizedSplitParts(parts, slices);
        if (p >= 2 && halfTiles * p <= sms && 5 * halfTiles * p >= 3 * sms)
          add(ConvCandidate{ConvAlgo::Coop, ConvTile{256, 256, 0, 0}, p});
      }
      // ... and over several waves (session 39; SDGEN_CONV_HALF_WAVES=0 leaves it out): the fewest parts
      // whose K fits one fp16 chunk (<= 2048: unsplit where K does), and one more, where the last wave of 256 x 256
      // workgroups is >= 3/4 full. The VAE's 128^2 512-channel convs (128 tiles, K 4608: 3 parts, 384 workgroups,
      // 2.9 waves) and its 256^2 ones (256 tiles: 512 -> 256 in 3 parts, 256 -> 256 in 2 of 1152) run ~220
      // TFLOP/s on 128 x 128 fp32 accumulators; the split form reached ~257 on the 64^2 ones. Measured (H200): the
      // tuner takes it for all twelve, 0.36 -> 0.27-0.29 ms (128^2, 3 parts), 0.38-0.40 -> 0.31-0.32 (256^2, 2), 0.75
      // -> 0.59 (512 -> 256, 3); with the 128x128 fp16-accumulator tile the decode's conv 11.49 -> 8.97 ms.
      if (candidateFamilyOn("SDGEN_CONV_HALF_WAVES")) {
        const int fewest = fewestHalfParts(slices);
        for (int parts : {fewest, fewest + 1}) {
          const int p = normalizedSplitParts(parts, slices);
          const int64_t groups = halfTiles * p, lastWave = groups % sms;
          // (or from 8 waves, where a partial last wave idles at most 1/8 of the time: the VAE's 512-channel
          // convs at 256^2 and 256-channel ones at 512^2, 11.6 and 15.5 waves; session 42)
          if (groups > sms && (lastWave == 0 || 4 * lastWave >= 3 * sms || groups >= 8 * sms) &&
              (p == 1 || cc.haveScratch))
            add(ConvCandidate{ConvAlgo::Coop, ConvTile{256, 256, 0, 0}, p});
        }
        // ... and unsplit past 2048 of K over >= 3 waves, K in even fp16 chunks of <= 2048 flushed to planes
        // (recordConvCoop; session 42): the split's partials and second launch traded for fp16 planes added in its
        // own epilogue (H100: 256 channels at 512^2 1.167 -> 1.052 ms).
        if (fewest > 1 && cc.haveScratch && halfTiles >= 3 * sms)
          add(ConvCandidate{ConvAlgo::Coop, ConvTile{256, 256, 0, 0}, 1});
      }
    }
    // The halo tile (session 44; SDGEN_CONV_HALO=0 leaves it out, =all adds the exploratory set): a 3x3 stride-1
    // convolution whose A rows are blocks of output rows, its input window staged once per 32 channels for the 9
    // taps (gemm_coop.slang A_MODE 6): per 32-deep step the B slice and a ninth of the window instead of an A and a
    // B slice, the words staged per MMA that bound the GEMM core (docs/perf.md, session 23). From 16384 rows (the
    // VAE's 128^2 to 512^2 levels). Measured on the H100: `coop 128x128 f16acc halo` took the VAE's 512^2 and
    // 256^2 resnet convs in session 44 (256 -> 128 at 512^2 0.662 -> 0.534 ms, 128 at 512^2 0.313 -> 0.265-0.296);
    // its fp32 form, at 124 registers since its window is loaded at a slice's first tap (two workgroups per SM;
    // 156 before), took most of them in session 45 (256 at 512^2 1.02 -> 0.977, 256 -> 128 0.534 -> 0.505). The
    // 256x128 tiles (16 subgroups of 64x32) never won, so only `=all` times them. "halo3" (16-channel slices, a K
    // step the column of 3 taps at one kx, each window row loaded once for them: 6 A fragments per 24 products
    // instead of 12) since session 58: 128 at 512^2 0.2616 -> 0.2415 ms (f16acc), 256 -> 128 0.5154 -> 0.4778 (fp32).
    const char* haloKnob = std::getenv("SDGEN_CONV_HALO");
    const bool haloAll = haloKnob && std::strcmp(haloKnob, "all") == 0;
    if (candidateFamilyOn("SDGEN_CONV_HALO") && prob.m() >= 16384) {
      if (halfShape) add(ConvCandidate{ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, 1, true, true});
      add(ConvCandidate{ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, 1, false, true});
      add(ConvCandidate{ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, 1, false, true, 3});
      if (halfShape) add(ConvCandidate{ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, 1, true, true, 3});
      if (haloAll) {  // measured slower on the H100 (session 45; docs/perf.md)
        add(ConvCandidate{ConvAlgo::Coop, ConvTile{256, 128, 0, 0}, 1, false, true});
        if (halfShape) add(ConvCandidate{ConvAlgo::Coop, ConvTile{256, 128, 0, 0}, 1, true, true});
      }
      // "halo-f23" (session 46; exploratory: =all or SDGEN_CONV_HALO_F23=1): Winograd F(2,3) along y, a third
      // fewer MMAs than the halo tile. Its fp16 products were measured slower on the H100: 128x128 at 178
      // registers (one workgroup per SM) 0.650 / 1.238 ms on 256 -> 128 / 256 channels at 512^2, 128x64 at 112
      // registers 0.648 / 1.239, against the fp32 halo tile's 0.514 / 0.992 (docs/perf.md).
      const char* f23Knob = std::getenv("SDGEN_CONV_HALO_F23");
      if (haloAll || (f23Knob && std::strcmp(f23Knob, "1") == 0))
        for (int bn : {128, 64}) {
          add(ConvCandidate{ConvAlgo::Coop, ConvTile{128, bn, 0, 0}, 1, false, true, 1, true});
          if (halfShape) add(ConvCandidate{ConvAlgo::Coop, ConvTile{128, bn, 0, 0}, 1, true, true, 1, true});
        }
    }
    // The 128x128 halo tiles split over their input channels (session 45; SDGEN_CONV_HALO_SPLIT=0 leaves them
    // out) below 16384 rows, where too few tiles fill the SMs: the UNet's 3x3 convolutions from 16^2 (batch 2).
    // Parts of whole channel slices, for about two and four workgroups per SM.
    if (candidateFamilyOn("SDGEN_CONV_HALO") && candidateFamilyOn("SDGEN_CONV_HALO_SPLIT") &&
        cc.device.multiprocessors && prob.m() >= 512 && prob.m() < 16384 && prob.cout >= 128 && prob.cout % 128 == 0) {
      const int64_t tiles = (prob.m() / 128) * (prob.cout / 128);
      const int64_t channelSlices = std::max<int64_t>(prob.cin / kCoopBk, 1), sms = cc.device.multiprocessors;
      for (int64_t perSm : {2, 4}) {
        const int64_t want = std::clamp<int64_t>((perSm * sms + tiles / 2) / tiles, 1, channelSlices);
        const int parts = normalizedSplitParts(want, channelSlices);
        if (halfShape) add(ConvCandidate{ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, parts, true, true});
        add(ConvCandidate{ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, parts, false, true});
      }
    }
    // Winograd F(2,3) on the fp16-accumulator tiles (session 42; SDGEN_CONV_HALF_WINOGRAD=0 leaves it out, =1 adds
    // the exploratory set: 256x128 and Cin from 128): 16 products of K = Cin (one fp16 chunk up to 2048), 4/9 of
    // the implicit GEMM's MMAs, for V and the products' round trips through memory. Measured on the H100 with the
    // explicit V (docs/perf.md, session 42): 512 channels at 256^2 0.765 ms against 1.038 for the best coop tile,
    // 512 -> 256 at 256^2 0.492 against 0.560, errors 3.9e-3 of the general kernel (4.9e-3 for coop's fp16
    // splits); 256 channels at 512^2 1.19 against 1.05 (V and M cost more than K = 256 saves), 256x128 never
    // fastest. So by default: 256x256, Cin >= 512, Cout a multiple of 256, from 16384 rows (2048 since session 57,
    // below).
    const char* halfWinograd = std::getenv("SDGEN_CONV_HALF_WINOGRAD");
    const bool winogradAll = halfWinograd && std::strcmp(halfWinograd, "1") == 0;
    // From 2048 rows since session 57 (SDGEN_CONV_SMALL_WINOGRAD=0 keeps the 16384 of before): 16 products of
    // 256x256 tiles still make >= 128 workgroups there (the VAE's 512 channels at 64^2: 16 x 4 x 2; H100, U made
    // once: 0.0617 ms against 0.0815 for coop 256x256 in 4 parts, docs/perf.md).
    const int64_t winogradRows = candidateFamilyOn("SDGEN_CONV_SMALL_WINOGRAD") ? 2048 : 16384;
    if (candidateFamilyOn("SDGEN_CONV_HALF_WINOGRAD") && halfShape && prob.m() >= winogradRows) {
      if (prob.cout % 256 == 0 && prob.cin >= (winogradAll ? 128 : 512))
        add(ConvCandidate{ConvAlgo::CoopWinograd, ConvTile{256, 256, 0, 0}, 1});
      if (winogradAll && prob.cout % 128 == 0 && prob.cin >= 128)
        add(ConvCandidate{ConvAlgo::CoopWinograd, ConvTile{256, 128, 0, 0}, 1});
    }
    // Winograd F(6,3) along the rows (session 47; SDGEN_CONV_WINOGRAD_ROWS=0 leaves it out): 4/9 of the implicit
    // GEMM's MMAs as eight 1x3 convolutions of K = 3 Cin, for V and M through memory (each 4/3 of the input / the
    // output). Where the rows are many and Cout fills the 128-wide tiles.
    // One tile: halo3 (16-channel slices, a step the 1x3 window's 3 taps) where it runs, else im2col. Session 47,
    // H100, 256 channels at 512^2: 0.830 ms, against 0.855 for the halo tile (32-deep one-tap steps; halo3 the
    // fastest on each of four VAE rows by 2-5 %) and 0.890 for im2col; the tuner's ties (5 %) go by name, so the
    // slower ones are not offered beside it (`coop-winograd-rows 128x128 halo` runs when forced).
    if (candidateFamilyOn("SDGEN_CONV_WINOGRAD_ROWS") && prob.m() >= 16384 && prob.cout % 128 == 0 && prob.cin >= 128) {
      ConvCandidate halo3{ConvAlgo::CoopWinogradRows, ConvTile{128, 128, 0, 0}, 1};
      halo3.halo = true;
      halo3.haloTaps = 3;
      const size_t before = out.size();
      add(halo3);
      if (out.size() == before) add(ConvCandidate{ConvAlgo::CoopWinogradRows, ConvTile{128, 128, 0, 0}, 1});
    }
    // 64x64 tiles split K where few tiles walk a deep K (docs/dispatch.md "Split-K"): at most 16 parts, each
    // part at least 4 slices of K, and no more than about 2,000 64x64 workgroups in all.
    const int64_t tiles = ((prob.m() + 63) / 64) * ((prob.cout + 63) / 64);
    for (int parts : {1, 2, 4, 8, 16}) {
      if (parts > 1 && (slices / parts < 4 || tiles * parts > 2048)) continue;
      add(ConvCandidate{ConvAlgo::Coop, ConvTile{64, 64, 0, 0}, normalizedSplitParts(parts, slices)});
    }
  }
  // Winograd F(4,3) on CUDA cores, like GEMM v2 below, lost every SD 1.5 row to the tensor-core tiles on the
  // H100 (1.7-2x; it won only the 4-channel conv_out, where coop cannot run): timed only where no coop candidate
  // runs. That also spares the tuning its fp32 filters (8x the fp16 weights' bytes) on every coop problem.
  const bool coop = std::any_of(out.begin(), out.end(), [](const ConvCandidate& c) { return c.algo == ConvAlgo::Coop; });
  if (!coop) add(ConvCandidate{ConvAlgo::Winograd, chooseConvTile(prob.tiles(), prob.cout, cc.device, 36), 1});
  // coop-winograd on its 128x128 fp32-accumulator tile is not timed: measured 1.2-2x slower than coop on every
  // SD 1.5 3x3 row on the H100 (its 16 GEMMs have K = Cin, and its fp16 products make a round trip through memory;
  // docs/perf.md, session 11), it would only add tuning time (its fp16-accumulator tiles are, above). It
  // runs when forced (--algo coop-winograd, Conv2dOptions). (A fused form, the products kept in the workgroup, was
  // built twice and measured 3.8-5x slower than coop on the H200: sessions 23 and 38, docs/perf.md.)
  // GEMM v2 computes fp16 on CUDA cores: wherever tensor-core tiles run, it lost every SD 1.5 row on the H100
  // (docs/dispatch-conv.md), and it is the slowest candidate to time on the VAE's 512^2 layers.
  if (!coop) add(ConvCandidate{ConvAlgo::GemmV2, chooseConvTile(prob.m(), prob.cout, cc.device), 1});
  bool fast = false;
  for (const ConvCandidate& c : out) fast = fast || c.algo != ConvAlgo::General;
  if (!fast) add(ConvCandidate{ConvAlgo::General});
  return out;
}

}  // namespace sdgen::ops
