#include "models/unsafe_checkpoint.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "engine/error.h"

namespace sdgen::models {

bool hasPickleCheckpointExtension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext == ".ckpt" || ext == ".pt" || ext == ".pth" || ext == ".bin";
}

bool looksLikePickleCheckpoint(std::span<const uint8_t> head) {
  // torch.save writes a zip archive ("PK\3\4") since PyTorch 1.6, a bare pickle (PROTO opcode 0x80 and a
  // protocol number 2..5) before that.
  if (head.size() >= 4 && head[0] == 'P' && head[1] == 'K' && head[2] == 3 && head[3] == 4) return true;
  return head.size() >= 2 && head[0] == 0x80 && head[1] >= 2 && head[1] <= 5;
}

std::string unsafeCheckpointMessage(const std::string& path) {
  return "'" + path +
         "' is a PyTorch pickle checkpoint; sdgen does not load those because unpickling can run arbitrary code "
         "hidden in the file. Convert it to .safetensors on a machine where you trust it, e.g. with diffusers' "
         "scripts/convert_original_stable_diffusion_to_diffusers.py --checkpoint_path FILE --dump_path DIR "
         "--to_safetensors, or in Python with the `safetensors` package: sd = torch.load(FILE, weights_only=True); "
         "safetensors.torch.save_file(sd.get(\"state_dict\", sd), \"model.safetensors\")";
}

void refuseUnsafeCheckpoint(const std::string& path) {
  if (hasPickleCheckpointExtension(path)) throw Error(unsafeCheckpointMessage(path));
}

}  // namespace sdgen::models
