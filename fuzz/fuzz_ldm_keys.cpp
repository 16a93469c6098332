// libFuzzer target: the single-file LDM checkpoint key mapping (formats/ldm_*.cpp): which family, the
// architecture inferred from tensor shapes, the diffusers names of every key, refusals of unknown keys. The input
// is a tensor list (tensor_list.h); the inferred configs then go through the checks openModel runs.
#include <cstdint>

#include "engine/error.h"
#include "fuzz/fuzz_support.h"
#include "fuzz/tensor_list.h"
#include "models/config/config_files.h"
#include "models/formats/ldm_checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sdgen;
  const auto bytes = fuzz::tensorListToSafetensors(fuzz::asText(data, size), true, 4u << 20);
  if (!bytes) return -1;  // not a tensor list: keep it out of the corpus
  fuzz::MemFile file(*bytes);
  try {
    models::LdmCheckpoint ckpt = models::openLdmCheckpoint(file.path());
    if (ckpt.undetermined.empty()) {
      models::validateClipTextConfig(ckpt.textEncoderConfig);
      models::validateUNetConfig(ckpt.unetConfig);
      models::validateVaeConfig(ckpt.vaeConfig);
      models::validateModelConfigs(ckpt.textEncoderConfig, ckpt.unetConfig, ckpt.vaeConfig);
    }
    for (const auto* source : {ckpt.textEncoderWeights.get(), ckpt.unetWeights.get(), ckpt.vaeWeights.get()})
      for (const std::string& name : source->names()) (void)source->shape(name);
  } catch (const Error&) {
  }
  return 0;
}
