#include "app/gui/init_image_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "app/image_decode.h"

namespace sdgen::gui {

namespace {

bool inputText(const char* label, std::string& s) {
  char buf[1024];
  const size_t n = std::min(s.size(), sizeof buf - 1);
  s.copy(buf, n);
  buf[n] = 0;
  if (!ImGui::InputText(label, buf, sizeof buf)) return false;
  s = buf;
  return true;
}

}  // namespace

void InitImagePanel::setInitImage(const pipeline::RgbImage& image, const std::string& source) {
  const bool sameSize = init_ && init_->width == image.width && init_->height == image.height;
  init_ = image;
  source_ = source;
  if (!sameSize) mask_.clear();  // a mask belongs to one size of image
  dirty_ = true;
}

std::string InitImagePanel::openInitImage(const std::string& path) {
  try {
    setInitImage(app::readImageFile(path), path);
    pathInput_ = path;
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

std::string InitImagePanel::openMask(const std::string& path) {
  if (!init_) return "open an init image before its mask";
  try {
    pipeline::RgbImage m = app::readImageFile(path);
    if (m.width != init_->width || m.height != init_->height)
      return "the mask '" + path + "' is " + std::to_string(m.width) + "x" + std::to_string(m.height) +
             " but the init image is " + std::to_string(init_->width) + "x" + std::to_string(init_->height) +
             "; they must be the same size";
    // Stored as grey so that painting and the request agree; luma() is what the pipeline reads anyway.
    mask_ = pipeline::luma(m);
    dirty_ = true;
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

void InitImagePanel::clear() {
  init_.reset();
  mask_.clear();
  texture_.reset();
  source_.clear();
}

void InitImagePanel::apply(pipeline::GenerationRequest& r) const {
  if (!init_) return;
  r.initImage = *init_;
  r.strength = strength;
  r.width = r.height = 0;  // the init image's size
  if (!mask_.empty()) {
    pipeline::RgbImage m{init_->width, init_->height, {}};
    m.rgb.resize(mask_.size() * 3);
    for (size_t i = 0; i < mask_.size(); ++i) m.rgb[3 * i] = m.rgb[3 * i + 1] = m.rgb[3 * i + 2] = mask_[i];
    r.mask = std::move(m);
  }
}

std::vector<uint8_t> InitImagePanel::composite() const {
  std::vector<uint8_t> rgb = init_->rgb;
  if (mask_.empty()) return rgb;
  for (size_t i = 0; i < mask_.size(); ++i)
    if (mask_[i] >= 128) {  // what the pipeline repaints: tinted red
      rgb[3 * i] = uint8_t((rgb[3 * i] + 255) / 2);
      rgb[3 * i + 1] = uint8_t(rgb[3 * i + 1] / 2);
      rgb[3 * i + 2] = uint8_t(rgb[3 * i + 2] / 2);
    }
  return rgb;
}

void InitImagePanel::update(VkCommandBuffer commands, TextureRenderer& textures) {
  if (!init_ || !dirty_) return;
  if (!texture_ || texture_->width() != init_->width || texture_->height() != init_->height)
    texture_ = std::make_unique<GuiTexture>(textures, init_->width, init_->height);
  texture_->upload(commands, composite());
  dirty_ = false;
}

void InitImagePanel::paint(float u, float v, uint8_t value) {
  const int w = init_->width, h = init_->height;
  if (mask_.empty()) mask_.assign(size_t(w) * h, 0);
  const float cx = u * w, cy = v * h, r = brushRadius_;
  for (int y = std::max(0, int(cy - r)); y < std::min(h, int(cy + r) + 1); ++y)
    for (int x = std::max(0, int(cx - r)); x < std::min(w, int(cx + r) + 1); ++x)
      if ((x + 0.5f - cx) * (x + 0.5f - cx) + (y + 0.5f - cy) * (y + 0.5f - cy) <= r * r) mask_[size_t(y) * w + x] = value;
  dirty_ = true;
}

std::string InitImagePanel::draw() {
  std::string message;
  ImGui::Separator();
  ImGui::TextUnformatted("Image to image");
  inputText("##initpath", pathInput_);
  ImGui::SameLine();
  if (ImGui::Button("Open init image")) message = openInitImage(pathInput_);
  if (!init_) {
    ImGui::TextDisabled("none: text to image (open or drop a PNG/JPEG, or use a gallery image)");
    return message;
  }
  ImGui::Text("%dx%d from %s", init_->width, init_->height, source_.c_str());
  ImGui::SameLine();
  if (ImGui::SmallButton("Remove")) {
    clear();
    return message;
  }
  ImGui::SliderFloat("Strength", &strength, 0.f, 1.f, "%.2f", ImGuiSliderFlags_AlwaysClamp);
  inputText("##maskpath", maskPathInput_);
  ImGui::SameLine();
  if (ImGui::Button("Open mask")) message = openMask(maskPathInput_);
  ImGui::Checkbox("Paint mask", &painting_);
  if (painting_) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(120);
    ImGui::SliderFloat("Brush", &brushRadius_, 1.f, 128.f, "%.0f px");
  }
  if (!mask_.empty()) {
    ImGui::SameLine();
    if (ImGui::SmallButton("Clear mask")) {
      mask_.clear();
      dirty_ = true;
    }
  }
  if (texture_ && texture_->ready()) {
    const float side = ImGui::GetContentRegionAvail().x;
    const float scale = std::min(side / init_->width, 256.f / init_->height);
    const ImVec2 size(init_->width * scale, init_->height * scale);
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    texture_->draw(size);
    if (painting_ && ImGui::IsItemHovered()) {
      const ImVec2 m = ImGui::GetMousePos();
      const float u = (m.x - origin.x) / size.x, v = (m.y - origin.y) / size.y;
      ImGui::GetWindowDrawList()->AddCircle(m, brushRadius_ * scale, IM_COL32(255, 80, 80, 255));
      if (ImGui::IsMouseDown(ImGuiMouseButton_Left)) paint(u, v, 255);
      if (ImGui::IsMouseDown(ImGuiMouseButton_Right)) paint(u, v, 0);
    }
  }
  ImGui::TextDisabled(mask_.empty() ? "no mask: the whole image is reworked"
                                    : "inpainting: the red part is repainted");
  return message;
}

}  // namespace sdgen::gui
