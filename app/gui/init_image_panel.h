#pragma once
// The GUI's image-to-image inputs: an init image (opened from a path, dropped on the window, or taken from the
// gallery) with a strength slider, and an optional inpainting mask, opened from a PNG or painted with a brush
// over the image (left button paints "repaint", right button erases). Owns the textures that show them: the
// init image with the mask drawn over it in red, rebuilt whenever either changes.
#include <vulkan/vulkan.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/gui/gui_texture.h"
#include "models/pipeline/text_to_image.h"

namespace sdgen::gui {

class InitImagePanel {
 public:
  // Errors (unreadable files, mismatched sizes) are returned as messages for the window's message list.
  std::string openInitImage(const std::string& path);
  std::string openMask(const std::string& path);
  void setInitImage(const pipeline::RgbImage& image, const std::string& source);
  void clear();

  bool active() const { return init_.has_value(); }
  // Fills the request's init image, strength and mask (nothing when no init image is set).
  void apply(pipeline::GenerationRequest& request) const;

  // Before the ImGui frame: (re)uploads the overlay texture when the image or mask changed.
  void update(VkCommandBuffer commands, TextureRenderer& textures);
  // The panel's widgets inside the controls column; returns a message when an action failed.
  std::string draw();
  void dropTextures() { texture_.reset(); dirty_ = true; }

  float strength = 0.75f;

 private:
  void paint(float u, float v, uint8_t value);
  std::vector<uint8_t> composite() const;

  std::optional<pipeline::RgbImage> init_;
  std::string source_;
  std::vector<uint8_t> mask_;  // width * height, 255 = repaint; empty = no mask (img2img)
  bool painting_ = false;
  float brushRadius_ = 8.f;
  std::string pathInput_, maskPathInput_;
  std::unique_ptr<GuiTexture> texture_;
  bool dirty_ = false;
};

}  // namespace sdgen::gui
