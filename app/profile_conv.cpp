#include "app/profile_conv.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <random>

#include "app/atomic_file.h"
#include "app/conv_tune_report.h"
#include "app/generation_plan.h"
#include "app/profile_conv_weights.h"
#include "engine/error.h"
#include "engine/tensor_io.h"
#include "graph/executor.h"
#include "models/formats/model_files.h"
#include "models/networks/clip_text_encoder.h"
#include "models/networks/unet.h"
#include "models/networks/vae_decoder.h"
#include "ops/conv2d_plan.h"
#include "ops/conv2d_scratch.h"

namespace sdgen::app {

namespace {

using graph::Expr;
using graph::Value;

constexpr uint32_t kTimestepSlot = 0;
constexpr float kTimestep = 500.f;
// Warm-up: at least this many runs and this much wall time, so that the GPU's clocks have ramped up before the
// timed run (one 50 ms step after one warm-up read every kernel 2-4x slow on an H100, 2026-11-24).
constexpr int kWarmupRuns = 3;
constexpr double kWarmupSeconds = 1.0;
constexpr int kTimedRuns = 5;  // each command's median (runTimed)

// A graph value over device memory the graph does not own.
Value external(const graph::TensorView& v) {
  return {v.shape, {}, [v](const graph::Resolver&) { return graph::buffer(v); }, 0};
}

Allocation randomTensor(Context& ctx, size_t count, DType dtype, uint32_t seed, float scale, const char* name) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.f, scale);
  std::vector<float> v(count);
  for (auto& x : v) x = d(rng);
  return uploadFloats(ctx, v, dtype, name);
}

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The op type of a node: its builder's tag when there is one, else what the network builders' labels say
// (models/nn/layers.cpp does not tag its nodes yet).
std::string opType(const graph::GraphNode& node, bool hasConvKernel) {
  const std::string& op = node.op;
  if (op == "conv2d" || hasConvKernel) return "conv";
  if (op == "linear" || op == "attention" || op == "norm") return op;
  if (!op.empty()) return "other";
  const std::string& l = node.label;
  if (endsWith(l, " stats")) return "norm";
  if (endsWith(l, " attn1") || endsWith(l, " attn2") || endsWith(l, " attention") || endsWith(l, " scores") ||
      endsWith(l, " softmax") || endsWith(l, " values"))
    return "attention";
  return "linear";  // every other node of Builder (kernelNode) is a product
}

// The conv problem of a conv node: weights from the recorded weight reads, output from the written tensor, the
// input size from what it reads. A strided conv reads a tensor of N*H*W*Cin elements with H, W = Ho*s or Ho*s-1
// (padding K/2 as in SD); anything else (a lazily upsampled input, a concatenation, norm statistics, epilogue
// operands) leaves the input at the output's size, stride 1.
ops::ConvProblem convProblem(const graph::Graph& g, const graph::GraphNode& node, const RecordedConvWeight& w) {
  const graph::Shape& out = g.tensors().at(node.writes.at(0)).shape;
  if (out.size() != 4) throw Error("--profile-conv: conv '" + node.label + "' writes a tensor that is not NHWC");
  ops::ConvProblem p;
  p.n = out[0], p.ho = out[1], p.wo = out[2], p.cout = out[3];
  p.cin = w.cin;
  p.h = p.ho, p.w = p.wo;
  int stride = 1;
  for (graph::TensorId t : node.reads) {
    const int64_t count = graph::numel(g.tensors().at(t).shape);
    for (int s = 2; s <= 4 && stride == 1; ++s)
      for (int64_t h : {p.ho * s, p.ho * s - 1})
        for (int64_t wd : {p.wo * s, p.wo * s - 1})
          if (stride == 1 && count == p.n * h * wd * p.cin) stride = s, p.h = h, p.w = wd;
  }
  p.p = ops::Conv2dParams::square(w.k, stride);
  if (p.cout != w.cout)
    throw Error("--profile-conv: conv '" + node.label + "' writes " + std::to_string(p.cout) +
                " channels but the weights attributed to it ('" + w.name + "') have " + std::to_string(w.cout) +
                " output channels (conv layers were built in another order than their weights were loaded)");
  return p;
}

