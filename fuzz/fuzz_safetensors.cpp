// libFuzzer target: a safetensors file (header length, JSON header, data offsets), then every tensor read back
// as the loaders read it (bytes(), readBytes(), readAsF32 of float tensors up to 1 MiB).
#include <cstdint>
#include <vector>

#include "engine/error.h"
#include "fuzz/fuzz_support.h"
#include "models/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sdgen;
  fuzz::MemFile file({data, size});
  try {
    const auto st = models::SafetensorsFile::open(file.path());
    for (const std::string& name : st.names()) {
      const models::TensorInfo& t = st.get(name);
      auto bytes = st.bytes(t);
      volatile uint8_t sink = bytes.empty() ? 0 : bytes.back();
      (void)sink;
      std::vector<uint8_t> head(std::min<uint64_t>(t.size, 64));
      st.readBytes(t, 0, head);
      if (models::isFloatDType(t.dtype) && t.size <= (1u << 20)) (void)st.readAsF32(name);
    }
  } catch (const Error&) {
  }
  return 0;
}
