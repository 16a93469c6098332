#include "ops/attention_tiles.h"

#include <algorithm>

#include "engine/error.h"

namespace sdgen::ops {

bool attentionHeadDimSpecialized(int64_t d) { return d == 40 || d == 64 || d == 80 || d == 160; }

const std::vector<FlashBlocks>& flashBlockCandidates() {
  static const std::vector<FlashBlocks> c = {{32, 32, 4}, {32, 16, 4}, {16, 16, 8}, {16, 8, 8}, {8, 8, 8}};
  return c;
}

uint32_t FlashTile::sharedBytes() const {
  // q, k, v tiles (float4), the probability block, and two [tpr][bq] partial max/sum arrays.
  return uint32_t(16 * c4p * (bq + 2 * bkv) + 4 * bq * (bkv + 1) + 2 * 4 * tpr * bq);
}

std::string FlashTile::describe() const {
  return "D " + (d ? std::to_string(d) : "runtime (<= " + std::to_string(4 * c4) + ")") + ", " +
         std::to_string(bq) + " query x " + std::to_string(bkv) + " key rows, " + std::to_string(threads()) +
         " threads, " + std::to_string(sharedBytes()) + " bytes shared";
}

FlashTile makeFlashTile(int64_t d, FlashBlocks blocks) {
  if (d < 1 || d > kAttentionMaxHeadDim)
    throw Error("attention: head dimension " + std::to_string(d) + " is outside 1.." +
                std::to_string(kAttentionMaxHeadDim));
  if (blocks.bq < 1 || blocks.tpr < 1 || blocks.bkv < blocks.tpr || blocks.bkv % blocks.tpr)
    throw Error("attention: blocks of " + std::to_string(blocks.bq) + " query and " + std::to_string(blocks.bkv) +
                " key rows with " + std::to_string(blocks.tpr) + " threads per row are inconsistent "
                "(key rows must be a positive multiple of the threads per row)");
  FlashTile t;
  if (attentionHeadDimSpecialized(d)) {
    t.d = static_cast<int>(d);
    t.c4 = static_cast<int>(d / 4);
  } else {
    // Runtime D: a few capacities, so small heads do not pay for the largest one (few kernels per structure).
    t.c4 = d <= 64 ? 16 : d <= 128 ? 32 : 64;
  }
  t.c4p = t.c4 | 1;
  t.bq = blocks.bq;
  t.bkv = blocks.bkv;
  t.tpr = blocks.tpr;
  return t;
}

FlashTile chooseFlashTile(int64_t d, uint32_t sharedBytes, uint32_t maxInvocations) {
  FlashTile t;
  for (const FlashBlocks& b : flashBlockCandidates()) {
    t = makeFlashTile(d, b);
    if (t.sharedBytes() <= sharedBytes && uint32_t(t.threads()) <= maxInvocations) return t;
  }
  throw Error("attention: no tile for head dimension " + std::to_string(d) + " fits " + std::to_string(sharedBytes) +
              " bytes of shared memory (smallest: " + t.describe() + ")");
}

int flashLanesRowsPerLane(int64_t d) {
  if (d < 4 || d > 64 || d % 4) return 0;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(4, 128 / d)));
}

}  // namespace sdgen::ops
