#include "models/formats/mapped_weights.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "engine/dtype.h"
#include "engine/error.h"

namespace sdgen::models {

namespace {

// "'down_blocks.0.resnets.0.norm1.weight' (stored as 'model.diffusion_model.input_blocks.1.0.in_layers.0.weight')"
std::string quotedName(std::string_view name, const TensorRef& r) {
  std::string s = "'" + std::string(name) + "'";
  if (r.key != name) s += " (stored as '" + r.key + "')";
  return s;
}

}  // namespace

TensorRef TensorRef::whole(std::shared_ptr<const SafetensorsFile> file, const std::string& key) {
  TensorRef r;
  r.shape = file->get(key).shape;
  r.key = key;
  r.file = std::move(file);
  return r;
}

TensorRef TensorRef::rows(std::shared_ptr<const SafetensorsFile> file, const std::string& key, int64_t begin,
                          int64_t count) {
  const TensorInfo& t = file->get(key);
  if (t.shape.empty() || begin < 0 || count < 0 || begin + count > t.shape[0])
    throw Error("tensor '" + key + "' in '" + file->path() + "' has shape " + formatShape(t.shape) +
                ", which has no rows [" + std::to_string(begin) + ", " + std::to_string(begin + count) + ")");
  TensorRef r;
  r.shape = t.shape;
  r.shape[0] = count;
  r.rowBegin = begin;
  r.rowCount = count;
  r.key = key;
  r.file = std::move(file);
  return r;
}

TensorRef TensorRef::squeezed1x1(std::shared_ptr<const SafetensorsFile> file, const std::string& key) {
  TensorRef r = whole(std::move(file), key);
  if (r.shape.size() == 4 && r.shape[2] == 1 && r.shape[3] == 1) {
    r.shape.resize(2);
    r.squeezed = true;
  }
  return r;
}

TensorRef TensorRef::transposed2d(std::shared_ptr<const SafetensorsFile> file, const std::string& key) {
  TensorRef r = whole(std::move(file), key);
  if (r.shape.size() != 2)
    throw Error("tensor '" + key + "' in '" + r.file->path() + "' has shape " + formatShape(r.shape) +
                ", expected a 2-D matrix");
  std::swap(r.shape[0], r.shape[1]);
  r.transposed = true;
  return r;
}

const TensorRef& MappedWeights::ref(std::string_view name) const {
  auto it = table_.find(name);
  if (it == table_.end()) throw Error("tensor '" + std::string(name) + "' not found in " + description_);
  return it->second;
}

std::vector<std::string> MappedWeights::names() const {
  std::vector<std::string> out;
  out.reserve(table_.size());
  for (const auto& [name, r] : table_) out.push_back(name);
  return out;
}

std::optional<RawWeight> MappedWeights::raw(std::string_view name, std::span<const int64_t> expected) const {
  const TensorRef& r = ref(name);
  if (r.transposed) return std::nullopt;  // not stored as exposed: only read() converts it
  const TensorInfo& stored = r.file->get(r.key);
  bool shapeOk = std::equal(expected.begin(), expected.end(), r.shape.begin(), r.shape.end()) ||
                 (r.squeezed && std::equal(expected.begin(), expected.end(), stored.shape.begin(), stored.shape.end()));
  if (!shapeOk)
    throw Error("tensor " + quotedName(name, r) + " in '" + r.file->path() + "' has shape " + formatShape(r.shape) +
                ", expected " + formatShape(expected));
  if (!isFloatDType(stored.dtype))
    throw Error("tensor " + quotedName(name, r) + " in '" + r.file->path() + "' has dtype " +
                tensorDTypeName(stored.dtype) + ", not a floating-point type (F32, F16, BF16) that converts to weights");
  RawWeight w{r.file, &stored, 0, stored.size, stored.dtype, std::string(name)};
  if (r.rowCount >= 0) {  // a block of rows: the rows are contiguous in row-major storage
    const uint64_t rowBytes = stored.shape[0] == 0 ? 0 : stored.size / static_cast<uint64_t>(stored.shape[0]);
    w.begin = static_cast<uint64_t>(r.rowBegin) * rowBytes;
    w.bytes = static_cast<uint64_t>(r.rowCount) * rowBytes;
  }
  return w;
}

std::vector<float> MappedWeights::read(std::string_view name, std::span<const int64_t> expected) const {
  const TensorRef& r = ref(name);
  if (!r.transposed) return raw(name, expected)->readAsF32();
  if (!std::equal(expected.begin(), expected.end(), r.shape.begin(), r.shape.end()))
    throw Error("tensor " + quotedName(name, r) + " in '" + r.file->path() + "' has shape " + formatShape(r.shape) +
                ", expected " + formatShape(expected));
  const TensorInfo& stored = r.file->get(r.key);
  if (!isFloatDType(stored.dtype))
    throw Error("tensor " + quotedName(name, r) + " in '" + r.file->path() + "' has dtype " +
                tensorDTypeName(stored.dtype) + ", not a floating-point type (F32, F16, BF16) that converts to weights");
  const std::vector<float> v = RawWeight{r.file, &stored, 0, stored.size, stored.dtype, std::string(name)}.readAsF32();
  const size_t rows = size_t(r.shape[1]), cols = size_t(r.shape[0]);  // stored [rows, cols]
  std::vector<float> out(v.size());
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < cols; ++j) out[j * rows + i] = v[i * cols + j];
  return out;
}

std::vector<float> RawWeight::readAsF32() const {
  std::vector<float> out(elements());
  if (dtype == TensorDType::F32) {
    read({reinterpret_cast<uint8_t*>(out.data()), bytes});
    return out;
  }
  std::vector<uint16_t> stored(out.size());
  read({reinterpret_cast<uint8_t*>(stored.data()), bytes});
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = dtype == TensorDType::F16 ? halfToFloat(stored[i])
                                       : std::bit_cast<float>(static_cast<uint32_t>(stored[i]) << 16);
  return out;
}

}  // namespace sdgen::models
