#pragma once
// Reading the images sdgen takes as input (init images and masks): PNG or JPEG, 8 bits per channel, greyscale or
// RGB, no alpha, at most 8192 pixels a side. The container is checked before anything is decoded (PNG: every
// chunk and CRC, the IHDR fields, no transparency; JPEG: the marker segments from SOI to EOI, the frame header),
// so a truncated or unsupported file is refused with a message naming it instead of decoding garbage; stb_image
// then decodes the pixels. Greyscale comes back as R = G = B.
#include <cstdint>
#include <span>
#include <string>

#include "models/pipeline/image_inputs.h"

namespace sdgen::app {

struct ImageLimits {
  static constexpr int kMaxSide = 8192;
  static constexpr uint64_t kMaxFileBytes = 256ull << 20;
};

// Throws sdgen::Error naming `source` (a path, or e.g. "the init_images[0] field"). `maxPixels`: a tighter bound
// on width x height (sdgen serve's --max-pixels), checked from the header before any pixel is decoded.
pipeline::RgbImage decodeImage(std::span<const uint8_t> bytes, const std::string& source,
                               int64_t maxPixels = int64_t(ImageLimits::kMaxSide) * ImageLimits::kMaxSide);

// decodeImage of the file at `path`; also refuses directories, unreadable files and files over kMaxFileBytes.
pipeline::RgbImage readImageFile(const std::string& path);

}  // namespace sdgen::app
