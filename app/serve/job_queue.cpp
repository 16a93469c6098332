#include "app/serve/job_queue.h"

#include <algorithm>

namespace sdgen::serve {

JobQueue::PushResult JobQueue::push(std::shared_ptr<Job> job) {
  {
    std::lock_guard lock(mutex_);
    if (shutdown_) return PushResult::ShuttingDown;
    if (jobs_.size() >= capacity_) return PushResult::Full;
    jobs_.push_back(std::move(job));
  }
  available_.notify_one();
  return PushResult::Queued;
}

std::shared_ptr<Job> JobQueue::pop() {
  std::unique_lock lock(mutex_);
  available_.wait(lock, [&] { return shutdown_ || !jobs_.empty(); });
  if (shutdown_) return nullptr;
  auto job = std::move(jobs_.front());
  jobs_.pop_front();
  return job;
}

bool JobQueue::remove(const std::shared_ptr<Job>& job) {
  std::lock_guard lock(mutex_);
  auto it = std::find(jobs_.begin(), jobs_.end(), job);
  if (it == jobs_.end()) return false;
  jobs_.erase(it);
  return true;
}

std::vector<std::shared_ptr<Job>> JobQueue::shutdown() {
  std::vector<std::shared_ptr<Job>> left;
  {
    std::lock_guard lock(mutex_);
    shutdown_ = true;
    left.assign(jobs_.begin(), jobs_.end());
    jobs_.clear();
  }
  available_.notify_all();
  return left;
}

size_t JobQueue::size() const {
  std::lock_guard lock(mutex_);
  return jobs_.size();
}

}  // namespace sdgen::serve
