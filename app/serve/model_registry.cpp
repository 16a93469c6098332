#include "app/serve/model_registry.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "engine/error.h"

namespace sdgen::serve {

namespace fs = std::filesystem;

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

ModelEntry entryFor(const std::string& path) {
  ModelEntry e;
  const fs::path p = fs::path(path).lexically_normal();
  // A folder path may end in '/': its name is then the parent's last component.
  const fs::path named = p.has_filename() ? p : p.parent_path();
  e.title = named.filename().string();
  e.modelName = fs::is_directory(p) ? e.title : named.stem().string();
  e.path = path;
  e.defaults = app::readModelDefaults(path);
  return e;
}

}  // namespace

ModelRegistry::ModelRegistry(const std::string& initialModel, const std::string& modelsDir) : modelsDir_(modelsDir) {
  initial_ = entryFor(app::resolveModelPath(initialModel));
  std::error_code ec;
  if (!modelsDir_.empty() && !fs::is_directory(modelsDir_, ec))
    throw Error("--models-dir '" + modelsDir_ + "' is not a folder");
  models_ = scan();
  currentTitle_ = initial_.title;
}

std::vector<ModelEntry> ModelRegistry::scan() const {
  std::vector<ModelEntry> found{initial_};
  if (modelsDir_.empty()) return found;
  std::vector<fs::path> candidates;
  std::error_code ec;
  for (fs::directory_iterator it(modelsDir_, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path p = it->path();
    std::error_code e2;
    const bool diffusers = fs::is_directory(p, e2) && fs::exists(p / "model_index.json", e2);
    const bool single = fs::is_regular_file(p, e2) && lower(p.extension().string()) == ".safetensors";
    if (diffusers || single) candidates.push_back(p);
    if (candidates.size() >= kMaxModels) break;
  }
  std::sort(candidates.begin(), candidates.end());  // directory order is arbitrary; clients see a stable list
  for (const auto& p : candidates) {
    try {
      ModelEntry e = entryFor(p.string());
      const bool taken = std::any_of(found.begin(), found.end(), [&](const ModelEntry& m) { return m.title == e.title; });
      if (taken) std::fprintf(stderr, "sdgen serve: skipping '%s': a model named '%s' is listed already\n",
                              p.string().c_str(), e.title.c_str());
      else found.push_back(std::move(e));
    } catch (const std::exception& err) {
      std::fprintf(stderr, "sdgen serve: skipping model '%s': %s\n", p.string().c_str(), err.what());
    }
  }
  return found;
}

void ModelRegistry::refresh() {
  auto models = scan();  // file system work outside the lock
  std::lock_guard lock(mutex_);
  models_ = std::move(models);
  const bool currentKept =
      std::any_of(models_.begin(), models_.end(), [&](const ModelEntry& m) { return m.title == currentTitle_; });
  if (!currentKept) currentTitle_ = initial_.title;
}

std::vector<ModelEntry> ModelRegistry::list() const {
  std::lock_guard lock(mutex_);
  return models_;
}

std::optional<ModelEntry> ModelRegistry::find(std::string_view name) const {
  // webui titles read "name.safetensors [abcdef1234]": clients echo them back, hash included.
  std::string_view bare = name;
  if (const size_t open = bare.rfind(" ["); open != std::string_view::npos && bare.ends_with("]"))
    bare = bare.substr(0, open);
  std::lock_guard lock(mutex_);
  for (const auto& m : models_)
    if (m.title == name || m.title == bare || m.modelName == bare) return m;
  return std::nullopt;
}

ModelEntry ModelRegistry::current() const {
  std::lock_guard lock(mutex_);
  for (const auto& m : models_)
    if (m.title == currentTitle_) return m;
  return initial_;
}

bool ModelRegistry::setCurrent(std::string_view name) {
  auto m = find(name);
  if (!m) return false;
  std::lock_guard lock(mutex_);
  currentTitle_ = m->title;
  return true;
}

}  // namespace sdgen::serve
