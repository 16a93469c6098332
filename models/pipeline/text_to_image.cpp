#include "models/pipeline/text_to_image.h"

#include <chrono>
#include <cstring>
#include <functional>
#include <future>
#include <map>
#include <optional>
#include <tuple>

#include "engine/error.h"
#include "engine/tensor_io.h"
#include "graph/executor.h"
#include "models/config/config_files.h"
#include "models/formats/model_files.h"
#include "models/networks/clip_text_encoder.h"
#include "models/networks/unet.h"
#include "models/networks/vae_decoder.h"
#include "models/pipeline/decoded_image.h"
#include "models/pipeline/denoising_range.h"
#include "models/pipeline/image_encoding.h"
#include "models/pipeline/latent_decoding.h"
#include "models/pipeline/lora_set.h"
#include "models/pipeline/sdxl_conditioning.h"
#include "models/pipeline/taesd_coding.h"
#include "models/pipeline/text_conditioning.h"
#include "models/pipeline/vae_tiling.h"
#include "models/prompt/conditioning_windows.h"
#include "models/prompt/emphasis.h"
#include "models/prompt/lora_tags.h"
#include "models/sampling/linear_sampler.h"
#include "models/sampling/sampler.h"
#include "models/sampling/step_recorder.h"
#include "models/sampling/torch_generator.h"
#include "ops/conv2d_scratch.h"
#include "ops/conv2d_tune.h"
#include "ops/guidance.h"

namespace sdgen::pipeline {

using graph::Expr;
using graph::Value;

namespace {

// Runtime scalars of the denoising step.
constexpr uint32_t kTimestepSlot = 0, kGuidanceSlot = 1, kFirstSamplerSlot = 2;

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// A graph value over device memory the graph does not own (persistent pipeline buffers).
Value external(const graph::TensorView& v) {
  return {v.shape, {}, [v](const graph::Resolver&) { return graph::buffer(v); }, 0};
}

void uploadFloats(Context& ctx, const Allocation& dst, const std::vector<float>& values) {
  ctx.upload(dst, 0, {reinterpret_cast<const uint8_t*>(values.data()), values.size() * 4});
}

}  // namespace

struct TextToImage::Impl {
  Context& ctx;
  models::ModelFiles files;
  DType dtype;
  ops::ConvTuner tuner;  // before params: the weights it packed point to it
  nn::ParameterStore params;
  // SDXL with a force_upcast VAE in fp16: the VAE's own fp32 weights and activations, as diffusers upcasts it.
  DType vaeDtype;
  std::unique_ptr<nn::ParameterStore> upcastVaeParams;
  nn::ParameterStore& vaeParams() { return upcastVaeParams ? *upcastVaeParams : params; }
  std::unique_ptr<networks::ClipTextEncoder> text;
  std::unique_ptr<networks::ClipTextEncoder> text2;  // SDXL's second encoder (with its projection)
  std::unique_ptr<networks::UNet> unet;
  std::unique_ptr<networks::VaeDecoder> vae;
  ops::Conv2dScratch scratch;
  // Every recorded graph's intermediates (text encoders, cross-attention K/V, steps, decodes, encodes, TAESD):
  // they run one after the other, so the largest plan is held once (graph/shared_arena.h). Declared before the
  // graphs' owners, so that it outlives them.
  graph::SharedArena arena;
  StageTimings timings;
  LatentRgbFit previewFit;  // refined by every generation that asked for previews
  std::unique_ptr<ImageEncoder> imageEncoder;  // made on the first image-to-image generation
  LoraSet loras;
  std::unique_ptr<LatentDecoding> decoding;  // made once the VAE is loaded
  std::unique_ptr<TaesdCoding> taesd;        // LoadOptions::taesdPath
  std::unique_ptr<TextConditioning> textConditioning;  // token windows -> the context the steps read

  // A recorded denoising step, and the graph run once per image before it: the cross-attention K/V
  // projections of the text context (the same for every step), into `contextKv`, which the step reads.
  struct StepGraphs {
    std::optional<Allocation> contextKv;  // none without cross-attention
    Allocation addedConditioning;  // SDXL: add_embedding's input rows [batch, P] (fp32), written per image
    std::unique_ptr<graph::CompiledGraph> context, step;
  };

  // Everything of one latent size: persistent latents (fp32, NHWC, which the decodes of LatentDecoding read),
  // sampler state and the recorded denoising steps per (guided, sampler kind, karras, context length: the text
  // stage it reads, saved tensors of a LinearSampler).
  struct SizeStage {
    int64_t h = 0, w = 0;
    Allocation latents, noise, history, update;
    std::vector<Allocation> registers, registerScratch;  // LinearSampler state, grown to the largest K used
    Allocation mask, maskedLatents;  // inpainting UNets' extra inputs: [1, h, w, 1] and [1, h, w, C], fp32
    std::map<std::tuple<bool, int, bool, int64_t, int>, StepGraphs> steps;
  };
  std::map<std::pair<int64_t, int64_t>, SizeStage> sizeStages;

