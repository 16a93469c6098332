#pragma once
// Reader of the safetensors format: 8 bytes of little-endian header length N, N bytes of JSON header
// {"name": {"dtype", "shape", "data_offsets": [begin, end]}, ..., "__metadata__": {string: string}}, then the
// data section, which the offsets index. The file is memory-mapped and validated completely at open() (see
// docs/models.md for the rules), so that later reads cannot go out of bounds; every error is an sdgen::Error
// naming the file and, where there is one, the tensor.
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "models/mapped_file.h"

namespace sdgen::models {

// The element types sdgen reads. Weights are F32, F16 or BF16; I64/I32 tensors (e.g. CLIP's position_ids)
// are accepted in a file but cannot be converted to floating point.
enum class TensorDType : uint8_t { F32, F16, BF16, I64, I32 };

const char* tensorDTypeName(TensorDType t);  // as spelled in safetensors headers: "F32", "BF16", ...
size_t tensorDTypeSize(TensorDType t);
bool isFloatDType(TensorDType t);

struct TensorInfo {
  std::string name;
  TensorDType dtype = TensorDType::F32;
  std::vector<int64_t> shape;
  uint64_t offset = 0;  // byte offset from the start of the data section
  uint64_t size = 0;    // bytes
  uint64_t elementCount() const;
};

// "[a,b,c]"
std::string formatShape(std::span<const int64_t> shape);

class SafetensorsFile {
 public:
  // Refuses pickle checkpoints (see unsafe_checkpoint.h), maps the file and validates its header.
  static SafetensorsFile open(const std::string& path);

  const std::string& path() const { return file_.path(); }
  const TensorInfo* find(std::string_view name) const;
  const TensorInfo& get(std::string_view name) const;  // throws naming the tensor and file when absent
  std::vector<std::string> names() const;             // sorted
  size_t size() const { return tensors_.size(); }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

  // The tensor's stored bytes, straight from the mapping (little-endian, not necessarily aligned). A file
  // truncated after open() faults when a vanished page is touched: weights are read with readBytes() instead.
  std::span<const uint8_t> bytes(const TensorInfo& tensor) const;
  // Copies the tensor's stored bytes [begin, begin + out.size()) into `out` through pread: a file that shrank
  // since open() is an error naming the file and the tensor.
  void readBytes(const TensorInfo& tensor, uint64_t begin, std::span<uint8_t> out) const;
  // Where the tensor's bytes start in the file.
  uint64_t fileOffset(const TensorInfo& tensor) const { return dataStart_ + tensor.offset; }

  // Convert while copying, element by element; `out` must hold exactly the tensor's element count.
  void readAsF32(std::string_view name, std::span<float> out) const;
  void readAsF16(std::string_view name, std::span<uint16_t> out) const;  // IEEE half bit patterns
  std::vector<float> readAsF32(std::string_view name) const;

  // Throws "tensor 'X' in 'FILE' has shape [a,b], expected [c,d]" unless the shape matches.
  const TensorInfo& expectShape(std::string_view name, std::span<const int64_t> dims) const;
  const TensorInfo& expectShape(std::string_view name, std::initializer_list<int64_t> dims) const {
    return expectShape(name, std::span<const int64_t>(dims.begin(), dims.size()));
  }

 private:
  explicit SafetensorsFile(MappedFile file) : file_(std::move(file)) {}
  void parseHeader();
  const TensorInfo& floatTensor(std::string_view name, size_t outCount) const;

  MappedFile file_;
  uint64_t dataStart_ = 0;
  std::map<std::string, TensorInfo, std::less<>> tensors_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace sdgen::models
