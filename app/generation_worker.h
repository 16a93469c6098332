#pragma once
// The one thread that uses an engine (sdgen-gui has one; `sdgen serve` one per --devices entry): it loads the
// model (keeping it between jobs), generates, and reports progress, live previews, results and errors to its
// owner, which polls (the GUI, once a frame) or waits (serve's engine, waitEvents). Vulkan work of this thread
// reaches the shared queue through sdgen::Device's lock (see app/gui/swapchain_renderer.h).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "app/generation_params.h"
#include "app/model_cache.h"
#include "app/refiner_pass.h"
#include "engine/context.h"
#include "models/pipeline/text_to_image.h"

namespace sdgen::app {

struct GenerationJob {
  std::string modelPath;  // resolved (app::resolveModelPath)
  pipeline::GenerationRequest request;  // request.seed is the first image's; image i gets seed + i
  int batchCount = 1;  // 0: only load the model (serve warms its engines up with that)
  int webuiClipSkip = 1;
  // LoRAs of every image (docs/lora.md) and the folder the prompt's <lora:NAME:SCALE> tags are looked up in.
  std::vector<lora::LoraSpec> loras;
  std::string loraDir;
  // TAESD weights (docs/taesd.md) loaded with the model: request.preview / request.decoder may then use them.
  std::string taesdPath;
  bool previews = true;  // live previews cost one latent readback per step  // for the parameters text (request.clipSkip = webuiClipSkip - 1)
  // An SDXL refiner for the last steps (docs/sdxl.md "Refiner"; app/refiner_pass.h): its resolved path (empty:
  // none), the switch (diffusers' denoising_end / denoising_start) and how errors name it ("refiner_checkpoint
  // 'NAME'"). It is cached beside the base model, without TAESD; its LoRAs are refinerLoras (its own: the
  // base's LoRAs and prompt tags do not fit its networks).
  std::string refinerPath;
  double refinerStart = 0.8;
  std::string refinerLabel;
  std::vector<lora::LoraSpec> refinerLoras;
};

struct GenerationResult {
  pipeline::Image image;
  GenerationParams params;
  double seconds = 0;
};

struct WorkerEvent {
  enum class Kind { Result, Error, Cancelled, Finished };
  Kind kind = Kind::Finished;
  std::optional<GenerationResult> result;
  std::string message;  // Error: what failed; Cancelled: where it stopped; Result: warnings, if any
};

// How the last job got its model (sdgen serve logs it): from the cache, or loaded, and what that evicted.
struct ModelCacheReport {
  std::string model;     // the job's modelPath
  bool hit = false;
  double loadMs = 0;     // 0 for a hit
  std::vector<std::string> evicted;  // model paths, before the load and after the job
  std::vector<std::string> cached;   // what stays loaded, most recently used first
  uint64_t cachedBytes = 0, budgetBytes = 0;
  // This process's peak use of the engine's device memory heap (VK_EXT_memory_budget: every allocation of the
  // process on that device, driver's included; 0 without the extension). Engines on one device share it.
  uint64_t devicePeakBytes = 0;
  uint64_t blocksPeakBytes = 0;  // the peak of this engine's own device memory blocks (every device has it)
};

struct WorkerProgress {
  std::string phase;  // "loading model", "generating", "" when idle
  int image = 0, images = 0;  // 1-based image of the batch
  int step = 0, steps = 0;
  double itPerSec = 0;
};

class GenerationWorker {
 public:
  // modelCacheBytes: the budget of loaded models kept between jobs (app/model_cache.h); 0 keeps only the model
  // of the last job.
  explicit GenerationWorker(Context& ctx, uint64_t modelCacheBytes = 0);
  ~GenerationWorker();  // cancels a running job (stops after the current step) and joins
  GenerationWorker(const GenerationWorker&) = delete;
  GenerationWorker& operator=(const GenerationWorker&) = delete;

  // Starts a job; false when one is still running.
  bool start(GenerationJob job);
  void cancel() { cancel_ = true; }
  bool busy() const { return busy_; }
  WorkerProgress progress() const;
  // The newest preview since the last call, if any.
  std::optional<pipeline::LatentPreview> takePreview();
  std::vector<WorkerEvent> takeEvents();
  // Blocks until there are events or `timeout` passed, then takes them (possibly none).
  std::vector<WorkerEvent> waitEvents(std::chrono::milliseconds timeout);
  // The model report of the last job, once (set before its Finished event).
  std::optional<ModelCacheReport> takeModelReport();

 private:
  void loop();
  void runJob(const GenerationJob& job);
  void post(WorkerEvent event);

  Context& ctx_;
  pipeline::LoadOptions loadOptions(const GenerationJob& job);
  pipeline::TextToImage& model(const GenerationJob& job, ModelCacheReport& report);
  // The job's refiner pass: the base checked, the refiner from the cache (loaded beside the base, which it spares).
  std::unique_ptr<RefinerPass> refinerPass(const GenerationJob& job, pipeline::TextToImage& base,
                                           ModelCacheReport& report);
  void finishReport(ModelCacheReport& report, const pipeline::TextToImage* measured);

  ModelCache<pipeline::TextToImage> models_;  // kept between jobs; a model is dropped after its job's error

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable eventPosted_;
  std::optional<GenerationJob> pending_;
  bool stop_ = false;
  std::atomic<bool> cancel_{false};
  std::atomic<bool> busy_{false};
  WorkerProgress progress_;
  std::chrono::steady_clock::time_point firstStepTime_;
  std::optional<pipeline::LatentPreview> preview_;
  std::optional<ModelCacheReport> modelReport_;
  std::vector<WorkerEvent> events_;
  std::thread thread_;  // last: starts after everything above exists
};

}  // namespace sdgen::app