  Impl(Context& c, const LoadOptions& o)
      : ctx(c),
        files(models::openModel(o.modelPath, {.tokenizerPath = o.tokenizerPath,
                                               .variant = o.variant,
                                               .predictionType = o.predictionType,
                                               .imageSize = o.imageSize,
                                               .configPath = o.configPath})),
        dtype(o.precision),
        tuner(c, o.autotune),
        params(c, o.precision),
        vaeDtype(o.precision),
        scratch(c, "pipeline conv scratch"),
        arena(c, "pipeline graph arena"),
        loras(params, *files.unetWeights, files.textEncoderWeights.get(), files.textEncoder2Weights.get(), o.loraDir) {
    params.setConvTuner(&tuner);
    loras.beginLoad(o.loras);
    if (files.isSdxl() && files.vaeConfig.forceUpcast && dtype == DType::F16) {
      upcastVaeParams = std::make_unique<nn::ParameterStore>(c, DType::F32);
      vaeDtype = DType::F32;
    }
    auto bytes = [&] { return params.bytes() + (upcastVaeParams ? upcastVaeParams->bytes() : 0); };
    auto convCounts = [&] { return ConvRange{params.convCount(), upcastVaeParams ? upcastVaeParams->convCount() : 0}; };
    const auto loadStart = std::chrono::steady_clock::now();
    const int count = 3 + (files.isSdxl() ? 1 : 0) - (files.isSdxlRefiner() ? 1 : 0) + (o.taesdPath.empty() ? 0 : 1);
    int loaded = 0;  // components loaded so far (the refiner's empty first row is not one)
    auto load = [&](const char* name, auto make) {
      const auto t0 = std::chrono::steady_clock::now();
      if (o.progress) o.progress({name, ++loaded, count, msSince(loadStart), false});
      const uint64_t before = bytes();
      const ConvRange convsBefore = convCounts();
      make();
      components.push_back({name, bytes() - before, 0, 0, msSince(t0)});
      componentConvs.push_back({convsBefore, convCounts()});
    };
    // The SDXL refiner has no first text encoder: its row of the memory report stays (empty), as memoryReport
    // indexes the first three components by position.
    if (files.textEncoderWeights) {
      load("text encoder", [&] {
        text = std::make_unique<networks::ClipTextEncoder>(params, files.textEncoderConfig, *files.textEncoderWeights);
      });
    } else {
      components.push_back({"text encoder (none: SDXL refiner)", 0, 0, 0, 0});
      componentConvs.push_back({convCounts(), convCounts()});
    }
    load("UNet", [&] { unet = std::make_unique<networks::UNet>(params, files.unetConfig, *files.unetWeights); });
    load("VAE decoder",
         [&] { vae = std::make_unique<networks::VaeDecoder>(vaeParams(), files.vaeConfig, *files.vaeWeights); });
    decoding = std::make_unique<LatentDecoding>(
        ctx, *vae, vaeDtype, scratch, &arena,
        o.decodeThroughDeviceMemory.value_or(ctx.device().info().type == "discrete"));
    if (files.isSdxl())  // after the three memoryReport indexes by position
      load("text encoder 2", [&] {
        text2 = std::make_unique<networks::ClipTextEncoder>(params, files.textEncoder2Config,
                                                            *files.textEncoder2Weights, true);
      });
    if (!o.taesdPath.empty())
      load("TAESD", [&] {
        taesd = std::make_unique<TaesdCoding>(ctx, params, models::openTaesd(o.taesdPath), dtype, scratch, &arena);
      });
    loras.finishLoad(o.loras);
    textConditioning = std::make_unique<TextConditioning>(ctx, files, text.get(), text2.get(), dtype, scratch, &arena);
    if (o.progress) o.progress({"", count, count, msSince(loadStart), true});
  }

  std::vector<ComponentMemory> components;  // weights and load time, filled while loading
  // Per component: the convs it loaded, as counts of params' and upcastVaeParams' convs before and after, for
  // the filters its convs make on first use (nn::ParameterStore::bytesMadeOnUse).
  struct ConvRange {
    size_t params = 0, upcastVae = 0;
  };
  std::vector<std::pair<ConvRange, ConvRange>> componentConvs;

