#include "models/nn/lora_merging.h"

#include <memory>

#include "engine/error.h"
#include "ops/conv2d_winograd_math.h"
#include "ops/linear_geglu.h"

namespace sdgen::nn {

namespace {

using FloatsPtr = std::shared_ptr<const std::vector<float>>;

// up [rows, rank] with its rows reordered as the GEGLU projection's (ops::interleaveGegluRows).
FloatsPtr interleavedRows(const std::vector<float>& up, int64_t inner, int64_t rank) {
  std::vector<float> rows = up, noBias;
  ops::interleaveGegluRows(rows, noBias, inner, rank);
  return std::make_shared<const std::vector<float>>(std::move(rows));
}

// up [cout, rank] transposed to [rank, cout].
FloatsPtr transposed(const std::vector<float>& up, int cout, int64_t rank) {
  std::vector<float> t(up.size());
  for (int co = 0; co < cout; ++co)
    for (int64_t r = 0; r < rank; ++r) t[size_t(r) * cout + co] = up[size_t(co) * rank + r];
  return std::make_shared<const std::vector<float>>(std::move(t));
}

}  // namespace

std::optional<lora::Component> LoraMerging::componentOf(const models::WeightSource& source) const {
  auto it = components_.find(&source);
  if (it == components_.end()) return std::nullopt;
  return it->second;
}

std::vector<LowRankUpdate> LoraMerging::updates(const LoraSite& site, const lora::LoraTargets& targets) const {
  const std::vector<lora::WeightDelta>* deltas = targets.find(site.component, site.name());
  return deltas ? loraUpdates(site, *deltas) : std::vector<LowRankUpdate>{};
}

std::vector<LowRankUpdate> loraUpdates(const LoraSite& site, const std::vector<lora::WeightDelta>& deltas) {
  std::vector<LowRankUpdate> out;
  for (const lora::WeightDelta& d : deltas) {
    LowRankUpdate u;
    u.rank = static_cast<uint32_t>(d.rank);
    u.scale = d.scale;
    switch (site.kind) {
      case LoraSite::Kind::Plain:
        u.left = d.up;
        u.right = d.down;
        break;
      case LoraSite::Kind::GegluInterleaved:
        u.left = interleavedRows(*d.up, site.inner, d.rank);
        u.right = d.down;
        break;
      case LoraSite::Kind::WinogradFilters:
        // U[36][Cin][Cout] += scale * (U of each rank's down kernels)[36*Cin][rank] . up^T[rank][Cout]
        u.left = std::make_shared<const std::vector<float>>(
            ops::winograd::packFilters(*d.down, static_cast<int>(d.rank), site.cin));
        u.right = transposed(*d.up, site.cout, d.rank);
        break;
    }
    out.push_back(std::move(u));
  }
  return out;
}

std::vector<LowRankUpdate> LoraMerging::record(LoraSite site) {
  std::vector<LowRankUpdate> u = updates(site, targets_);
  sites_.push_back(std::move(site));
  return u;
}

std::vector<std::string> LoraMerging::unmerged(const lora::LoraTargets& targets) const {
  std::set<std::pair<lora::Component, std::string>> have;
  for (const LoraSite& s : sites_) have.insert({s.component, s.name()});
  std::vector<std::string> out;
  for (lora::Component c : {lora::Component::Unet, lora::Component::TextEncoder, lora::Component::TextEncoder2})
    for (const auto& [name, deltas] : targets.of(c))
      if (!have.count({c, name})) out.push_back(std::string(lora::componentName(c)) + " weight '" + name + "'");
  return out;
}

void LoraMerging::queue(WeightStream& stream, const LoraSite& site, std::vector<LowRankUpdate> updates) const {
  switch (site.kind) {
    case LoraSite::Kind::Plain:
      stream.pack(site.raw, *site.dst, site.storage, site.layout, std::move(updates));
      return;
    case LoraSite::Kind::GegluInterleaved: {
      // As ParameterStore::linearGeglu loads it: the host conversion (the same as WeightSource::read), the
      // interleave, the device packing.
      std::vector<float> weight = site.raw.readAsF32(), noBias;
      ops::interleaveGegluRows(weight, noBias, site.inner, site.k);
      stream.pack(std::move(weight), *site.dst, site.storage, site.layout, site.name() + " (GEGLU interleaved)",
                  std::move(updates));
      return;
    }
    case LoraSite::Kind::WinogradFilters:
      if (updates.empty()) {  // no LoRA here (any more): packed as ParameterStore::conv loads it, same bytes
        stream.pack(site.raw, *site.dst, DType::F32, ops::PackLayout::winogradF43(site.cout, site.cin));
        return;
      }
      stream.pack(ops::winograd::packFilters(site.raw.readAsF32(), site.cout, site.cin), *site.dst, DType::F32,
                  site.layout, site.name() + " (winograd U)", std::move(updates));
      return;
  }
}

void LoraMerging::remerge(WeightStream& stream, lora::LoraTargets next) {
  for (const LoraSite& site : sites_) {
    if (!allDirty_ && !targets_.find(site.component, site.name()) && !next.find(site.component, site.name()))
      continue;
    queue(stream, site, updates(site, next));
  }
  targets_ = std::move(next);
  allDirty_ = false;
}

}  // namespace sdgen::nn
