#pragma once
// Device-resident weights of a network, loaded from a WeightSource at build time and owned here: the recorded
// command sequences address them, so they live as long as the network. Each loader checks a tensor's shape
// against the architecture, allocates its packed layout and queues it on a WeightStream: the file's bytes are
// streamed to the device and converted and packed there (ops/weight_pack.h). flush() runs the queue; every
// network constructor ends with it, so a constructed network's weights are in place. The Winograd F(4,3) filters
// too are transformed there (in fp32 by the pack kernel; in double where the host packs in place); only a filter
// with a LoRA update is transformed on the host.
#include <memory>
#include <string>
#include <vector>

#include "engine/context.h"
#include "engine/dtype.h"
#include "graph/graph.h"
#include "models/lora/lora_targets.h"
#include "models/nn/lora_merging.h"
#include "models/nn/weight_stream.h"
#include "models/weight_source.h"
#include "ops/conv2d_weights.h"
#include "ops/linear_weights.h"

namespace sdgen::nn {

// A device vector (norm scale/shift, embedding table, ...) and how to read it in an expression.
struct DeviceTensor {
  Allocation memory;
  graph::TensorView view;
  graph::Value value() const;  // a graph value with no graph tensor behind it (constant during a run)
};

class ParameterStore {
 public:
  ParameterStore(Context& ctx, DType storage) : ctx_(ctx), storage_(storage) {}
  ParameterStore(const ParameterStore&) = delete;
  ParameterStore& operator=(const ParameterStore&) = delete;

  Context& context() const { return ctx_; }
  DType storage() const { return storage_; }
  // The convolution autotune of this model (ops/conv2d_tune.h), set before the networks load: it decides
  // whether each conv's Winograd filters are packed and plans its Auto convolutions. Null: the rule.
  void setConvTuner(ops::ConvTuner* tuner) { tuner_ = tuner; }

  // "name.weight" [cout, cin, kh, kw] and "name.bias" [cout] (optional when !bias). `upsampledInput`: the conv
  // reads a nearest 2x upsampling (the upsamplers), so that on tensor cores in fp16 its phase filters are made
  // once at load (ops::packUpsamplePhaseFilters), not by a launch in every step.
  const ops::Conv2dWeights& conv(const models::ScopedWeights& w, int cin, int cout, const ops::Conv2dParams& p,
                                 bool bias = true, bool upsampledInput = false);
  // "name.weight" [n, k] (or a 1x1 conv [n, k, 1, 1], which on NHWC activations is the same product) and "name.bias".
  const ops::LinearWeights& linear(const models::ScopedWeights& w, int64_t k, int64_t n, bool bias = true);
  // A GEGLU projection "name.weight" [2 inner, k]: with its halves interleaved for the fused epilogue where
  // ops::gegluEpilogueChosen (then `fused` is set), as stored otherwise.
  const ops::LinearWeights& linearGeglu(const models::ScopedWeights& w, int64_t k, int64_t inner, bool& fused);
  // Several layers with the same input fused into one weight matrix: their outputs side by side, in order.
  const ops::LinearWeights& linearConcat(const std::vector<models::ScopedWeights>& parts, int64_t k,
                                         const std::vector<int64_t>& n, bool bias);
  // A tensor as stored (e.g. "norm.weight" [C]); fp32 always for vectors of norms (they are tiny).
  const DeviceTensor& tensor(const models::ScopedWeights& w, const std::string& leaf, const graph::Shape& shape,
                             DType dtype = DType::F32);
  // A tensor of given values (not from the weight source).
  const DeviceTensor& constants(const std::vector<float>& values, const graph::Shape& shape, const std::string& name,
                                DType dtype = DType::F32);

  // LoRA (docs/lora.md, models/nn/lora_merging.h). Before a network is built: whose weights `source` holds, and
  // the LoRAs its load merges. After: the targets no loaded weight took (to report), and remergeLoras() to
  // change the set in place (the weights it touches are packed again; the networks and their recorded
  // sequences stay valid). remergeLoras flushes.
  void setLoraComponent(const models::WeightSource& source, lora::Component c) { lora_.registerSource(source, c); }
  void setLoras(lora::LoraTargets targets) { lora_.setTargets(std::move(targets)); }
  const lora::LoraTargets& loras() const { return lora_.targets(); }
  std::vector<std::string> unmergedLoraTargets(const lora::LoraTargets& t) const { return lora_.unmerged(t); }
  void remergeLoras(lora::LoraTargets targets);

  // Streams and packs every weight queued since the last flush (errors: WeightStream::flush), then makes the
  // layouts derived from packed ones (the upsample phase filters) of the convs added since.
  void flush();

  // One network's load as a unit: every weight added after the transaction began is freed again unless
  // commit() (which flushes) succeeded, so an error anywhere in a network's constructor (a missing tensor, a
  // file that shrank since it was opened: sdgen::Errors naming the file and tensor) leaves no half-loaded
  // network in device memory, and the networks loaded before it untouched. Every network constructor holds one.
  class Transaction {
   public:
    explicit Transaction(ParameterStore& store);
    ~Transaction();
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    void commit();

   private:
    ParameterStore& store_;
    size_t convs_, linears_, tensors_, loraSites_;
    uint64_t bytes_;
    bool committed_ = false;
  };
  const WeightStreamStats& streamStats() const { return stream_.stats(); }

  // Bytes of device memory the weights hold (every packed layout, biases and vectors included, and the filters
  // made on first use so far: ops::Conv2dWeights::makeWinogradRows).
  uint64_t bytes() const { return bytes_ + bytesMadeOnUse(0, convs_.size()); }
  size_t convCount() const { return convs_.size(); }
  // Of the convs [first, end) in load order: the bytes of their filters made on first use so far.
  uint64_t bytesMadeOnUse(size_t first, size_t end) const;

 private:
  // Queues `w`'s tensor "leaf" of `shape` (also the squeezed [n, k] form of a [n, k, 1, 1] kernel) into `dst`.
  // `loraSite`: a conv or linear weight, which LoRAs may change (norms, embeddings and biases are not).
  void queue(const models::ScopedWeights& w, const std::string& leaf, std::span<const int64_t> shape,
             const Allocation& dst, DType storage, const ops::PackLayout& layout, bool loraSite = false);
  // Records a LoRA site when `w`'s source belongs to a LoRA-capable component (else nullopt, no updates).
  // `raw` must be the weight's checkpoint bytes; a weight without them cannot take a LoRA (an error when one
  // targets it).
  std::vector<LowRankUpdate> loraSite(const models::ScopedWeights& w, const std::optional<models::RawWeight>& raw,
                                      LoraSite site);
  std::vector<int64_t> linearShape(const models::ScopedWeights& w, int64_t k, int64_t n) const;
  void count(const Allocation& a) { bytes_ += a ? a.size() : 0; }
  // The derived layouts (upsample phases, coop-winograd-rows filters) of convs_[from ..] (all of them after a LoRA
  // re-merge: filters made on first use included), from their gemm layouts, in one submission.
  void deriveLayouts(size_t from);
  Context& ctx_;
  DType storage_;
  ops::ConvTuner* tuner_ = nullptr;
  WeightStream stream_{ctx_};
  LoraMerging lora_;
  uint64_t bytes_ = 0;
  std::vector<std::unique_ptr<ops::Conv2dWeights>> convs_;
  size_t derivedConvs_ = 0;  // convs_[0 .. derivedConvs_) have their derived layouts made
  std::vector<std::unique_ptr<ops::LinearWeights>> linears_;
  std::vector<std::unique_ptr<DeviceTensor>> tensors_;
};

}  // namespace sdgen::nn
