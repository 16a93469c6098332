#include "models/safetensors.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "engine/dtype.h"
#include "engine/error.h"
#include "models/json_bounds.h"
#include "models/unsafe_checkpoint.h"

namespace sdgen::models {

// The format is little-endian; reading it through memcpy into native integers and floats assumes the same.
static_assert(std::endian::native == std::endian::little, "safetensors reading assumes a little-endian host");

namespace {

using nlohmann::json;

// The reference implementation's limit; a larger header is a corrupt length, not a real header.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct DTypeSpec {
  const char* name;
  TensorDType dtype;
  size_t size;
};
constexpr DTypeSpec kDTypes[] = {{"F32", TensorDType::F32, 4}, {"F16", TensorDType::F16, 2},
                                 {"BF16", TensorDType::BF16, 2}, {"I64", TensorDType::I64, 8},
                                 {"I32", TensorDType::I32, 4}};

const DTypeSpec& spec(TensorDType t) {
  for (const DTypeSpec& s : kDTypes)
    if (s.dtype == t) return s;
  throw Error("unknown TensorDType");
}

float bf16ToFloat(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

template <typename T>
T loadAt(const uint8_t* base, size_t index) {
  T v;
  std::memcpy(&v, base + index * sizeof(T), sizeof(T));  // the mapping gives no alignment guarantee
  return v;
}

bool isNonNegativeInteger(const json& v) { return v.is_number_unsigned() || (v.is_number_integer() && v >= 0); }

}  // namespace

const char* tensorDTypeName(TensorDType t) { return spec(t).name; }
size_t tensorDTypeSize(TensorDType t) { return spec(t).size; }
bool isFloatDType(TensorDType t) { return t == TensorDType::F32 || t == TensorDType::F16 || t == TensorDType::BF16; }

uint64_t TensorInfo::elementCount() const {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);  // validated at open() not to overflow
  return n;
}

std::string formatShape(std::span<const int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  refuseUnsafeCheckpoint(path);
  SafetensorsFile f(MappedFile::open(path));
  f.parseHeader();
  return f;
}

