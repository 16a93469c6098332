#pragma once
// LoRA merging for a ParameterStore (docs/lora.md). While a network loads, every weight of a LoRA-capable
// component (UNet, text encoder) is recorded as a site: where its bytes are in the checkpoint and how it is
// packed. A site the chosen LoRAs touch gets their updates on the weight stream (merged on the device before
// packing, nn::WeightStream); when the LoRA set changes, remerge() packs again, from the checkpoint's bytes,
// exactly the sites the old or the new set touches: a weight no LoRA touches any more is bit-identical to a load
// without LoRA (no subtraction in floating point), and nothing else is read or rebuilt.
//
// Layouts packed from host values are merged there too, with the factors rearranged on the host: the GEGLU
// projection's row interleave permutes the up factor's rows (P(W + UD) = PW + (PU)D), and the Winograd filter
// transform is linear (U(W + sum_r up[:,r] down[r]) = U(W) + sum_r up[:,r] U(down[r])), so the down factor's
// 3x3 kernels are transformed instead of the merged weight.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/context.h"
#include "engine/dtype.h"
#include "models/lora/lora_targets.h"
#include "models/nn/weight_stream.h"
#include "models/weight_source.h"
#include "ops/weight_pack.h"

namespace sdgen::nn {

struct LoraSite {
  enum class Kind : uint8_t { Plain, GegluInterleaved, WinogradFilters };
  Kind kind = Kind::Plain;
  lora::Component component = lora::Component::Unet;
  models::RawWeight raw;  // the weight "name.weight" as the checkpoint stores it
  const Allocation* dst = nullptr;
  DType storage = DType::F32;
  ops::PackLayout layout;
  int64_t inner = 0, k = 0;     // GegluInterleaved: [2 inner, k]
  int cout = 0, cin = 0;        // WinogradFilters
  const std::string& name() const { return raw.name; }
};

// The updates of `deltas` for the site's packed source: the LoRA factors as they are, or rearranged for the
// GEGLU interleave and the Winograd filters (see above).
std::vector<LowRankUpdate> loraUpdates(const LoraSite& site, const std::vector<lora::WeightDelta>& deltas);

class LoraMerging {
 public:
  // The weights of `source` belong to `component` (set before its network is built).
  void registerSource(const models::WeightSource& source, lora::Component component) {
    components_[&source] = component;
  }
  std::optional<lora::Component> componentOf(const models::WeightSource& source) const;

  const lora::LoraTargets& targets() const { return targets_; }
  // The LoRAs merged by loads from now on (before the networks are built).
  void setTargets(lora::LoraTargets targets) { targets_ = std::move(targets); }

  // Records the site and returns the updates to merge into it now.
  std::vector<LowRankUpdate> record(LoraSite site);
  size_t sites() const { return sites_.size(); }
  void truncate(size_t count) { sites_.resize(count); }

  // Targets of `targets` that no recorded site takes (a LoRA for a norm, an embedding, a weight the network
  // does not load): "UNet weight 'NAME'".
  std::vector<std::string> unmerged(const lora::LoraTargets& targets) const;

  // Queues, on `stream`, every site the current or `next` targets touch, packed again from its checkpoint bytes
  // with `next`'s updates, and makes `next` current. The caller flushes.
  void remerge(WeightStream& stream, lora::LoraTargets next);
  // After a remerge whose flush failed: which sites hold what is unknown, so the next remerge packs them all.
  void markAllDirty() { allDirty_ = true; }

 private:
  std::vector<LowRankUpdate> updates(const LoraSite& site, const lora::LoraTargets& targets) const;
  void queue(WeightStream& stream, const LoraSite& site, std::vector<LowRankUpdate> updates) const;

  std::map<const models::WeightSource*, lora::Component> components_;
  lora::LoraTargets targets_;
  std::vector<LoraSite> sites_;
  bool allDirty_ = false;
};

}  // namespace sdgen::nn
