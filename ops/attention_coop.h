#pragma once
// The tensor-core flash attention kernel (shaders/attention/flash_coop.slang): when a device can run it, its
// tile (key block, query rows per subgroup, subgroups per workgroup) and the generated wrapper. Pure host
// logic apart from the DeviceInfo it reads, so the choice is testable for any limits.
// Contract and selection rule: docs/kernels-linear-attention.md ("Tensor-core variant").
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/device_info.h"

namespace sdgen::ops {

// The engine picks the tensor-core kernel by itself for any head dimension when q, k and v are raw fp16 heads
// (ops::rawHalfHeads), and through expression loads only up to this head dimension: on the H100
// (2026-11-24, docs/perf.md) those are slower than the fp32 kernel at D 160 (SD's 16x16 and 8x8 levels),
// raw loads are 2-3x faster there. Forcing it works for any D.
inline constexpr int64_t kFlashCoopAutoMaxHeadDim = 128;

// Key rows per staged block (16, 32 or 64), 16-row query tiles per subgroup (1, 2 or 4), subgroups of 32 per
// workgroup (1, 2 or 4; the accumulator-softmax kernel also 8 or 16).
// doubleBuffer: two K/V tiles in shared memory (one workgroup barrier per key block), with the register
// prefetch.
// accumulatorSoftmax: shaders/attention/flash_coop2.slang (the softmax on accumulators through
// VK_NV_cooperative_matrix2; no double buffer; it also takes 8 or 16 subgroups).
// prefetch: -1 leaves the register prefetch of the next key block to the rule in makeFlashCoopTile, 0 / 1
// force it off / on (measurements: it holds 4 * ceil(bkv * d / 4 / threads) registers per invocation).
// halfAccumulate (accumulator softmax only; flash_coop2.slang HACC): bit 0 the scores in fp16 accumulators, bit 1
// each key block's P V in fp16 accumulators added into the fp32 output (session 37; measurements).
struct FlashCoopBlocks {
  int bkv = 0, rowTiles = 0, subgroups = 0;
  bool doubleBuffer = false;
  bool accumulatorSoftmax = false;
  int prefetch = -1;
  int halfAccumulate = 0;
};

struct FlashCoopTile {
  int d = 0;   // head dimension (compile time)
  int dp = 0;  // padded to a multiple of 16
  int bkv = 0, rowTiles = 0, subgroups = 0;
  bool prefetch = false;  // the next key block is loaded into registers during the current one
  bool doubleBuffer = false;  // two shared K/V tiles (implies prefetch)
  bool accumulatorSoftmax = false;  // flash_coop2.slang: scores, softmax and P stay in accumulators
  bool maskKeys = false;  // flash_coop2.slang with Sk % bkv != 0: the last block's keys past Sk are masked
  int halfAccumulate = 0;  // flash_coop2.slang HACC (FlashCoopBlocks::halfAccumulate)
  int bq() const { return 16 * rowTiles * subgroups; }
  int threads() const { return 32 * subgroups; }
  // K and V rows (twice over when double-buffered); the Q block is staged there first.
  int kvRows() const { return (doubleBuffer ? 4 : 2) * bkv > bq() ? (doubleBuffer ? 4 : 2) * bkv : bq(); }
  uint32_t sharedBytes() const;
  std::string describe() const;
};

inline constexpr int64_t kFlashCoopMaxHeadDim = 256;

// Empty when the device can run the kernel: VK_KHR_cooperative_matrix with the 16x16x16 f16 x f16 -> f32
// subgroup shape, subgroups of 32 and fp16 arithmetic; otherwise the missing condition, in words.
std::string flashCoopUnsupportedReason(const DeviceInfo& info);
inline bool flashCoopSupported(const DeviceInfo& info) { return flashCoopUnsupportedReason(info).empty(); }

// Empty when the accumulator-softmax kernel (flash_coop2.slang) can run this attention with key blocks of bkv
// rows: the device has VK_NV_cooperative_matrix2's reductions and conversions (DeviceInfo::coopMatrix2Softmax),
// no causal mask, at least one key, and bkv 16, 32 or 64 (Sk need not be a multiple of it: the last block's
// keys past Sk are masked, FlashCoopTile::maskKeys); otherwise the missing condition.
std::string flashCoop2UnsupportedReason(const DeviceInfo& info, bool causal, int64_t sk, int bkv);

// The tile for head dimension `d` with the given blocks; throws sdgen::Error on inconsistent blocks.
FlashCoopTile makeFlashCoopTile(int64_t d, FlashCoopBlocks blocks);
// The default tile for head dimension d and sq query rows, or nullopt when none fits `sharedBytes` /
// `maxInvocations` (the fp32 kernel runs then). maxSubgroups caps the subgroups per workgroup (1 for the
// emulation of tests).
std::optional<FlashCoopTile> chooseFlashCoopTile(int64_t d, int64_t sq, uint32_t sharedBytes, uint32_t maxInvocations,
                                                 int maxSubgroups = 4);
// The default accumulator-softmax tile for head dimension d, sq query rows and sk keys, or nullopt when none
// fits or sk is not a multiple of any of its key blocks (the caller checks flashCoop2UnsupportedReason too).
std::optional<FlashCoopTile> chooseFlashCoop2Tile(int64_t d, int64_t sq, int64_t sk, uint32_t sharedBytes,
                                                  uint32_t maxInvocations);
// slangc capabilities of the tile's kernel.
std::vector<std::string> flashCoopCapabilities(const FlashCoopTile& t);

// The generated wrapper calling flashCoopMain with the expression and sink types.
// raw: q, k and v are read as raw fp16 heads (ops::rawHalfHeads, header words 4-18).
std::string flashCoopWrapperSource(const FlashCoopTile& t, const std::string& q, const std::string& k,
                                   const std::string& v, const std::string& out, bool vector, bool causal,
                                   bool raw = false);

}  // namespace sdgen::ops
