#include "app/generation_worker.h"

#include <exception>
#include <new>
#include <utility>

#include "app/generation_plan.h"
#include "engine/error.h"
#include "engine/memory.h"

namespace sdgen::app {

GenerationWorker::GenerationWorker(Context& ctx, uint64_t modelCacheBytes)
    : ctx_(ctx), models_(modelCacheBytes), thread_([this] { loop(); }) {}

GenerationWorker::~GenerationWorker() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cancel_ = true;
  wake_.notify_all();
  thread_.join();
}

bool GenerationWorker::start(GenerationJob job) {
  std::lock_guard lock(mutex_);
  if (busy_ || pending_) return false;
  cancel_ = false;
  busy_ = true;
  progress_ = WorkerProgress{"starting", 0, job.batchCount, 0, 0, 0};
  pending_ = std::move(job);
  wake_.notify_all();
  return true;
}

WorkerProgress GenerationWorker::progress() const {
  std::lock_guard lock(mutex_);
  return progress_;
}

std::optional<pipeline::LatentPreview> GenerationWorker::takePreview() {
  std::lock_guard lock(mutex_);
  auto p = std::move(preview_);
  preview_.reset();
  return p;
}

std::vector<WorkerEvent> GenerationWorker::takeEvents() {
  std::lock_guard lock(mutex_);
  return std::exchange(events_, {});
}

std::vector<WorkerEvent> GenerationWorker::waitEvents(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  eventPosted_.wait_for(lock, timeout, [&] { return !events_.empty(); });
  return std::exchange(events_, {});
}

std::optional<ModelCacheReport> GenerationWorker::takeModelReport() {
  std::lock_guard lock(mutex_);
  return std::exchange(modelReport_, std::nullopt);
}

namespace {
// What a loaded model holds on the device: its share of the cache budget.
uint64_t deviceBytes(const pipeline::TextToImage& model) {
  const pipeline::MemoryReport r = model.memoryReport();
  uint64_t bytes = r.convScratchBytes + r.sharedArenaBytes;
  for (const auto& c : r.components) bytes += c.weightBytes + c.bufferBytes;
  return bytes;
}
// A model loaded with TAESD weights is another cache entry than the same model without (or with others).
std::string cacheKey(const GenerationJob& job) {
  return job.taesdPath.empty() ? job.modelPath : job.modelPath + "\n" + job.taesdPath;
}
}  // namespace

pipeline::LoadOptions GenerationWorker::loadOptions(const GenerationJob& job) {
  pipeline::LoadOptions options;
  options.modelPath = job.modelPath;
  options.precision = resolvePrecision(PrecisionChoice::Auto, ctx_.info());
  options.loras = job.loras;  // merged while the weights stream in
  options.loraDir = job.loraDir;
  options.taesdPath = job.taesdPath;
  options.progress = [this](const pipeline::LoadProgress& p) {  // the GUI's status line names the component
    std::lock_guard lock(mutex_);
    progress_.phase = p.done ? "loading model" : "loading model: " + p.component;
  };
  return options;
}

pipeline::TextToImage& GenerationWorker::model(const GenerationJob& job, ModelCacheReport& report) {
  const auto t0 = std::chrono::steady_clock::now();
  auto load = [&] {
    {
      std::lock_guard lock(mutex_);
      progress_.phase = "loading model";
    }
    return std::make_unique<pipeline::TextToImage>(ctx_, loadOptions(job));
  };
  ModelCache<pipeline::TextToImage>::Acquired got;
  try {
    got = models_.acquire(cacheKey(job), modelFileBytes(job.modelPath), load);
  } catch (const OutOfMemoryError&) {
    // The estimate was short (or the device is shared): free every other model and try once more.
    report.evicted = models_.keys();
    models_.clear();
    got = models_.acquire(cacheKey(job), 0, load);
  }
  report.model = job.modelPath;
  report.hit = got.hit;
  report.evicted.insert(report.evicted.end(), got.evicted.begin(), got.evicted.end());
  if (!got.hit) report.loadMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return *got.model;
}

