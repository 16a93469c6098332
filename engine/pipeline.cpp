#include "engine/pipeline.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <exception>
#include <thread>

#include "engine/compile_log.h"
#include "engine/device.h"
#include "engine/error.h"
#include "engine/fault_injection.h"
#include "engine/file_util.h"
#include "engine/pipeline_stats.h"

namespace sdgen {

ComputePipeline::ComputePipeline(Device& device, VkPipelineCache cache, VkPipelineLayout layout,
                                 const std::vector<uint32_t>& spirv, const KernelSource& source)
    : device_(device), name_(source.displayName()) {
  VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  mi.codeSize = spirv.size() * 4;
  mi.pCode = spirv.data();
  vkCheck(vkCreateShaderModule(device.handle(), &mi, nullptr, &module_), ("vkCreateShaderModule " + name_).c_str());

  VkPipelineShaderStageRequiredSubgroupSizeCreateInfo subgroup{
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO};
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = module_;
  ci.stage.pName = "main";
  if (source.requiredSubgroupSize) {
    const auto& info = device.info();
    if (!info.subgroupSizeControl || source.requiredSubgroupSize < info.minSubgroupSize ||
        source.requiredSubgroupSize > info.maxSubgroupSize)
      throw Error("kernel " + name_ + " requires subgroup size " + std::to_string(source.requiredSubgroupSize) +
                  ", which device '" + info.name + "' cannot provide");
    subgroup.requiredSubgroupSize = source.requiredSubgroupSize;
    ci.stage.pNext = &subgroup;
  }
  ci.layout = layout;
  if (device.info().pipelineStats) ci.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  VkResult r = injectFault(FaultKind::Pipeline) ? VK_ERROR_OUT_OF_HOST_MEMORY
                                                : vkCreateComputePipelines(device.handle(), cache, 1, &ci, nullptr, &pipeline_);
  if (r != VK_SUCCESS) {
    vkDestroyShaderModule(device.handle(), module_, nullptr);
    throwVkError(r, ("vkCreateComputePipelines " + name_).c_str());
  }
  if (device.info().pipelineStats) printPipelineStats(device.handle(), pipeline_, name_);
}

ComputePipeline::~ComputePipeline() {
  vkDestroyPipeline(device_.handle(), pipeline_, nullptr);
  vkDestroyShaderModule(device_.handle(), module_, nullptr);
}

KernelRegistry::KernelRegistry(Device& device, SlangCompiler& compiler) : device_(device), compiler_(compiler) {
  // One slangc per core; SDGEN_COMPILE_THREADS overrides (1: the serial order, for debugging).
  maxWorkers_ = int(std::clamp(std::thread::hardware_concurrency(), 1u, 64u));
  if (const char* v = std::getenv("SDGEN_COMPILE_THREADS"); v && std::atoi(v) > 0) maxWorkers_ = std::min(std::atoi(v), 64);
  if (CompileLog::requested()) compileLog_ = std::make_unique<CompileLog>();
  pushWords_ = pushParamWords(device.info().maxPushConstantsSize);
  // SDGEN_PUSH_PARAM_WORDS=N pushes at most N parameter words (0: every word from memory, as before session 25).
  if (const char* v = std::getenv("SDGEN_PUSH_PARAM_WORDS"); v && *v)
    pushWords_ = std::min<uint32_t>(pushWords_, uint32_t(std::clamp(std::atoi(v), 0, int(kMaxPushParamWords))));
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, pushConstantBytes(pushWords_)};
  VkPipelineLayoutCreateInfo li{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  li.pushConstantRangeCount = 1;
  li.pPushConstantRanges = &range;
  vkCheck(vkCreatePipelineLayout(device.handle(), &li, nullptr, &layout_), "vkCreatePipelineLayout");

  // Checksummed: the driver validates the header (vendor, device, UUID) and ignores a foreign blob, but what
  // follows the header is the driver's own, read without checks that a damaged file could not get past.
  auto data = readFileChecked(cachePath());
  VkPipelineCacheCreateInfo ci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  if (data) {
    ci.initialDataSize = data->size();
    ci.pInitialData = data->data();
  }
  if (vkCreatePipelineCache(device.handle(), &ci, nullptr, &cache_) != VK_SUCCESS) {
    ci.initialDataSize = 0;
    ci.pInitialData = nullptr;
    vkCheck(vkCreatePipelineCache(device.handle(), &ci, nullptr, &cache_), "vkCreatePipelineCache");
  }
}

std::string KernelRegistry::cachePath() const {
  char uuid[2 * VK_UUID_SIZE + 1];
  for (unsigned i = 0; i < VK_UUID_SIZE; ++i) std::snprintf(uuid + 2 * i, 3, "%02x", device_.info().pipelineCacheUUID[i]);
  return compiler_.cacheDir() + "/pipelines-" + uuid + ".bin";
}

KernelRegistry::~KernelRegistry() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    queue_.clear();
  }
  queued_.notify_all();
  for (std::thread& t : workers_) t.join();
  size_t size = 0;
  if (vkGetPipelineCacheData(device_.handle(), cache_, &size, nullptr) == VK_SUCCESS && size > 0) {
    std::string data(size, '\0');
    if (vkGetPipelineCacheData(device_.handle(), cache_, &size, data.data()) == VK_SUCCESS) {
      try {
        writeFileChecked(cachePath(), data);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "sdgen: warning: pipeline cache not saved: %s\n", e.what());
      }
    }
  }
  if (compileLog_) std::fputs(compileLog_->report().c_str(), stderr);
  pipelines_.clear();
  vkDestroyPipelineCache(device_.handle(), cache_, nullptr);
  vkDestroyPipelineLayout(device_.handle(), layout_, nullptr);
}

