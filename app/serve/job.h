#pragma once
// One txt2img request on its way through the server: made by the HTTP handler, queued, run by one engine,
// and waited for by the handler. Both sides hold it through a shared_ptr, so a client that goes away (its
// handler returns) leaves nothing dangling for the engine, and the reverse.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "app/serve/txt2img_request.h"

namespace sdgen::serve {

struct JobImage {
  std::vector<uint8_t> png;  // with the "parameters" text chunk, as the CLI writes it
  uint64_t seed = 0;
  std::string infotext;      // that chunk's text
};

enum class JobOutcome {
  Pending,      // queued or running
  Done,         // every image made
  Interrupted,  // POST /interrupt: the images made before it (possibly none)
  Cancelled,    // the client went away, or the server is shutting down
  Failed,       // the engine failed (bad model, out of memory): `error` says why
};

const char* outcomeName(JobOutcome o);

class Job {
 public:
  using Clock = std::chrono::steady_clock;

  Job(uint64_t id, ImageRequest request, uint64_t firstSeed);

  const uint64_t id;
  const ImageRequest request;
  const uint64_t firstSeed;  // image i gets firstSeed + i, as webui's all_seeds
  const Clock::time_point created = Clock::now();

  // Client side.
  // Stop the job: a queued job is skipped, a running one stops after the current step.
  void cancel(JobOutcome why);
  bool cancelRequested() const;
  JobOutcome cancelReason() const;
  // True once finished; waits at most `timeout`.
  bool waitFinished(std::chrono::milliseconds timeout);

  // Engine side.
  void started(int engine);
  void addImage(JobImage image);
  void setModelCache(bool hit);  // whether its model was loaded already (the engine's model cache)
  void finish(JobOutcome outcome, std::string error = {});

  // Snapshot of the results (complete once finished).
  struct State {
    JobOutcome outcome = JobOutcome::Pending;
    int engine = -1;  // which engine ran it; -1 before it started
    std::vector<JobImage> images;
    std::string error;
    std::optional<bool> modelCacheHit;  // none before the engine got the model (or when it failed to load)
    Clock::time_point started, finished;
  };
  State state() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable finished_;
  State state_;
  JobOutcome cancel_ = JobOutcome::Pending;  // Pending: no cancel asked
};

}  // namespace sdgen::serve