std::unique_ptr<RefinerPass> GenerationWorker::refinerPass(const GenerationJob& job, pipeline::TextToImage& base,
                                                           ModelCacheReport& report) {
  const RefinerNames names{job.refinerLabel, job.refinerLabel + " needs an SDXL base model"};
  RefinerPass::checkBase(names, base);  // before the refiner loads
  auto load = [&] {
    {
      std::lock_guard lock(mutex_);
      progress_.phase = "loading refiner";
    }
    return std::make_unique<pipeline::TextToImage>(ctx_, RefinerPass::refinerLoadOptions(loadOptions(job), job.refinerPath));
  };
  auto got = models_.acquire(job.refinerPath, modelFileBytes(job.refinerPath), load, {cacheKey(job)});
  report.evicted.insert(report.evicted.end(), got.evicted.begin(), got.evicted.end());
  // The same model may have run as a base with LoRAs: the refiner runs with its own only (the job's refinerLoras).
  got.model->setLoraDirectory("");
  got.model->setLoras(job.refinerLoras);
  return std::make_unique<RefinerPass>(*got.model, names, job.refinerStart, base);
}

void GenerationWorker::post(WorkerEvent event) {
  {
    std::lock_guard lock(mutex_);
    events_.push_back(std::move(event));
  }
  eventPosted_.notify_all();
}

void GenerationWorker::loop() {
  for (;;) {
    GenerationJob job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || pending_; });
      if (stop_) return;
      job = std::move(*pending_);
      pending_.reset();
    }
    runJob(job);
    {
      std::lock_guard lock(mutex_);
      progress_ = WorkerProgress{};
      events_.push_back(WorkerEvent{WorkerEvent::Kind::Finished, std::nullopt, ""});
      busy_ = false;  // under the lock: whoever sees Finished may start() the next job at once
    }
    eventPosted_.notify_all();
  }
}

