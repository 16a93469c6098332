#pragma once
// A single-file checkpoint described by the configs of a diffusers folder, as diffusers' from_single_file(path,
// config=folder) does: the folder's config.json files supply what the tensor shapes cannot show (attention heads,
// sample sizes, upcast_attention, norm groups and epsilons, activations, VAE scaling factor, the scheduler), and
// everything the shapes do show must agree with them.
#include <optional>
#include <string>

#include "models/config/model_config.h"
#include "models/formats/ldm_checkpoint.h"

namespace sdgen::models {

struct FolderConfigs {
  ClipTextConfig textEncoder;
  std::optional<ClipTextConfig> textEncoder2;  // SDXL folders: text_encoder_2/config.json
  UNetConfig unet;
  VaeConfig vae;
  SchedulerFile scheduler;
};

// text_encoder/config.json, unet/config.json, vae/config.json, scheduler/scheduler_config.json of `dir`.
FolderConfigs loadFolderConfigs(const std::string& dir);

// Replaces the conventions in `ckpt`'s configs by `folder`'s and clears `undetermined`; throws "single-file
// checkpoint 'FILE' does not match 'CONFIG': FIELD is X in the weights but Y in the config" when a field the
// shapes determine differs.
void applyFolderConfigs(LdmCheckpoint& ckpt, const FolderConfigs& folder);

}  // namespace sdgen::models