  MemoryReport memoryReport() const {
    MemoryReport r;
    r.components = components;
    for (size_t i = 0; i < componentConvs.size(); ++i) {
      const auto& [from, to] = componentConvs[i];
      r.components[i].weightBytes += params.bytesMadeOnUse(from.params, to.params);
      if (upcastVaeParams) r.components[i].weightBytes += upcastVaeParams->bytesMadeOnUse(from.upcastVae, to.upcastVae);
    }
    r.components[0].arenaBytes += textConditioning->arenaBytes();
    for (const auto& [size, st] : sizeStages) {
      for (const auto& [key, g] : st.steps) {
        r.components[1].arenaBytes += g.step->memoryPlan().peakBytes + g.context->memoryPlan().peakBytes;
        if (g.contextKv) r.components[1].bufferBytes += g.contextKv->size();
      }
    }
    r.components[2].arenaBytes += decoding->arenaBytes();
    if (taesd) r.components.back().arenaBytes += taesd->arenaBytes();
    r.convScratchBytes = scratch.bytesHeld();
    r.convScratchNeedBytes = scratch.largestNeedBytes();
    r.sharedArenaBytes = arena.bytesHeld();
    MemoryPool& pool = ctx.memory().pool(MemoryKind::Device);
    pool.sampleHeapUsage();
    const MemoryStats stats = pool.stats();
    r.peakAllocatedBytes = stats.peakBytesReserved;
    r.peakProcessBytes = stats.peakHeapUsage;
    const nn::WeightStreamStats& ws = params.streamStats();
    r.streamedBytes = ws.bytes;
    r.streamBatches = ws.batches;
    r.streamHostTensors = ws.hostJobs;
    r.streamReadMs = ws.readMs;
    r.streamMs = ws.totalMs;
    return r;
  }

  int64_t latentChannels() const { return files.unetConfig.outChannels; }
  // The UNet's text context width: the text encoder's, SDXL's two side by side.
  int64_t contextWidth() const { return files.unetConfig.crossAttentionDim; }
  // diffusers' inpainting UNets: latents, the mask and the masked image's latents (validateModelConfigs).
  bool inpaintingUNet() const { return files.unetConfig.inChannels == 2 * latentChannels() + 1; }

  ImageEncoder& encoder() {
    if (!imageEncoder)
      imageEncoder =
          std::make_unique<ImageEncoder>(ctx, vaeParams(), files.vaeConfig, *files.vaeWeights, vaeDtype, scratch,
                                         &arena);
    return *imageEncoder;
  }

  SizeStage& sizeStage(int64_t h, int64_t w) {
    auto key = std::make_pair(h, w);
    auto it = sizeStages.find(key);
    if (it != sizeStages.end()) return it->second;
    SizeStage st;
    st.h = h;
    st.w = w;
    const uint64_t n = uint64_t(h) * w * latentChannels();
    st.latents = ctx.allocate(n * 4, "latents");
    // Ancestral samplers need fresh noise every step: host-visible memory the step reads directly, so that the
    // host's work per step stays one submit and one wait (no staging copy).
    st.noise = ctx.memory().allocate(MemoryKind::Params, n * 4, "sampler noise");
    st.history = ctx.allocate(n * 4, "sampler history");
    st.update = ctx.allocate(n * 4, "sampler update");
    if (inpaintingUNet()) {
      st.mask = ctx.allocate(uint64_t(h) * w * 4, "latent mask");
      st.maskedLatents = ctx.allocate(n * 4, "masked image latents");
    }
    return sizeStages.emplace(key, std::move(st)).first->second;
  }

  static int savedTensorCount(const sampling::Sampler& sampler) {
    const auto* linear = dynamic_cast<const sampling::LinearSampler*>(&sampler);
    return linear ? linear->registerCount() : 0;
  }

