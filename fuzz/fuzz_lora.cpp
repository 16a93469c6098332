// libFuzzer target: LoRA files (lora/lora_file.cpp: kohya and PEFT key names, up/down/alpha pairing, ranks) and
// their matching to a model's weights (lora/lora_targets.cpp) against the tiny SD 1.x test model. The input is a
// tensor list (tensor_list.h) written as an F32 safetensors file.
#include <cstdint>

#include "engine/error.h"
#include "fuzz/fuzz_support.h"
#include "fuzz/tensor_list.h"
#include "models/formats/model_files.h"
#include "models/lora/lora_file.h"
#include "models/lora/lora_targets.h"

namespace {
// Loaded once, in LLVMFuzzerInitialize, so that the load does not count against the first input's time limit.
const sdgen::models::ModelFiles& model() {
  static const sdgen::models::ModelFiles m = sdgen::models::openModel(SDGEN_SOURCE_DIR "/tests/data/tiny-sd1");
  return m;
}
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)model();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sdgen;
  const auto bytes = fuzz::tensorListToSafetensors(fuzz::asText(data, size), false, 4u << 20);
  if (!bytes) return -1;
  fuzz::MemFile file(*bytes);
  try {
    auto lora = lora::readLoraFile(file.path());
    (void)lora::resolveLoras({{lora, 0.7f, 1.f}}, *model().unetWeights, model().textEncoderWeights.get());
  } catch (const Error&) {
  }
  return 0;
}
