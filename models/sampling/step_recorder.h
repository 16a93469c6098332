#pragma once
// Records the latent update of one denoising step (everything after the model output is known) in the order
// the sampler needs, so that the recorded sequence can be replayed for every step with
// Sampler::setStepUniforms. See sampler.h for the protocol it implements.
#include <vector>

#include "engine/command_sequence.h"
#include "engine/context.h"
#include "graph/expr.h"
#include "graph/tensor.h"
#include "models/sampling/sampler.h"

namespace sdgen::sampling {

struct LatentUpdateTensors {
  graph::TensorView latents;  // updated in place
  graph::TensorView noise;    // needsNoise(): the caller writes fresh randn values before each replay
  graph::TensorView history;  // needsHistory(): the previous denoised estimate; must hold zeros (any finite
                              // values) before the first replay, since the first step weights it by 0
  graph::TensorView scratch;  // needsHistory(): the new latents before they are copied over `latents`
  // LinearSampler (linear_sampler.h) with K saved tensors: K registers (zeros before the first replay) and K
  // scratch tensors (their new values before they are copied over them).
  std::vector<graph::TensorView> registers, registerScratch;
};

// modelOutput: the (guided) model prediction, shaped like the latents. Returns the number of launches
// recorded (1 without history, 3 with; a LinearSampler with K saved tensors: 2K + 1: the new registers into
// scratch, the new latents in place (they read the old registers), the scratch copied over the registers). Throws sdgen::Error naming a tensor the sampler needs but was not
// given, or one whose shape differs from the latents'.
int recordLatentUpdate(Context& ctx, CommandSequence& seq, const Sampler& sampler,
                       const LatentUpdateTensors& tensors, const graph::Expr& modelOutput);

}  // namespace sdgen::sampling
