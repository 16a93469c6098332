#include "models/nn/parameters.h"

#include <algorithm>
#include <cstdlib>

#include "engine/error.h"
#include "ops/conv2d.h"
#include "ops/conv2d_plan.h"
#include "ops/conv2d_tune.h"
#include "ops/conv2d_winograd_math.h"
#include "ops/linear_gemm.h"
#include "ops/linear_geglu.h"

namespace sdgen::nn {

graph::Value DeviceTensor::value() const {
  graph::TensorView v = view;
  return {v.shape, {}, [v](const graph::Resolver&) { return graph::buffer(v); }, 0};
}

ParameterStore::Transaction::Transaction(ParameterStore& store)
    : store_(store),
      convs_(store.convs_.size()),
      linears_(store.linears_.size()),
      tensors_(store.tensors_.size()),
      loraSites_(store.lora_.sites()),
      bytes_(store.bytes_) {
  if (store.stream_.pending() > 0) throw Error("a parameter transaction began with weights still queued");
}

void ParameterStore::Transaction::commit() {
  store_.flush();
  committed_ = true;
}

ParameterStore::Transaction::~Transaction() {
  if (committed_) return;
  store_.stream_.discard();  // jobs that point into the weights freed below
  store_.convs_.resize(convs_);
  store_.derivedConvs_ = std::min(store_.derivedConvs_, convs_);
  store_.linears_.resize(linears_);
  store_.tensors_.resize(tensors_);
  store_.lora_.truncate(loraSites_);
  store_.bytes_ = bytes_;
}

void ParameterStore::flush() {
  stream_.flush();
  deriveLayouts(derivedConvs_);
}

void ParameterStore::deriveLayouts(size_t from) {
  std::unique_ptr<CommandSequence> seq;
  for (size_t i = from; i < convs_.size(); ++i) {
    const ops::Conv2dWeights& c = *convs_[i];
    if (!c.hasUpsamplePhases() && !c.hasWinogradRows() && !c.hasWinogradF23()) continue;
    if (!seq) seq = std::make_unique<CommandSequence>(ctx_);
    if (c.hasUpsamplePhases()) ops::packUpsamplePhaseFilters(ctx_, *seq, c);
    if (c.hasWinogradRows()) ops::packWinogradRowsFilters(ctx_, *seq, c);
    if (c.hasWinogradF23()) ops::packWinogradF23Filters(ctx_, *seq, c);  // made on use: again after a re-merge
  }
  if (seq) seq->run();
  derivedConvs_ = convs_.size();
}

uint64_t ParameterStore::bytesMadeOnUse(size_t first, size_t end) const {
  uint64_t total = 0;
  for (size_t i = first; i < std::min(end, convs_.size()); ++i)
    total += convs_[i]->bytesMadeOnUse();
  return total;
}

void ParameterStore::remergeLoras(lora::LoraTargets targets) {
  if (stream_.pending() > 0) throw Error("LoRA re-merge with weights still queued");
  try {
    lora_.remerge(stream_, std::move(targets));
    stream_.flush();
    deriveLayouts(0);  // the gemm layouts they are made from may have changed
  } catch (...) {
    stream_.discard();
    lora_.markAllDirty();  // some weights may hold the old set, some the new
    throw;
  }
}

std::vector<LowRankUpdate> ParameterStore::loraSite(const models::ScopedWeights& w,
                                                     const std::optional<models::RawWeight>& raw, LoraSite site) {
  std::optional<lora::Component> c = lora_.componentOf(w.source());
  if (!c) return {};
  const std::string name = w.name("weight");
  if (!raw) {
    if (lora_.targets().find(*c, name))
      throw Error("cannot merge a LoRA into '" + name + "' of " + w.source().describe() +
                  ": its source does not expose the stored tensor");
    return {};
  }
  site.component = *c;
  site.raw = *raw;
  return lora_.record(std::move(site));
}

void ParameterStore::queue(const models::ScopedWeights& w, const std::string& leaf, std::span<const int64_t> shape,
                           const Allocation& dst, DType storage, const ops::PackLayout& layout, bool isLoraSite) {
  if (std::optional<models::RawWeight> raw = w.raw(leaf, shape)) {
    std::vector<LowRankUpdate> updates;
    if (isLoraSite) updates = loraSite(w, raw, {.dst = &dst, .storage = storage, .layout = layout});
    stream_.pack(std::move(*raw), dst, storage, layout, std::move(updates));
    return;
  }
  if (isLoraSite) loraSite(w, std::nullopt, {});
  // A source that only converts (none in sdgen's formats today): its fp32 values take the same packing.
  stream_.pack(w.read(leaf, shape), dst, storage, layout, w.name(leaf));
}

const ops::Conv2dWeights& ParameterStore::conv(const models::ScopedWeights& w, int cin, int cout,
                                               const ops::Conv2dParams& p, bool bias, bool upsampledInput) {
  const int64_t shape[] = {cout, cin, p.kh, p.kw};
  ops::Conv2dWeightsOptions o;
  o.storage = storage_;
  o.name = w.name("weight");
  // The phase filters where the coop algorithm will read them (docs/dispatch-conv.md): 16/9 of the gemm layout.
  // SDGEN_UPSAMPLE_PHASE_FILTERS=call leaves them to a launch per call (the A/B of docs/perf.md, session 28).
  const char* filters = std::getenv("SDGEN_UPSAMPLE_PHASE_FILTERS");
  o.packUpsamplePhases = upsampledInput && ops::gemmCoopSupported(ctx_.info()) && ops::upsamplePhasesEnabled() &&
                         ops::upsamplePhasesLayoutViolation(cout, cin, p, storage_).empty() &&
                         !(filters && std::string(filters) == "call");
  // On tensor cores in fp16 the coop algorithm runs these convs (docs/dispatch-conv.md): Winograd's fp32
  // filters, 8x the fp16 checkpoint's bytes for a 3x3 conv, would never be read.
  // With the autotune, its measurements decide (Winograd packed where it won, docs/dispatch-conv.md).
  const bool ruleWantsWinograd = !ops::coopConvChosen(ctx_.info(), storage_, cin, cout);
  o.packWinograd = tuner_ ? tuner_->packWinogradFilters(cin, cout, p, storage_, ruleWantsWinograd) : ruleWantsWinograd;
  // coop-winograd-rows' filters (8/3 of the gemm layout) made by the first recording that runs the algorithm on
  // this layer: the autotune chooses it per problem (the layer's spatial size), which the load does not know, and
  // packing them for every layer of a shape where one size chose it held 214 MiB for SD 1.5 (docs/perf.md,
  // session 53).
  o.winogradRowsOnUse = !upsampledInput && ops::gemmCoopSupported(ctx_.info()) &&
                        ops::winogradRowsLayoutViolation(cout, cin, p, storage_).empty();
  // ... and coop-winograd's (16/9 of it), where the autotune takes that algorithm (the VAE's 512-channel convs):
  // made once instead of by a launch in every call (8 MB and ~5 us for 512 channels, session 38).
  o.winogradF23OnUse = !upsampledInput && ops::gemmCoopSupported(ctx_.info()) &&
                       ops::winogradF23LayoutViolation(cout, cin, p, storage_).empty();
  o.tuner = tuner_;
  auto& c = *convs_.emplace_back(
      std::make_unique<ops::Conv2dWeights>(ops::Conv2dWeights::allocate(ctx_, cout, cin, p, o)));
  const ops::PackLayout gemm = ops::PackLayout::convGemm(cout, cin, p.kh, p.kw);
  if (!c.hasWinograd()) {
    queue(w, "weight", shape, c.gemm(), storage_, gemm, true);
  } else {
    // The F(4,3) filters U = G g G^T (fp32, ops/conv2d_weights.h): transformed by the pack kernel from the
    // file's bytes (the host's double transform where the weight stream packs in place on host-visible memory,
    // ops/weight_pack.h). A LoRA-merged filter is transformed on the host (its update is transformed too,
    // lora_merging.h), as a weight that is not a raw tensor of a file.
    std::optional<models::RawWeight> raw = w.raw("weight", shape);
    const ops::PackLayout copyU = ops::PackLayout::copy(int64_t(36) * cin * cout);
    std::vector<LowRankUpdate> uUpdates = loraSite(
        w, raw, {.kind = LoraSite::Kind::WinogradFilters, .dst = &c.winograd(), .storage = DType::F32,
                 .layout = copyU, .cout = cout, .cin = cin});
    std::vector<float> weight;
    if (raw && uUpdates.empty()) {
      stream_.pack(*raw, c.winograd(), DType::F32, ops::PackLayout::winogradF43(cout, cin));
    } else {
      weight = raw ? raw->readAsF32() : w.read("weight", shape);
      stream_.pack(ops::winograd::packFilters(weight, cout, cin), c.winograd(), DType::F32, copyU,
                   o.name + " (winograd U)", std::move(uUpdates));
    }
    std::vector<LowRankUpdate> gemmUpdates = loraSite(w, raw, {.dst = &c.gemm(), .storage = storage_, .layout = gemm});
    if (raw)
      stream_.pack(std::move(*raw), c.gemm(), storage_, gemm, std::move(gemmUpdates));
    else
      stream_.pack(weight.empty() ? w.read("weight", shape) : std::move(weight), c.gemm(), storage_, gemm, o.name);
  }
  const int64_t biasShape[] = {cout};
  if (bias)
    queue(w, "bias", biasShape, c.bias(), DType::F32, ops::PackLayout::vector(cout, 0, cout, true));
  else
    stream_.pack(std::vector<float>(size_t(cout), 0.f), c.bias(), DType::F32, ops::PackLayout::copy(cout),
                 o.name + " (zero bias)");
  count(c.gemm());
  if (c.hasWinograd()) count(c.winograd());
  if (c.hasUpsamplePhases()) count(c.upsamplePhases());
  if (c.hasWinogradRows()) count(c.winogradRows());
  count(c.bias());
  return c;
}

std::vector<int64_t> ParameterStore::linearShape(const models::ScopedWeights& w, int64_t k, int64_t n) const {
  std::vector<int64_t> shape = w.shape("weight");
  if (shape.size() == 4 && shape[2] == 1 && shape[3] == 1) return {n, k, 1, 1};
  return {n, k};
}

const ops::LinearWeights& ParameterStore::linear(const models::ScopedWeights& w, int64_t k, int64_t n, bool bias) {
  return linearConcat({w}, k, {n}, bias);
}

const ops::LinearWeights& ParameterStore::linearGeglu(const models::ScopedWeights& w, int64_t k, int64_t inner,
                                                      bool& fused) {
  fused = ops::gegluEpilogueChosen(ctx_.info(), storage_) && inner % 4 == 0;
  if (!fused) return linear(w, k, 2 * inner);
  // The row interleave is part of the packing (PackLayout::gegluInterleaved: the kernel, or the host in place,
  // reads the file's rows in the interleaved order), like any linear layer. Before, the host converted each
  // projection to fp32, permuted it and uploaded the fp32 values (SDXL: 70 projections, 3.7 GB of fp32 built on
  // one thread and streamed at twice the file's bytes; its UNet loaded in 8.7 s on the H100, the weight stream
  // itself 1.3 s — this is the suspected bulk of the rest, not yet measured).
  // A projection with a LoRA update keeps that host path (the update's rows are permuted with it).
  const std::string name = w.name("weight") + " (GEGLU interleaved)";
  auto& l = *linears_.emplace_back(
      std::make_unique<ops::LinearWeights>(ops::LinearWeights::allocate(ctx_, 2 * inner, k, true, storage_, name)));
  const std::vector<int64_t> shape = linearShape(w, k, 2 * inner);
  const int64_t biasShape[] = {2 * inner};
  const ops::PackLayout layout = ops::PackLayout::linearPart(2 * inner, k, 0, l.paddedOut(), true);
  const ops::PackLayout biasLayout = ops::PackLayout::vector(2 * inner, 0, l.paddedOut(), true);
  std::optional<models::RawWeight> raw = w.raw("weight", shape), rawBias = w.raw("bias", biasShape);
  std::vector<LowRankUpdate> updates =
      loraSite(w, raw,
               {.kind = LoraSite::Kind::GegluInterleaved, .dst = &l.weightMemory(), .storage = storage_,
                .layout = layout, .inner = inner, .k = k});
  if (raw && rawBias && updates.empty()) {
    stream_.pack(std::move(*raw), l.weightMemory(), storage_, ops::PackLayout::gegluInterleaved(layout, inner));
    stream_.pack(std::move(*rawBias), l.biasMemory(), DType::F32, ops::PackLayout::gegluInterleaved(biasLayout, inner));
  } else {
    std::vector<float> weight = w.read("weight", shape), b = w.read("bias", biasShape);
    ops::interleaveGegluRows(weight, b, inner, k);
    stream_.pack(std::move(weight), l.weightMemory(), storage_, layout, name, std::move(updates));
    stream_.pack(std::move(b), l.biasMemory(), DType::F32, biasLayout, name + " bias");
  }
  count(l.weightMemory());
  count(l.biasMemory());
  return l;
}

const ops::LinearWeights& ParameterStore::linearConcat(const std::vector<models::ScopedWeights>& parts, int64_t k,
                                                       const std::vector<int64_t>& n, bool bias) {
  if (parts.size() != n.size() || parts.empty()) throw Error("linearConcat: one output width per part");
  int64_t total = 0;
  for (int64_t ni : n) total += ni;
  std::string name = parts.front().name("weight");
  if (parts.size() > 1) name += " (+" + std::to_string(parts.size() - 1) + " fused)";
  auto& l = *linears_.emplace_back(
      std::make_unique<ops::LinearWeights>(ops::LinearWeights::allocate(ctx_, total, k, bias, storage_, name)));
  // Each part's rows [n_i, k] become columns [offset, offset + n_i) of W^T: outputs side by side, in order; the
  // last part also writes the zero padding columns.
  int64_t offset = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const bool last = i + 1 == parts.size();
    std::vector<int64_t> shape = linearShape(parts[i], k, n[i]);
    queue(parts[i], "weight", shape, l.weightMemory(), storage_,
          ops::PackLayout::linearPart(n[i], k, offset, l.paddedOut(), last), true);
    if (bias) {
      const int64_t biasShape[] = {n[i]};
      queue(parts[i], "bias", biasShape, l.biasMemory(), DType::F32,
            ops::PackLayout::vector(n[i], offset, l.paddedOut(), last));
    }
    offset += n[i];
  }
  count(l.weightMemory());
  count(l.biasMemory());
  return l;
}

