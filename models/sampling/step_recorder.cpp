#include "models/sampling/step_recorder.h"

#include <string>

#include "engine/error.h"
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

}  // namespace

int recordLatentUpdate(Context& ctx, CommandSequence& seq, const Sampler& sampler,
                       const LatentUpdateTensors& tensors, const graph::Expr& modelOutput) {
  const graph::Expr latents = graph::buffer(tensors.latents);
  graph::Expr noise, history;
  if (sampler.needsNoise()) {
    requireTensor(tensors.latents, tensors.noise, "noise", sampler);
    noise = graph::buffer(tensors.noise);
  }
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
