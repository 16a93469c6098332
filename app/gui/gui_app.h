#pragma once
// The window's contents and state: the form (prompt, model, settings), the image view with progress and live
// preview, this session's gallery, messages, and the scripted mode. Runs on the UI thread only; it talks to the
// engine through GenerationWorker and never blocks on it.
#include <vulkan/vulkan.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/generation_worker.h"
#include "app/gui/gui_options.h"
#include "app/gui/gui_texture.h"
#include "app/gui/init_image_panel.h"
#include "app/gui/refiner_panel.h"
#include "app/gui/size_panel.h"
#include "app/gui/model_browser.h"

namespace sdgen::gui {

// The engine thread is shared with `sdgen serve` (app/generation_worker.h).
using app::GenerationJob;
using app::GenerationResult;
using app::GenerationWorker;
using app::WorkerEvent;
using app::WorkerProgress;

struct GalleryEntry {
  uint64_t id = 0;
  GenerationResult result;
  std::unique_ptr<GuiTexture> texture;  // made from result.image.rgb; dropped with the device session
};

struct Message {
  enum class Kind { Error, Info } kind;
  std::string text;
};

class GuiApp {
 public:
  explicit GuiApp(const GuiOptions& options);

  // Once per frame, before the ImGui frame: takes the worker's events and previews, uploads new images into
  // `commands` (the frame's command buffer, outside the render pass).
  void update(VkCommandBuffer commands, GenerationWorker& worker, TextureRenderer& textures);
  // The ImGui frame's contents; may start or cancel work on `worker`.
  void draw(GenerationWorker& worker);

  bool wantsScreenshot() const { return screenshotFrame_; }
  void onScreenshot(const std::optional<Screenshot>& shot);
  bool shouldExit() const { return exit_; }
  int exitCode() const { return exitCode_; }
  bool busyOrAnimating(const GenerationWorker& worker) const;

  // The device session ended (e.g. after a lost device): every texture goes; update() remakes them.
  void dropTextures();
  void addMessage(Message::Kind kind, std::string text);
  void noteValidationMessages(size_t count);
  // A file dropped on the window becomes the init image.
  void onFileDropped(const std::string& path);

 private:
  void drawControls(GenerationWorker& worker);
  void drawView(GenerationWorker& worker);
  void drawEntryDetails(GalleryEntry& entry);
  void drawGallery();
  void drawLargeView();
  void drawSavePopup();
  void startGeneration(GenerationWorker& worker);
  void useModel(const std::string& path, bool applyDefaults);
  void applyParams(const app::GenerationParams& p);
  void scriptFinished();
  GalleryEntry* selected();

  const GuiOptions options_;
  // Form.
  std::string prompt_, negativePrompt_, modelPath_;
  int steps_ = 20, batchCount_ = 1, clipSkip_ = 1;
  float cfgScale_ = 7.5f;
  uint64_t seed_ = 0;
  bool randomSeed_ = true, karras_ = false;
  SizePanel size_;  // the model's default size or width x height; SDXL's micro-conditioning
  RefinerPanel refiner_;  // SDXL: a refiner model for the last steps
  bool vaeTiling_ = false;  // on: --vae-tiling; off: automatic (docs/vae-tiling.md)
  bool webuiSyntax_ = true;  // --prompt-syntax webui (else plain)
  std::string lorasText_, loraDir_;  // FILE[:SCALE] per line; the folder of the prompt's <lora:NAME> tags
  sampling::SamplerKind sampler_ = sampling::SamplerKind::EulerAncestral;
  InitImagePanel initPanel_;
  ModelBrowser browser_;
  RecentModels recent_;

  // Results.
  std::vector<GalleryEntry> gallery_;
  uint64_t nextId_ = 1, selectedId_ = 0;
  std::unique_ptr<GuiTexture> preview_;
  std::optional<pipeline::LatentPreview> pendingPreview_;
  int previewStep_ = 0, previewSteps_ = 0;
  int previewScale_ = 8;  // image pixels per preview pixel (LatentPreview::pixelScale)
  bool showPreview_ = false;
  std::vector<Message> messages_;
  bool largeViewOpen_ = false;
  bool savePopupRequested_ = false;
  std::string savePath_;

  // Scripted mode.
  std::chrono::steady_clock::time_point startTime_ = std::chrono::steady_clock::now();
  int frame_ = 0;
  bool autoStarted_ = false, scriptDone_ = false, scriptFailed_ = false;
  int framesSinceDone_ = 0;
  bool screenshotFrame_ = false;
  int previewShotFrames_ = 0;
  bool previewShotPending_ = false, previewShotTaken_ = false;
  float imageRect_[4] = {0, 0, 0, 0};  // x, y, w, h in framebuffer pixels of the large image this frame
  bool exit_ = false;
  int exitCode_ = 0;
};

}  // namespace sdgen::gui