KernelRef::KernelRef(const ComputePipeline& ready) : name_(ready.name()) {
  std::promise<const ComputePipeline*> p;
  p.set_value(&ready);
  future_ = p.get_future().share();
}

KernelRef::KernelRef(std::shared_future<const ComputePipeline*> pending, std::string name, KernelRegistry* registry,
                     std::shared_ptr<const KernelSource> source, std::shared_ptr<std::atomic<bool>> reported)
    : future_(std::move(pending)), name_(std::move(name)), registry_(registry), source_(std::move(source)),
      reported_(std::move(reported)) {}

const ComputePipeline& KernelRef::wait() const {
  if (reported_ && reported_->load() && registry_ && source_) {
    KernelRef again = registry_->request(*source_);
    future_ = std::move(again.future_);
    reported_ = std::move(again.reported_);
  }
  if (registry_ && source_ && future_.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
    registry_->compileQueuedNow(source_->requestKey());  // not started yet: compile it here rather than idle
  try {
    return *future_.get();
  } catch (...) {
    if (reported_) reported_->store(true);
    throw;
  }
}

namespace {
thread_local bool urgentRequests = false;  // KernelRegistry::UrgentRequests on this thread
}  // namespace

KernelRegistry::UrgentRequests::UrgentRequests() : previous_(urgentRequests) { urgentRequests = true; }
KernelRegistry::UrgentRequests::~UrgentRequests() { urgentRequests = previous_; }

std::vector<std::string> KernelRegistry::queuedKeys() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> keys;
  for (const Job& j : queue_) keys.push_back(j.key);
  return keys;
}

void KernelRegistry::waitForRequested() const {
  std::vector<std::shared_future<const ComputePipeline*>> futures;
  {
    std::lock_guard lock(mutex_);
    for (const auto& entry : pending_) futures.push_back(entry.second.future);
  }
  for (const auto& f : futures) f.wait();  // a dropped compile (registry stopping) is ready too: a broken promise
}