  // `beforeRecording` runs once the step's graphs are built (their conv problems handed to the tuner, whose
  // candidates then compile) and their plans reserved, before they record; also where they exist already.
  StepGraphs& stepGraph(SizeStage& st, const sampling::Sampler& sampler, bool guided, const graph::TensorView& context,
                        const std::function<void()>& beforeRecording) {
    auto key = std::make_tuple(guided, static_cast<int>(sampler.kind()), sampler.karras(), context.shape[1],
                               savedTensorCount(sampler));
    auto it = st.steps.find(key);
    if (it != st.steps.end()) {
      beforeRecording();
      return it->second;
    }
    const int64_t h = st.h, w = st.w, c = latentChannels(), batch = guided ? 2 : 1;
    const uint64_t latentBytes = uint64_t(h) * w * c * 4;
    while (st.registers.size() < size_t(savedTensorCount(sampler))) {
      st.registers.push_back(ctx.allocate(latentBytes, "sampler saved state"));
      st.registerScratch.push_back(ctx.allocate(latentBytes, "sampler saved-state scratch"));
    }
    StepGraphs sg;
    std::optional<Value> contextKv;
    graph::Graph contextGraph;
    nn::Builder contextBuilder(contextGraph, dtype, &scratch);
    std::map<graph::TensorId, graph::TensorView> contextBindings;
    if (const std::optional<graph::Shape> shape = unet->contextProjectionShape(context.shape[0], context.shape[1])) {
      sg.contextKv = ctx.allocate(uint64_t(graph::numel(*shape)) * dtypeSize(dtype), "context K/V");
      const graph::TensorView view = graph::view(*sg.contextKv, dtype, *shape);
      const graph::TensorId kvOut = contextGraph.output("context kv", *shape, dtype);
      contextBindings.emplace(kvOut, view);
      contextKv = external(view);
      unet->buildContextProjections(contextBuilder, external(context), kvOut);
    }
    const graph::Shape latentShape{1, h, w, c};
    graph::Graph g;
    nn::Builder b(g, dtype, &scratch);
    Value latents = external(graph::view(st.latents, DType::F32, latentShape));
    Value input;
    if (inpaintingUNet()) {  // diffusers: cat([scale_model_input(latents), mask, masked image latents], channels)
      Value extra = b.zip(external(graph::view(st.mask, DType::F32, {1, h, w, 1})),
                          external(graph::view(st.maskedLatents, DType::F32, latentShape)),
                          [](const Expr& m, const Expr& l) { return graph::concat(m, l, 3); });
      input = b.zip(latents, extra, [&sampler, guided](const Expr& e, const Expr& x) {
        Expr in = graph::concat(sampler.modelInput(e), x, 3);
        return guided ? graph::concat(in, in, 0) : in;
      });
    } else {
      input = b.map(latents, [&sampler, guided](const Expr& e) {
        Expr x = sampler.modelInput(e);
        return guided ? graph::concat(x, x, 0) : x;  // the unconditional and conditional halves share the input
      });
    }
    Value t{{batch, 1}, {}, [batch](const graph::Resolver&) { return graph::broadcast(graph::uniform(kTimestepSlot), {batch, 1}); }, 0};
    graph::TensorId prediction = g.intermediate("noise prediction", {batch, h, w, c}, dtype);
    std::optional<Value> added;
    if (unet->hasAddedConditioning()) {
      const int64_t width = files.unetConfig.projectionClassEmbeddingsInputDim;
      sg.addedConditioning = ctx.allocate(uint64_t(batch) * width * 4, "added conditioning");
      added = external(graph::view(sg.addedConditioning, DType::F32, {batch, width}));
    }
    unet->build(b, input, t, external(context), prediction, contextKv ? &*contextKv : nullptr,
                added ? &*added : nullptr);

    graph::GraphNode update;
    update.label = "sampler step";
    update.reads = {prediction};
    sampling::LatentUpdateTensors tensors{graph::view(st.latents, DType::F32, latentShape),
                                          graph::view(st.noise, DType::F32, latentShape),
                                          graph::view(st.history, DType::F32, latentShape),
                                          graph::view(st.update, DType::F32, latentShape)};
    for (size_t i = 0; i < st.registers.size(); ++i) {
      tensors.registers.push_back(graph::view(st.registers[i], DType::F32, latentShape));
      tensors.registerScratch.push_back(graph::view(st.registerScratch[i], DType::F32, latentShape));
    }
    const sampling::Sampler* s = &sampler;  // used while recording (in the CompiledGraph constructor) only
    update.record = [=](graph::NodeRecorder& r) {
      Expr pred = graph::buffer(r.tensors.view(prediction));
      Expr out = guided ? ops::classifierFreeGuidance(pred, graph::uniform(kGuidanceSlot)) : pred;
      sampling::recordLatentUpdate(r.ctx, r.seq, *s, tensors, out);
    };
    g.addNode(std::move(update));
    // Both plans reserved before either graph records (generate() reserved the decode's before): the first
    // graph's acquire makes the one allocation that every graph of the generation fits in.
    for (const graph::Graph* planned : {&contextGraph, &g})
      arena.reserve(graph::planIntermediates(*planned, graph::topologicalOrder(*planned)).peakBytes);
    beforeRecording();
    // One recording pass for both (they share the scratch): recorded again where the pass outgrew its scratch.
    std::tie(sg.context, sg.step) = ops::recordWithinPass(scratch, [&] {
      auto context = std::make_unique<graph::CompiledGraph>(ctx, contextGraph, contextBindings, false, &arena);
      auto step = std::make_unique<graph::CompiledGraph>(ctx, g, std::map<graph::TensorId, graph::TensorView>{},
                                                         false, &arena);
      return std::make_pair(std::move(context), std::move(step));
    });
    return st.steps.emplace(key, std::move(sg)).first->second;
  }

  // What the denoising loop starts from, host-side, NHWC. blendMask is set for inpainting with an ordinary UNet:
  // the latent mask (1 = repaint) and the image latents and noise the kept region is re-noised from.
  struct Start {
    std::vector<float> latents;
    std::vector<float> blendMask, imageLatents, noise;
  };

  // An image's latents for the UNet, NCHW: the VAE encoder's sample (one draw of the generator) times the scaling
  // factor, or TAESD's encode(image).latents times its own (no draw, as diffusers' retrieve_latents).
  std::vector<float> imageLatents(const std::vector<float>& pixels, int width, int height, SizeStage& ss,
                                  const LatentDecoding::Plan& plan, sampling::TorchCpuGenerator& generator) {
    const int c = int(latentChannels()), h = int(ss.h), w = int(ss.w);
    if (plan.decoder == ImageDecoder::Taesd) return nhwcToNchw(taesd->encode(pixels, height, width), c, h, w);
    const std::vector<float> moments = encoder().moments(pixels, height, width, plan.tiled);
    return sampleLatents(moments, generator.randn(size_t(c) * h * w), c, h, w, files.vaeConfig.scalingFactor);
  }

