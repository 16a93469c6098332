#include "app/gui/gui_app.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <utility>

#include "app/generation_params.h"
#include "app/generation_plan.h"
#include "app/png_writer.h"

namespace sdgen::gui {

namespace {

constexpr float kControlsWidth = 390.f, kThumbSize = 88.f;
const ImVec4 kErrorColor(1.f, 0.42f, 0.42f, 1.f), kInfoColor(0.55f, 0.85f, 0.55f, 1.f);

// The largest size of `w` x `h` inside `area` keeping the aspect ratio; whole multiples when enlarging.
ImVec2 fit(int w, int h, ImVec2 area) {
  float s = std::min(area.x / float(w), area.y / float(h));
  if (s >= 1.f) s = std::floor(s);
  s = std::max(s, 0.01f);
  return ImVec2(std::floor(w * s), std::floor(h * s));
}

bool keyPressed(ImGuiKey key) { return ImGui::IsKeyPressed(ImGui::GetKeyIndex(key), false); }

}  // namespace

GuiApp::GuiApp(const GuiOptions& options)
    : options_(options), recent_(options.autoGenerate ? std::string() : RecentModels::defaultFile()) {
  prompt_ = options.prompt;
  std::string model = options.modelPath;
  if (model.empty() && !recent_.paths().empty()) model = recent_.paths().front();
  try {
    useModel(app::resolveModelPath(options.modelPath.empty() ? model : options.modelPath), true);
  } catch (const std::exception& e) {
    modelPath_ = options.modelPath;
    addMessage(Message::Kind::Error, e.what());
  }
  for (const std::string& l : options.loras) lorasText_ += l + "\n";
  loraDir_ = options.loraDir;
  // Flags given on the command line win over the model's defaults.
  if (!options.negativePrompt.empty()) negativePrompt_ = options.negativePrompt;
  if (options.steps) steps_ = *options.steps;
  if (options.cfgScale) cfgScale_ = *options.cfgScale;
  if (options.sampler) sampler_ = *options.sampler;
  if (options.batchCount) batchCount_ = *options.batchCount;
  if (options.width || options.height) {
    size_.modelSize = false;
    size_.width = options.width.value_or(size_.width);
    size_.height = options.height.value_or(size_.height);
  }
  size_.micro = app::MicroConditioningFields::from(options.micro);
  refiner_.path = options.refinerPath;
  if (options.refinerStart) refiner_.start = *options.refinerStart;
  for (const std::string& l : options.refinerLoras) refiner_.loras += l + "\n";
  if (!options.initImagePath.empty()) {
    initPanel_.strength = options.strength.value_or(initPanel_.strength);
    std::string err = initPanel_.openInitImage(options.initImagePath);
    if (err.empty() && !options.maskPath.empty()) err = initPanel_.openMask(options.maskPath);
    if (!err.empty()) {
      addMessage(Message::Kind::Error, err);
      scriptFailed_ = true;
    }
  }
  if (options.seed) {
    seed_ = *options.seed;
    randomSeed_ = false;
  } else {
    seed_ = app::chooseSeed(std::nullopt);
  }
}

void GuiApp::useModel(const std::string& path, bool applyDefaults) {
  modelPath_ = path;
  if (!applyDefaults) return;
  app::ModelDefaults d = app::readModelDefaults(path);
  steps_ = d.steps.value_or(20);
  cfgScale_ = d.cfgScale.value_or(7.5f);
  sampler_ = d.sampler.value_or(sampling::SamplerKind::EulerAncestral);
  karras_ = d.karras.value_or(false);
  negativePrompt_ = d.negativePrompt.value_or("");
  if (d.width) size_.width = *d.width;
  if (d.height) size_.height = *d.height;
}

void GuiApp::addMessage(Message::Kind kind, std::string text) {
  std::fprintf(stderr, "sdgen-gui: %s%s\n", kind == Message::Kind::Error ? "error: " : "", text.c_str());
  messages_.push_back({kind, std::move(text)});
  if (messages_.size() > 20) messages_.erase(messages_.begin());
}

void GuiApp::noteValidationMessages(size_t count) {
  if (!count) return;
  addMessage(Message::Kind::Error, std::to_string(count) + " Vulkan validation message(s) (see stderr)");
  if (options_.exitAfter) exitCode_ = 1;
}

void GuiApp::dropTextures() {
  for (auto& e : gallery_) e.texture.reset();
  preview_.reset();
  initPanel_.dropTextures();
}

void GuiApp::onFileDropped(const std::string& path) {
  std::string err = initPanel_.openInitImage(path);
  if (!err.empty()) addMessage(Message::Kind::Error, err);
}

GalleryEntry* GuiApp::selected() {
  for (auto& e : gallery_)
    if (e.id == selectedId_) return &e;
  return nullptr;
}

bool GuiApp::busyOrAnimating(const GenerationWorker& worker) const {
  return worker.busy() || options_.autoGenerate || frame_ < 3 || ImGui::IsAnyItemActive();
}

void GuiApp::update(VkCommandBuffer commands, GenerationWorker& worker, TextureRenderer& textures) {
  ++frame_;
  for (WorkerEvent& ev : worker.takeEvents()) {
    switch (ev.kind) {
      case WorkerEvent::Kind::Result: {
        GalleryEntry entry;
        entry.id = nextId_++;
        entry.result = std::move(*ev.result);
        if (!ev.message.empty()) addMessage(Message::Kind::Info, ev.message);
        selectedId_ = entry.id;
        gallery_.push_back(std::move(entry));
        showPreview_ = false;
        break;
      }
      case WorkerEvent::Kind::Error:
        addMessage(Message::Kind::Error, "generation failed: " + ev.message);
        scriptFailed_ = true;
        break;
      case WorkerEvent::Kind::Cancelled: addMessage(Message::Kind::Info, ev.message); break;
      case WorkerEvent::Kind::Finished:
        showPreview_ = false;
        if (options_.autoGenerate && autoStarted_) scriptDone_ = true;
        break;
    }
  }
  if (auto p = worker.takePreview()) {
    if (!preview_ || preview_->width() != p->width || preview_->height() != p->height)
      preview_ = std::make_unique<GuiTexture>(textures, p->width, p->height);
    preview_->upload(commands, p->rgb);
    previewStep_ = p->step;
    previewScale_ = p->pixelScale;
    previewSteps_ = p->steps;
    showPreview_ = worker.busy();
  }
  for (auto& e : gallery_)
    if (!e.texture) {
      const pipeline::Image& im = e.result.image;
      e.texture = std::make_unique<GuiTexture>(textures, im.width, im.height);
      e.texture->upload(commands, im.rgb);
    }
  initPanel_.update(commands, textures);
  if (options_.timeoutSeconds > 0 && !exit_ &&
      std::chrono::duration<double>(std::chrono::steady_clock::now() - startTime_).count() > options_.timeoutSeconds) {
    addMessage(Message::Kind::Error, "scripted run timed out after " + std::to_string(options_.timeoutSeconds) + " s");
    worker.cancel();
    exit_ = true;
    exitCode_ = 1;
  }
}

void GuiApp::startGeneration(GenerationWorker& worker) {
  if (worker.busy()) return;
  if (randomSeed_) seed_ = app::chooseSeed(std::nullopt);
  GenerationJob job;
  try {
    job.modelPath = app::resolveModelPath(modelPath_);
    refiner_.apply(job);
  } catch (const std::exception& e) {
    addMessage(Message::Kind::Error, e.what());
    scriptFailed_ = true;
    if (options_.autoGenerate) scriptDone_ = true;
    return;
  }
  pipeline::GenerationRequest& r = job.request;
  r.prompt = prompt_;
  r.negativePrompt = negativePrompt_;
  r.steps = steps_;
  r.cfgScale = cfgScale_;
  r.seed = seed_;
  r.width = size_.modelSize ? 0 : size_.width / 8 * 8;
  r.height = size_.modelSize ? 0 : size_.height / 8 * 8;
  r.micro = size_.micro.toRequest();
  r.sampler = sampler_;
  r.karras = karras_;
  r.vaeTiling = vaeTiling_ ? pipeline::VaeTilingMode::On : pipeline::VaeTilingMode::Auto;
  r.clipSkip = clipSkip_ - 1;  // webui's 1 = the last layer
  r.promptSyntax = webuiSyntax_ ? prompt::PromptSyntax::Webui : prompt::PromptSyntax::Plain;
  initPanel_.apply(r);  // image to image / inpainting when an init image is set
  try {  // one FILE[:SCALE] per line; a changed set is re-merged into the loaded model, not reloaded
    job.loras = lora::parseLoraLines(lorasText_, "LoRA");
  } catch (const std::exception& e) {
    addMessage(Message::Kind::Error, e.what());
    return;
  }
  job.loraDir = loraDir_;
  job.taesdPath = options_.taesdPath;
  if (!job.taesdPath.empty()) r.preview = pipeline::PreviewDecoder::Taesd;  // the live preview at full size
  job.webuiClipSkip = clipSkip_;
  job.batchCount = batchCount_;
  if (worker.start(std::move(job)) && modelPath_ != "") {
    std::string err = recent_.use(modelPath_);
    if (!err.empty()) addMessage(Message::Kind::Error, err);
  }
  previewStep_ = previewSteps_ = 0;
}

void GuiApp::applyParams(const app::GenerationParams& p) {
  prompt_ = p.prompt;
  negativePrompt_ = p.negativePrompt;
  steps_ = p.steps;
  cfgScale_ = p.cfgScale;
  seed_ = p.seed;
  randomSeed_ = false;
  size_.modelSize = false;
  size_.width = p.width;
  size_.height = p.height;
  size_.micro = app::MicroConditioningFields::from(p.micro);
  if (p.refinerSwitchAt) refiner_.start = *p.refinerSwitchAt;  // the refiner's path is not in the parameters
  sampler_ = p.sampler;
  karras_ = p.karras;
  clipSkip_ = p.clipSkip;
  webuiSyntax_ = p.promptSyntax == prompt::PromptSyntax::Webui;
}

void GuiApp::draw(GenerationWorker& worker) {
  ImGuiIO& io = ImGui::GetIO();
  screenshotFrame_ = false;
  const bool popupOpen = ImGui::IsPopupOpen(nullptr, ImGuiPopupFlags_AnyPopupId);
  if (io.KeyCtrl && (keyPressed(ImGuiKey_Enter) || keyPressed(ImGuiKey_KeyPadEnter)) && !popupOpen)
    startGeneration(worker);
  if (keyPressed(ImGuiKey_Escape) && !popupOpen && worker.busy()) worker.cancel();
  if (options_.autoGenerate && !autoStarted_ && frame_ >= 3) {
    autoStarted_ = true;
    startGeneration(worker);
  }

  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(io.DisplaySize);
  ImGui::Begin("sdgen", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_NoBringToFrontOnFocus);
  ImGui::BeginChild("controls", ImVec2(kControlsWidth, 0), true);
  drawControls(worker);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("view", ImVec2(0, 0), false);
  drawView(worker);
  ImGui::EndChild();
  ImGui::End();

  if (browser_.draw()) {
    try {
      useModel(browser_.picked(), true);
    } catch (const std::exception& e) {
      addMessage(Message::Kind::Error, e.what());
    }
  }
  drawLargeView();
  drawSavePopup();

  if (!options_.previewScreenshotPath.empty() && !previewShotTaken_ && showPreview_ &&
      previewStep_ >= options_.previewScreenshotStep && ++previewShotFrames_ == 2) {
    screenshotFrame_ = true;
    previewShotPending_ = true;
  }
  if (scriptDone_ && !exit_) {
    // A few frames after the last result so the layout has settled and the image's upload has been drawn.
    if (++framesSinceDone_ == 4) {
      if (!options_.screenshotPath.empty()) screenshotFrame_ = true;
      else scriptFinished();
    }
  }
}

void GuiApp::drawControls(GenerationWorker& worker) {
  const bool busy = worker.busy();
  ImGui::TextUnformatted("Model");
  ImGui::SetNextItemWidth(-ImGui::CalcTextSize("Browse...").x - ImGui::GetStyle().ItemSpacing.x * 2 - 8);
  ImGui::InputText("##model", &modelPath_);
  ImGui::SameLine();
  if (ImGui::Button("Browse...")) browser_.open(modelPath_);
  if (ImGui::BeginCombo("##recent", "Recent models", ImGuiComboFlags_None)) {
    if (recent_.paths().empty()) ImGui::TextDisabled("(none yet)");
    for (const auto& p : recent_.paths())
      if (ImGui::Selectable(p.c_str())) {
        try {
          useModel(p, true);
        } catch (const std::exception& e) {
          addMessage(Message::Kind::Error, e.what());
        }
      }
    if (ImGui::Selectable("Built-in model (sdgen-tiny)")) {
      try {
        useModel(app::resolveModelPath(""), true);
      } catch (const std::exception& e) {
        addMessage(Message::Kind::Error, e.what());
      }
    }
    ImGui::EndCombo();
  }

  ImGui::Spacing();
  ImGui::TextUnformatted("Prompt");
  ImGui::InputTextMultiline("##prompt", &prompt_, ImVec2(-1, ImGui::GetTextLineHeight() * 5));
  ImGui::TextUnformatted("Negative prompt");
  ImGui::InputTextMultiline("##negative", &negativePrompt_, ImVec2(-1, ImGui::GetTextLineHeight() * 3));
  ImGui::TextUnformatted("LoRAs: FILE[:SCALE] per line, or <lora:NAME:SCALE> in the prompt");
  ImGui::InputTextMultiline("##loras", &lorasText_, ImVec2(-1, ImGui::GetTextLineHeight() * 2.5f));
  ImGui::SetNextItemWidth(-1);
  ImGui::InputTextWithHint("##loradir", "LoRA folder (for <lora:NAME> tags)", &loraDir_);

  ImGui::Spacing();
  ImGui::PushItemWidth(170);
  ImGui::SliderInt("Steps", &steps_, 1, 150, "%d", ImGuiSliderFlags_AlwaysClamp);
  ImGui::SliderFloat("CFG scale", &cfgScale_, 0.f, 30.f, "%.1f", ImGuiSliderFlags_AlwaysClamp);
  if (ImGui::BeginCombo("Sampler", sampling::samplerDisplayName(sampler_, false).c_str())) {
    size_t count = 0;
    const sampling::SamplerKind* kinds = sampling::allSamplerKinds(&count);
    for (size_t i = 0; i < count; ++i)
      if (ImGui::Selectable(sampling::samplerDisplayName(kinds[i], false).c_str(), kinds[i] == sampler_))
        sampler_ = kinds[i];
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  // DDIM and LCM have no Karras variant: the box is off and disabled for them.
  const bool karrasAllowed = sampling::samplerTakesKarras(sampler_);
  if (!karrasAllowed) karras_ = false;
  if (!karrasAllowed) ImGui::BeginDisabled();
  ImGui::Checkbox("Karras", &karras_);
  if (!karrasAllowed) ImGui::EndDisabled();
  if (randomSeed_) ImGui::BeginDisabled();
  ImGui::InputScalar("Seed", ImGuiDataType_U64, &seed_);
  if (randomSeed_) ImGui::EndDisabled();
  ImGui::SameLine();
  if (ImGui::Button("Dice")) {
    seed_ = app::chooseSeed(std::nullopt);
    randomSeed_ = false;
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("A new random seed, kept for the next generations");
  ImGui::Checkbox("New random seed for every Generate", &randomSeed_);
  size_.draw();
  refiner_.draw();
  ImGui::Checkbox("Tiled VAE", &vaeTiling_);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Decode (and encode) large images in blended tiles, as diffusers' enable_tiling();\n"
                      "off: only when the whole image would not fit in memory");
  ImGui::InputInt("Batch count", &batchCount_);
  batchCount_ = std::clamp(batchCount_, 1, 100);
  ImGui::InputInt("Clip skip", &clipSkip_);
  clipSkip_ = std::clamp(clipSkip_, 1, 12);
  ImGui::Checkbox("webui prompt syntax", &webuiSyntax_);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("(word) x1.1, (word:1.3), [word] /1.1, BREAK, prompts of any length in 75-token chunks;\n"
                      "off: the text as written, cut off after 77 tokens (sdgen --prompt-syntax plain)");
  ImGui::PopItemWidth();
  if (std::string err = initPanel_.draw(); !err.empty()) addMessage(Message::Kind::Error, err);

  ImGui::Spacing();
  if (busy) ImGui::BeginDisabled();
  if (ImGui::Button("Generate", ImVec2(180, 36))) startGeneration(worker);
  if (busy) ImGui::EndDisabled();
  ImGui::SameLine();
  if (!busy) ImGui::BeginDisabled();
  if (ImGui::Button("Cancel", ImVec2(-1, 36))) worker.cancel();
  if (!busy) ImGui::EndDisabled();
  ImGui::TextDisabled("Ctrl+Enter generates, Esc cancels");

  if (!messages_.empty()) {
    ImGui::Separator();
    int remove = -1;
    for (int i = int(messages_.size()) - 1; i >= 0; --i) {
      ImGui::PushID(i);
      if (ImGui::SmallButton("x")) remove = i;
      ImGui::SameLine();
      ImGui::PushStyleColor(ImGuiCol_Text, messages_[i].kind == Message::Kind::Error ? kErrorColor : kInfoColor);
      ImGui::TextWrapped("%s", messages_[i].text.c_str());
      ImGui::PopStyleColor();
      ImGui::PopID();
    }
    if (remove >= 0) messages_.erase(messages_.begin() + remove);
  }
}

void GuiApp::drawView(GenerationWorker& worker) {
  WorkerProgress p = worker.progress();
  float fraction = 0;
  char overlay[160] = "idle";
  if (worker.busy()) {
    if (p.steps > 0 && p.images > 0)
      fraction = (float(std::max(p.image - 1, 0)) + float(p.step) / float(p.steps)) / float(p.images);
    if (p.phase == "generating" || p.phase == "decoding")
      std::snprintf(overlay, sizeof overlay, "%s%s  step %d/%d  %.2f it/s", p.images > 1 ? "image " : "",
                    p.images > 1 ? (std::to_string(p.image) + "/" + std::to_string(p.images) + " ").c_str() : "",
                    p.step, p.steps, p.itPerSec);
    else
      std::snprintf(overlay, sizeof overlay, "%s...", p.phase.c_str());
  } else if (!gallery_.empty()) {
    std::snprintf(overlay, sizeof overlay, "done: %zu image(s) this session", gallery_.size());
    fraction = 1;
  }
  ImGui::ProgressBar(fraction, ImVec2(-1, 0), overlay);

  GalleryEntry* entry = selected();
  const float detailsHeight = ImGui::GetTextLineHeightWithSpacing() * 5 + ImGui::GetFrameHeightWithSpacing();
  const float galleryHeight = kThumbSize + ImGui::GetStyle().ScrollbarSize + 24;
  ImVec2 avail = ImGui::GetContentRegionAvail();
  ImVec2 area(avail.x, std::max(avail.y - detailsHeight - galleryHeight, 64.f));
  ImGui::BeginChild("image", area, false, ImGuiWindowFlags_NoScrollbar);
  GuiTexture* shown = nullptr;
  if (showPreview_ && preview_ && preview_->ready()) shown = preview_.get();
  else if (entry && entry->texture) shown = entry->texture.get();
  if (shown) {
    // The preview is at latent resolution: show it at the size of the image it becomes.
    int w = shown->width(), h = shown->height();
    if (shown == preview_.get()) {
      const int scale = std::max(1, previewScale_);
      w *= scale;
      h *= scale;
    }
    ImVec2 size = fit(w, h, area);
    ImGui::SetCursorPos(ImVec2((area.x - size.x) * 0.5f, (area.y - size.y) * 0.5f));
    shown->draw(size);
    ImVec2 min = ImGui::GetItemRectMin();
    ImVec2 scale = ImGui::GetIO().DisplayFramebufferScale;
    imageRect_[0] = min.x * scale.x;
    imageRect_[1] = min.y * scale.y;
    imageRect_[2] = size.x * scale.x;
    imageRect_[3] = size.y * scale.y;
    if (shown != preview_.get() && ImGui::IsItemHovered() && ImGui::IsMouseDoubleClicked(0)) largeViewOpen_ = true;
    if (shown == preview_.get()) {
      ImGui::SetCursorPos(ImVec2(8, 8));
      ImGui::Text("preview, step %d/%d", previewStep_, previewSteps_);
    }
  } else {
    const char* hint = "Type a prompt and press Generate (Ctrl+Enter).";
    ImVec2 t = ImGui::CalcTextSize(hint);
    ImGui::SetCursorPos(ImVec2((area.x - t.x) * 0.5f, (area.y - t.y) * 0.5f));
    ImGui::TextDisabled("%s", hint);
  }
  ImGui::EndChild();

  ImGui::BeginChild("details", ImVec2(0, detailsHeight), false);
  if (entry) drawEntryDetails(*entry);
  ImGui::EndChild();
  drawGallery();
}

void GuiApp::drawEntryDetails(GalleryEntry& entry) {
  const app::GenerationParams& p = entry.result.params;
  if (ImGui::Button("View large")) largeViewOpen_ = true;
  ImGui::SameLine();
  if (ImGui::Button("Copy seed")) ImGui::SetClipboardText(std::to_string(p.seed).c_str());
  ImGui::SameLine();
  if (ImGui::Button("Use parameters")) applyParams(p);
  ImGui::SameLine();
  if (ImGui::Button("Use as init image"))
    initPanel_.setInitImage({entry.result.image.width, entry.result.image.height, entry.result.image.rgb},
                            "gallery image " + std::to_string(entry.id));
  ImGui::SameLine();
  if (ImGui::Button("Save PNG...")) {
    savePath_ = (std::filesystem::current_path() / ("sdgen-" + std::to_string(p.seed) + ".png")).string();
    savePopupRequested_ = true;
  }
  ImGui::SameLine();
  ImGui::TextDisabled("%.1f s", entry.result.seconds);
  ImGui::TextWrapped("%s", app::formatGenerationParams(p).c_str());
}

void GuiApp::drawGallery() {
  ImGui::BeginChild("gallery", ImVec2(0, 0), true, ImGuiWindowFlags_HorizontalScrollbar);
  for (auto& e : gallery_) {
    if (!e.texture) continue;
    ImVec2 size = fit(e.texture->width(), e.texture->height(), ImVec2(kThumbSize, kThumbSize));
    ImGui::PushID(int(e.id));
    e.texture->draw(size);
    if (ImGui::IsItemClicked()) {
      selectedId_ = e.id;
      showPreview_ = false;
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("seed %llu", static_cast<unsigned long long>(e.result.params.seed));
    if (e.id == selectedId_)
      ImGui::GetWindowDrawList()->AddRect(ImGui::GetItemRectMin(), ImGui::GetItemRectMax(),
                                          ImGui::GetColorU32(ImGuiCol_ButtonActive), 0, 0, 3.f);
    ImGui::PopID();
    ImGui::SameLine();
  }
  ImGui::EndChild();
}

void GuiApp::drawLargeView() {
  GalleryEntry* entry = selected();
  if (largeViewOpen_ && entry && entry->texture) {
    ImGui::OpenPopup("Image");
    largeViewOpen_ = false;
  }
  ImGuiIO& io = ImGui::GetIO();
  ImGui::SetNextWindowPos(ImVec2(io.DisplaySize.x * 0.5f, io.DisplaySize.y * 0.5f), ImGuiCond_Always, ImVec2(0.5f, 0.5f));
  if (ImGui::BeginPopupModal("Image", nullptr, ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoTitleBar)) {
    if (entry && entry->texture) {
      ImVec2 size = fit(entry->texture->width(), entry->texture->height(),
                        ImVec2(io.DisplaySize.x * 0.9f, io.DisplaySize.y * 0.85f));
      entry->texture->draw(size);
      if (ImGui::IsItemClicked()) ImGui::CloseCurrentPopup();
    }
    ImGui::TextDisabled("Click the image or press Esc to close");
    if (keyPressed(ImGuiKey_Escape) || !entry) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }
}

void GuiApp::drawSavePopup() {
  if (savePopupRequested_) {
    ImGui::OpenPopup("Save PNG");
    savePopupRequested_ = false;
  }
  if (!ImGui::BeginPopupModal("Save PNG", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;
  ImGui::TextUnformatted("File (the PNG keeps the parameters, as sdgen writes them):");
  ImGui::SetNextItemWidth(520);
  ImGui::InputText("##path", &savePath_);
  GalleryEntry* entry = selected();
  if (ImGui::Button("Save") && entry) {
    try {
      const pipeline::Image& im = entry->result.image;
      app::writePngFile(savePath_, im.width, im.height, im.rgb,
                        {app::PngText{app::kParametersKeyword, app::formatGenerationParams(entry->result.params)}});
      addMessage(Message::Kind::Info, "saved " + savePath_);
    } catch (const std::exception& e) {
      addMessage(Message::Kind::Error, e.what());
    }
    ImGui::CloseCurrentPopup();
  }
  ImGui::SameLine();
  if (ImGui::Button("Cancel") || keyPressed(ImGuiKey_Escape)) ImGui::CloseCurrentPopup();
  ImGui::EndPopup();
}

void GuiApp::onScreenshot(const std::optional<Screenshot>& shot) {
  screenshotFrame_ = false;
  const bool preview = std::exchange(previewShotPending_, false);
  const std::string& path = preview ? options_.previewScreenshotPath : options_.screenshotPath;
  if (preview) previewShotTaken_ = true;
  if (!shot) {
    addMessage(Message::Kind::Error, "the window cannot be read back for --screenshot (the swapchain does not allow "
                                     "transfers from its images)");
    scriptFailed_ = true;
  } else {
    try {
      app::writePngFile(path, shot->width, shot->height, shot->rgb,
                        {app::PngText{"Software", std::string("sdgen-gui ") + SDGEN_VERSION}});
      std::printf("sdgen-gui: wrote %s (%dx%d)\n", path.c_str(), shot->width, shot->height);
      std::printf("sdgen-gui: %s %d %d %d %d\n", preview ? "preview-rect" : "image-rect", int(imageRect_[0]),
                  int(imageRect_[1]), int(imageRect_[2]), int(imageRect_[3]));
      std::fflush(stdout);
    } catch (const std::exception& e) {
      addMessage(Message::Kind::Error, e.what());
      scriptFailed_ = true;
    }
  }
  if (!preview) scriptFinished();
}

void GuiApp::scriptFinished() {
  if (!options_.saveImagePath.empty() && !gallery_.empty()) {
    const GenerationResult& r = gallery_.back().result;
    try {
      app::writePngFile(options_.saveImagePath, r.image.width, r.image.height, r.image.rgb,
                        {app::PngText{app::kParametersKeyword, app::formatGenerationParams(r.params)}});
      std::printf("sdgen-gui: wrote %s (seed %llu)\n", options_.saveImagePath.c_str(),
                  static_cast<unsigned long long>(r.params.seed));
      std::fflush(stdout);
    } catch (const std::exception& e) {
      addMessage(Message::Kind::Error, e.what());
      scriptFailed_ = true;
    }
  }
  if (options_.exitAfter) {
    exit_ = true;
    if (scriptFailed_ || gallery_.empty()) exitCode_ = 1;
  }
}

}  // namespace sdgen::gui
