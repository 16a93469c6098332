#include "models/formats/safetensors_weights.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/error.h"
#include "models/config/config_json.h"
#include "models/unsafe_checkpoint.h"

namespace sdgen::models {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using FilePtr = std::shared_ptr<const SafetensorsFile>;

FilePtr openShared(const std::string& path) {
  return std::make_shared<const SafetensorsFile>(SafetensorsFile::open(path));
}

// Adds the tensors of `file` selected by the options; a second tensor under one exposed name is an error.
void addTensors(const FilePtr& file, const SafetensorsWeightsOptions& options, TensorTable& table,
                const std::map<std::string, std::string>* onlyFromShard = nullptr) {
  for (const std::string& key : file->names()) {
    if (!key.starts_with(options.prefix)) continue;
    if (onlyFromShard) {
      // A sharded set: the index decides which shard holds a tensor it maps.
      auto it = onlyFromShard->find(key);
      if (it != onlyFromShard->end() && it->second != file->path()) continue;
    }
    std::string name = key.substr(options.prefix.size());
    if (auto it = options.rename.find(name); it != options.rename.end()) name = it->second;
    auto [pos, inserted] = table.emplace(name, TensorRef::whole(file, key));
    if (!inserted)
      throw Error("tensor '" + name + "' appears twice: as '" + pos->second.key + "' in '" + pos->second.file->path() +
                  "' and as '" + key + "' in '" + file->path() + "'");
  }
}

}  // namespace

bool isShardIndexPath(const std::string& path) {
  std::string name = fs::path(path).filename().string();
  return name.ends_with(".json") && name.find(".safetensors.index") != std::string::npos;
}

SafetensorsWeights::Built SafetensorsWeights::build(const std::string& path, const SafetensorsWeightsOptions& options) {
  refuseUnsafeCheckpoint(path);
  Built built;
  std::string prefixNote = options.prefix.empty() ? "" : " (prefix '" + options.prefix + "')";
  if (!isShardIndexPath(path)) {
    FilePtr file = openShared(path);
    addTensors(file, options, built.table);
    built.description = path + prefixNote;
    return built;
  }

  // A shard index: {"metadata": {...}, "weight_map": {"tensor": "shard.safetensors", ...}}.
  ConfigJson index = ConfigJson::load(path);
  const json& map = index.raw("weight_map");
  if (!map.is_object()) index.fail("weight_map", "must be an object {tensor: shard file}");
  const fs::path dir = fs::path(path).parent_path();
  std::map<std::string, std::string> shardPaths;   // shard file name -> path
  std::map<std::string, std::string> tensorShard;  // tensor -> shard path
  for (const auto& [tensor, shard] : map.items()) {
    if (!shard.is_string()) index.fail("weight_map", "maps tensor '" + tensor + "' to " + shard.dump() + ", not a file name");
    const std::string file = shard.get<std::string>();
    // Shards are siblings of the index: a path that leaves the folder is refused.
    if (file.empty() || file.find('/') != std::string::npos || file.find('\\') != std::string::npos || file == "." ||
        file == "..")
      index.fail("weight_map", "maps tensor '" + tensor + "' to '" + file + "', which is not a file name in '" +
                                   dir.string() + "'");
    const std::string shardPath = (dir / file).string();
    shardPaths[file] = shardPath;
    tensorShard[tensor] = shardPath;
  }
  if (shardPaths.empty()) index.fail("weight_map", "is empty");
  std::map<std::string, FilePtr> shards;
  for (const auto& [file, shardPath] : shardPaths) {
    if (!fs::is_regular_file(shardPath))
      throw Error("shard '" + shardPath + "' named by the index '" + path + "' does not exist");
    shards[shardPath] = openShared(shardPath);
  }
  for (const auto& [tensor, shardPath] : tensorShard)
    if (!shards.at(shardPath)->find(tensor))
      throw Error("the index '" + path + "' maps tensor '" + tensor + "' to '" + shardPath +
                  "', which does not contain it");
  for (const auto& [shardPath, file] : shards) addTensors(file, options, built.table, &tensorShard);
  built.description = path + " (" + std::to_string(shards.size()) + " shards)" + prefixNote;
  return built;
}

SafetensorsWeights::SafetensorsWeights(const std::string& path, const SafetensorsWeightsOptions& options)
    : SafetensorsWeights(build(path, options)) {}

}  // namespace sdgen::models
