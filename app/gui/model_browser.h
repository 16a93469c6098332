#pragma once
// Choosing a model: a file/folder browser popup (diffusers folders and .safetensors/.ckpt files) and the list of
// recently used models, kept in a small text file between sessions.
#include <string>
#include <vector>

namespace sdgen::gui {

class RecentModels {
 public:
  // `file`: where the list is kept (one path per line); empty: not kept (scripted runs).
  explicit RecentModels(std::string file);
  static std::string defaultFile();  // $XDG_CONFIG_HOME/sdgen/gui-recent-models, else ~/.config/...
  const std::vector<std::string>& paths() const { return paths_; }
  // Moves `path` to the front (at most kMax kept) and saves; a save failure is returned as a message.
  std::string use(const std::string& path);

  static constexpr size_t kMax = 10;

 private:
  std::string file_;
  std::vector<std::string> paths_;
};

class ModelBrowser {
 public:
  // Opens the popup at the folder of `current` (or the working directory).
  void open(const std::string& current);
  // Draws the popup while open; returns true once a model was picked (then `picked()` holds it).
  bool draw();
  const std::string& picked() const { return picked_; }

 private:
  struct Entry {
    std::string name, path;
    bool directory = false, model = false;  // model: a diffusers folder (model_index.json) or a checkpoint file
  };
  void list(const std::string& folder);

  bool openRequested_ = false;
  std::string folder_, picked_, error_;
  std::vector<Entry> entries_;
  int selected_ = -1;
};

}  // namespace sdgen::gui