void GenerationWorker::runJob(const GenerationJob& job) {
  // Every engine failure ends here as a message: a bad model, a bad size, out of device memory, a lost device.
  // The job's model is dropped after an error so the next job for it starts from a fresh load.
  ModelCacheReport report;
  report.model = job.modelPath;
  report.budgetBytes = models_.budget();
  try {
    pipeline::TextToImage* const textToImage = &model(job, report);
    // A changed LoRA set is re-merged into the loaded weights by the next generation, not reloaded.
    textToImage->setLoraDirectory(job.loraDir);
    textToImage->setLoras(job.loras);
    std::unique_ptr<RefinerPass> refiner;
    if (!job.refinerPath.empty()) refiner = refinerPass(job, *textToImage, report);
    // TAESD previews that cannot work with this model (another latent space or scale): the approximate ones, and
    // a note with the result, rather than a failed job.
    std::string previewNote;
    pipeline::PreviewDecoder previewKind = job.request.preview;
    if (job.previews && previewKind == pipeline::PreviewDecoder::Taesd) {
      if (std::string problem = textToImage->taesdPreviewProblem(); !problem.empty()) {
        previewKind = pipeline::PreviewDecoder::Approx;
        previewNote = problem + "; the live preview is the latent-to-RGB projection";
      }
    }
    for (int i = 0; i < job.batchCount; ++i) {
      pipeline::GenerationRequest request = job.request;
      request.floatPixels = false;  // the server and the GUI use only the 8-bit image
      request.preview = previewKind;
      request.seed = job.request.seed + uint64_t(i);
      {
        std::lock_guard lock(mutex_);
        progress_ = WorkerProgress{"generating", i + 1, job.batchCount, 0, request.steps, 0};
      }
      pipeline::GenerationHooks hooks;
      hooks.cancelRequested = [this] { return cancel_.load(); };
      hooks.progress = [this](int step, int steps) {
        auto now = std::chrono::steady_clock::now();
        std::lock_guard lock(mutex_);
        if (step == 1) firstStepTime_ = now;
        progress_.step = step;
        progress_.steps = steps;
        const double elapsed = std::chrono::duration<double>(now - firstStepTime_).count();
        // Steps after the first over the time since the first: excludes the one-off recording cost.
        progress_.itPerSec = step > 1 && elapsed > 0 ? (step - 1) / elapsed : 0;
        if (step == steps) progress_.phase = "decoding";
      };
      if (job.previews) {
        hooks.preview = [this](const pipeline::LatentPreview& p) {
          std::lock_guard lock(mutex_);
          preview_ = p;
        };
      }
      auto t0 = std::chrono::steady_clock::now();
      pipeline::Image image = textToImage->generate(refiner ? refiner->baseRequest(request) : request, hooks);
      if (refiner) image = refiner->refine(request, image, hooks);  // the last steps, and the decode
      GenerationResult result;
      result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      GenerationParams& p = result.params;
      p.prompt = request.prompt;
      p.negativePrompt = request.negativePrompt;
      p.steps = request.steps;
      p.sampler = request.sampler;
      p.karras = request.karras;
      p.exponential = request.exponential;
      p.sgmUniform = request.sgmUniform;
      p.cfgScale = request.cfgScale;
      p.seed = request.seed;
      p.width = image.width;
      p.height = image.height;
      p.modelName = textToImage->modelName();
      p.clipSkip = job.webuiClipSkip;
      p.promptSyntax = request.promptSyntax;
      if (request.initImage) p.denoisingStrength = request.strength;
      if (textToImage->isSdxlModel()) p.micro = request.micro;  // what conditioned it (docs/sdxl.md)
      if (refiner) {
        p.refinerName = refiner->modelName();
        p.refinerSwitchAt = refiner->start();
      }
      p.aestheticScores = refiner || textToImage->isSdxlRefiner();
      p.version = std::string("sdgen ") + SDGEN_VERSION;
      std::string warnings = previewNote;
      if (request.micro != pipeline::SdxlMicroConditioning{} && !textToImage->isSdxlModel())
        warnings += std::string(warnings.empty() ? "" : "; ") +
                    "the SDXL micro-conditioning (original size, crop, target size) is ignored by this model";
      for (auto& w : image.warnings) warnings += (warnings.empty() ? "" : "; ") + w;
      result.image = std::move(image);
      post(WorkerEvent{WorkerEvent::Kind::Result, std::move(result), warnings});
    }
    if (refiner) {  // measured after its job too; the base, measured next, is spared
      auto evicted = models_.resize(job.refinerPath, deviceBytes(refiner->pipeline()), {cacheKey(job)});
      report.evicted.insert(report.evicted.end(), evicted.begin(), evicted.end());
    }
    finishReport(report, textToImage);
  } catch (const pipeline::Cancelled& e) {
    finishReport(report, nullptr);
    post(WorkerEvent{WorkerEvent::Kind::Cancelled, std::nullopt, e.what()});
  } catch (const std::bad_alloc&) {
    models_.drop(cacheKey(job));
    if (!job.refinerPath.empty()) models_.drop(job.refinerPath);
    finishReport(report, nullptr);
    post(WorkerEvent{WorkerEvent::Kind::Error, std::nullopt, "out of host memory"});
  } catch (const lora::LoraError& e) {  // a bad LoRA set leaves the model as it was: keep it loaded
    finishReport(report, nullptr);
    post(WorkerEvent{WorkerEvent::Kind::Error, std::nullopt, e.what()});
  } catch (const std::exception& e) {
    models_.drop(cacheKey(job));
    if (!job.refinerPath.empty()) models_.drop(job.refinerPath);
    finishReport(report, nullptr);
    post(WorkerEvent{WorkerEvent::Kind::Error, std::nullopt, e.what()});
  }
}

void GenerationWorker::finishReport(ModelCacheReport& report, const pipeline::TextToImage* measured) {
  if (measured) {  // its arenas grew with the job: measure, then evict others if that broke the budget
    auto evicted = models_.resize(report.model, deviceBytes(*measured));
    report.evicted.insert(report.evicted.end(), evicted.begin(), evicted.end());
  }
  report.cached = models_.keys();
  report.cachedBytes = models_.totalBytes();
  MemoryPool& pool = ctx_.memory().pool(MemoryKind::Device);
  pool.sampleHeapUsage();
  const MemoryStats stats = pool.stats();
  report.devicePeakBytes = stats.peakHeapUsage;
  report.blocksPeakBytes = stats.peakBytesReserved;
  std::lock_guard lock(mutex_);
  modelReport_ = std::move(report);
}

}  // namespace sdgen::app
