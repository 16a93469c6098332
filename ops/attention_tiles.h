#pragma once
// Tile shapes of the flash attention kernel (shaders/attention/flash.slang): which head dimensions get a
// compile-time specialization, how many float4 columns are staged, and the largest query/key blocks whose
// shared memory fits the device. Pure host logic (no GPU), so it is testable for any device limits.
#include <cstdint>
#include <string>
#include <vector>

namespace sdgen::ops {

// The head dimensions of Stable Diffusion (and CLIP) compiled with D fixed, so the kernel's loops unroll.
bool attentionHeadDimSpecialized(int64_t d);
// The largest head dimension the general (runtime D) kernel accepts.
inline constexpr int64_t kAttentionMaxHeadDim = 256;

// Query rows per workgroup, key rows per staged block, threads per query row (bkv % tpr == 0).
struct FlashBlocks {
  int bq = 0, bkv = 0, tpr = 0;
};
// Preference order, largest first: more query rows reuse each staged key block, more key rows per block
// mean fewer barriers.
const std::vector<FlashBlocks>& flashBlockCandidates();

struct FlashTile {
  int d = 0;    // compile-time head dimension, 0 = runtime
  int c4 = 0;   // float4 columns staged per row (capacity for the runtime-D kernel)
  int c4p = 0;  // shared row stride in float4 (odd)
  int bq = 0, bkv = 0, tpr = 0;
  int threads() const { return bq * tpr; }
  uint32_t sharedBytes() const;
  std::string describe() const;
};

// The tile for head dimension `d` with the given blocks (throws on d out of range or inconsistent blocks).
FlashTile makeFlashTile(int64_t d, FlashBlocks blocks);
// The first candidate for `d` that fits `sharedBytes` of shared memory and `maxInvocations` threads per
// workgroup; throws sdgen::Error when none fits.
FlashTile chooseFlashTile(int64_t d, uint32_t sharedBytes, uint32_t maxInvocations);

// The lanes kernel for CPU devices (shaders/attention/flash_lanes.slang): query rows per lane for head
// dimension `d`, or 0 where its contract (d % 4 == 0, d <= 64) does not hold: min(4, 128 / d). More rows
// reuse each loaded key/value block more (D = 32 on llvmpipe: 2 rows 6.2 ms, 4 rows 3.5 ms, 8 rows 2.5 ms
// for a 256 x 256 self-attention, batch 2, 2 heads), but llvmpipe compiles the fully unrolled body again in
// every process (8 rows: +0.3 s per process for the built-in model's kernels).
int flashLanesRowsPerLane(int64_t d);

}  // namespace sdgen::ops