  Start startingLatents(const GenerationRequest& req, const sampling::Sampler& sampler, int firstStep,
                        sampling::TorchCpuGenerator& generator, SizeStage& ss, int width, int height,
                        const LatentDecoding::Plan& plan) {
    const int c = int(latentChannels()), h = int(ss.h), w = int(ss.w);
    const size_t n = size_t(c) * h * w;
    Start start;
    if (req.denoisingStart) {  // the refiner continues the base's latents as they are (diffusers: add_noise False)
      if (req.startLatents.size() != n)
        throw Error("the latents to refine hold " + std::to_string(req.startLatents.size()) + " values; " +
                    std::to_string(width) + "x" + std::to_string(height) + " needs " + std::to_string(n));
      start.latents = nchwToNhwc(req.startLatents, c, h, w);
      if (req.mask) {  // StableDiffusionXLInpaintPipeline, image = these latents: the image latents of the blend,
        // its noise drawn first (prepare_latents' add_noise False branch)
        start.noise = nchwToNhwc(generator.randn(n), c, h, w);
        start.imageLatents = start.latents;
        start.blendMask = downsampleNearest(binaryMask(*req.mask), height, width, vae->upscale());
      }
      return start;
    }
    if (!req.initImage) {  // text to image: torch.randn([1, C, h, w]) * init_noise_sigma
      std::vector<float> noise = generator.randn(n);
      for (float& v : noise) v *= sampler.initNoiseSigma();
      start.latents = nchwToNhwc(noise, c, h, w);
      return start;
    }
    if (plan.decoder == ImageDecoder::Vae && files.vaeConfig.shiftFactor.value_or(0.f) != 0.f)
      throw Error("image to image with a VAE shift_factor is not supported ('" + files.vaeConfig.source + "')");
    const bool inpaint = req.mask.has_value(), fullStrength = req.strength == 1.0f;
    const std::vector<float> pixels = normalizedPixels(*req.initImage);
    // Draw 1: the encoder's sampled latents (img2img always; inpainting unless a 9-channel UNet starts from
    // pure noise; TAESD draws nothing).
    std::vector<float> initLatents;
    if (!inpaint || !inpaintingUNet() || !fullStrength) initLatents = imageLatents(pixels, width, height, ss, plan, generator);
    // Draw 2: the noise.
    const std::vector<float> noise = generator.randn(n);
    std::vector<float> latents(n);
    if (inpaint && fullStrength) {
      for (size_t i = 0; i < n; ++i) latents[i] = noise[i] * sampler.initNoiseSigma();
    } else {
      const sampling::NoiseLevel level = sampler.noising(firstStep);
      for (size_t i = 0; i < n; ++i) latents[i] = float(level.signal) * initLatents[i] + float(level.noise) * noise[i];
    }
    start.latents = nchwToNhwc(latents, c, h, w);
    if (!inpaint) return start;
    // Draw 3: the masked image's latents (diffusers encodes them for every UNet).
    const std::vector<float> mask = binaryMask(*req.mask);
    const std::vector<float> maskedLatents = imageLatents(maskedPixels(pixels, mask), width, height, ss, plan, generator);
    std::vector<float> latentMask = downsampleNearest(mask, height, width, vae->upscale());
    if (inpaintingUNet()) {
      uploadFloats(ctx, ss.mask, latentMask);
      uploadFloats(ctx, ss.maskedLatents, nchwToNhwc(maskedLatents, c, h, w));
    } else {
      start.blendMask = std::move(latentMask);
      start.imageLatents = nchwToNhwc(initLatents, c, h, w);
      start.noise = nchwToNhwc(noise, c, h, w);
    }
    return start;
  }

  // Inpainting with an ordinary UNet, after each evaluation (diffusers' 4-channel branch, after scheduler.step):
  // add_noise at the next timestep, the image latents unnoised after the run's `last` (diffusers' i == len(timesteps)
  // - 1: with denoising_end the base's last). On the host: one latent readback and upload per evaluation.
  void blendKeptLatents(const Start& start, const sampling::Sampler& sampler, int evaluation, bool last, SizeStage& ss) {
    std::vector<float> latents = downloadFloats(ctx, ss.latents, start.imageLatents.size(), DType::F32);
    const sampling::NoiseLevel level = last ? sampling::NoiseLevel{1, 0} : sampler.noisingAfter(evaluation);
    blendKeptRegion(latents, start.blendMask, start.imageLatents, start.noise, level.signal, level.noise, last);
    uploadFloats(ctx, ss.latents, latents);
  }

