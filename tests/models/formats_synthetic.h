#pragma once
// Small synthetic Stable Diffusion models for the format tests, written by the tests into a temp folder: the same
// weights as a diffusers folder and as a single-file LDM checkpoint. The parameter list of each layout is
// enumerated here from the two codebases' module structures (diffusers' UNet2DConditionModel/AutoencoderKL/
// CLIPTextModel, LDM's UNetModel/AutoencoderKL/FrozenCLIPEmbedder/FrozenOpenCLIPEmbedder), independently of
// models/formats, and every value is a function of its diffusers name, so a wrong mapping reads a wrong value.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/config/model_config.h"
#include "models/weight_source.h"

namespace sdgen::test {

// Writes safetensors files: tensors in insertion order, data packed in that order.
class SafetensorsWriter {
 public:
  // dtype "F32", "F16" or "BF16" (values must be exact in it; patternValues are).
  void add(const std::string& name, const std::vector<int64_t>& shape, const std::vector<float>& values,
           const std::string& dtype = "F32");
  // Any dtype string and raw little-endian bytes (e.g. "I64" position ids, or an unsupported "F64").
  void addRaw(const std::string& name, const std::string& dtype, const std::vector<int64_t>& shape,
              const std::string& bytes);
  std::string bytes() const;
  void write(const std::string& path) const;

 private:
  struct Entry {
    std::string name, dtype;
    std::vector<int64_t> shape;
    std::string data;
  };
  std::vector<Entry> entries_;
};

// count values in [-1, 1), multiples of 1/1024 (exact in F16 and F32), determined by `name`.
std::vector<float> patternValues(const std::string& name, size_t count);
size_t elementCount(const std::vector<int64_t>& shape);

// One parameter: its diffusers name and shape, and where LDM stores it: `ldmKey` with `ldmShape`, the whole
// tensor, or (part >= 0) the part-th third of the rows of a fused q/k/v tensor.
struct SyntheticParam {
  std::string name;
  std::vector<int64_t> shape;
  std::string ldmKey;
  std::vector<int64_t> ldmShape;
  int part = -1;
};

struct SyntheticModel {
  bool sd2 = false;
  int textWidth = 64, vocabSize = 1000;
  std::vector<SyntheticParam> text, unet, vae;
  // LDM-only tensors (the unused last OpenCLIP layer, position ids, EMA copies, ...), written with pattern values.
  std::vector<std::pair<std::string, std::vector<int64_t>>> ldmExtras;
};

// UNet: block_out_channels [64, 64, 128], layers_per_block 2, attention on the first two levels, one transformer
// block each, cross-attention width 64 (linear projections for SD 2.x, 1x1 convs for SD 1.x). VAE: [32, 64], one
// resnet per level. Text encoder: width 64, 2 layers (SD 2.x: 3 OpenCLIP resblocks, the last unused), a vocabulary
// of `vocabSize` (49408 to take CLIP's full vocabulary).
SyntheticModel syntheticModel(bool sd2, int vocabSize = 1000);

// The single-file checkpoint (LDM keys; dtype for every float tensor).
void writeLdmCheckpoint(const SyntheticModel& m, const std::string& path, const std::string& dtype = "F16");
// A diffusers folder with configs that describe the same architecture as diffusers' single-file defaults infer
// (sample sizes for 512 / 768 pixels, SD 2.x: v-prediction, upcast attention).
void writeDiffusersFolder(const SyntheticModel& m, const std::string& dir);
// A CLIP tokenizer folder with the 512 byte symbols, the two special tokens (512, 513) and one merge ("th", 514).
// padToken: written to special_tokens_map.json unless empty.
void writeTinyTokenizer(const std::string& dir, const std::string& padToken = "<|endoftext|>");

// The parameter values of a component by diffusers name.
std::map<std::string, std::vector<float>> expectedValues(const std::vector<SyntheticParam>& params);

// EXPECT_EQ on every field but `source` (schedulers: the fields the file sets and _class_name).
void expectSameConfig(const models::ClipTextConfig& expected, const models::ClipTextConfig& actual);
void expectSameConfig(const models::UNetConfig& expected, const models::UNetConfig& actual);
void expectSameConfig(const models::VaeConfig& expected, const models::VaeConfig& actual);
void expectSameConfig(const models::SchedulerFile& expected, const models::SchedulerFile& actual);
// The same tensor names (CLIP's position_ids index buffer aside), and for each the same shape and values.
void expectSameWeights(const models::WeightSource& expected, const models::WeightSource& actual);

}  // namespace sdgen::test
