#include "ops/attention_coop.h"

#include "engine/error.h"

namespace sdgen::ops {

uint32_t FlashCoopTile::sharedBytes() const {
  // flash_coop2.slang: only the K/V (first Q, last the fp16 output) rows, and where the padded head has a free
  // column (4 * ceil(d / 4) < dp: V's ones column) the 16 x 16 fp32 mask that reads L out of O.
  // With maskKeys, the 16 x 16 fp32 tile of the partial key tile's mask.
  if (accumulatorSoftmax)
    return uint32_t(2 * kvRows() * (dp + 8) + (4 * ((d + 3) / 4) < dp ? 16 * 16 * 4 : 0) +
                    (maskKeys ? 16 * 16 * 4 : 0));
  // K/V (and first Q) rows of dp + 8 halfs; per 16-row tile the fp32 scores [16][bkv + 4] and the fp16
  // probabilities [16][bkv + 8] (shaders/attention/flash_coop.slang FlashCoopTiles).
  const int tiles = rowTiles * subgroups;
  return uint32_t(2 * kvRows() * (dp + 8) + tiles * 16 * (bkv + 4) * 4 + tiles * 16 * (bkv + 8) * 2);
}

std::string FlashCoopTile::describe() const {
  return "tensor cores, D " + std::to_string(d) + " (padded " + std::to_string(dp) + "), " + std::to_string(bq()) +
         " query x " + std::to_string(bkv) + " key rows, " + std::to_string(subgroups) + " subgroups of " +
         std::to_string(rowTiles * 16) + " rows, " + std::to_string(sharedBytes()) + " bytes shared" +
         (doubleBuffer ? ", double-buffered" : prefetch ? ", prefetch" : "") +
         (accumulatorSoftmax ? ", softmax in accumulators" : "") + (maskKeys ? ", keys past Sk masked" : "") +
         ((halfAccumulate & 1) ? ", fp16 scores" : "") + ((halfAccumulate & 2) ? ", fp16 block products" : "");
}

std::string flashCoopUnsupportedReason(const DeviceInfo& info) {
  if (!info.coopMatrixKHR) return "VK_KHR_cooperative_matrix is not available";
  if (!info.hasCoopMatrix(16, 16, 16, "f16", "f32"))
    return "no 16x16x16 f16 x f16 -> f32 subgroup cooperative matrix shape";
  if (info.subgroupSize != 32) return "subgroup size " + std::to_string(info.subgroupSize) + " (32 needed)";
  if (!info.shaderFloat16) return "no shaderFloat16";
  return "";
}

std::string flashCoop2UnsupportedReason(const DeviceInfo& info, bool causal, int64_t sk, int bkv) {
  if (std::string why = flashCoopUnsupportedReason(info); !why.empty()) return why;
  if (!info.coopMatrix2Softmax)
    return "no VK_NV_cooperative_matrix2 with cooperativeMatrixReductions and cooperativeMatrixConversions";
  if (causal) return "a causal mask (the accumulator-softmax kernel masks only the keys past Sk)";
  if (sk < 1) return "no keys";
  if (bkv != 16 && bkv != 32 && bkv != 64) return "a " + std::to_string(bkv) + "-key block (16, 32 or 64)";
  return "";
}

FlashCoopTile makeFlashCoopTile(int64_t d, FlashCoopBlocks blocks) {
  if (d < 1 || d > kFlashCoopMaxHeadDim)
    throw Error("attention: the tensor-core kernel takes head dimensions 1.." + std::to_string(kFlashCoopMaxHeadDim) +
                ", not " + std::to_string(d));
  // flash_coop.slang keeps per-tile score and probability tiles in shared memory: at most 4 subgroups.
  const bool subgroupsOk = blocks.subgroups == 1 || blocks.subgroups == 2 || blocks.subgroups == 4 ||
                           ((blocks.subgroups == 8 || blocks.subgroups == 16) && blocks.accumulatorSoftmax);
  if ((blocks.bkv != 16 && blocks.bkv != 32 && blocks.bkv != 64) ||
      (blocks.rowTiles != 1 && blocks.rowTiles != 2 && blocks.rowTiles != 4) || !subgroupsOk)
    throw Error("attention: tensor-core blocks of " + std::to_string(blocks.bkv) + " key rows, " +
                std::to_string(blocks.rowTiles) + " row tiles, " + std::to_string(blocks.subgroups) +
                " subgroups are inconsistent (key rows 16, 32 or 64; row tiles 1, 2 or 4; subgroups 1, 2 or 4, "
                "or 8 or 16 with the accumulator softmax)");
  FlashCoopTile t;
  t.d = int(d);
  t.dp = int((d + 15) / 16 * 16);
  t.bkv = blocks.bkv;
  t.rowTiles = blocks.rowTiles;
  t.subgroups = blocks.subgroups;
  // Registers for the next block's K and V (2 x NL half4 = 4 NL per thread) next to the Q fragments and the
  // output accumulators (12 registers per 16 columns and row tile): worth it while they all fit.
  const int nl = (t.bkv * int((d + 3) / 4) + t.threads() - 1) / t.threads();
  t.prefetch = blocks.prefetch >= 0 ? blocks.prefetch == 1 : nl <= 20 && t.rowTiles * t.dp / 16 <= 10;
  t.doubleBuffer = blocks.doubleBuffer;
  if (t.doubleBuffer && blocks.prefetch == 0)
    throw Error("attention: a double-buffered tile always prefetches the next key block");
  if (t.doubleBuffer) t.prefetch = true;
  t.accumulatorSoftmax = blocks.accumulatorSoftmax;
  if (t.accumulatorSoftmax && t.doubleBuffer)
    throw Error("attention: the accumulator-softmax kernel has no double-buffered variant");
  if (blocks.halfAccumulate < 0 || blocks.halfAccumulate > 3 || (blocks.halfAccumulate && !t.accumulatorSoftmax))
    throw Error("attention: fp16 accumulation (" + std::to_string(blocks.halfAccumulate) +
                ") takes 0 to 3 and the accumulator-softmax kernel");
  t.halfAccumulate = blocks.halfAccumulate;
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

std::optional<FlashCoopTile> chooseFlashCoop2Tile(int64_t d, int64_t sq, int64_t sk, uint32_t sharedBytes,
                                                  uint32_t maxInvocations) {
  if (d < 1 || d > kFlashCoopMaxHeadDim) return std::nullopt;
  // Measured on the H100 over SD's shapes (docs/dispatch.md, 2026-11-24): 64-key blocks up to D 128 (each
  // block costs two workgroup barriers; 64x64 level 0.333 ms vs 0.465 at 16), 32 beyond (D 160: 0.018 vs
  // 0.020 ms at 64, more workgroups resident), the largest that divides sk; one 16-row tile per subgroup (two
  // were faster than one at 4 subgroups from 2048 rows, 0.333 -> 0.272 ms, but 8 subgroups of one beat both).
  // Where no block divides sk (a cross-attention's 77 keys), the first in that order whose padding to whole
  // blocks stays within a quarter of sk (77: 32-key blocks, 96 rows), its last block's keys past sk masked.
  // From 1024 query rows (SD 1.x's 64x64 and 32x32 levels), 8 subgroups of one 16-row tile (H200, session 32,
  // docs/perf.md): 128 registers instead of 245 for two row tiles, so two 256-invocation workgroups fill an
  // SM (16 subgroups instead of 8) and each K/V block staged serves 128 query rows. 64x64 self-attention
  // 0.247 -> 0.225 ms, 32x32 0.036 -> 0.034.
  // At D 64 (SD 2.x, SDXL) 8 subgroups need 32-key blocks: with 64 the kernel holds 165 registers and one
  // workgroup per SM (4096 rows: 0.537 ms against 0.402 with 32-key blocks and 0.480 for the old tile).
  const int base = sq <= 16 ? 1 : sq <= 32 ? 2 : 4;
  const bool wide = sq >= 1024;
  const std::vector<int> subgroupChoices = wide ? std::vector<int>{8, 4} : std::vector<int>{base};
  const std::vector<int> blocks = d > 128 || (wide && d > 48 && d <= 64) ? std::vector<int>{32, 64, 16}
                                                                          : std::vector<int>{64, 32, 16};
  for (bool masked : {false, true})
    for (int bkv : blocks) {
      const int64_t padded = (sk + bkv - 1) / bkv * bkv;
      if (masked ? (sk % bkv == 0 || (bkv != 16 && 4 * padded > 5 * sk)) : sk % bkv != 0) continue;
      for (int subgroups : subgroupChoices) {
        FlashCoopTile t = makeFlashCoopTile(d, {bkv, 1, subgroups, false, true});
        t.maskKeys = masked;
        if (t.sharedBytes() <= sharedBytes && uint32_t(t.threads()) <= maxInvocations) return t;
      }
    }
  return std::nullopt;
}

std::vector<std::string> flashCoopCapabilities(const FlashCoopTile& t) {
  if (t.accumulatorSoftmax)
    return {"spvCooperativeMatrixKHR", "spvCooperativeMatrixReductionsNV", "spvCooperativeMatrixConversionsNV"};
  return {"spvCooperativeMatrixKHR"};
}

std::string flashCoopWrapperSource(const FlashCoopTile& t, const std::string& q, const std::string& k,
                                   const std::string& v, const std::string& out, bool vector, bool causal,
                                   bool raw) {
  auto n = [](int x) { return std::to_string(x); };
  if (t.accumulatorSoftmax) {
    if (causal || t.doubleBuffer) throw Error("attention: the accumulator-softmax kernel takes no causal mask or double buffer");
    return "import sdgen;\nimport expr;\nimport attention.flash_coop2;\n"
           "typealias Q = " + q + ";\ntypealias K = " + k + ";\ntypealias V = " + v + ";\ntypealias O = " + out +
           ";\n[shader(\"compute\")]\n[numthreads(" + n(t.threads()) +
           ", 1, 1)]\nvoid main(uint3 group : SV_GroupID, uint3 local : SV_GroupThreadID) {\n"
           "  flashCoop2Main<Q, K, V, O, " + n(t.d) + ", " + n(t.dp) + ", " + n(t.bkv) + ", " + n(t.rowTiles) + ", " +
           n(t.subgroups) + ", " + n(t.kvRows()) + ", " + (t.prefetch ? "1" : "0") + ", " + (vector ? "1" : "0") +
           ", " + (raw ? "1" : "0") + ", " + (t.maskKeys ? "1" : "0") + ", " + n(t.halfAccumulate) +
           ">(group, local);\n}\n";
  }
  return "import sdgen;\nimport expr;\nimport attention.flash_coop;\n"
         "typealias Q = " + q + ";\ntypealias K = " + k + ";\ntypealias V = " + v + ";\ntypealias O = " + out +
         ";\n[shader(\"compute\")]\n[numthreads(" + n(t.threads()) +
         ", 1, 1)]\nvoid main(uint3 group : SV_GroupID, uint3 local : SV_GroupThreadID) {\n"
         "  flashCoopMain<Q, K, V, O, " + n(t.d) + ", " + n(t.dp) + ", " + n(t.bkv) + ", " + n(t.rowTiles) + ", " +
         n(t.subgroups) + ", " + n(t.kvRows()) + ", " + (t.doubleBuffer ? "2" : t.prefetch ? "1" : "0") + ", " + (vector ? "1" : "0") + ", " +
         (causal ? "1" : "0") + ", " + (raw ? "1" : "0") + ">(group, local);\n}\n";
}

}  // namespace sdgen::ops
