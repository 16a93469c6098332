#include "tests/model_check/component_runs.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <map>
#include <optional>
#include <span>

#include "engine/error.h"
#include "engine/tensor_io.h"
#include "graph/executor.h"
#include "models/networks/clip_text_encoder.h"
#include "models/networks/unet.h"
#include "models/networks/vae_decoder.h"
#include "models/networks/vae_encoder.h"
#include "ops/conv2d_scratch.h"
#include "tests/models/network_fixture.h"

namespace sdgen::check {
namespace {

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const double pos = p * double(v.size() - 1);
  const size_t lo = size_t(pos), hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
}

uint64_t deviceBytesInUse(Context& ctx) { return ctx.memory().pool(MemoryKind::Device).stats().bytesInUse; }
uint64_t devicePeak(Context& ctx) { return ctx.memory().pool(MemoryKind::Device).stats().peakBytesInUse; }

}  // namespace

ComponentOutput runTextEncoder(Context& ctx, const models::ModelFiles& m, DType dtype, const std::vector<float>& ids,
                               int64_t batch, int64_t seq) {
  if (!m.textEncoderWeights)
    throw Error("'" + m.path + "' is an SDXL refiner: sdgen_model_check does not check refiners");
  nn::ParameterStore params(ctx, dtype);
  networks::ClipTextEncoder encoder(params, m.textEncoderConfig, *m.textEncoderWeights);
  std::vector<int32_t> idData(ids.begin(), ids.end());
  Allocation idMem = ctx.allocate(idData.size() * 4, "token ids");
  ctx.upload(idMem, 0, {reinterpret_cast<const uint8_t*>(idData.data()), idData.size() * 4});
  const int64_t d = m.textEncoderConfig.hiddenSize;
  graph::Graph g;
  graph::TensorId out = g.output("hidden", {batch, seq, d}, DType::F32);
  nn::Builder b(g, dtype, nullptr);
  encoder.build(b, graph::indexView(idMem, {batch, seq}), 0, out);
  Allocation outMem = ctx.allocate(uint64_t(batch * seq * d) * 4, "text encoder output");
  graph::CompiledGraph cg(ctx, g, {{out, graph::view(outMem, DType::F32, {batch, seq, d})}});
  cg.run();
  return {downloadFloats(ctx, outMem, size_t(batch * seq * d), DType::F32), {}};
}

SdxlTextOutputs runSdxlTextEncoders(Context& ctx, const models::ModelFiles& m, DType dtype,
                                    const std::vector<float>& ids, const std::vector<float>& ids2, int64_t batch,
                                    int64_t seq) {
  if (!m.textEncoderWeights)
    throw Error("'" + m.path + "' is an SDXL refiner: sdgen_model_check does not check refiners");
  nn::ParameterStore params(ctx, dtype);
  networks::ClipTextEncoder text1(params, m.textEncoderConfig, *m.textEncoderWeights);
  networks::ClipTextEncoder text2(params, m.textEncoder2Config, *m.textEncoder2Weights, true);
  SdxlTextOutputs r;
  for (int k : {1, 2}) {
    const networks::ClipTextEncoder& enc = k == 1 ? text1 : text2;
    const std::vector<int32_t> idData(k == 1 ? ids.begin() : ids2.begin(), k == 1 ? ids.end() : ids2.end());
    Allocation idMem = ctx.allocate(idData.size() * 4, "token ids");
    ctx.upload(idMem, 0, {reinterpret_cast<const uint8_t*>(idData.data()), idData.size() * 4});
    const int64_t d = enc.config().hiddenSize;
    graph::Graph g;
    graph::TensorId hidden = g.output("penultimate", {batch, seq, d}, DType::F32);
    graph::TensorId last = g.output("last", {batch, seq, d}, DType::F32);
    nn::Builder b(g, dtype, nullptr);
    b.store(enc.hiddenState(b, graph::indexView(idMem, {batch, seq}), enc.config().numHiddenLayers - 1, last),
            {"penultimate", hidden});
    Allocation hiddenMem = ctx.allocate(uint64_t(batch * seq * d) * 4, "penultimate");
    Allocation lastMem = ctx.allocate(uint64_t(batch * seq * d) * 4, "last");
    graph::CompiledGraph cg(ctx, g,
                            {{hidden, graph::view(hiddenMem, DType::F32, {batch, seq, d})},
                             {last, graph::view(lastMem, DType::F32, {batch, seq, d})}});
    cg.run();
    (k == 1 ? r.penultimate : r.penultimate2) = downloadFloats(ctx, hiddenMem, size_t(batch * seq * d), DType::F32);
    if (k == 2) {
      r.last2 = downloadFloats(ctx, lastMem, size_t(batch * seq * d), DType::F32);
      for (int64_t i = 0; i < batch; ++i) {
        const std::vector<float> p =
            text2.pooledProjection(std::span<const float>(r.last2).subspan(size_t(i * seq * d), size_t(seq * d)),
                                   std::span<const int32_t>(idData).subspan(size_t(i * seq), size_t(seq)));
        r.textEmbeds2.insert(r.textEmbeds2.end(), p.begin(), p.end());
      }
    }
  }
  return r;
}

