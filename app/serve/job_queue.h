#pragma once
// The bounded queue between the HTTP handlers and the engines. Bounded so that a burst of clients gets a
// quick 429 instead of waiting behind work the server cannot do in time; the engines (one per --devices entry)
// each pull the next job when they are free, which spreads the load without any scheduling of our own.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "app/serve/job.h"

namespace sdgen::serve {

class JobQueue {
 public:
  explicit JobQueue(size_t capacity) : capacity_(capacity) {}

  enum class PushResult { Queued, Full, ShuttingDown };
  PushResult push(std::shared_ptr<Job> job);

  // The oldest job; blocks while the queue is empty; nullptr once shut down.
  std::shared_ptr<Job> pop();

  // Takes a job out (its client went away) so it stops holding a place; false when an engine has it already.
  bool remove(const std::shared_ptr<Job>& job);

  // Wakes every pop() with nullptr and refuses new jobs; returns the jobs still waiting.
  std::vector<std::shared_ptr<Job>> shutdown();

  size_t size() const;
  size_t capacity() const { return capacity_; }

 private:
  const size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable available_;
  std::deque<std::shared_ptr<Job>> jobs_;
  bool shutdown_ = false;
};

}  // namespace sdgen::serve