ProfiledGraph summarize(const std::string& name, const graph::Graph& g, const graph::CompiledGraph& compiled,
                        const std::vector<CommandTiming>& timings, const std::vector<RecordedConvWeight>& weights,
                        DType dtype, const std::map<std::string, ops::ConvChoice>& choices) {
  ProfiledGraph pg;
  pg.name = name;
  pg.launches = compiled.launches();
  pg.commands = timings.size();
  for (const auto& type : profileOpTypes()) pg.msByType[type] = 0, pg.commandsByType[type] = 0;

  // Conv nodes in the order the network builders added them: the order their weights were loaded.
  std::vector<const graph::NodeSpan*> spans;
  for (const auto& s : compiled.nodeSpans()) spans.push_back(&s);
  std::map<int, size_t> convIndex;  // node -> its weights
  {
    std::vector<int> convNodes;
    for (const auto* s : spans)
      for (size_t c = s->firstCommand; c < s->firstCommand + s->commandCount; ++c) {
        auto split = ops::splitConvDispatchLabel(timings.at(c).label);
        if (split && split->first == g.nodes()[s->node].label) {
          convNodes.push_back(s->node);
          break;
        }
      }
    std::sort(convNodes.begin(), convNodes.end());
    if (convNodes.size() != weights.size())
      throw Error("--profile-conv: the " + name + " graph has " + std::to_string(convNodes.size()) +
                  " conv layers but the network loaded " + std::to_string(weights.size()) + " conv weights");
    for (size_t i = 0; i < convNodes.size(); ++i) convIndex[convNodes[i]] = i;
  }

  for (const auto* s : spans) {
    const graph::GraphNode& node = g.nodes()[s->node];
    const bool isConv = convIndex.count(s->node) > 0;
    const std::string type = opType(node, isConv);
    ProfiledConv conv;
    ops::ConvProblem prob;
    if (isConv) {
      const RecordedConvWeight& w = weights[convIndex[s->node]];
      prob = convProblem(g, node, w);
      conv.layer = node.label;
      conv.problem = prob.str();
      auto choice = choices.find(node.label);
      conv.selectedBy = choice == choices.end() ? "rule" : choice->second.source;
      if (choice != choices.end() && choice->second.source != "rule") conv.candidate = choice->second.candidate;
      conv.weights = w.name;
      conv.directFlops = ops::convDirectFlops(prob);
    }
    // A role's kernels share its cost: the Winograd algorithms run theirs once per band of tiles.
    std::map<ops::ConvKernelRole, int> perRole;
    if (isConv)
      for (size_t c = s->firstCommand; c < s->firstCommand + s->commandCount; ++c)
        if (auto split = ops::splitConvDispatchLabel(timings.at(c).label)) ++perRole[split->second.role];
    for (size_t c = s->firstCommand; c < s->firstCommand + s->commandCount; ++c) {
      const CommandTiming& t = timings.at(c);
      const double ms = t.ns * 1e-6;
      pg.totalMs += ms;
      pg.msByType[type] += ms;
      pg.commandsByType[type] += 1;
      if (!isConv) {
        pg.others.push_back({node.label, type, t.label, ms});
        continue;
      }
      auto split = ops::splitConvDispatchLabel(t.label);
      if (!split) throw Error("--profile-conv: conv '" + node.label + "' recorded '" + t.label + "', not a conv kernel");
      const ops::ConvKernelId& id = split->second;
      ops::ConvKernelCost cost = ops::convKernelCost(prob, id.role, dtype, dtype, id.algo);
      cost.flops /= perRole[id.role];
      cost.bytes /= perRole[id.role];
      conv.kernels.push_back({t.label, ops::convKernelRoleName(id.role), ms, cost.flops, cost.bytes});
      conv.algo = ops::convAlgoName(id.algo);
      if (!id.tile.empty()) conv.tile = id.tile;
      conv.ms += ms;
      conv.bytes += cost.bytes;
    }
    if (isConv) {
      conv.tflops = conv.ms > 0 ? conv.directFlops / (conv.ms * 1e-3) / 1e12 : 0;
      conv.gbps = conv.ms > 0 ? conv.bytes / (conv.ms * 1e-3) / 1e9 : 0;
      pg.convs.push_back(std::move(conv));
    }
  }
  return pg;
}

