#include "models/formats/taesd_files.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>

#include "engine/error.h"
#include "models/config/config_json.h"
#include "models/formats/mapped_weights.h"
#include "models/formats/model_files.h"
#include "models/safetensors.h"

namespace sdgen::models {

namespace fs = std::filesystem;

namespace {

// Bounds on what a file may declare (real TAESDs: 4 stages of 64 channels, 3 blocks each): a hostile config or
// file cannot make sdgen build a huge network.
constexpr int kMaxStages = 8, kMaxBlocksPerStage = 64, kMaxChannels = 4096;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool startsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// ---------------------------------------------------------------------------------------------------------------
// names

std::string layer(const std::string& half, int k) { return half + ".layers." + std::to_string(k) + "."; }

void addConv(std::vector<std::string>& out, const std::string& prefix, bool bias) {
  out.push_back(prefix + "weight");
  if (bias) out.push_back(prefix + "bias");
}

void addBlock(std::vector<std::string>& out, const std::string& prefix) {
  for (int i : {0, 2, 4}) addConv(out, prefix + "conv." + std::to_string(i) + ".", true);
}

// ---------------------------------------------------------------------------------------------------------------
// config inference from the tensors (diffusers names)

struct Stage {
  int channels = 0, blocks = 0;
};

[[noreturn]] void layoutError(const WeightSource& w, const std::string& half, int k, const std::string& what) {
  throw Error("TAESD " + half + " in '" + w.describe() + "': layer " + std::to_string(k) + " " + what +
              " (expected AutoencoderTiny's " + half + ".layers.K.* tensors, docs/taesd.md)");
}

bool hasLayer(const WeightSource& w, const std::string& half, int k) {
  const std::string p = layer(half, k);
  for (const char* leaf : {"weight", "bias", "conv.0.weight"})
    if (w.contains(p + leaf)) return true;
  return false;
}

// A 3x3 conv's [out, in, 3, 3] at layer k, checked.
std::vector<int64_t> convShape(const WeightSource& w, const std::string& half, int k) {
  std::vector<int64_t> s = w.shape(layer(half, k) + "weight");
  if (s.size() != 4 || s[2] != 3 || s[3] != 3 || s[0] < 1 || s[1] < 1 || s[0] > kMaxChannels || s[1] > kMaxChannels)
    layoutError(w, half, k, "is not a 3x3 convolution (weight " + formatShape(s) + ")");
  return s;
}

void checkStages(const WeightSource& w, const std::string& half, const std::vector<Stage>& stages) {
  if (stages.empty() || int(stages.size()) > kMaxStages)
    throw Error("TAESD " + half + " in '" + w.describe() + "': " + std::to_string(stages.size()) +
                " stages (1 to " + std::to_string(kMaxStages) + " expected)");
  for (const Stage& s : stages)
    if (s.channels != stages.front().channels)
      throw Error("TAESD " + half + " in '" + w.describe() + "': stages of " + std::to_string(stages.front().channels) +
                  " and " + std::to_string(s.channels) + " channels; AutoencoderTiny needs one width throughout");
}

// Decoder: conv(latent -> C) (0), ReLU (1), then per stage blocks, and an Upsample (no tensors) + conv without
// bias, except the last stage, which ends in conv(C -> out) with bias.
void inferDecoder(const WeightSource& w, TaesdConfig& c) {
  const std::string half = "decoder";
  const std::vector<int64_t> in = convShape(w, half, 0);
  c.latentChannels = int(in[1]);
  std::vector<Stage> stages;
  Stage cur{int(in[0]), 0};
  for (int k = 2;; ++k) {
    if (k > kMaxStages * (kMaxBlocksPerStage + 2) + 2) layoutError(w, half, k, "is past the largest TAESD");
    const std::string p = layer(half, k);
    if (w.contains(p + "conv.0.weight")) {
      if (++cur.blocks > kMaxBlocksPerStage) layoutError(w, half, k, "makes a stage of too many blocks");
      continue;
    }
    if (w.contains(p + "weight") && w.contains(p + "bias")) {  // the output conv
      c.outChannels = int(convShape(w, half, k)[0]);
      stages.push_back(cur);
      break;
    }
    if (hasLayer(w, half, k) || !w.contains(layer(half, k + 1) + "weight") || w.contains(layer(half, k + 1) + "bias"))
      layoutError(w, half, k, "is neither a block, the upsampling (followed by a convolution without bias) nor the "
                              "output convolution");
    stages.push_back(cur);
    cur = Stage{int(convShape(w, half, k + 1)[0]), 0};
    ++k;
  }
  checkStages(w, half, stages);
  c.decoderBlockOutChannels.clear();
  c.numDecoderBlocks.clear();
  for (const Stage& s : stages) {
    c.decoderBlockOutChannels.push_back(s.channels);
    c.numDecoderBlocks.push_back(s.blocks);
  }
}

// Encoder: conv(in -> C) with bias (0), then per stage blocks; a conv without bias (stride 2) starts the next
// stage; a conv with bias after the blocks is the output conv(C -> latent).
void inferEncoder(const WeightSource& w, TaesdConfig& c) {
  const std::string half = "encoder";
  const std::vector<int64_t> in = convShape(w, half, 0);
  if (!w.contains(layer(half, 0) + "bias")) layoutError(w, half, 0, "has no bias");
  c.inChannels = int(in[1]);
  std::vector<Stage> stages;
  Stage cur{int(in[0]), 0};
  for (int k = 1;; ++k) {
    if (k > kMaxStages * (kMaxBlocksPerStage + 1) + 1) layoutError(w, half, k, "is past the largest TAESD");
    const std::string p = layer(half, k);
    if (w.contains(p + "conv.0.weight")) {
      if (++cur.blocks > kMaxBlocksPerStage) layoutError(w, half, k, "makes a stage of too many blocks");
      continue;
    }
    if (!w.contains(p + "weight")) layoutError(w, half, k, "is missing (neither a block nor a convolution)");
    const std::vector<int64_t> s = convShape(w, half, k);
    stages.push_back(cur);
    if (w.contains(p + "bias")) {
      c.latentChannels = int(s[0]);
      break;
    }
    cur = Stage{int(s[0]), 0};
  }
  checkStages(w, half, stages);
  c.encoderBlockOutChannels.clear();
  c.numEncoderBlocks.clear();
  for (const Stage& s : stages) {
    c.encoderBlockOutChannels.push_back(s.channels);
    c.numEncoderBlocks.push_back(s.blocks);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// config.json

void checkConfig(const ConfigJson& j, const TaesdConfig& c) {
  auto stages = [&](const std::vector<int>& ch, const std::vector<int>& n, const char* chName, const char* nName) {
    if (ch.empty() || int(ch.size()) > kMaxStages) j.fail(chName, "must list 1 to " + std::to_string(kMaxStages) + " stages");
    if (ch.size() != n.size()) j.fail(nName, std::string("must have as many entries as ") + chName);
    for (int v : ch)
      if (v != ch.front() || v < 1 || v > kMaxChannels)
        j.unsupported(chName, "AutoencoderTiny needs one width (1 to " + std::to_string(kMaxChannels) + ") throughout");
    for (int v : n)
      if (v < 0 || v > kMaxBlocksPerStage) j.fail(nName, "entries must be 0 to " + std::to_string(kMaxBlocksPerStage));
  };
  stages(c.encoderBlockOutChannels, c.numEncoderBlocks, "encoder_block_out_channels", "num_encoder_blocks");
  stages(c.decoderBlockOutChannels, c.numDecoderBlocks, "decoder_block_out_channels", "num_decoder_blocks");
  for (auto [v, name] : {std::pair{c.inChannels, "in_channels"}, {c.outChannels, "out_channels"},
                         {c.latentChannels, "latent_channels"}})
    if (v < 1 || v > kMaxChannels) j.fail(name, "must be 1 to " + std::to_string(kMaxChannels));
  if (!(c.scalingFactor > 0.f)) j.fail("scaling_factor", "must be positive");
}

TaesdConfig readConfig(const std::string& path) {
  const ConfigJson j = ConfigJson::load(path);
  const std::string cls = j.string("_class_name", std::string("AutoencoderTiny"));
  if (cls != "AutoencoderTiny")
    j.fail("_class_name", "is '" + cls + "'; a TAESD folder holds an AutoencoderTiny (docs/taesd.md)");
  TaesdConfig c;
  c.inChannels = j.integer("in_channels", 3);
  c.outChannels = j.integer("out_channels", 3);
  c.latentChannels = j.integer("latent_channels", 4);
  c.encoderBlockOutChannels = j.intList("encoder_block_out_channels", c.encoderBlockOutChannels);
  c.decoderBlockOutChannels = j.intList("decoder_block_out_channels", c.decoderBlockOutChannels);
  c.numEncoderBlocks = j.intList("num_encoder_blocks", c.numEncoderBlocks);
  c.numDecoderBlocks = j.intList("num_decoder_blocks", c.numDecoderBlocks);
  c.scalingFactor = float(j.number("scaling_factor", 1.0));
  j.refuseUnlessEquals("act_fn", "relu", "TAESD's blocks use ReLU");
  j.refuseUnlessEquals("upsample_fn", "nearest", "sdgen upsamples TAESD's decoder by nearest neighbour");
  j.refuseUnlessEquals("upsampling_scaling_factor", 2, "sdgen upsamples TAESD's decoder 2x per stage");
  checkConfig(j, c);
  c.source = path;
  return c;
}

// ---------------------------------------------------------------------------------------------------------------
// weight tables

std::unique_ptr<MappedWeights> table(const std::shared_ptr<const SafetensorsFile>& file,
                                     const std::map<std::string, std::string>& exposedToKey) {
  TensorTable t;
  for (const auto& [exposed, key] : exposedToKey) t.emplace(exposed, TensorRef::whole(file, key));
  return std::make_unique<MappedWeights>(file->path(), std::move(t));
}

std::shared_ptr<const SafetensorsFile> openFile(const std::string& path) {
  return std::make_shared<const SafetensorsFile>(SafetensorsFile::open(path));
}

bool isMadebyollinKey(const std::string& key) {
  const size_t dot = key.find('.');
  return dot != std::string::npos && dot > 0 &&
         std::all_of(key.begin(), key.begin() + long(dot), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// A madebyollin file: every key "K.*". Which half it is shows in its layer 0 (only the encoder has one: the
// decoder's index 0 is the parameterless Clamp).
struct MadebyollinFile {
  std::shared_ptr<const SafetensorsFile> file;
  std::string half;
};

MadebyollinFile openMadebyollin(const std::string& path, const std::shared_ptr<const SafetensorsFile>& file) {
  for (const std::string& k : file->names())
    if (!isMadebyollinKey(k) || k.size() > 256)
      throw Error("'" + path + "': unexpected tensor '" + k +
                  "': madebyollin's TAESD files hold only nn.Sequential indices ('1.weight', '3.conv.0.weight', ...)");
  if (file->size() == 0) throw Error("'" + path + "': no tensors");
  return {file, file->find("0.weight") ? "encoder" : "decoder"};
}

std::unique_ptr<MappedWeights> madebyollinTable(const MadebyollinFile& m) {
  std::map<std::string, std::string> names;
  for (const std::string& k : m.file->names()) {
    const size_t dot = k.find('.');
    long index = 0;
    try {
      index = std::stol(k.substr(0, dot));
    } catch (const std::exception&) {
      throw Error("'" + m.file->path() + "': tensor '" + k + "' has an index out of range");
    }
    if (m.half == "decoder") --index;  // madebyollin's Clamp at 0 shifts the decoder by one
    if (index < 0 || index > 100000) throw Error("'" + m.file->path() + "': tensor '" + k + "' has an index out of range");
    names[m.half + ".layers." + std::to_string(index) + k.substr(dot)] = k;
  }
  return table(m.file, names);
}

// The other half's file beside `path`: "decoder" <-> "encoder" in the file name.
std::string siblingPath(const std::string& path, const std::string& half) {
  const fs::path p(path);
  std::string name = p.filename().string();
  const std::string from = half, to = half == "decoder" ? "encoder" : "decoder";
  const size_t at = lower(name).rfind(from);
  if (at == std::string::npos) return "";
  name.replace(at, from.size(), to);
  const fs::path other = p.parent_path() / name;
  return fs::is_regular_file(other) ? other.string() : "";
}

void addMadebyollin(TaesdFiles& t, const std::string& path) {
  const MadebyollinFile m = openMadebyollin(path, openFile(path));
  auto& slot = m.half == "decoder" ? t.decoderWeights : t.encoderWeights;
  if (slot) throw Error("'" + path + "' is a TAESD " + m.half + ", and so is the file given with it");
  slot = madebyollinTable(m);
}

// The variant from names: the path's components and the config's _name_or_path.
void tellVariant(TaesdFiles& t, const std::string& nameOrPath) {
  for (const std::string& s : {lower(fs::absolute(t.path).string()), lower(nameOrPath)}) {
    if (s.find("taesdxl") != std::string::npos) {
      t.variant = TaesdVariant::TaesdXl;
      t.variantReason = "'taesdxl' in '" + (s == lower(nameOrPath) ? nameOrPath : t.path) + "'";
      return;
    }
  }
  for (const std::string& s : {lower(fs::absolute(t.path).string()), lower(nameOrPath)}) {
    if (s.find("taesd") != std::string::npos) {
      t.variant = TaesdVariant::Taesd;
      t.variantReason = "'taesd' in '" + (s == lower(nameOrPath) ? nameOrPath : t.path) + "'";
      return;
    }
  }
  t.variant = TaesdVariant::Unknown;
  t.variantReason = "the weights of taesd (SD 1.x/2.x) and taesdxl (SDXL) have the same shapes and '" + t.path +
                    "' names neither";
}

// The key a madebyollin file stores diffusers' `name` under ("decoder.layers.3.x" -> "4.x").
std::string madebyollinKey(const std::string& name, const std::string& half) {
  const std::string rest = name.substr(half.size() + std::string(".layers.").size());
  const size_t dot = rest.find('.');
  const int index = std::stoi(rest.substr(0, dot)) + (half == "decoder" ? 1 : 0);
  return std::to_string(index) + rest.substr(dot);
}

// Every tensor of `w` belongs to its half of `config`, and every one of the half is there.
void checkNames(const WeightSource& w, const TaesdConfig& config, const std::string& half, bool madebyollin) {
  const std::vector<std::string> want = taesdTensorNames(config, half);
  const std::set<std::string> known(want.begin(), want.end());
  for (const std::string& n : w.names())
    if (!known.count(n))
      throw Error("'" + w.describe() + "': unexpected tensor '" + (madebyollin ? madebyollinKey(n, half) : n) +
                  "'" + (madebyollin ? " ('" + n + "')" : "") + ": not part of the TAESD " + half + " (" +
                  std::to_string((half == "decoder" ? config.numDecoderBlocks : config.numEncoderBlocks).size()) +
                  " stages; docs/taesd.md)");
  for (const std::string& n : want)
    if (!w.contains(n))
      throw Error("tensor '" + n + "'" + (madebyollin ? " (stored as '" + madebyollinKey(n, half) + "')" : "") +
                  " not found in '" + w.describe() + "' (TAESD " + half + ")");
}

// A diffusers-named file: split into the halves (full names kept).
void addDiffusersFile(TaesdFiles& t, const std::string& path) {
  auto file = openFile(path);
  std::map<std::string, std::string> dec, enc;
  for (const std::string& k : file->names()) {
    if (startsWith(k, "decoder.layers.")) dec[k] = k;
    else if (startsWith(k, "encoder.layers.")) enc[k] = k;
    else
      throw Error("'" + path + "': unexpected tensor '" + k +
                  "': an AutoencoderTiny file holds only encoder.layers.* and decoder.layers.* (docs/taesd.md)");
  }
  if (!dec.empty()) t.decoderWeights = table(file, dec);
  if (!enc.empty()) t.encoderWeights = table(file, enc);
}

}  // namespace

const char* taesdVariantName(TaesdVariant v) {
  switch (v) {
    case TaesdVariant::Taesd: return "taesd";
    case TaesdVariant::TaesdXl: return "taesdxl";
    default: return "unknown";
  }
}

std::vector<std::string> taesdTensorNames(const TaesdConfig& c, const std::string& half) {
  std::vector<std::string> out;
  if (half == "decoder") {
    addConv(out, layer(half, 0), true);
    int k = 2;
    for (size_t i = 0; i < c.numDecoderBlocks.size(); ++i) {
      for (int b = 0; b < c.numDecoderBlocks[i]; ++b) addBlock(out, layer(half, k++));
      const bool last = i + 1 == c.numDecoderBlocks.size();
      if (!last) ++k;  // the Upsample
      addConv(out, layer(half, k++), last);
    }
  } else {
    int k = 0;
    for (size_t i = 0; i < c.numEncoderBlocks.size(); ++i) {
      addConv(out, layer(half, k++), i == 0);
      for (int b = 0; b < c.numEncoderBlocks[i]; ++b) addBlock(out, layer(half, k++));
    }
    addConv(out, layer(half, k), true);
  }
  std::sort(out.begin(), out.end());
  return out;
}

TaesdFiles openTaesd(const std::string& path) {
  TaesdFiles t;
  t.path = path;
  std::error_code ec;
  std::string nameOrPath;
  bool haveConfig = false;
  if (fs::is_directory(path, ec)) {
    const fs::path dir(path);
    if (fs::is_regular_file(dir / "config.json")) {
      t.config = readConfig((dir / "config.json").string());
      haveConfig = true;
      nameOrPath = ConfigJson::load((dir / "config.json").string()).string("_name_or_path", std::string());
      addDiffusersFile(t, findComponentWeights(path, "diffusion_pytorch_model", ""));
      t.layout = "diffusers folder";
    } else {
      std::vector<std::string> found;
      for (const auto& e : fs::directory_iterator(dir))
        if (e.is_regular_file() && lower(e.path().filename().string()).ends_with("coder.safetensors") &&
            (lower(e.path().filename().string()).ends_with("_decoder.safetensors") ||
             lower(e.path().filename().string()).ends_with("_encoder.safetensors")))
          found.push_back(e.path().string());
      std::sort(found.begin(), found.end());
      if (found.empty() || found.size() > 2)
        throw Error("TAESD folder '" + path + "': expected config.json + diffusion_pytorch_model.safetensors, or "
                    "madebyollin's taesd_decoder.safetensors / taesd_encoder.safetensors (found " +
                    std::to_string(found.size()) + " *_decoder/*_encoder files)");
      for (const std::string& f : found) addMadebyollin(t, f);
      t.layout = "madebyollin files";
    }
  } else if (fs::is_regular_file(path, ec)) {
    auto file = openFile(path);
    const std::vector<std::string> names = file->names();
    if (!names.empty() && isMadebyollinKey(names.front())) {
      const MadebyollinFile m = openMadebyollin(path, file);
      (m.half == "decoder" ? t.decoderWeights : t.encoderWeights) = madebyollinTable(m);
      if (const std::string other = siblingPath(path, m.half); !other.empty()) addMadebyollin(t, other);
      t.layout = "madebyollin files";
    } else {
      addDiffusersFile(t, path);
      t.layout = "diffusers file";
    }
  } else {
    throw Error("TAESD '" + path + "': no such file or folder");
  }
  if (!t.decoderWeights && !t.encoderWeights) throw Error("TAESD '" + path + "': no decoder or encoder tensors");

  if (!haveConfig) {  // the shapes say it all but the scaling factor, which TAESD's are trained for: 1.0
    if (t.decoderWeights) inferDecoder(*t.decoderWeights, t.config);
    TaesdConfig fromEncoder = t.config;
    if (t.encoderWeights) inferEncoder(*t.encoderWeights, fromEncoder);
    if (t.decoderWeights && t.encoderWeights && fromEncoder.latentChannels != t.config.latentChannels)
      throw Error("TAESD '" + path + "': the decoder reads " + std::to_string(t.config.latentChannels) +
                  " latent channels but the encoder writes " + std::to_string(fromEncoder.latentChannels));
    if (t.encoderWeights) {
      t.config.inChannels = fromEncoder.inChannels;
      t.config.latentChannels = fromEncoder.latentChannels;
      t.config.encoderBlockOutChannels = fromEncoder.encoderBlockOutChannels;
      t.config.numEncoderBlocks = fromEncoder.numEncoderBlocks;
    }
    t.config.source = "inferred from the tensors of '" + path + "'";
  }
  const bool madebyollin = t.layout == "madebyollin files";
  if (t.decoderWeights) checkNames(*t.decoderWeights, t.config, "decoder", madebyollin);
  if (t.encoderWeights) checkNames(*t.encoderWeights, t.config, "encoder", madebyollin);
  tellVariant(t, nameOrPath);
  return t;
}

}  // namespace sdgen::models