ComponentOutput runUNet(Context& ctx, const models::ModelFiles& m, DType dtype, const std::vector<float>& sample,
                        const std::vector<int64_t>& s, const std::vector<float>& context,
                        const std::vector<int64_t>& contextShape, float timestep, int repetitions,
                        const AddedConditioning* added, ops::ConvTuner* tuner) {
  ComponentOutput result;
  ctx.memory().pool(MemoryKind::Device).resetPeak();
  const uint64_t before = deviceBytesInUse(ctx);
  nn::ParameterStore params(ctx, dtype);
  params.setConvTuner(tuner);
  networks::UNet unet(params, m.unetConfig, *m.unetWeights);
  result.cost.weightBytes = deviceBytesInUse(ctx) - before;
  ops::Conv2dScratch scratch(ctx);
  const int64_t n = s[0], c = s[1], h = s[2], w = s[3];
  graph::Graph g;
  graph::TensorId in = g.input("sample", {n, h, w, c}, DType::F32);
  graph::TensorId ctxT = g.input("context", contextShape, DType::F32);
  graph::TensorId out = g.output("noise", {n, h, w, c}, DType::F32);
  nn::Builder b(g, dtype, &scratch);
  graph::Value t{{n, 1}, {}, [n](const graph::Resolver&) { return graph::broadcast(graph::uniform(0), {n, 1}); }, 0};
  // SDXL: add_embedding's input rows, made on the host as the pipeline makes them.
  const int64_t width = m.unetConfig.projectionClassEmbeddingsInputDim;
  std::vector<float> rows;
  std::optional<graph::TensorId> addT;
  std::optional<graph::Value> addValue;
  if (added) {
    const size_t p = added->textEmbeds.size() / size_t(n);
    for (int64_t i = 0; i < n; ++i) {
      std::array<float, 6> ids;
      std::copy_n(added->timeIds.begin() + i * 6, 6, ids.begin());
      const std::vector<float> row =
          unet.addedConditioningInput(std::span<const float>(added->textEmbeds).subspan(size_t(i) * p, p), ids);
      rows.insert(rows.end(), row.begin(), row.end());
    }
    addT = g.input("added conditioning", {n, width}, DType::F32);
    addValue = g.read(*addT);
  }
  Allocation ctxMem = uploadFloats(ctx, context, DType::F32, "unet context");
  // The context's cross-attention K/V projections as the pipeline records them: a graph run once per image into
  // buffers that every step reads (models/pipeline/text_to_image.cpp), so the timed step is the pipeline's.
  graph::Graph kvGraph;
  nn::Builder kvBuilder(kvGraph, dtype, &scratch);
  std::optional<Allocation> kvMem;
  std::optional<graph::Value> contextKv;
  std::map<graph::TensorId, graph::TensorView> kvBindings;
  if (const std::optional<graph::Shape> shape = unet.contextProjectionShape(contextShape[0], contextShape[1])) {
    kvMem = ctx.allocate(uint64_t(graph::numel(*shape)) * dtypeSize(dtype), "context K/V");
    const graph::TensorView view = graph::view(*kvMem, dtype, *shape);
    const graph::TensorId kvOut = kvGraph.output("context kv", *shape, dtype);
    kvBindings.emplace(kvOut, view);
    contextKv = graph::Value{view.shape, {}, [view](const graph::Resolver&) { return graph::buffer(view); }, 0};
    const graph::TensorView ctxView = graph::view(ctxMem, DType::F32, contextShape);
    unet.buildContextProjections(
        kvBuilder, {ctxView.shape, {}, [ctxView](const graph::Resolver&) { return graph::buffer(ctxView); }, 0}, kvOut);
  }
  graph::CompiledGraph kvg(ctx, kvGraph, kvBindings);
  kvg.run();
  // SDGEN_CHECK_KV_IN_STEP=1: the projections inside the step instead (as sessions before 28 timed it; as
  // diffusers' UNet computes them), for comparisons.
  const char* inStep = std::getenv("SDGEN_CHECK_KV_IN_STEP");
  const bool kvInStep = inStep && std::string(inStep) == "1";
  unet.build(b, g.read(in), t, g.read(ctxT), out, kvInStep || !contextKv ? nullptr : &*contextKv,
             addValue ? &*addValue : nullptr);
  Allocation inMem = uploadFloats(ctx, test::nchwToNhwc(sample, s), DType::F32, "unet sample");
  Allocation outMem = ctx.allocate(sample.size() * 4, "unet noise prediction");
  std::map<graph::TensorId, graph::TensorView> bindings{{in, graph::view(inMem, DType::F32, {n, h, w, c})},
                                                         {ctxT, graph::view(ctxMem, DType::F32, contextShape)},
                                                         {out, graph::view(outMem, DType::F32, {n, h, w, c})}};
  Allocation addMem;
  if (added) {
    addMem = uploadFloats(ctx, rows, DType::F32, "unet added conditioning");
    bindings.emplace(*addT, graph::view(addMem, DType::F32, {n, width}));
  }
  graph::CompiledGraph cg(ctx, g, bindings);
  cg.setUniform(0, timestep);
  cg.run();
  result.values = test::nhwcToNchw(downloadFloats(ctx, outMem, sample.size(), DType::F32), s);
  result.cost.launches = cg.launches();
  result.cost.barriers = cg.barriers();

  if (repetitions > 0) {
    for (int i = 0; i < 5; ++i) cg.run();  // warm-up
    std::vector<double> ms;
    for (int i = 0; i < repetitions; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      cg.run();
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    result.cost.repetitions = repetitions;
    result.cost.medianMs = percentile(ms, 0.5);
    result.cost.p10Ms = percentile(ms, 0.1);
    result.cost.p90Ms = percentile(ms, 0.9);
    std::vector<double> kvMs;
    for (int i = 0; i < repetitions; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      kvg.run();
      kvMs.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    result.cost.contextLaunches = kvg.launches();
    result.cost.contextMedianMs = percentile(kvMs, 0.5);
    if (ctx.info().timestampsSupported) {  // the same step with a timestamp at its start and its end only
      graph::CompiledGraph spanned(ctx, g, bindings, graph::GraphTiming::spanOnly());
      spanned.setUniform(0, timestep);
      for (int i = 0; i < 5; ++i) spanned.run();
      std::vector<double> span;
      for (int i = 0; i < repetitions; ++i) {
        spanned.run();
        span.push_back(spanned.spanMs());
      }
      result.cost.spanMedianMs = percentile(span, 0.5);
      result.cost.spanP10Ms = percentile(span, 0.1);
      result.cost.spanP90Ms = percentile(span, 0.9);
    }
    // The same step recorded with a timestamp after every dispatch: where the GPU time goes.
    graph::CompiledGraph timed(ctx, g, bindings, true);
    timed.setUniform(0, timestep);
    timed.run();
    timed.run();
    double ns = 0;
    for (const CommandTiming& ti : timed.timings()) ns += ti.ns;
    result.cost.gpuMs = ns / 1e6;
  }
  result.cost.peakDeviceBytes = devicePeak(ctx);
  return result;
}

ComponentOutput runVaeDecoder(Context& ctx, const models::ModelFiles& m, DType dtype, const std::vector<float>& latents,
                              const std::vector<int64_t>& s, ops::ConvTuner* tuner) {
  nn::ParameterStore params(ctx, dtype);
  params.setConvTuner(tuner);
  networks::VaeDecoder vae(params, m.vaeConfig, *m.vaeWeights);
  ops::Conv2dScratch scratch(ctx);
  const int64_t up = vae.upscale();
  const std::vector<int64_t> o{s[0], m.vaeConfig.outChannels, s[2] * up, s[3] * up};
  graph::Graph g;
  graph::TensorId in = g.input("latents", {s[0], s[2], s[3], s[1]}, DType::F32);
  graph::TensorId out = g.output("image", {o[0], o[2], o[3], o[1]}, DType::F32);
  nn::Builder b(g, dtype, &scratch);
  vae.build(b, g.read(in), out);
  Allocation inMem = uploadFloats(ctx, test::nchwToNhwc(latents, s), DType::F32, "vae latents");
  const size_t count = size_t(o[0] * o[1] * o[2] * o[3]);
  Allocation outMem = ctx.allocate(count * 4, "vae image");
  graph::CompiledGraph cg(ctx, g,
                          {{in, graph::view(inMem, DType::F32, {s[0], s[2], s[3], s[1]})},
                           {out, graph::view(outMem, DType::F32, {o[0], o[2], o[3], o[1]})}});
  cg.run();
  return {test::nhwcToNchw(downloadFloats(ctx, outMem, count, DType::F32), o), {}};
}

ComponentOutput runVaeEncoder(Context& ctx, const models::ModelFiles& m, DType dtype, const std::vector<float>& image,
                              const std::vector<int64_t>& s, ops::ConvTuner* tuner) {
  nn::ParameterStore params(ctx, dtype);
  params.setConvTuner(tuner);
  networks::VaeEncoder vae(params, m.vaeConfig, *m.vaeWeights);
  ops::Conv2dScratch scratch(ctx);
  const int64_t down = vae.downscale(), c = m.vaeConfig.latentChannels;
  const std::vector<int64_t> o{s[0], 2 * c, s[2] / down, s[3] / down};  // moments, NCHW
  graph::Graph g;
  graph::TensorId in = g.input("image", {s[0], s[2], s[3], s[1]}, DType::F32);
  graph::TensorId out = g.output("moments", {o[0], o[2], o[3], o[1]}, DType::F32);
  nn::Builder b(g, dtype, &scratch);
  vae.build(b, g.read(in), out);
  Allocation inMem = uploadFloats(ctx, test::nchwToNhwc(image, s), DType::F32, "vae image");
  const size_t count = size_t(o[0] * o[1] * o[2] * o[3]);
  Allocation outMem = ctx.allocate(count * 4, "vae moments");
  graph::CompiledGraph cg(ctx, g,
                          {{in, graph::view(inMem, DType::F32, {s[0], s[2], s[3], s[1]})},
                           {out, graph::view(outMem, DType::F32, {o[0], o[2], o[3], o[1]})}});
  cg.run();
  std::vector<float> moments = test::nhwcToNchw(downloadFloats(ctx, outMem, count, DType::F32), o);
  moments.resize(count / 2);  // NCHW with batch 1: the first C channels are the mean
  return {std::move(moments), {}};
}

}  // namespace sdgen::check