  Image generate(const GenerationRequest& req, const GenerationHooks& hooks) {
    const ProgressCallback& progress = hooks.progress;
    auto checkCancel = [&](int done, int total) {
      if (hooks.cancelRequested && hooks.cancelRequested())
        throw Cancelled("generation cancelled after step " + std::to_string(done) + " of " + std::to_string(total));
    };
    timings = StageTimings{timings.loadMs};
    const int scale = vae->upscale();
    int width = req.width ? req.width : defaultWidth(), height = req.height ? req.height : defaultHeight();
    if (req.initImage && !req.denoisingStart)
      std::tie(width, height) = checkImageInputSizes(*req.initImage, req.mask, req.width, req.height);
    if (req.denoisingStart && (!req.width || !req.height))
      throw Error("refining latents (denoising start) needs the image size they were made at");
    if (req.denoisingStart && req.mask) {  // refining inpainted latents (diffusers' 4-channel branch only)
      checkMaskSize(*req.mask, width, height, "the latents to refine");
      if (inpaintingUNet()) throw Error("'" + files.name + "' (9 input channels) cannot refine latents with a mask");
    }
    if (inpaintingUNet() && !req.mask)
      throw Error("'" + files.name + "' is an inpainting model (its UNet takes " +
                  std::to_string(files.unetConfig.inChannels) +
                  " input channels: latents, mask and masked-image latents): it needs an init image and a mask");
    const int multiple = scale;  // diffusers: sizes divisible by the VAE's scale factor
    if (width <= 0 || height <= 0 || width % multiple || height % multiple)
      throw Error("image size " + std::to_string(width) + "x" + std::to_string(height) + " is not a positive multiple of " +
                  std::to_string(multiple) + " (the VAE's scale factor) in both dimensions");
    if (req.steps < 1) throw Error("steps must be at least 1, got " + std::to_string(req.steps));
    checkTaesdUse(req, hooks);
    // SDXL: both halves' time ids (a partial negative micro-conditioning is refused before anything compiles).
    const SdxlTimeIds timeIds = files.isSdxlRefiner()           ? sdxlRefinerTimeIdPair(req.micro, width, height)
                                : unet->hasAddedConditioning() ? sdxlTimeIdPair(req.micro, width, height)
                                                               : SdxlTimeIds{};
    const bool guided = req.cfgScale > 1.f;  // as diffusers: guidance_scale <= 1 runs the conditional half only
    const int batch = guided ? 2 : 1;
    Image image;

    // LoRA tags (webui syntax): cut out of the prompt, their LoRAs merged with the pipeline's own.
    auto t0 = std::chrono::steady_clock::now();
    std::string promptText = req.prompt;
    std::vector<prompt::LoraTag> tags;
    if (req.promptSyntax == prompt::PromptSyntax::Webui) {
      prompt::PromptLoras found = prompt::extractLoraTags(req.prompt);
      promptText = std::move(found.prompt);
      image.warnings = std::move(found.warnings);
      tags = std::move(found.loras);
    }
    loras.use(loras.withTags(tags));
    // Text: the token windows first (prompt syntax errors come before any compilation).
    const TextConditioning::Windows tokens =
        textConditioning->tokenize(req.promptSyntax, promptText, req.negativePrompt, guided);
    const prompt::ConditioningWindows& windows = tokens.first;
    image.warnings.insert(image.warnings.end(), windows.warnings.begin(), windows.warnings.end());
    const int64_t d = contextWidth();
    const double tokenizeMs = msSince(t0);

    auto compileStart = std::chrono::steady_clock::now();
    SizeStage& ss = sizeStage(height / scale, width / scale);
    // The scheduler file read as diffusers' from_config reads it for this sampler's class; Karras sigmas when
    // asked for, or when that config turns them on (only Euler's and DPM++'s classes take use_karras_sigmas).
    models::SchedulerConfig schedule =
        models::schedulerConfigFor(files.scheduler, sampling::diffusersSchedulerClass(req.sampler));
    if (req.sgmUniform) schedule.timestepSpacing = "trailing";
    const bool karras = req.karras || (schedule.useKarrasSigmas && !req.exponential);
    // A schedule asked for replaces the file's (Sampler::create refuses Karras with exponential, and exponential
    // sigmas for samplers without them).
    if (req.exponential) schedule.useExponentialSigmas = true;
    else if (karras) schedule.useExponentialSigmas = false;
    auto sampler = sampling::Sampler::create(schedule, {req.sampler, karras}, req.steps, kFirstSamplerSlot);
    // Image to image starts where strength puts it (diffusers' get_timesteps and set_begin_index), a refiner
    // where denoising start does; the base of an ensemble stops where denoising end does.
    const DenoisingSteps range = denoisingSteps(*sampler, schedule.numTrainTimesteps, req.denoisingStart,
                                                req.denoisingEnd, req.initImage ? std::optional(req.strength)
                                                                                : std::nullopt);
    const int firstStep = range.firstStep;
    sampler->beginAt(firstStep);
    // The windows' embeddings [batch * chunks, 77, d] are, in memory, the context [batch, chunks * 77, d].
    const int64_t contextLength = int64_t(windows.contextLength());
    // The graph arena: the step's plans and the decode's reserved before any graph records, so that the first
    // graph recorded allocates what the largest needs and the rest fit in it. The conv scratch: sized by the
    // decode (LatentDecoding::reserve), whose needs are the largest, before the step and text graphs record on
    // it; after the step's graphs are built, so that their conv candidates compile while the decode's are tuned.
    StepGraphs& stepGraphs =
        stepGraph(ss, *sampler, guided, graph::view(textConditioning->context(tokens), dtype, {batch, contextLength, d}),
                  [&] { decoding->reserve(req.decoder, req.vaeTiling, ss.latents, ss.h, ss.w); });
    graph::CompiledGraph& step = *stepGraphs.step;
    graph::CompiledGraph& encoder = textConditioning->encoder(tokens, req.clipSkip);
    encoder.finishRecording();  // the graphs' kernels compile together (KernelRegistry's workers)
    stepGraphs.context->finishRecording();
    step.finishRecording();
    // Tiled or not decides the encode too, as diffusers' one use_tiling flag does.
    const LatentDecoding::Plan plan = decoding->prepare(req.decoder, req.vaeTiling, ss.latents, ss.h, ss.w, taesd.get());
    if (req.preview == PreviewDecoder::Taesd && hooks.preview) taesd->prepareDecode(ss.latents, ss.h, ss.w);
    timings.compileMs = msSince(compileStart);

    // The starting latents, from the generator in diffusers' order of draws (docs/img2img.md). Text to image draws
    // them on the host (torch's CPU generator, ~1 ms at 64x64x4 on one core) while the GPU encodes the
    // text; image to image encodes on the GPU, after the text. The future is declared after what it reads, so
    // an exception below waits for the draw before those go.
    const int64_t c = latentChannels(), h = ss.h, w = ss.w;
    sampling::TorchCpuGenerator generator(req.seed);
    auto drawStart = [&] { return startingLatents(req, *sampler, firstStep, generator, ss, width, height, plan); };
    std::future<Start> drawnStart;
    if (!req.initImage || req.denoisingStart) drawnStart = std::async(std::launch::async, drawStart);

    auto encodeStart = std::chrono::steady_clock::now();
    // SDXL: diffusers' force_zeros_for_empty_prompt zeroes the unconditional half when no negative prompt is given.
    const bool zeroNegative = guided && files.forceZerosForEmptyPrompt && req.negativePrompt.empty();
    const std::vector<float> added =
        textConditioning->encode(tokens, req.clipSkip, zeroNegative, timeIds, *unet);
    if (unet->hasAddedConditioning()) uploadFloats(ctx, stepGraphs.addedConditioning, added);
    // The cross-attention K/V of this text, read by every step: queued behind the encoder, waited for below.
    stepGraphs.context->submit();
    timings.tokenizeMs = tokenizeMs;
    timings.textSubmitMs = msSince(encodeStart);

    auto imageStart = std::chrono::steady_clock::now();
    const Start start = drawnStart.valid() ? drawnStart.get() : drawStart();
    uploadFloats(ctx, ss.latents, start.latents);  // its sequence orders after the text's, its wait covers them
    stepGraphs.context->wait();                    // done by now; reports a failure of the text's submissions
    timings.startMs = msSince(imageStart);
    timings.encodeMs = tokenizeMs + timings.textSubmitMs + timings.startMs;
    // Every saved tensor and the noise start as zeros: the first evaluation weights them by 0.
    std::vector<float> zeros(start.latents.size(), 0.f);
    uploadFloats(ctx, ss.history, zeros);
    for (const Allocation& r : ss.registers) uploadFloats(ctx, r, zeros);
    std::memset(ss.noise.mapped(), 0, zeros.size() * 4);

    step.setUniform(kGuidanceSlot, req.cfgScale);
    previewFit.channels = int(c);
    const bool approxPreview = hooks.preview && req.preview == PreviewDecoder::Approx;
    const LatentRgbProjection projection = approxPreview ? previewFit.solve() : LatentRgbProjection{};
    std::vector<float> currentLatents;
    // One replay per UNet evaluation (multi-evaluation samplers run several per step); progress and previews after
    // each step's last evaluation, the inpainting blend after every evaluation (as diffusers after every step()).
    const int run = range.stepsRun, firstEvaluation = range.firstEvaluation, evaluations = range.endEvaluation;
    auto stepStart = std::chrono::steady_clock::now();
    for (int e = firstEvaluation; e < evaluations; ++e) {
      const int i = sampler->stepOfEvaluation(e);
      checkCancel(i - firstStep, run);
      step.setUniform(kTimestepSlot, sampler->evaluationTimestep(e));
      sampler->setEvaluationUniforms(e, [&](uint32_t slot, float v) { step.setUniform(slot, v); });
      if (sampler->drawsNoise(e)) {
        std::vector<float> n = nchwToNhwc(generator.randn(size_t(c * h * w)), int(c), int(h), int(w));
        std::memcpy(ss.noise.mapped(), n.data(), n.size() * 4);  // the previous step has finished reading it
      }
      step.run();
      if (!start.blendMask.empty()) blendKeptLatents(start, *sampler, e, e + 1 == evaluations, ss);
      const bool stepDone = e + 1 == evaluations || sampler->stepOfEvaluation(e + 1) != i;
      if (!stepDone) continue;
      timings.stepMs.push_back(msSince(stepStart));
      stepStart = std::chrono::steady_clock::now();
      if (progress) progress(i - firstStep + 1, run);
      if (approxPreview) {
        currentLatents = downloadFloats(ctx, ss.latents, size_t(h * w * c), DType::F32);
        hooks.preview({i - firstStep + 1, run, int(w), int(h), projectLatents(projection, currentLatents), scale});
      } else if (hooks.preview) {
        hooks.preview({i - firstStep + 1, run, width, height, decodedToRgb8(taesd->decode(h, w)), 1});
      }
    }
    checkCancel(run, run);
    image.width = width;
    image.height = height;
    if (req.denoisingEnd) {  // the refiner decodes
      image.latents = nhwcToNchw(downloadFloats(ctx, ss.latents, size_t(h * w * c), DType::F32), int(c), int(h), int(w));
      return image;
    }

    auto decodeStart = std::chrono::steady_clock::now();
    const int64_t oc = files.vaeConfig.outChannels;
    if (oc != 3) throw Error("VAE has " + std::to_string(oc) + " output channels; images need 3");
    image.vaeTiled = plan.tiled;
    const std::span<const float> decoded = decoding->decode(plan, ss.latents, h, w, taesd.get());
    timings.decodeRunMs = msSince(decodeStart);
    // An overflowing decode (the original SDXL VAE in fp16) would otherwise clamp to a black or flat image.
    if (!postprocessDecoded(decoded, req.floatPixels || approxPreview ? &image.pixels : nullptr, image.rgb))
      throw Error(nonFiniteDecodeMessage(files.name, vaeDtype == DType::F16));
    timings.decodeMs = msSince(decodeStart);
    timings.postprocessMs = timings.decodeMs - timings.decodeRunMs;
    if (approxPreview) previewFit.add(currentLatents, h, w, image.pixels, scale);
    if (!req.floatPixels) image.pixels = {};
    return image;
  }