KernelRef KernelRegistry::request(const KernelSource& source) {
  // The registry's key is the request's own (KernelSource::requestKey: compileQueuedNow, queuedKeys); every
  // kernel is compiled for the parameter words this registry pushes (shaders/sdgen.slang SDGEN_PUSH_WORDS), a
  // define that the compiler's cache key holds.
  const std::string key = source.requestKey();
  std::unique_lock lock(mutex_);
  if (auto it = pipelines_.find(key); it != pipelines_.end()) return KernelRef(*it->second);
  auto retry = std::make_shared<const KernelSource>(source);
  if (auto it = pending_.find(key); it != pending_.end())
    return KernelRef(it->second.future, source.displayName(), this, retry, it->second.reported);
  auto task = std::make_shared<std::packaged_task<const ComputePipeline*()>>([this, source, key] {
    std::exception_ptr failure;
    const ComputePipeline* ready = nullptr;
    try {
      KernelSource compiled = source;
      compiled.defines.emplace_back("SDGEN_PUSH_WORDS", std::to_string(pushWords_));
      const auto t0 = std::chrono::steady_clock::now();
      auto spirv = compiler_.compile(compiled);
      const auto t1 = std::chrono::steady_clock::now();
      auto pipeline = std::make_unique<ComputePipeline>(device_, cache_, layout_, spirv, source);
      if (compileLog_) {
        using Ms = std::chrono::duration<double, std::milli>;
        const SlangCompiler::Breakdown b = SlangCompiler::lastOnThisThread();
        compileLog_->add(source.displayName(), Ms(t1 - t0).count(), Ms(std::chrono::steady_clock::now() - t1).count(),
                         b.sessionMs, b.modulesMs);
      }
      std::lock_guard lock(mutex_);
      ready = pipelines_.emplace(key, std::move(pipeline)).first->second.get();
    } catch (...) {
      failure = std::current_exception();
    }
    std::lock_guard lock(mutex_);
    pending_.erase(key);  // a failed kernel is compiled again (and fails again, with its message) when requested
    if (failure) std::rethrow_exception(failure);
    return ready;
  });
  std::shared_future<const ComputePipeline*> future = task->get_future().share();
  auto reported = std::make_shared<std::atomic<bool>>(false);
  pending_.emplace(key, Pending{future, reported});
  if (urgentRequests)
    queue_.push_front(Job{key, [task] { (*task)(); }});
  else
    queue_.push_back(Job{key, [task] { (*task)(); }});
  if (idleWorkers_ == 0 && int(workers_.size()) < maxWorkers_) workers_.emplace_back([this] { workerLoop(); });
  lock.unlock();
  queued_.notify_one();
  return KernelRef(std::move(future), source.displayName(), this, std::move(retry), std::move(reported));
}

void KernelRegistry::workerLoop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    ++idleWorkers_;
    const auto work = [this] { return stopping_ || !queue_.empty(); };
    if (!queued_.wait_for(lock, std::chrono::seconds(2), work)) {
      // Nothing asked for in 2 s: the burst of compiles is over, and each in-process compiler session holds
      // ~165 MB of host memory until freed (the next burst makes new ones, ~0.2 s each).
      lock.unlock();
      compiler_.trimIdleSessions();
      lock.lock();
      queued_.wait(lock, work);
    }
    --idleWorkers_;
    if (stopping_) return;  // queued compiles are dropped: their futures report a broken promise
    std::function<void()> job = std::move(queue_.front().run);
    queue_.pop_front();
    lock.unlock();
    job();  // the packaged task keeps its own exception
    lock.lock();
  }
}

bool KernelRegistry::compileQueuedNow(const std::string& key) {
  std::unique_lock lock(mutex_);
  if (stopping_) return false;
  auto it = std::find_if(queue_.begin(), queue_.end(), [&](const Job& j) { return j.key == key; });
  if (it == queue_.end()) return false;  // compiled, being compiled by a worker, or failed
  std::function<void()> job = std::move(it->run);
  queue_.erase(it);
  lock.unlock();
  job();  // fulfils the shared future every reference waits on (or stores its error)
  return true;
}

void KernelRegistry::prepare(const std::vector<KernelSource>& sources) {
  std::vector<KernelRef> refs;
  refs.reserve(sources.size());
  for (const KernelSource& s : sources) refs.push_back(request(s));
  std::exception_ptr failure;
  for (const KernelRef& r : refs) {  // wait for all of them, then report the first failure
    try {
      r.wait();
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
}

size_t KernelRegistry::size() const {
  std::lock_guard lock(mutex_);
  return pipelines_.size();
}

}  // namespace sdgen
