#include "engine/context.h"

#include <algorithm>
#include <cstring>

#include "engine/command_sequence.h"
#include "engine/error.h"
#include "engine/file_util.h"

namespace sdgen {

static constexpr uint64_t kStagingChunk = 32ull << 20;

Context::Context(const ContextOptions& options) {
  InstanceOptions io;
  io.validation = options.validation.value_or(validationRequestedByEnvironment());
  io.extensions = options.instanceExtensions;
  instance_ = std::make_unique<Instance>(io);
  DeviceOptions dopt;
  dopt.index = options.deviceIndex;
  dopt.extensions = options.deviceExtensions;
  if (options.queueFamilyFilter) {
    VkInstance instance = instance_->handle();
    dopt.queueFamilyFilter = [instance, filter = options.queueFamilyFilter](VkPhysicalDevice p, uint32_t family) {
      return filter(instance, p, family);
    };
    dopt.queueFamilyRequirement = options.queueFamilyRequirement;
  }
  device_ = std::make_unique<Device>(*instance_, dopt);
  memory_ = std::make_unique<MemoryManager>(*device_);
  compiler_ = std::make_unique<SlangCompiler>(options.slangc.empty() ? defaultSlangc() : options.slangc,
                                              options.shaderDir.empty() ? defaultShaderDir() : options.shaderDir,
                                              options.cacheDir.empty() ? defaultCacheDir() : options.cacheDir);
  kernels_ = std::make_unique<KernelRegistry>(*device_, *compiler_);
}

Context::~Context() {
  if (device_) vkDeviceWaitIdle(device_->handle());
  kernels_.reset();
  compiler_.reset();
  memory_.reset();
  device_.reset();
  instance_.reset();
}

void Context::upload(const Allocation& dst, uint64_t offset, std::span<const uint8_t> bytes) {
  if (offset + bytes.size() > dst.size()) throw Error("upload: range outside the destination allocation");
  Allocation staging =
      memory_->allocate(MemoryKind::Staging, std::min<uint64_t>(kStagingChunk, std::max<size_t>(bytes.size(), 4)),
                        "upload staging");
  for (uint64_t done = 0; done < bytes.size();) {
    uint64_t n = std::min<uint64_t>(staging.size(), bytes.size() - done);
    std::memcpy(staging.mapped(), bytes.data() + done, n);
    CommandSequence seq(*this);
    seq.copy(staging, 0, dst, offset + done, n, "upload");
    seq.run();
    done += n;
  }
}

void Context::download(const Allocation& src, uint64_t offset, std::span<uint8_t> bytes) {
  if (offset + bytes.size() > src.size()) throw Error("download: range outside the source allocation");
  Allocation staging =
      memory_->allocate(MemoryKind::Readback, std::min<uint64_t>(kStagingChunk, std::max<size_t>(bytes.size(), 4)),
                        "download staging");
  for (uint64_t done = 0; done < bytes.size();) {
    uint64_t n = std::min<uint64_t>(staging.size(), bytes.size() - done);
    CommandSequence seq(*this);
    seq.copy(src, offset + done, staging, 0, n, "download");
    seq.run();
    std::memcpy(bytes.data() + done, staging.mapped(), n);
    done += n;
  }
}

}  // namespace sdgen
