#include "tests/models/sdxl_single_file.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "engine/error.h"
#include "models/safetensors.h"
#include "tests/models/formats_synthetic.h"
#include "tests/models/models_test_util.h"
#include "tests/models/network_fixture.h"

namespace sdgen::test {

namespace {

using nlohmann::json;

// mapFile: fixtures/<mapFile>; folder: the tests/data folder its components are read from, or for a component
// named in `folders`, that folder.
void writeFromMap(const std::string& mapFile, const std::string& folder, const std::string& path,
                  const std::map<std::string, std::string>& folders = {}) {
  const json map = json::parse(std::ifstream(dataPath("fixtures/" + mapFile)));
  std::map<std::string, models::SafetensorsFile> files;
  for (const auto& [component, rel] : map.at("components").items()) {
    const auto other = folders.find(component);
    const std::string from = other == folders.end() ? folder : other->second;
    files.emplace(component, models::SafetensorsFile::open(dataPath(from + "/" + rel.get<std::string>())));
  }
  SafetensorsWriter out;
  for (const json& e : map.at("tensors")) {
    const std::string key = e.at("key"), op = e.at("op");
    std::vector<std::vector<float>> values;
    std::vector<std::vector<int64_t>> shapes;
    for (const json& s : e.at("sources")) {
      const models::SafetensorsFile& f = files.at(s[0].get<std::string>());
      const std::string name = s[1];
      values.push_back(f.readAsF32(name));
      shapes.push_back(f.get(name).shape);
    }
    std::vector<int64_t> shape = shapes.at(0);
    std::vector<float> v = values.at(0);
    if (op == "cat0") {  // rows of q, k, v one after another
      for (size_t i = 1; i < values.size(); ++i) {
        v.insert(v.end(), values[i].begin(), values[i].end());
        shape[0] += shapes[i][0];
      }
    } else if (op == "transpose") {
      const size_t rows = size_t(shape.at(0)), cols = size_t(shape.at(1));
      for (size_t i = 0; i < rows; ++i)
        for (size_t j = 0; j < cols; ++j) v[j * rows + i] = values[0][i * cols + j];
      std::swap(shape[0], shape[1]);
    } else if (op == "conv1x1") {
      shape.push_back(1);
      shape.push_back(1);
    } else if (op != "copy") {
      throw Error(mapFile + ": unknown op '" + op + "' for '" + key + "'");
    }
    out.add(key, shape, v, "F16");
  }
  for (const auto& [key, x] : map.at("extras").items()) {
    const std::string dtype = x.at("dtype");
    const std::vector<int64_t> shape = x.at("shape");
    const size_t n = elementCount(shape);
    if (dtype == "I64") {  // position ids: 0, 1, 2, ...
      std::string bytes(n * 8, '\0');
      for (size_t i = 0; i < n; ++i) {
        const int64_t id = int64_t(i);
        std::memcpy(bytes.data() + 8 * i, &id, 8);
      }
      out.addRaw(key, "I64", shape, bytes);
    } else {
      out.add(key, shape, std::vector<float>(n, x.at("value").get<float>()), dtype);
    }
  }
  out.write(path);
}

}  // namespace

const std::string& tinySdxlSingleFile() {
  static const TempDir dir;
  static const std::string path = [] {
    const std::string p = dir.file("tiny-sdxl-ldm.safetensors");
    writeFromMap("ldm_map_sdxl.json", "tiny-sdxl", p);
    return p;
  }();
  return path;
}

const std::string& tinySdxlRefinerSingleFile() {
  static const TempDir dir;
  static const std::string path = [] {
    const std::string p = dir.file("tiny-sdxl-refiner-ldm.safetensors");
    writeFromMap("ldm_map_sdxl_refiner.json", "tiny-sdxl-refiner", p);
    return p;
  }();
  return path;
}

const std::string& tinySdxlInpaintFolder() {
  static const TempDir dir;
  static const std::string path = [] {
    namespace fs = std::filesystem;
    const fs::path folder = dir.file("tiny-sdxl-inpaint"), inpaint = dataPath("tiny-sdxl-inpaint");
    const fs::path base = dataPath("tiny-sdxl");
    fs::create_directories(folder);
    for (const char* part : {"unet", "scheduler", "model_index.json"}) fs::create_symlink(inpaint / part, folder / part);
    for (const char* part : {"text_encoder", "text_encoder_2", "tokenizer", "tokenizer_2", "vae"})
      fs::create_symlink(base / part, folder / part);
    return folder.string();
  }();
  return path;
}

const std::string& tinySdxlInpaintSingleFile() {
  static const TempDir dir;
  static const std::string path = [] {
    const std::string p = dir.file("tiny-sdxl-inpaint-ldm.safetensors");
    writeFromMap("ldm_map_sdxl.json", "tiny-sdxl", p, {{"unet", "tiny-sdxl-inpaint"}});
    return p;
  }();
  return path;
}

}  // namespace sdgen::test
