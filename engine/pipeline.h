#pragma once
// Compute pipelines built from SPIR-V, a persisted VkPipelineCache, and the kernel registry that compiles
// each distinct KernelSource once (in parallel when many are requested together).
#include <vulkan/vulkan.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "engine/slang_compiler.h"

namespace sdgen {

class Device;
class CompileLog;

// Every sdgen kernel receives one push-constant block: the address of its parameter block and of the
// sequence's uniform slots (runtime scalars such as the timestep, changeable between replays), then a copy of
// the parameter block's first words (as many as the device's push constants hold: pushParamWords). A kernel reads
// those words from the push constants (shaders/sdgen.slang paramU32), which the compiler knows nothing writes:
// it keeps or re-reads them freely, where a word read from memory must be loaded again after every store the
// kernel makes (the parameter block could alias the output). Measured on the H200: -0.05 ms per SD 1.5 step
// (docs/perf.md, session 25).
inline constexpr uint32_t kMaxPushParamWords = 60;
struct PushConstants {
  VkDeviceAddress params = 0;
  VkDeviceAddress uniforms = 0;
  uint32_t words[kMaxPushParamWords] = {};
};
// Bytes pushed with `words` parameter words (the two addresses first).
inline uint32_t pushConstantBytes(uint32_t words) { return uint32_t(2 * sizeof(VkDeviceAddress)) + 4 * words; }
// Parameter words pushed on a device that holds `maxPushConstantsSize` bytes of push constants (Vulkan
// guarantees 128: 28 words; NVIDIA and most GPUs 256: 60). Kernels are compiled for it (SDGEN_PUSH_WORDS).
inline uint32_t pushParamWords(uint32_t maxPushConstantsSize) {
  const uint32_t fixed = pushConstantBytes(0);
  return maxPushConstantsSize <= fixed ? 0 : std::min(kMaxPushParamWords, (maxPushConstantsSize - fixed) / 4);
}

class ComputePipeline {
 public:
  ComputePipeline(Device& device, VkPipelineCache cache, VkPipelineLayout layout, const std::vector<uint32_t>& spirv,
                  const KernelSource& source);
  ~ComputePipeline();
  ComputePipeline(const ComputePipeline&) = delete;
  ComputePipeline& operator=(const ComputePipeline&) = delete;

  VkPipeline handle() const { return pipeline_; }
  const std::string& name() const { return name_; }

 private:
  Device& device_;
  VkShaderModule module_ = VK_NULL_HANDLE;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
  std::string name_;
};

// A pipeline that is ready or still being compiled by the registry's workers. CommandSequence records
// dispatches with these and waits for them only when it ends, so a graph's kernels compile in parallel
// while it is recorded (a cold start compiles hundreds of specializations).
class KernelRegistry;

class KernelRef {
 public:
  KernelRef(const ComputePipeline& ready);  // NOLINT: a ready pipeline is a KernelRef
  // `reported` is shared by every reference to one compile (KernelRegistry keeps it beside the pending future).
  KernelRef(std::shared_future<const ComputePipeline*> pending, std::string name, KernelRegistry* registry = nullptr,
            std::shared_ptr<const KernelSource> source = nullptr,
            std::shared_ptr<std::atomic<bool>> reported = nullptr);
  // The pipeline, waiting for its compilation; rethrows the compile error (which names the kernel). A failure
  // is reported once per compile: once any reference to it has thrown, the next wait() of every reference to
  // it asks the registry again (which dropped the failed entry), so a transient failure (out of memory creating
  // the pipeline) does not stick to a recorded command sequence that is ended again later. A reference is
  // waited on by the thread that records it (it is not itself thread-safe).
  const ComputePipeline& wait() const;
  const std::string& name() const { return name_; }

 private:
  mutable std::shared_future<const ComputePipeline*> future_;
  std::string name_;
  KernelRegistry* registry_ = nullptr;
  std::shared_ptr<const KernelSource> source_;
  mutable std::shared_ptr<std::atomic<bool>> reported_;
};

class KernelRegistry {
 public:
  KernelRegistry(Device& device, SlangCompiler& compiler);
  ~KernelRegistry();  // finishes or drops queued compiles, saves the pipeline cache
  KernelRegistry(const KernelRegistry&) = delete;
  KernelRegistry& operator=(const KernelRegistry&) = delete;

  // The pipeline for a kernel, compiled by a worker on first request (one request per distinct kernel; later
  // ones share it). Returns at once.
  KernelRef request(const KernelSource& source);
  // The same, waiting for the pipeline.
  const ComputePipeline& get(const KernelSource& source) { return request(source).wait(); }
  // Compiles all kernels concurrently and creates their pipelines; waits for them.
  void prepare(const std::vector<KernelSource>& sources);
  VkPipelineLayout layout() const { return layout_; }
  uint32_t pushWords() const { return pushWords_; }  // parameter words in every dispatch's push constants
  SlangCompiler& compiler() { return compiler_; }
  size_t size() const;
  int workerCount() const { return maxWorkers_; }
  // If the compile of `key` (KernelSource::requestKey) is still queued, runs it on the calling thread and
  // returns true. KernelRef::wait calls it: a thread that needs one kernel now (the autotune timing a
  // problem's candidates, a sequence being ended) compiles it itself instead of idling until the workers
  // reach it behind every kernel requested before (the queue is first come, first served).
  bool compileQueuedNow(const std::string& key);
  // The keys of the compiles not started yet, in the order the workers take them (tests).
  std::vector<std::string> queuedKeys() const;
  // Waits until every compile requested so far has finished or failed; a failure stays with the requests'
  // own waits (tests: a fault test reads its operation counts once the compiles queued ahead have run).
  void waitForRequested() const;

  // While one lives on a thread, the kernels that thread requests go to the front of the compile queue: the
  // conv autotune needs a problem's candidates now, ahead of every graph kernel requested before them (else
  // each problem's timing waits for that backlog; on the H100's cold SD 1.5 run that was 6 s of the 7 s of tuning).
  class UrgentRequests {
   public:
    UrgentRequests();
    ~UrgentRequests();
    UrgentRequests(const UrgentRequests&) = delete;
    UrgentRequests& operator=(const UrgentRequests&) = delete;

   private:
    bool previous_;
  };

 private:
  std::string cachePath() const;
  void workerLoop();
  Device& device_;
  SlangCompiler& compiler_;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  uint32_t pushWords_ = 0;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  std::unique_ptr<CompileLog> compileLog_;  // SDGEN_COMPILE_LOG=1: each compile's time, printed when destroyed
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::unique_ptr<ComputePipeline>> pipelines_;
  struct Pending {
    std::shared_future<const ComputePipeline*> future;
    std::shared_ptr<std::atomic<bool>> reported;  // a failure of this compile was rethrown (KernelRef::wait)
  };
  std::unordered_map<std::string, Pending> pending_;
  // Compile workers, started on demand up to maxWorkers_ (SDGEN_COMPILE_THREADS, else the core count).
  std::condition_variable queued_;
  struct Job {
    std::string key;
    std::function<void()> run;
  };
  std::deque<Job> queue_;
  std::vector<std::thread> workers_;
  int maxWorkers_ = 1, idleWorkers_ = 0;
  bool stopping_ = false;
};

}  // namespace sdgen
