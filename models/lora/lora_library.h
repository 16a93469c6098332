#pragma once
// The LoRAs a pipeline may use: files named on the command line (--lora FILE[:SCALE]) or by webui prompt tags
// (<lora:NAME:SCALE>, looked up in --lora-dir), each read once and kept in host memory while the pipeline uses
// it, so that re-merging (a scale changed, a LoRA added) reads no file again. A long-lived process that goes
// through many LoRAs keeps only those of its current sets (keepOnly).
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/lora/lora_file.h"
#include "models/lora/lora_targets.h"

namespace sdgen::lora {

// A LoRA file and its strengths, as the user asked for it.
struct LoraSpec {
  std::string path;
  float unetScale = 1.f, textScale = 1.f;
  bool operator==(const LoraSpec&) const = default;
};

// "FILE" or "FILE:SCALE" (the last ':' followed by a number splits; a path may hold ':'). Throws naming `flag`.
LoraSpec parseLoraArgument(const std::string& value, const std::string& flag);
// parseLoraArgument of every line of `text` (a form's LoRA field), spaces around a line and blank lines ignored.
std::vector<LoraSpec> parseLoraLines(const std::string& text, const std::string& what);

class LoraLibrary {
 public:
  explicit LoraLibrary(std::string directory = "") : dir_(std::move(directory)) {}
  const std::string& directory() const { return dir_; }
  void setDirectory(std::string directory) { dir_ = std::move(directory); }

  // webui's lookup of <lora:NAME>: DIR/NAME.safetensors, else the first NAME.safetensors in DIR's subfolders
  // (sorted, at most a few levels deep). Throws naming the tag and the folder when there is none.
  std::string findByName(const std::string& name, const std::string& tag) const;

  // The parsed file (read on first use).
  std::shared_ptr<const LoraFile> file(const std::string& path);
  std::vector<LoraChoice> choose(const std::vector<LoraSpec>& specs);
  // Forgets the files no spec of `sets` names (they are read again when chosen again).
  void keepOnly(const std::vector<const std::vector<LoraSpec>*>& sets);

 private:
  std::string dir_;
  std::map<std::string, std::shared_ptr<const LoraFile>> files_;
};

}  // namespace sdgen::lora
