#include "ops/attention_coop.h"

#include "engine/error.h"

namespace sdgen::ops {

uint32_t FlashCoopTile::sharedBytes() const {
  // K/V (and first Q) rows of dp + 8 halfs; per 16-row tile the fp32 scores [16][bkv + 4] and the fp16
  // probabilities [16][bkv + 8] (shaders/attention/flash_coop.slang FlashCoopTiles).
  const int tiles = rowTiles * subgroups;
  return uint32_t(2 * kvRows() * (dp + 8) + tiles * 16 * (bkv + 4) * 4 + tiles * 16 * (bkv + 8) * 2);
}

std::string FlashCoopTile::describe() const {
  return "tensor cores, D " + std::to_string(d) + " (padded " + std::to_string(dp) + "), " + std::to_string(bq()) +
         " query x " + std::to_string(bkv) + " key rows, " + std::to_string(subgroups) + " subgroups of " +
         std::to_string(rowTiles * 16) + " rows, " + std::to_string(sharedBytes()) + " bytes shared" +
         (doubleBuffer ? ", double-buffered" : prefetch ? ", prefetch" : "");
}

std::string flashCoopUnsupportedReason(const DeviceInfo& info) {
  if (!info.coopMatrixKHR) return "VK_KHR_cooperative_matrix is not available";
  if (!info.hasCoopMatrix(16, 16, 16, "f16", "f32"))
    return "no 16x16x16 f16 x f16 -> f32 subgroup cooperative matrix shape";
  if (info.subgroupSize != 32) return "subgroup size " + std::to_string(info.subgroupSize) + " (32 needed)";
  if (!info.shaderFloat16) return "no shaderFloat16";
  return "";
}

FlashCoopTile makeFlashCoopTile(int64_t d, FlashCoopBlocks blocks) {
  if (d < 1 || d > kFlashCoopMaxHeadDim)
    throw Error("attention: the tensor-core kernel takes head dimensions 1.." + std::to_string(kFlashCoopMaxHeadDim) +
                ", not " + std::to_string(d));
  if ((blocks.bkv != 16 && blocks.bkv != 32 && blocks.bkv != 64) || (blocks.rowTiles != 1 && blocks.rowTiles != 2 && blocks.rowTiles != 4) ||
      (blocks.subgroups != 1 && blocks.subgroups != 2 && blocks.subgroups != 4))
    throw Error("attention: tensor-core blocks of " + std::to_string(blocks.bkv) + " key rows, " +
                std::to_string(blocks.rowTiles) + " row tiles, " + std::to_string(blocks.subgroups) +
                " subgroups are inconsistent (key rows 16, 32 or 64; row tiles 1, 2 or 4; subgroups 1, 2 or 4)");
  FlashCoopTile t;
  t.d = int(d);
  t.dp = int((d + 15) / 16 * 16);
  t.bkv = blocks.bkv;
  t.rowTiles = blocks.rowTiles;
  t.subgroups = blocks.subgroups;
  // Registers for the next block's K and V (2 x NL half4 = 4 NL per thread) next to the Q fragments and the
  // output accumulators (12 registers per 16 columns and row tile): worth it while they all fit.
  const int nl = (t.bkv * int((d + 3) / 4) + t.threads() - 1) / t.threads();
  t.prefetch = nl <= 20 && t.rowTiles * t.dp / 16 <= 10;
  t.doubleBuffer = blocks.doubleBuffer;
  if (t.doubleBuffer) t.prefetch = true;
  return t;
}

std::optional<FlashCoopTile> chooseFlashCoopTile(int64_t d, int64_t sq, uint32_t sharedBytes, uint32_t maxInvocations,
                                                 int maxSubgroups) {
  if (d < 1 || d > kFlashCoopMaxHeadDim) return std::nullopt;
  // Measured on the H100 over SD's shapes (docs/dispatch.md, 2026-11-24): small tiles win everywhere: 4
  // subgroups of 16 query rows and 16-key blocks (32 beyond D 128), i.e. the least shared memory and the
  // most resident workgroups; more rows per subgroup, bigger key blocks or a second K/V buffer were slower.
  // Sequences of at most 32 query rows take fewer subgroups rather than compute masked rows.
  int subgroups = sq <= 16 ? 1 : sq <= 32 ? 2 : 4;
  while (subgroups > maxSubgroups) subgroups /= 2;
  for (int bkv : {32, 16}) {
    if (bkv == 32 && d <= 128) continue;
    FlashCoopTile t = makeFlashCoopTile(d, {bkv, 1, subgroups});
    if (t.sharedBytes() <= sharedBytes && uint32_t(t.threads()) <= maxInvocations) return t;
  }
  return std::nullopt;
}

std::string flashCoopWrapperSource(const FlashCoopTile& t, const std::string& q, const std::string& k,
                                   const std::string& v, const std::string& out, bool vector, bool causal,
                                   bool raw) {
  auto n = [](int x) { return std::to_string(x); };
  return "import sdgen;\nimport expr;\nimport attention.flash_coop;\n"
         "typealias Q = " + q + ";\ntypealias K = " + k + ";\ntypealias V = " + v + ";\ntypealias O = " + out +
         ";\n[shader(\"compute\")]\n[numthreads(" + n(t.threads()) +
         ", 1, 1)]\nvoid main(uint3 group : SV_GroupID, uint3 local : SV_GroupThreadID) {\n"
         "  flashCoopMain<Q, K, V, O, " + n(t.d) + ", " + n(t.dp) + ", " + n(t.bkv) + ", " + n(t.rowTiles) + ", " +
         n(t.subgroups) + ", " + n(t.kvRows()) + ", " + (t.doubleBuffer ? "2" : t.prefetch ? "1" : "0") + ", " + (vector ? "1" : "0") + ", " +
         (causal ? "1" : "0") + ", " + (raw ? "1" : "0") + ">(group, local);\n}\n";
}

}  // namespace sdgen::ops