// Runs the compiled graph untimed (first-submission effects, clock ramp-up), then kTimedRuns times timed, and
// returns each command's median time over those runs: a single timed run read every launch of a UNet step
// 2.7x slow on an H100 after the warm-up (2026-11-28; the image steps of the same process ran at full speed).
std::vector<CommandTiming> runTimed(graph::CompiledGraph& compiled) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kWarmupRuns || std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() <
                                         kWarmupSeconds;
       ++i)
    compiled.run();
  std::vector<std::vector<double>> ns;
  std::vector<CommandTiming> timings;
  for (int r = 0; r < kTimedRuns; ++r) {
    compiled.run();
    timings = compiled.timings();
    ns.resize(timings.size());
    for (size_t c = 0; c < timings.size(); ++c) ns[c].push_back(timings[c].ns);
  }
  for (size_t c = 0; c < timings.size(); ++c) {
    std::nth_element(ns[c].begin(), ns[c].begin() + ns[c].size() / 2, ns[c].end());
    timings[c].ns = ns[c][ns[c].size() / 2];
  }
  return timings;
}

}  // namespace

ProfileReport profileConv(Context& ctx, const ProfileSettings& st) {
  ProfileReport report;
  report.device = ctx.info().name + " (" + ctx.info().driverInfo + ")";
  report.precision = st.precision;
  report.timestamps = ctx.info().timestampsSupported;
  if (!report.timestamps)
    throw Error("--profile-conv: device '" + ctx.info().name + "' has no timestamp queries on its compute queue");

  models::ModelFiles files = models::openModel(st.modelPath);
  report.model = files.name;
  const DType dtype = st.precision;
  ops::ConvTuner tuner(ctx, st.autotune);  // before params: the weights it packed point to it
  nn::ParameterStore params(ctx, dtype);
  params.setConvTuner(&tuner);
  RecordingWeightSource unetSource(*files.unetWeights), vaeSource(*files.vaeWeights);
  networks::UNet unet(params, files.unetConfig, unetSource);
  networks::VaeDecoder vae(params, files.vaeConfig, vaeSource);
  ops::Conv2dScratch scratch(ctx, "profile conv scratch");

  const int scale = vae.upscale();
  report.width = st.width ? st.width : files.unetConfig.sampleSize * scale;
  report.height = st.height ? st.height : files.unetConfig.sampleSize * scale;
  if (report.width % scale || report.height % scale)
    throw Error("--profile-conv: image size " + std::to_string(report.width) + "x" + std::to_string(report.height) +
                " is not a multiple of the VAE's scale factor " + std::to_string(scale));
  const int64_t h = report.height / scale, w = report.width / scale, c = files.unetConfig.inChannels;
  const int64_t batch = 2, seq = files.textEncoderConfig.maxPositionEmbeddings, ctxDim = files.unetConfig.crossAttentionDim;

  {  // One UNet step: the guided batch of 2 (the same latents twice, two text contexts).
    Allocation latents = randomTensor(ctx, size_t(batch * h * w * c), DType::F32, 1, 1.f, "profile latents");
    Allocation context = randomTensor(ctx, size_t(batch * seq * ctxDim), dtype, 2, 1.f, "profile text context");
    Allocation prediction = ctx.allocate(uint64_t(batch * h * w * c) * dtypeSize(dtype), "profile noise prediction");
    graph::Graph g;
    nn::Builder b(g, dtype, &scratch);
    Value sample = external(graph::view(latents, DType::F32, {batch, h, w, c}));
    Value t{{batch, 1}, {}, [batch](const graph::Resolver&) {
              return graph::broadcast(graph::uniform(kTimestepSlot), {batch, 1});
            }, 0};
    graph::TensorId out = g.output("noise prediction", {batch, h, w, c}, dtype);
    // As the generator runs it: the cross-attention K/V of the text, computed once per image before the steps
    // (not part of the step profiled here), read by the step.
    const graph::TensorView contextView = graph::view(context, dtype, {batch, seq, ctxDim});
    std::optional<Allocation> kvMemory;
    std::optional<Value> contextKv;
    graph::Graph kvGraph;
    std::map<graph::TensorId, graph::TensorView> kvBindings;
    nn::Builder kvBuilder(kvGraph, dtype, &scratch);
    if (const std::optional<graph::Shape> shape = unet.contextProjectionShape(batch, seq)) {
      kvMemory = ctx.allocate(uint64_t(graph::numel(*shape)) * dtypeSize(dtype), "profile context K/V");
      const graph::TensorId kvOut = kvGraph.output("context kv", *shape, dtype);
      kvBindings.emplace(kvOut, graph::view(*kvMemory, dtype, *shape));
      contextKv = external(kvBindings.at(kvOut));
      unet.buildContextProjections(kvBuilder, external(contextView), kvOut);
    }
    graph::CompiledGraph kvCompiled(ctx, kvGraph, kvBindings);
    // SDXL's added conditioning (pooled text embedding and micro-conditioning sinusoids): random rows of its
    // width, as the step reads them (their values do not change what runs).
    std::optional<Allocation> addedMemory;
    std::optional<Value> added;
    if (unet.hasAddedConditioning()) {
      const int64_t width = files.unetConfig.projectionClassEmbeddingsInputDim;
      addedMemory = randomTensor(ctx, size_t(batch * width), DType::F32, 5, 1.f, "profile added conditioning");
      added = external(graph::view(*addedMemory, DType::F32, {batch, width}));
    }
    unet.build(b, sample, t, external(contextView), out, contextKv ? &*contextKv : nullptr, added ? &*added : nullptr);
    graph::CompiledGraph compiled(ctx, g, {{out, graph::view(prediction, dtype, {batch, h, w, c})}}, true);
    kvCompiled.run();
    compiled.setUniform(kTimestepSlot, kTimestep);
    const std::vector<CommandTiming> timings = runTimed(compiled);
    ProfiledGraph pg = summarize("unet step", g, compiled, timings, unetSource.convWeights(), dtype, tuner.choices());
    pg.input = "latents [" + std::to_string(batch) + "," + std::to_string(h) + "," + std::to_string(w) + "," +
               std::to_string(c) + "], text context [" + std::to_string(batch) + "," + std::to_string(seq) + "," +
               std::to_string(ctxDim) + "], timestep " + std::to_string(int(kTimestep));
    report.graphs.push_back(std::move(pg));
  }
  {  // One VAE decode of one latent image.
    const int64_t oc = files.vaeConfig.outChannels;
    Allocation latents = randomTensor(ctx, size_t(h * w * c), DType::F32, 3, 1.f, "profile decode latents");
    Allocation image = ctx.allocate(uint64_t(h * scale * w * scale * oc) * 4, "profile decoded image");
    graph::Graph g;
    nn::Builder b(g, dtype, &scratch);
    graph::TensorId out = g.output("image", {1, h * scale, w * scale, oc}, DType::F32);
    vae.build(b, external(graph::view(latents, DType::F32, {1, h, w, c})), out);
    graph::CompiledGraph compiled(ctx, g, {{out, graph::view(image, DType::F32, {1, h * scale, w * scale, oc})}}, true);
    const std::vector<CommandTiming> timings = runTimed(compiled);
    ProfiledGraph pg = summarize("vae decode", g, compiled, timings, vaeSource.convWeights(), dtype, tuner.choices());
    pg.input = "latents [1," + std::to_string(h) + "," + std::to_string(w) + "," + std::to_string(c) + "]";
    report.graphs.push_back(std::move(pg));
  }
  if (files.textEncoderWeights) {  // (the SDXL refiner has no first text encoder)
    // The text encoder on the guided batch of 2 windows (random token ids), as a generation encodes a prompt.
    networks::ClipTextEncoder text(params, files.textEncoderConfig, *files.textEncoderWeights);
    const int64_t d = files.textEncoderConfig.hiddenSize;
    std::mt19937 rng(4);
    std::vector<int32_t> ids(size_t(batch * seq));
    for (auto& id : ids) id = int32_t(rng() % uint32_t(files.textEncoderConfig.vocabSize));
    Allocation idMemory = ctx.allocate(ids.size() * 4, "profile token ids");
    ctx.upload(idMemory, 0, {reinterpret_cast<const uint8_t*>(ids.data()), ids.size() * 4});
    Allocation embeddings = ctx.allocate(uint64_t(batch * seq * d) * dtypeSize(dtype), "profile text embeddings");
    graph::Graph g;
    nn::Builder b(g, dtype, &scratch);
    graph::TensorId out = g.output("text embeddings", {batch, seq, d}, dtype);
    text.build(b, graph::indexView(idMemory, {batch, seq}), 0, out);
    graph::CompiledGraph compiled(ctx, g, {{out, graph::view(embeddings, dtype, {batch, seq, d})}}, true);
    const std::vector<CommandTiming> timings = runTimed(compiled);
    ProfiledGraph pg = summarize("text encoder", g, compiled, timings, {}, dtype, tuner.choices());
    pg.input = "token ids [" + std::to_string(batch) + "," + std::to_string(seq) + "]";
    report.graphs.push_back(std::move(pg));
  }
  report.autotune = tuner.stats();
  report.autotuneCache = tuner.cachePath();
  report.autotuneDropped = tuner.droppedCandidates();
  for (const std::string& w : tuner.warnings()) std::fprintf(stderr, "warning: %s\n", w.c_str());
  return report;
}

