#pragma once
// The tensors of one component of a single-file LDM checkpoint (the keys under "model.diffusion_model.",
// "first_stage_model." or the text encoder's prefix), while its diffusers-name table is built: lookups that
// name the file and the full key when something is missing, and bookkeeping of which keys were mapped, so that
// a key the mapping does not know (a part of an architecture sdgen does not implement) is an error rather than
// silently ignored. Internal to models/formats.
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "models/formats/mapped_weights.h"

namespace sdgen::models {

class LdmComponentKeys {
 public:
  LdmComponentKeys(std::shared_ptr<const SafetensorsFile> file, std::string prefix, std::string component);

  const std::string& path() const { return file_->path(); }
  const std::string& prefix() const { return prefix_; }
  const std::string& component() const { return component_; }

  // Keys are relative to the prefix.
  bool has(std::string_view key) const { return keys_.count(std::string(key)) > 0; }
  bool hasUnder(std::string_view keyPrefix) const;
  std::vector<std::string> under(std::string_view keyPrefix) const;  // sorted, relative
  // Throws "single-file checkpoint 'FILE' has no tensor 'PREFIX+KEY' (needed for the COMPONENT)".
  const std::vector<int64_t>& shape(std::string_view key) const;
  // shape(key), which must have `rank` dimensions.
  const std::vector<int64_t>& shape(std::string_view key, size_t rank) const;
  // The number of consecutive indices i = 0, 1, ... for which some key starts with keyPrefix + i + ".".
  int countIndexed(std::string_view keyPrefix) const;

  // Table entries under diffusers names; every mapped key counts as used.
  void map(const std::string& name, const std::string& key);
  void mapRows(const std::string& name, const std::string& key, int64_t begin, int64_t count);
  void mapSqueezed(const std::string& name, const std::string& key);
  void mapTransposed(const std::string& name, const std::string& key);  // a 2-D tensor exposed transposed
  // Marks keys as known but not needed (e.g. the unused last OpenCLIP layer).
  void ignore(const std::string& key);
  void ignoreUnder(std::string_view keyPrefix);
  // Throws naming the first key that was neither mapped nor ignored.
  void requireAllUsed(const std::string& why) const;
  [[noreturn]] void fail(const std::string& what) const;

  TensorTable take() { return std::move(table_); }
  std::string description() const;

 private:
  std::shared_ptr<const SafetensorsFile> file_;
  std::string prefix_, component_;
  std::set<std::string, std::less<>> keys_;
  std::set<std::string> used_;
  TensorTable table_;
};

}  // namespace sdgen::models
