#pragma once
// One engine: a Vulkan context on one device, the generation worker thread that owns the loaded model (shared
// with sdgen-gui: app/generation_worker.h), and a dispatcher thread that pulls jobs from the shared queue, runs
// them on the worker, turns its results into PNGs and hands them to the job. `--devices 0,1` makes one per
// GPU; a device may be listed twice (two engines, two contexts on one device).
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "app/generation_worker.h"
#include "app/serve/job_queue.h"
#include "app/serve/request_log.h"
#include "engine/context.h"

namespace sdgen::serve {

struct EngineStatus {
  int index = 0;
  std::string device;  // the device's name
  std::shared_ptr<Job> job;  // the job running, if any
  app::WorkerProgress progress;
  std::optional<pipeline::LatentPreview> preview;  // the newest live preview of that job
};

class Engine {
 public:
  // Opens the device (nullopt: sdgen's usual choice) and starts loading `warmupModel` (empty: none) before
  // taking jobs. `modelCacheBytes`: the loaded models it keeps (--model-cache-mb). `log`: the model cache's
  // hit, miss and eviction lines. Prompts' <lora:NAME:SCALE> tags are looked up in `loraDir` (empty: a tag is
  // an error of its request). Throws sdgen::Error when the device cannot be opened.
  Engine(int index, std::optional<uint32_t> device, JobQueue& queue, const std::string& warmupModel,
         uint64_t modelCacheBytes, RequestLog& log, std::string loraDir = "");
  ~Engine();  // the queue must be shut down first (so the dispatcher's pop returns); cancels a running job
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  int index() const { return index_; }
  EngineStatus status();
  // POST /interrupt (Interrupted: the running job stops after its current step and returns what it has) and
  // shutdown (Cancelled).
  void interrupt(JobOutcome why = JobOutcome::Interrupted);

 private:
  void dispatch();
  void run(const std::shared_ptr<Job>& job);
  void waitIdle();
  // One "model_cache" log line for the job that just finished on the worker (job: null for the warm-up).
  void logModelCache(const std::shared_ptr<Job>& job);

  const int index_;
  const std::string loraDir_;
  JobQueue& queue_;
  RequestLog& log_;
  Context ctx_;
  app::GenerationWorker worker_;
  std::mutex mutex_;
  std::shared_ptr<Job> current_;
  std::optional<pipeline::LatentPreview> preview_;
  std::thread dispatcher_;  // last: starts once everything above exists
};

}  // namespace sdgen::serve
