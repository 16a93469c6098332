#include "models/sampling/step_recorder.h"

#include <string>

#include "engine/error.h"
#include "models/sampling/linear_sampler.h"
#include "ops/elementwise.h"

namespace sdgen::sampling {

namespace {

void requireTensor(const graph::TensorView& latents, const graph::TensorView& t, const char* name,
                   const Sampler& sampler) {
  const std::string who = std::string("latent update (sampler ") + samplerFlagName(sampler.kind()) + ")";
  if (t.address == 0) throw Error(who + ": the " + name + " tensor is missing");
  if (t.shape != latents.shape)
    throw Error(who + ": the " + name + " tensor has shape " + graph::shapeString(t.shape) + ", the latents " +
                graph::shapeString(latents.shape));
}

ops::ElementwiseOptions labelled(const char* label) {
  ops::ElementwiseOptions o;
  o.label = label;
  return o;
}

int recordLinearUpdate(Context& ctx, CommandSequence& seq, const LinearSampler& sampler,
                       const LatentUpdateTensors& tensors, const graph::Expr& modelOutput, const graph::Expr& noise) {
  const int k = sampler.registerCount();
  if (static_cast<int>(tensors.registers.size()) < k || static_cast<int>(tensors.registerScratch.size()) < k)
    throw Error(std::string("latent update (sampler ") + samplerFlagName(sampler.kind()) + "): it needs " +
                std::to_string(k) + " saved-state and " + std::to_string(k) + " scratch tensors, got " +
                std::to_string(tensors.registers.size()) + " and " + std::to_string(tensors.registerScratch.size()));
  std::vector<graph::Expr> registers;
  for (int i = 0; i < k; ++i) {
    requireTensor(tensors.latents, tensors.registers[size_t(i)], "saved-state", sampler);
    requireTensor(tensors.latents, tensors.registerScratch[size_t(i)], "scratch", sampler);
    registers.push_back(graph::buffer(tensors.registers[size_t(i)]));
  }
  const graph::Expr latents = graph::buffer(tensors.latents);
  for (int i = 0; i < k; ++i)
    ops::elementwise(ctx, seq, sampler.nextValue(i + 1, latents, modelOutput, noise, registers),
                     graph::bufferSink(tensors.registerScratch[size_t(i)]), labelled("sampler state"));
  ops::elementwise(ctx, seq, sampler.nextValue(0, latents, modelOutput, noise, registers),
                   graph::bufferSink(tensors.latents), labelled("sampler step"));
  for (int i = 0; i < k; ++i)
    ops::elementwise(ctx, seq, graph::buffer(tensors.registerScratch[size_t(i)]),
                     graph::bufferSink(tensors.registers[size_t(i)]), labelled("sampler state copy"));
  return 2 * k + 1;
}

}  // namespace

int recordLatentUpdate(Context& ctx, CommandSequence& seq, const Sampler& sampler,
                       const LatentUpdateTensors& tensors, const graph::Expr& modelOutput) {
  const graph::Expr latents = graph::buffer(tensors.latents);
  graph::Expr noise, history;
  if (sampler.needsNoise()) {
    requireTensor(tensors.latents, tensors.noise, "noise", sampler);
    noise = graph::buffer(tensors.noise);
  }
  if (const auto* linear = dynamic_cast<const LinearSampler*>(&sampler))
    return recordLinearUpdate(ctx, seq, *linear, tensors, modelOutput, noise);
  if (!sampler.needsHistory()) {
    ops::elementwise(ctx, seq, sampler.nextLatents(latents, modelOutput, noise, history),
                     graph::bufferSink(tensors.latents), labelled("sampler step"));
    return 1;
  }
  requireTensor(tensors.latents, tensors.history, "history", sampler);
  requireTensor(tensors.latents, tensors.scratch, "scratch", sampler);
  history = graph::buffer(tensors.history);
  // New latents aside first (they need the old history), then the history from the old latents, then the
  // new latents into place.
  ops::elementwise(ctx, seq, sampler.nextLatents(latents, modelOutput, noise, history),
                   graph::bufferSink(tensors.scratch), labelled("sampler step"));
  ops::elementwise(ctx, seq, sampler.nextHistory(latents, modelOutput), graph::bufferSink(tensors.history),
                   labelled("sampler history"));
  ops::elementwise(ctx, seq, graph::buffer(tensors.scratch), graph::bufferSink(tensors.latents),
                   labelled("sampler latents"));
  return 3;
}

}  // namespace sdgen::sampling
