#include "app/gui/model_browser.h"

#include <imgui.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace sdgen::gui {

namespace fs = std::filesystem;

namespace {

bool isCheckpoint(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return ext == ".safetensors" || ext == ".ckpt";
}

}  // namespace

RecentModels::RecentModels(std::string file) : file_(std::move(file)) {
  if (file_.empty()) return;
  std::ifstream in(file_);
  for (std::string line; std::getline(in, line) && paths_.size() < kMax;)
    if (!line.empty()) paths_.push_back(line);
}

std::string RecentModels::defaultFile() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  const char* home = std::getenv("HOME");
  if (xdg && *xdg) return std::string(xdg) + "/sdgen/gui-recent-models";
  if (home && *home) return std::string(home) + "/.config/sdgen/gui-recent-models";
  return "";
}

std::string RecentModels::use(const std::string& path) {
  paths_.erase(std::remove(paths_.begin(), paths_.end(), path), paths_.end());
  paths_.insert(paths_.begin(), path);
  if (paths_.size() > kMax) paths_.resize(kMax);
  if (file_.empty()) return "";
  std::error_code ec;
  fs::create_directories(fs::path(file_).parent_path(), ec);
  std::ofstream out(file_, std::ios::trunc);
  for (auto& p : paths_) out << p << '\n';
  return out ? "" : "could not save the recent models list to '" + file_ + "'";
}

void ModelBrowser::open(const std::string& current) {
  std::error_code ec;
  fs::path start = current.empty() ? fs::current_path(ec) : fs::path(current);
  if (!fs::is_directory(start, ec) || fs::exists(start / "model_index.json", ec)) start = start.parent_path();
  if (start.empty() || !fs::is_directory(start, ec)) start = fs::current_path(ec);
  list(start.string());
  picked_.clear();
  openRequested_ = true;
}

void ModelBrowser::list(const std::string& folder) {
  entries_.clear();
  error_.clear();
  selected_ = -1;
  std::error_code ec;
  folder_ = fs::weakly_canonical(folder, ec).string();
  if (folder_.empty()) folder_ = folder;
  for (fs::directory_iterator it(folder_, fs::directory_options::skip_permission_denied, ec), end; !ec && it != end;
       it.increment(ec)) {
    const fs::path& p = it->path();
    std::string name = p.filename().string();
    if (name.empty() || name[0] == '.') continue;
    std::error_code e2;
    if (it->is_directory(e2))
      entries_.push_back({name, p.string(), true, fs::exists(p / "model_index.json", e2)});
    else if (isCheckpoint(p))
      entries_.push_back({name, p.string(), false, true});
  }
  if (ec) error_ = "cannot list '" + folder_ + "': " + ec.message();
  std::sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
    return a.directory != b.directory ? a.directory : a.name < b.name;
  });
}

bool ModelBrowser::draw() {
  if (openRequested_) {
    ImGui::OpenPopup("Choose a model");
    openRequested_ = false;
  }
  bool done = false;
  ImGui::SetNextWindowSize(ImVec2(640, 440), ImGuiCond_Appearing);
  if (!ImGui::BeginPopupModal("Choose a model", nullptr)) return false;
  ImGui::TextWrapped("%s", folder_.c_str());
  if (ImGui::Button("Up")) list(fs::path(folder_).parent_path().string());
  ImGui::SameLine();
  ImGui::TextDisabled("Diffusers folders (with model_index.json) and .safetensors / .ckpt files");
  if (!error_.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", error_.c_str());
  ImGui::BeginChild("entries", ImVec2(0, -ImGui::GetFrameHeightWithSpacing() * 1.3f), true);
  std::string enter;
  for (int i = 0; i < int(entries_.size()); ++i) {
    const Entry& e = entries_[i];
    std::string label = (e.model ? "[model] " : e.directory ? "[dir]   " : "        ") + e.name;
    if (ImGui::Selectable(label.c_str(), selected_ == i, ImGuiSelectableFlags_AllowDoubleClick)) {
      selected_ = i;
      if (ImGui::IsMouseDoubleClicked(0)) {
        if (e.model) {
          picked_ = e.path;
          done = true;
        } else if (e.directory) {
          enter = e.path;
        }
      }
    }
  }
  ImGui::EndChild();
  if (!enter.empty()) list(enter);
  const bool canPick = selected_ >= 0 && selected_ < int(entries_.size());
  if (!canPick) ImGui::BeginDisabled();
  if (ImGui::Button("Use selected")) {
    picked_ = entries_[selected_].path;
    done = true;
  }
  if (!canPick) ImGui::EndDisabled();
  ImGui::SameLine();
  if (ImGui::Button("Use this folder")) {
    picked_ = folder_;
    done = true;
  }
  ImGui::SameLine();
  if (ImGui::Button("Cancel") || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) ImGui::CloseCurrentPopup();
  if (done) ImGui::CloseCurrentPopup();
  ImGui::EndPopup();
  return done;
}

}  // namespace sdgen::gui