void SafetensorsFile::parseHeader() {
  auto fileError = [&](const std::string& what) { return Error("safetensors file '" + path() + "': " + what); };
  auto tensorError = [&](const std::string& name, const std::string& what) {
    return Error("tensor '" + name + "' in '" + path() + "' " + what);
  };
  std::span<const uint8_t> all = file_.bytes();
  if (all.size() < 8)
    throw fileError("only " + std::to_string(all.size()) + " bytes, too short for the 8-byte header length");
  uint64_t headerLen = loadAt<uint64_t>(all.data(), 0);
  if (headerLen > kMaxHeaderBytes || headerLen > all.size() - 8) {
    if (looksLikePickleCheckpoint(all)) throw Error(unsafeCheckpointMessage(path()));
    throw fileError("header length " + std::to_string(headerLen) + " does not fit in the file of " +
                    std::to_string(all.size()) + " bytes (truncated or not a safetensors file)");
  }
  if (headerLen < 2 || all[8] != '{') throw fileError("the header does not start with a JSON object");
  dataStart_ = 8 + headerLen;
  const uint64_t dataSize = all.size() - dataStart_;

  // Duplicate names would silently replace each other in a JSON object; catch them while parsing.
  std::set<std::string> seen;
  std::string duplicate;
  auto onEvent = [&](int depth, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::key && depth == 1 && !seen.insert(parsed.get<std::string>()).second)
      duplicate = parsed.get<std::string>();
    return true;
  };
  json header;
  try {
    auto text = reinterpret_cast<const char*>(all.data() + 8);
    header = parseJsonBounded(std::string_view(text, headerLen), "the header of '" + path() + "'", onEvent);
  } catch (const json::exception& e) {
    throw fileError(std::string("header is not valid JSON: ") + e.what());
  }
  if (!header.is_object()) throw fileError("the header is not a JSON object");
  if (!duplicate.empty()) throw tensorError(duplicate, "appears twice in the header");

  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) throw fileError("__metadata__ is not an object");
      for (const auto& [k, v] : entry.items()) {
        if (!v.is_string()) throw fileError("__metadata__ value of '" + k + "' is not a string");
        metadata_[k] = v.get<std::string>();
      }
      continue;
    }
    if (!entry.is_object()) throw tensorError(name, "has a header entry that is not an object");
    for (const char* field : {"dtype", "shape", "data_offsets"})
      if (!entry.contains(field)) throw tensorError(name, std::string("has no \"") + field + "\"");

    TensorInfo t;
    t.name = name;
    const json& dtype = entry["dtype"];
    const DTypeSpec* ds = nullptr;
    if (dtype.is_string())
      for (const DTypeSpec& s : kDTypes)
        if (dtype.get<std::string>() == s.name) ds = &s;
    if (!ds)
      throw tensorError(name, "has dtype " + dtype.dump() +
                                  ", which sdgen does not read (weights must be F32, F16 or BF16; I64 and I32 are "
                                  "accepted for index tensors)");
    t.dtype = ds->dtype;

    const json& shape = entry["shape"];
    if (!shape.is_array()) throw tensorError(name, "has a shape that is not an array: " + shape.dump());
    uint64_t bytes = ds->size;
    for (const json& d : shape) {
      if (!isNonNegativeInteger(d)) throw tensorError(name, "has a shape with an invalid dimension: " + shape.dump());
      uint64_t dim = d.get<uint64_t>();
      if (dim > static_cast<uint64_t>(INT64_MAX) || __builtin_mul_overflow(bytes, dim, &bytes))
        throw tensorError(name, "has a shape whose size overflows: " + shape.dump());
      t.shape.push_back(static_cast<int64_t>(dim));
    }

    const json& offsets = entry["data_offsets"];
    if (!offsets.is_array() || offsets.size() != 2 || !isNonNegativeInteger(offsets[0]) ||
        !isNonNegativeInteger(offsets[1]))
      throw tensorError(name, "has data_offsets " + offsets.dump() + ", expected [begin, end]");
    uint64_t begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
    if (end < begin) throw tensorError(name, "has data_offsets " + offsets.dump() + " that end before they begin");
    if (end > dataSize)
      throw tensorError(name, "has data_offsets " + offsets.dump() + " past the end of the data section (" +
                                  std::to_string(dataSize) + " bytes; truncated file?)");
    if (end - begin != bytes)
      throw tensorError(name, "has " + std::to_string(end - begin) + " bytes of data, but " +
                                  std::string(ds->name) + " " + formatShape(t.shape) + " needs " +
                                  std::to_string(bytes));
    t.offset = begin;
    t.size = end - begin;
    tensors_.emplace(name, std::move(t));
  }

  // No two tensors may share bytes: a writer bug or a crafted file, either way the weights would be wrong.
  std::vector<const TensorInfo*> byOffset;
  for (const auto& [name, t] : tensors_)
    if (t.size > 0) byOffset.push_back(&t);
  std::sort(byOffset.begin(), byOffset.end(),
            [](const TensorInfo* a, const TensorInfo* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < byOffset.size(); ++i) {
    const TensorInfo& prev = *byOffset[i - 1];
    const TensorInfo& cur = *byOffset[i];
    if (cur.offset < prev.offset + prev.size)
      throw tensorError(cur.name, "has data [" + std::to_string(cur.offset) + ", " +
                                      std::to_string(cur.offset + cur.size) + ") overlapping tensor '" + prev.name +
                                      "' [" + std::to_string(prev.offset) + ", " +
                                      std::to_string(prev.offset + prev.size) + ")");
  }
}