std::string formatProfile(const ProfileReport& r) {
  std::string s;
  char buf[512];
  std::snprintf(buf, sizeof buf, "device: %s\nmodel: %s, %dx%d, %s; GPU time of every command (timestamps)\n",
                r.device.c_str(), r.model.c_str(), r.width, r.height, dtypeName(r.precision));
  s += buf;
  if (r.autotune.enabled)
    std::snprintf(buf, sizeof buf, "conv autotune: %d problems tuned in %.2f s (%llu launches), %d from the cache %s\n",
                  r.autotune.tuned, r.autotune.seconds, static_cast<unsigned long long>(r.autotune.launches),
                  r.autotune.fromCache, r.autotuneCache.c_str());
  else
    std::snprintf(buf, sizeof buf, "conv autotune: off (every conv by the rule)\n");
  s += buf;
  s += formatDroppedCandidates(r.autotune.dropped, r.autotuneDropped);
  for (const auto& g : r.graphs) {
    std::snprintf(buf, sizeof buf, "\n== %s: %s\n%-34s %-44s %-8s %-12s %9s %8s %8s %s\n", g.name.c_str(),
                  g.input.c_str(), "conv layer", "problem", "algo", "tile", "ms", "TFLOP/s", "GB/s", "chosen by");
    s += buf;
    for (const auto& c : g.convs) {
      std::snprintf(buf, sizeof buf, "%-34s %-44s %-8s %-12s %9.4f %8.3f %8.1f %s\n", c.layer.c_str(), c.problem.c_str(),
                    c.algo.c_str(), c.tile.empty() ? "-" : c.tile.c_str(), c.ms, c.tflops, c.gbps, c.selectedBy.c_str());
      s += buf;
      if (c.kernels.size() > 1)
        for (const auto& k : c.kernels) {
          std::snprintf(buf, sizeof buf, "    %-30s %-44s %-8s %-12s %9.4f %8.3f %8.1f\n", k.role.c_str(), "", "", "",
                        k.ms, k.ms > 0 ? k.flops / (k.ms * 1e-3) / 1e12 : 0.0,
                        k.ms > 0 ? k.bytes / (k.ms * 1e-3) / 1e9 : 0.0);
          s += buf;
        }
    }
    std::snprintf(buf, sizeof buf, "totals of %s by op type:\n", g.name.c_str());
    s += buf;
    for (const auto& type : profileOpTypes()) {
      double ms = g.msByType.at(type);
      std::snprintf(buf, sizeof buf, "  %-10s %9.4f ms %5.1f%%  %4zu launches\n", type.c_str(), ms,
                    g.totalMs > 0 ? 100.0 * ms / g.totalMs : 0.0, g.commandsByType.at(type));
      s += buf;
    }
    std::snprintf(buf, sizeof buf, "  %-10s %9.4f ms          %4zu launches (%zu commands)\n", "total", g.totalMs,
                  g.launches, g.commands);
    s += buf;
  }
  return s;
}

