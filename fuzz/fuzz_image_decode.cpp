// libFuzzer target: init images and masks (app/image_decode.h): the PNG / JPEG container checks, then stb_image's
// decode, bounded to 512x512 pixels here (the bound is a parameter; the check runs before any pixel is decoded).
#include <cstdint>

#include "app/image_decode.h"
#include "engine/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sdgen;
  try {
    const auto image = app::decodeImage({data, size}, "fuzz image", 512 * 512);
    if (image.width <= 0 || image.height <= 0 || int64_t(image.width) * image.height > 512 * 512) __builtin_trap();
  } catch (const Error&) {
  }
  return 0;
}
