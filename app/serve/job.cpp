#include "app/serve/job.h"

namespace sdgen::serve {

const char* outcomeName(JobOutcome o) {
  switch (o) {
    case JobOutcome::Pending: return "pending";
    case JobOutcome::Done: return "done";
    case JobOutcome::Interrupted: return "interrupted";
    case JobOutcome::Cancelled: return "cancelled";
    case JobOutcome::Failed: return "failed";
  }
  return "?";
}

Job::Job(uint64_t id_, ImageRequest request_, uint64_t firstSeed_)
    : id(id_), request(std::move(request_)), firstSeed(firstSeed_) {}

void Job::cancel(JobOutcome why) {
  std::lock_guard lock(mutex_);
  if (cancel_ == JobOutcome::Pending) cancel_ = why;  // the first reason stays
}

bool Job::cancelRequested() const {
  std::lock_guard lock(mutex_);
  return cancel_ != JobOutcome::Pending;
}

JobOutcome Job::cancelReason() const {
  std::lock_guard lock(mutex_);
  return cancel_;
}

bool Job::waitFinished(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return finished_.wait_for(lock, timeout, [&] { return state_.outcome != JobOutcome::Pending; });
}

void Job::started(int engine) {
  std::lock_guard lock(mutex_);
  state_.engine = engine;
  state_.started = Clock::now();
}

void Job::addImage(JobImage image) {
  std::lock_guard lock(mutex_);
  state_.images.push_back(std::move(image));
}

void Job::setModelCache(bool hit) {
  std::lock_guard lock(mutex_);
  state_.modelCacheHit = hit;
}

void Job::finish(JobOutcome outcome, std::string error) {
  {
    std::lock_guard lock(mutex_);
    if (state_.outcome != JobOutcome::Pending) return;  // finished once only
    state_.outcome = outcome;
    state_.error = std::move(error);
    state_.finished = Clock::now();
  }
  finished_.notify_all();
}

Job::State Job::state() const {
  std::lock_guard lock(mutex_);
  return state_;
}

}  // namespace sdgen::serve