std::string profileJson(const ProfileReport& r) {
  using nlohmann::json;
  json graphs = json::array();
  for (const auto& g : r.graphs) {
    json convs = json::array();
    for (const auto& c : g.convs) {
      json kernels = json::array();
      for (const auto& k : c.kernels)
        kernels.push_back({{"label", k.label}, {"role", k.role}, {"ms", k.ms}, {"flops", k.flops}, {"bytes", k.bytes}});
      convs.push_back({{"layer", c.layer}, {"problem", c.problem}, {"weights", c.weights}, {"algo", c.algo},
                       {"tile", c.tile}, {"ms", c.ms}, {"direct_flops", c.directFlops}, {"bytes", c.bytes},
                       {"tflops", c.tflops}, {"gbps", c.gbps}, {"kernels", kernels}, {"candidate", c.candidate},
                       {"selected_by", c.selectedBy}});
    }
    json others = json::array();
    for (const auto& o : g.others)
      others.push_back({{"node", o.node}, {"type", o.type}, {"label", o.label}, {"ms", o.ms}});
    json byType = json::object();
    for (const auto& type : profileOpTypes())
      byType[type] = {{"ms", g.msByType.at(type)}, {"launches", g.commandsByType.at(type)}};
    graphs.push_back({{"name", g.name}, {"input", g.input}, {"total_ms", g.totalMs}, {"launches", g.launches},
                      {"commands", g.commands}, {"by_type", byType}, {"convs", convs},
                      {"others", others}});
  }
  json root{{"device", r.device}, {"model", r.model},   {"precision", dtypeName(r.precision)},
            {"width", r.width},   {"height", r.height}, {"graphs", graphs}};
  root["autotune"] = {{"enabled", r.autotune.enabled},   {"problems_tuned", r.autotune.tuned},
                      {"problems_from_cache", r.autotune.fromCache}, {"problems_failed", r.autotune.failed},
                      {"candidates_dropped", r.autotune.dropped}, {"dropped", r.autotuneDropped},
                      {"launches", r.autotune.launches}, {"seconds", r.autotune.seconds},
                      {"cache", r.autotuneCache}};
  return root.dump(1) + "\n";
}

int runProfileConv(const CliOptions& options, std::FILE* out, std::FILE*) {
  ProfileSettings st;
  st.modelPath = resolveModelPath(options.modelPath);
  if (!options.jsonPath.empty()) checkOutputDirectory(options.jsonPath);
  ModelDefaults defaults = readModelDefaults(st.modelPath);
  st.width = options.width ? options.width : defaults.width.value_or(0);
  st.height = options.height ? options.height : defaults.height.value_or(0);
  ContextOptions co;
  co.deviceIndex = options.device;
  Context ctx(co);
  st.precision = resolvePrecision(options.precision, ctx.info());
  st.autotune = autotuneSettings(options);
  ProfileReport report = profileConv(ctx, st);
  std::fputs(formatProfile(report).c_str(), out);
  if (!options.jsonPath.empty()) {
    std::string json = profileJson(report);
    writeFileAtomically(options.jsonPath, std::span(reinterpret_cast<const uint8_t*>(json.data()), json.size()));
  }
  return 0;
}

}  // namespace sdgen::app