const DeviceTensor& ParameterStore::constants(const std::vector<float>& values, const graph::Shape& shape,
                                              const std::string& name, DType dtype) {
  if (static_cast<int64_t>(values.size()) != graph::numel(shape))
    throw Error(name + ": " + std::to_string(values.size()) + " values for shape " + graph::shapeString(shape));
  auto t = std::make_unique<DeviceTensor>();
  t->memory = ctx_.allocate(std::max<size_t>(values.size(), 1) * dtypeSize(dtype), name);
  t->view = graph::view(t->memory, dtype, shape);
  stream_.pack(values, t->memory, dtype, ops::PackLayout::copy(int64_t(values.size())), name);
  count(t->memory);
  tensors_.push_back(std::move(t));
  return *tensors_.back();
}

const DeviceTensor& ParameterStore::tensor(const models::ScopedWeights& w, const std::string& leaf,
                                           const graph::Shape& shape, DType dtype) {
  auto t = std::make_unique<DeviceTensor>();
  t->memory = ctx_.allocate(std::max<int64_t>(graph::numel(shape), 1) * dtypeSize(dtype), w.name(leaf));
  t->view = graph::view(t->memory, dtype, shape);
  queue(w, leaf, std::span<const int64_t>(shape.data(), shape.size()), t->memory, dtype,
        ops::PackLayout::copy(graph::numel(shape)));
  count(t->memory);
  tensors_.push_back(std::move(t));
  return *tensors_.back();
}

}  // namespace sdgen::nn
