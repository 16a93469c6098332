// A decoded image (the VAE's or TAESD's output, values about [-1, 1]) as the pipeline's final pixels and 8-bit
// RGB, as diffusers' postprocess: (x / 2 + 0.5).clamp(0, 1), then numpy's round-half-to-even of x * 255.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace sdgen::pipeline {

// `rgb` (resized) becomes the rounded bytes of (x / 2 + 0.5).clamp(0, 1) of `decoded`, and `pixels` (resized;
// null: not wanted, as by frontends that write only 8-bit images) those floats, in one pass that reads the
// decoder's output where it lies (host-visible memory: no copy into a vector first). Returns false where any
// input value is not finite (the caller names the model; NaN maps to 0 here). Large images run on up to 8
// threads, and the loop vectorizes (bench/postprocess_bench): it sits between the decode's GPU wait and the PNG
// encode of every image. `decoded` must not overlap `pixels`.
bool postprocessDecoded(std::span<const float> decoded, std::vector<float>* pixels, std::vector<uint8_t>& rgb);

// The error of a decode whose output was not finite (postprocessDecoded false) of model `model`; fp16Decode:
// the fp16 overflow the original SDXL VAE has.
std::string nonFiniteDecodeMessage(const std::string& model, bool fp16Decode);

// The bytes alone (previews), same rounding.
std::vector<uint8_t> decodedToRgb8(const std::vector<float>& decoded);

}  // namespace sdgen::pipeline
