#include "app/serve/engine.h"

#include <cmath>
#include <cstdio>

#include "app/png_writer.h"
#include "app/serve/img2img_request.h"

namespace sdgen::serve {

namespace {
ContextOptions contextOptions(std::optional<uint32_t> device) {
  ContextOptions o;
  o.deviceIndex = device;
  return o;
}
constexpr std::chrono::milliseconds kPoll{50};  // how soon a cancel reaches the worker
}  // namespace

Engine::Engine(int index, std::optional<uint32_t> device, JobQueue& queue, const std::string& warmupModel,
               uint64_t modelCacheBytes, RequestLog& log, std::string loraDir)
    : index_(index),
      loraDir_(std::move(loraDir)),
      queue_(queue),
      log_(log),
      ctx_(contextOptions(device)),
      worker_(ctx_, modelCacheBytes) {
  if (!warmupModel.empty()) {
    app::GenerationJob load;  // no images: only loads the model, so the first request does not wait for it
    load.modelPath = warmupModel;
    load.loraDir = loraDir_;
    load.batchCount = 0;
    worker_.start(std::move(load));
  }
  dispatcher_ = std::thread([this] { dispatch(); });
}

Engine::~Engine() {
  interrupt(JobOutcome::Cancelled);
  if (dispatcher_.joinable()) dispatcher_.join();
}

EngineStatus Engine::status() {
  EngineStatus s;
  s.index = index_;
  s.device = ctx_.info().name;
  s.progress = worker_.progress();
  std::lock_guard lock(mutex_);
  if (auto p = worker_.takePreview()) preview_ = std::move(p);
  s.job = current_;
  if (current_) s.preview = preview_;
  return s;
}

void Engine::interrupt(JobOutcome why) {
  std::lock_guard lock(mutex_);
  if (current_) current_->cancel(why);
}

void Engine::waitIdle() {
  while (worker_.busy()) {
    for (auto& ev : worker_.waitEvents(kPoll))
      if (ev.kind == app::WorkerEvent::Kind::Error)
        std::fprintf(stderr, "sdgen serve: engine %d: warm-up failed: %s\n", index_, ev.message.c_str());
  }
  logModelCache(nullptr);
}

void Engine::logModelCache(const std::shared_ptr<Job>& job) {
  auto report = worker_.takeModelReport();
  if (!report) return;
  auto mib = [](uint64_t b) { return std::round(double(b) / (1 << 20) * 10) / 10; };
  nlohmann::json line = {{"event", "model_cache"},
                         {"engine", index_},
                         {"job", job ? nlohmann::json(job->id) : nlohmann::json(nullptr)},
                         {"model", report->model},
                         {"cache", report->hit ? "hit" : "miss"},
                         {"load_ms", std::round(report->loadMs)},
                         {"evicted", report->evicted},
                         {"cached", report->cached},
                         {"cached_mib", mib(report->cachedBytes)},
                         {"budget_mib", mib(report->budgetBytes)},
                         {"device_peak_mib", mib(report->devicePeakBytes)},
                         {"blocks_peak_mib", mib(report->blocksPeakBytes)}};
  log_.event(line);
  if (job) job->setModelCache(report->hit);
}

void Engine::dispatch() {
  waitIdle();  // the warm-up load
  while (auto job = queue_.pop()) {
    if (job->cancelRequested()) {
      job->finish(job->cancelReason());
      continue;
    }
    {
      std::lock_guard lock(mutex_);
      current_ = job;
      preview_.reset();
    }
    run(job);
    std::lock_guard lock(mutex_);
    current_.reset();
    preview_.reset();
  }
}

void Engine::run(const std::shared_ptr<Job>& job) {
  const ImageRequest& r = job->request;
  app::GenerationJob g;
  g.modelPath = r.model.path;
  g.loraDir = loraDir_;  // the prompt's LoRA tags: re-merged into the loaded model when they change
  g.batchCount = r.images();
  g.webuiClipSkip = r.clipSkip;
  if (r.refiner) {
    g.refinerPath = r.refiner->path;
    g.refinerStart = r.refinerSwitchAt;
    g.refinerLabel = "refiner_checkpoint '" + r.refiner->title + "'";
  }
  pipeline::GenerationRequest& q = g.request;
  q.prompt = r.prompt;
  q.negativePrompt = r.negativePrompt;
  q.steps = r.steps;
  q.cfgScale = r.cfgScale;
  q.seed = job->firstSeed;
  q.width = r.width;
  q.height = r.height;
  q.sampler = r.sampler;
  q.karras = r.karras;
  q.exponential = r.exponential;
  q.sgmUniform = r.sgmUniform;
  q.clipSkip = r.clipSkip - 1;  // webui's 1 = the last layer; the pipeline counts layers skipped
  q.micro = r.micro;            // SDXL only (the worker records it in the PNG parameters for SDXL models)
  if (r.img2img) {  // what the CLI's -i/--strength/--mask give the pipeline (app/generate.cpp)
    q.initImage = r.img2img->initImage;
    q.mask = r.img2img->mask;
    q.strength = r.img2img->strength;
  }

  job->started(index_);
  if (!worker_.start(std::move(g))) {  // cannot happen: this thread is the worker's only client and waits for it
    job->finish(JobOutcome::Failed, "engine " + std::to_string(index_) + " is busy");
    return;
  }
  bool cancelSent = false, cancelled = false, finished = false;
  std::string error;
  while (!finished) {
    if (!cancelSent && job->cancelRequested()) {
      worker_.cancel();
      cancelSent = true;
    }
    for (auto& ev : worker_.waitEvents(kPoll)) {
      switch (ev.kind) {
        case app::WorkerEvent::Kind::Result: {
          const auto& res = *ev.result;
          JobImage image;
          image.seed = res.params.seed;
          image.infotext = app::formatGenerationParams(res.params);
          // The same bytes as the CLI's file: one encoder, one parameters text.
          image.png = app::encodePng(res.image.width, res.image.height, res.image.rgb,
                                     {app::PngText{app::kParametersKeyword, image.infotext}});
          job->addImage(std::move(image));
          break;
        }
        case app::WorkerEvent::Kind::Error: error = ev.message; break;
        case app::WorkerEvent::Kind::Cancelled: cancelled = true; break;
        case app::WorkerEvent::Kind::Finished: finished = true; break;
      }
    }
  }
  logModelCache(job);
  if (!error.empty()) job->finish(JobOutcome::Failed, error);
  else if (cancelled) job->finish(job->cancelReason());  // a cancel that came after the last image changes nothing
  else job->finish(JobOutcome::Done);
}

}  // namespace sdgen::serve
