#pragma once
// tests/data/tiny-sdxl as an SDXL single-file checkpoint, written by the test process from the folder's files and
// fixtures/ldm_map_sdxl.json: the map (made by tests/reference/ldm_names.py, checked on the fixture machine to
// reproduce the file that diffusers' from_single_file loads back to the folder's weights) says how each LDM
// tensor is made (copied, q/k/v concatenated, transposed, reshaped to a 1x1 kernel). Keeping the map rather than
// the file keeps the repository small; the renaming it encodes is independent of models/formats.
#include <string>

namespace sdgen::test {

// The file's path, written on the first call (into a temporary folder removed at process exit).
const std::string& tinySdxlSingleFile();
// tests/data/tiny-sdxl-refiner as an SDXL refiner single file (conditioner.embedders.0.model.*), from
// fixtures/ldm_map_sdxl_refiner.json (tests/reference/sdxl_refiner_fixtures.py) in the same way.
const std::string& tinySdxlRefinerSingleFile();
// tiny-sdxl's single file with tests/data/tiny-sdxl-inpaint's 9-channel UNet (the same map: the UNet's names and
// ops do not depend on its input channels; tests/reference/sdxl_inpaint9_fixtures.py checks that).
const std::string& tinySdxlInpaintSingleFile();
// A complete diffusers folder of that model: tiny-sdxl-inpaint's unet/, scheduler/ and model_index.json with
// tiny-sdxl's text encoders, tokenizers and VAE linked beside them (written on the first call).
const std::string& tinySdxlInpaintFolder();

}  // namespace sdgen::test