const TensorInfo* SafetensorsFile::find(std::string_view name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

const TensorInfo& SafetensorsFile::get(std::string_view name) const {
  if (const TensorInfo* t = find(name)) return *t;
  throw Error("tensor '" + std::string(name) + "' is not in '" + path() + "'");
}

std::vector<std::string> SafetensorsFile::names() const {
  std::vector<std::string> out;
  out.reserve(tensors_.size());
  for (const auto& [name, t] : tensors_) out.push_back(name);
  return out;
}

std::span<const uint8_t> SafetensorsFile::bytes(const TensorInfo& tensor) const {
  return file_.bytes().subspan(dataStart_ + tensor.offset, tensor.size);
}

const TensorInfo& SafetensorsFile::floatTensor(std::string_view name, size_t outCount) const {
  const TensorInfo& t = get(name);
  if (!isFloatDType(t.dtype))
    throw Error("tensor '" + t.name + "' in '" + path() + "' has dtype " + tensorDTypeName(t.dtype) +
                ", not a floating-point type (F32, F16, BF16) that converts to weights");
  if (t.elementCount() != outCount)
    throw Error("tensor '" + t.name + "' in '" + path() + "' has " + std::to_string(t.elementCount()) +
                " elements " + formatShape(t.shape) + ", but the destination holds " + std::to_string(outCount));
  return t;
}

void SafetensorsFile::readBytes(const TensorInfo& tensor, uint64_t begin, std::span<uint8_t> out) const {
  if (begin > tensor.size || out.size() > tensor.size - begin)
    throw Error("tensor '" + tensor.name + "' in '" + path() + "': bytes [" + std::to_string(begin) + ", " +
                std::to_string(begin + out.size()) + ") are outside its " + std::to_string(tensor.size) + " bytes");
  file_.readAt(dataStart_ + tensor.offset + begin, out, "tensor '" + tensor.name + "'");
}

// Both conversions read the stored bytes through readBytes (not the mapping): see bytes().
void SafetensorsFile::readAsF32(std::string_view name, std::span<float> out) const {
  const TensorInfo& t = floatTensor(name, out.size());
  if (t.dtype == TensorDType::F32) {
    readBytes(t, 0, {reinterpret_cast<uint8_t*>(out.data()), t.size});
    return;
  }
  std::vector<uint16_t> raw(out.size());
  readBytes(t, 0, {reinterpret_cast<uint8_t*>(raw.data()), t.size});
  if (t.dtype == TensorDType::F16)
    for (size_t i = 0; i < out.size(); ++i) out[i] = halfToFloat(raw[i]);
  else  // BF16 (floatTensor rejected the rest)
    for (size_t i = 0; i < out.size(); ++i) out[i] = bf16ToFloat(raw[i]);
}

void SafetensorsFile::readAsF16(std::string_view name, std::span<uint16_t> out) const {
  const TensorInfo& t = floatTensor(name, out.size());
  if (t.dtype == TensorDType::F16) {
    readBytes(t, 0, {reinterpret_cast<uint8_t*>(out.data()), t.size});
    return;
  }
  if (t.dtype == TensorDType::F32) {
    std::vector<float> raw(out.size());
    readBytes(t, 0, {reinterpret_cast<uint8_t*>(raw.data()), t.size});
    for (size_t i = 0; i < out.size(); ++i) out[i] = floatToHalf(raw[i]);
    return;
  }
  std::vector<uint16_t> raw(out.size());  // BF16: through fp32, which holds every bf16 value exactly: one rounding
  readBytes(t, 0, {reinterpret_cast<uint8_t*>(raw.data()), t.size});
  for (size_t i = 0; i < out.size(); ++i) out[i] = floatToHalf(bf16ToFloat(raw[i]));
}

std::vector<float> SafetensorsFile::readAsF32(std::string_view name) const {
  std::vector<float> out(get(name).elementCount());
  readAsF32(name, out);
  return out;
}

const TensorInfo& SafetensorsFile::expectShape(std::string_view name, std::span<const int64_t> dims) const {
  const TensorInfo& t = get(name);
  if (!std::equal(t.shape.begin(), t.shape.end(), dims.begin(), dims.end()))
    throw Error("tensor '" + t.name + "' in '" + path() + "' has shape " + formatShape(t.shape) + ", expected " +
                formatShape(dims));
  return t;
}

}  // namespace sdgen::models
