#pragma once
// The checkpoints a server offers: the -m model (else the built-in one) and every model under --models-dir
// (diffusers folders with a model_index.json, .safetensors files), named as webui names them (title,
// model_name, filename) so `sd_model_checkpoint` selects one. The current model is what a request without
// override_settings.sd_model_checkpoint gets. Thread-safe: HTTP handlers read it concurrently.
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "app/generation_plan.h"

namespace sdgen::serve {

struct ModelEntry {
  std::string title;      // what webui's sd-models calls "title" and options' sd_model_checkpoint holds
  std::string modelName;  // the name without extension
  std::string path;       // what the engine loads
  app::ModelDefaults defaults;  // the model folder's sdgen.json defaults (none for files)
};

class ModelRegistry {
 public:
  // Lists at most this many models from --models-dir (a bound on what one GET /sd-models returns).
  static constexpr size_t kMaxModels = 1000;

  // `initialModel`: a model path (empty: the built-in model). `modelsDir`: empty for none. Throws sdgen::Error
  // naming the path when the initial model does not exist or has a bad sdgen.json, or modelsDir is no folder.
  ModelRegistry(const std::string& initialModel, const std::string& modelsDir);

  // Scans --models-dir again (webui's POST /sdapi/v1/refresh-checkpoints); models that went away are dropped,
  // except the initial one. Unreadable entries are skipped with a line on stderr.
  void refresh();

  std::vector<ModelEntry> list() const;
  // By title, model name, or webui's "title [hash]" spelling.
  std::optional<ModelEntry> find(std::string_view name) const;
  ModelEntry current() const;
  // False when no model has that name.
  bool setCurrent(std::string_view name);

 private:
  std::vector<ModelEntry> scan() const;

  std::string modelsDir_;
  ModelEntry initial_;
  mutable std::mutex mutex_;
  std::vector<ModelEntry> models_;
  std::string currentTitle_;
};

}  // namespace sdgen::serve
