#pragma once
// Named weight tensors of one model component (text encoder, UNet or VAE), always under the diffusers
// parameter names ("down_blocks.0.resnets.0.conv1.weight"), whatever the file layout: a diffusers folder
// reads them as they are, a single-file LDM checkpoint maps each name to its own key (and splits, reshapes or
// renames where the layouts differ). Tensors are read one at a time, converted to fp32 on the way, so peak
// host memory stays at the largest tensor; or, through raw(), located as the file stores them, for a loader that
// streams the bytes to the device and converts there (nn::WeightStream). Every error is an sdgen::Error naming
// the tensor and the file.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "models/safetensors.h"

namespace sdgen::models {

// A weight tensor's stored bytes: bytes [begin, begin + bytes) of `tensor` in `file` (the whole tensor, or a
// block of rows of it), a floating-point dtype (F32, F16, BF16), little-endian, row-major in the exposed shape.
struct RawWeight {
  std::shared_ptr<const SafetensorsFile> file;
  const TensorInfo* tensor = nullptr;
  uint64_t begin = 0, bytes = 0;
  TensorDType dtype = TensorDType::F32;
  std::string name;  // the exposed name, as messages quote it

  uint64_t elements() const { return bytes / tensorDTypeSize(dtype); }
  // Copies the bytes into `out` (exactly `bytes` long); a file that shrank since it was opened is an error
  // naming the file and the tensor.
  void read(std::span<uint8_t> out) const { file->readBytes(*tensor, begin, out); }
  // The values as fp32, converted on the host exactly as WeightSource::read() converts them.
  std::vector<float> readAsF32() const;
};

class WeightSource {
 public:
  virtual ~WeightSource() = default;
  // Where the weights come from, for messages: a file path (or "FILE (prefix 'model.diffusion_model.')").
  virtual std::string describe() const = 0;
  virtual bool contains(std::string_view name) const = 0;
  // Throws "tensor 'NAME' not found in FILE" when absent.
  virtual std::vector<int64_t> shape(std::string_view name) const = 0;
  // Reads the tensor as fp32; throws "tensor 'NAME' in 'FILE' has shape [..], expected [..]" when its shape
  // differs from `expected` (an expected shape with the same element count but a different rank is accepted
  // only where the source documents such a reshape, e.g. 1x1 conv kernels read as linear weights).
  virtual std::vector<float> read(std::string_view name, std::span<const int64_t> expected) const = 0;
  // Every tensor name the source offers (diffusers naming, sorted).
  virtual std::vector<std::string> names() const = 0;
  // The tensor's stored bytes, after the same checks as read() (same errors); nullopt when this source only
  // converts (the caller then uses read()).
  virtual std::optional<RawWeight> raw(std::string_view name, std::span<const int64_t> expected) const {
    (void)name;
    (void)expected;
    return std::nullopt;
  }

  std::vector<float> read(std::string_view name, std::initializer_list<int64_t> expected) const {
    return read(name, std::span<const int64_t>(expected.begin(), expected.size()));
  }
};

// The names of a component under a prefix: scoped("down_blocks.0.") reads "down_blocks.0.NAME" as "NAME".
class ScopedWeights {
 public:
  ScopedWeights(const WeightSource& source, std::string prefix = "") : source_(&source), prefix_(std::move(prefix)) {}
  ScopedWeights operator[](std::string_view child) const {
    return ScopedWeights(*source_, prefix_ + std::string(child) + ".");
  }
  std::string name(std::string_view leaf) const { return prefix_ + std::string(leaf); }
  bool contains(std::string_view leaf) const { return source_->contains(name(leaf)); }
  std::vector<int64_t> shape(std::string_view leaf) const { return source_->shape(name(leaf)); }
  std::vector<float> read(std::string_view leaf, std::span<const int64_t> expected) const {
    return source_->read(name(leaf), expected);
  }
  std::vector<float> read(std::string_view leaf, std::initializer_list<int64_t> expected) const {
    return source_->read(name(leaf), std::span<const int64_t>(expected.begin(), expected.size()));
  }
  std::optional<RawWeight> raw(std::string_view leaf, std::span<const int64_t> expected) const {
    return source_->raw(name(leaf), expected);
  }
  std::optional<RawWeight> raw(std::string_view leaf, std::initializer_list<int64_t> expected) const {
    return source_->raw(name(leaf), std::span<const int64_t>(expected.begin(), expected.size()));
  }
  const WeightSource& source() const { return *source_; }
  const std::string& prefix() const { return prefix_; }

 private:
  const WeightSource* source_;
  std::string prefix_;
};

}  // namespace sdgen::models
