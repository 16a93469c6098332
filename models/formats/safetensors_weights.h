#pragma once
// The weights of one diffusers/transformers component: one .safetensors file, or a sharded set described by a
// "*.safetensors.index.json" ({"weight_map": {tensor: shard file}}, shards in the index's folder). Optionally
// only the tensors under a key prefix (stripped), and renamed (stored name -> exposed name) where a file uses
// older names than the ones the network builders read.
#include <map>
#include <string>

#include "models/formats/mapped_weights.h"

namespace sdgen::models {

struct SafetensorsWeightsOptions {
  std::string prefix;                         // only keys starting with it, exposed without it
  std::map<std::string, std::string> rename;  // stored name (after the prefix) -> exposed name
};

class SafetensorsWeights : public MappedWeights {
 public:
  // `path`: a .safetensors file or a .json shard index. Pickle checkpoints are refused (unsafe_checkpoint.h);
  // a malformed file, index or shard is an error naming it.
  explicit SafetensorsWeights(const std::string& path, const SafetensorsWeightsOptions& options = {});

 private:
  struct Built {
    std::string description;
    TensorTable table;
  };
  explicit SafetensorsWeights(Built built) : MappedWeights(std::move(built.description), std::move(built.table)) {}
  static Built build(const std::string& path, const SafetensorsWeightsOptions& options);
};

// True for the name of a shard index ("x.safetensors.index.json", "x.safetensors.index.fp16.json").
bool isShardIndexPath(const std::string& path);

}  // namespace sdgen::models
