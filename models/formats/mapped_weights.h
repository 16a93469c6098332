#pragma once
// A WeightSource defined by a table: each exposed (diffusers) name points at a tensor of an open safetensors
// file, whole or as a block of rows of its first dimension (a fused q/k/v projection split into three), and
// possibly stored with trailing 1x1 dimensions that the exposed shape drops (a 1x1 convolution kernel read as a
// linear weight). SafetensorsWeights (a diffusers component) and the single-file LDM sources are such tables.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/safetensors.h"
#include "models/weight_source.h"

namespace sdgen::models {

struct TensorRef {
  std::shared_ptr<const SafetensorsFile> file;
  std::string key;              // the tensor's name in the file
  std::vector<int64_t> shape;   // the exposed shape
  int64_t rowBegin = 0;         // first row of dimension 0 ...
  int64_t rowCount = -1;        // ... and how many: -1 = the whole tensor
  bool squeezed = false;        // stored shape = exposed shape + trailing [1, 1]
  bool transposed = false;      // a 2-D tensor exposed transposed (read() only; raw() gives nullopt)

  // The whole tensor as stored.
  static TensorRef whole(std::shared_ptr<const SafetensorsFile> file, const std::string& key);
  // Rows [begin, begin + count) of dimension 0; throws naming the tensor when they are not all there.
  static TensorRef rows(std::shared_ptr<const SafetensorsFile> file, const std::string& key, int64_t begin,
                        int64_t count);
  // A [out, in, 1, 1] kernel exposed as [out, in] (also accepts a tensor already stored as [out, in]).
  static TensorRef squeezed1x1(std::shared_ptr<const SafetensorsFile> file, const std::string& key);
  // A 2-D [a, b] tensor exposed as [b, a] (OpenCLIP's text_projection, applied as x @ P, as a Linear weight).
  static TensorRef transposed2d(std::shared_ptr<const SafetensorsFile> file, const std::string& key);
};

using TensorTable = std::map<std::string, TensorRef, std::less<>>;

class MappedWeights : public WeightSource {
 public:
  MappedWeights(std::string description, TensorTable table)
      : description_(std::move(description)), table_(std::move(table)) {}

  std::string describe() const override { return description_; }
  bool contains(std::string_view name) const override { return table_.find(name) != table_.end(); }
  std::vector<int64_t> shape(std::string_view name) const override { return ref(name).shape; }
  // Accepts `expected` equal to the exposed shape; for a squeezed entry also the stored [.., 1, 1] shape.
  std::vector<float> read(std::string_view name, std::span<const int64_t> expected) const override;
  std::vector<std::string> names() const override;
  std::optional<RawWeight> raw(std::string_view name, std::span<const int64_t> expected) const override;
  using WeightSource::read;

  // The table entry of `name` (for tests and diagnostics); throws like read() when absent.
  const TensorRef& ref(std::string_view name) const;

 private:
  std::string description_;
  TensorTable table_;
};

}  // namespace sdgen::models