  // TAESD where the request asks for it: loaded, and fitting this model (before any work).
  void checkTaesdUse(const GenerationRequest& req, const GenerationHooks& hooks) const {
    const bool previews = req.preview == PreviewDecoder::Taesd && hooks.preview;
    if (req.decoder != ImageDecoder::Taesd && !previews) return;
    if (!taesd) throw Error("the TAESD " + std::string(previews ? "preview" : "decode") + " needs a TAESD model (--taesd PATH)");
    taesd->checkUses(previews, req.decoder == ImageDecoder::Taesd, bool(req.initImage), req.vaeTiling == VaeTilingMode::On,
                     int(latentChannels()), vae->upscale(), files.name);
  }

  int defaultWidth() const { return files.unetConfig.sampleSize * vae->upscale(); }
  int defaultHeight() const { return files.unetConfig.sampleSize * vae->upscale(); }
};

TextToImage::TextToImage(Context& ctx, const LoadOptions& options) {
  auto t0 = std::chrono::steady_clock::now();
  impl_ = std::make_unique<Impl>(ctx, options);
  impl_->timings.loadMs = msSince(t0);
}

TextToImage::~TextToImage() = default;

MemoryReport TextToImage::memoryReport() const { return impl_->memoryReport(); }

const ops::ConvTuner& TextToImage::convTuner() const { return impl_->tuner; }

Image TextToImage::generate(const GenerationRequest& request, const ProgressCallback& progress) {
  GenerationHooks hooks;
  hooks.progress = progress;
  return impl_->generate(request, hooks);
}

Image TextToImage::generate(const GenerationRequest& request, const GenerationHooks& hooks) {
  return impl_->generate(request, hooks);
}

const StageTimings& TextToImage::timings() const { return impl_->timings; }
std::string TextToImage::modelName() const { return impl_->files.name; }
int TextToImage::defaultWidth() const { return impl_->defaultWidth(); }
int TextToImage::defaultHeight() const { return impl_->defaultHeight(); }
bool TextToImage::isInpaintingModel() const { return impl_->inpaintingUNet(); }
bool TextToImage::isSdxlModel() const { return impl_->files.isSdxl(); }
bool TextToImage::isSdxlRefiner() const { return impl_->files.isSdxlRefiner(); }
int TextToImage::latentChannels() const { return int(impl_->latentChannels()); }
int TextToImage::vaeScaleFactor() const { return impl_->vae->upscale(); }
float TextToImage::vaeScalingFactor() const { return impl_->files.vaeConfig.scalingFactor; }

std::string TextToImage::taesdPreviewProblem() const {
  GenerationRequest req;
  req.preview = PreviewDecoder::Taesd;
  GenerationHooks hooks;
  hooks.preview = [](const LatentPreview&) {};
  try {
    impl_->checkTaesdUse(req, hooks);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

void TextToImage::setLoras(const std::vector<lora::LoraSpec>& loras) { impl_->loras.setBase(loras); }
const std::vector<lora::LoraSpec>& TextToImage::mergedLoras() const { return impl_->loras.merged(); }
void TextToImage::setLoraDirectory(const std::string& dir) { impl_->loras.setDirectory(dir); }

}  // namespace sdgen::pipeline
