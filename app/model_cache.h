#pragma once
// The loaded models one engine keeps (GenerationWorker): least recently used first out, within a memory budget.
// sdgen serve sizes it with --model-cache-mb, so switching A -> B -> A does not load A twice; sdgen-gui keeps
// one model (budget 0). The models a job is using are never evicted: only `acquire` and `resize` evict, both
// on the engine's one worker thread, and both spare the model they were called for and the ones named in `spare`
// (a base model while its job's SDXL refiner loads).
//
// Sizes: before a load, what the model's files take on disk (an upper bound of its weights, which the engine
// may store in fp16); after a job, what it holds on the device (weights, arenas, scratch: measured).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <vector>

namespace sdgen::app {

// Bytes of the weight files of a model (a .safetensors file, or the .safetensors/.bin files of a diffusers
// folder): the estimate of a model not loaded yet. 0 when unreadable.
uint64_t modelFileBytes(const std::string& path);

template <class Model>
class ModelCache {
 public:
  explicit ModelCache(uint64_t budgetBytes) : budget_(budgetBytes) {}

  struct Acquired {
    Model* model = nullptr;
    bool hit = false;
    std::vector<std::string> evicted;  // keys evicted to make room, oldest first
  };

  // The model for `key`, loaded by `load` on a miss after evicting the least recently used others (but `spare`)
  // until `estimateBytes` more fit the budget. `load` may throw; the cache is then as it was, minus the evictions.
  Acquired acquire(const std::string& key, uint64_t estimateBytes, const std::function<std::unique_ptr<Model>()>& load,
                   const std::vector<std::string>& spare = {}) {
    Acquired a;
    if (auto it = find(key); it != entries_.end()) {
      entries_.splice(entries_.begin(), entries_, it);  // most recently used first
      a.model = entries_.front().model.get();
      a.hit = true;
      return a;
    }
    a.evicted = evictFor(key, estimateBytes, spare);
    entries_.push_front(Entry{key, load(), estimateBytes});
    a.model = entries_.front().model.get();
    return a;
  }

  // After a job: `key`'s measured size; evicts the least recently used others (but `spare`) until the budget
  // holds.
  std::vector<std::string> resize(const std::string& key, uint64_t bytes, const std::vector<std::string>& spare = {}) {
    if (auto it = find(key); it != entries_.end()) it->bytes = bytes;
    return evictFor(key, 0, spare);
  }

  // After a failure: the next job for `key` loads it afresh.
  void drop(const std::string& key) {
    if (auto it = find(key); it != entries_.end()) entries_.erase(it);
  }
  void clear() { entries_.clear(); }

  uint64_t budget() const { return budget_; }
  uint64_t totalBytes() const {
    uint64_t total = 0;
    for (const auto& e : entries_) total += e.bytes;
    return total;
  }
  // Most recently used first.
  std::vector<std::string> keys() const {
    std::vector<std::string> k;
    for (const auto& e : entries_) k.push_back(e.key);
    return k;
  }

 private:
  struct Entry {
    std::string key;
    std::unique_ptr<Model> model;
    uint64_t bytes = 0;
  };

  typename std::list<Entry>::iterator find(const std::string& key) {
    return std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.key == key; });
  }

  // Evicts from the least recently used end, sparing `keep` and `spare`, until totalBytes() + extra fits the budget.
  std::vector<std::string> evictFor(const std::string& keep, uint64_t extra, const std::vector<std::string>& spare) {
    std::vector<std::string> evicted;
    auto it = entries_.end();
    while (totalBytes() + extra > budget_ && it != entries_.begin()) {
      --it;
      if (it->key == keep || std::find(spare.begin(), spare.end(), it->key) != spare.end()) continue;
      evicted.push_back(it->key);
      it = entries_.erase(it);  // the model is freed here, before the next one loads
    }
    return evicted;
  }

  uint64_t budget_;
  std::list<Entry> entries_;
};

}  // namespace sdgen::app
