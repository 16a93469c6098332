#include "models/formats/ldm_component_keys.h"

#include "engine/error.h"

namespace sdgen::models {

LdmComponentKeys::LdmComponentKeys(std::shared_ptr<const SafetensorsFile> file, std::string prefix,
                                   std::string component)
    : file_(std::move(file)), prefix_(std::move(prefix)), component_(std::move(component)) {
  for (const std::string& key : file_->names())
    if (key.starts_with(prefix_)) keys_.insert(key.substr(prefix_.size()));
}

bool LdmComponentKeys::hasUnder(std::string_view keyPrefix) const {
  auto it = keys_.lower_bound(keyPrefix);
  return it != keys_.end() && std::string_view(*it).starts_with(keyPrefix);
}

std::vector<std::string> LdmComponentKeys::under(std::string_view keyPrefix) const {
  std::vector<std::string> out;
  for (auto it = keys_.lower_bound(keyPrefix); it != keys_.end() && std::string_view(*it).starts_with(keyPrefix); ++it)
    out.push_back(*it);
  return out;
}

void LdmComponentKeys::fail(const std::string& what) const {
  throw Error("single-file checkpoint '" + path() + "' (" + component_ + "): " + what);
}

const std::vector<int64_t>& LdmComponentKeys::shape(std::string_view key) const {
  if (!has(key))
    throw Error("single-file checkpoint '" + path() + "' has no tensor '" + prefix_ + std::string(key) +
                "' (needed for the " + component_ + ")");
  return file_->get(prefix_ + std::string(key)).shape;
}

const std::vector<int64_t>& LdmComponentKeys::shape(std::string_view key, size_t rank) const {
  const std::vector<int64_t>& s = shape(key);
  if (s.size() != rank)
    fail("tensor '" + prefix_ + std::string(key) + "' has shape " + formatShape(s) + ", expected " +
         std::to_string(rank) + " dimensions");
  return s;
}

int LdmComponentKeys::countIndexed(std::string_view keyPrefix) const {
  int n = 0;
  while (hasUnder(std::string(keyPrefix) + std::to_string(n) + ".")) ++n;
  return n;
}

void LdmComponentKeys::map(const std::string& name, const std::string& key) {
  shape(key);  // a missing key is named here
  table_[name] = TensorRef::whole(file_, prefix_ + key);
  used_.insert(key);
}

void LdmComponentKeys::mapRows(const std::string& name, const std::string& key, int64_t begin, int64_t count) {
  shape(key);
  table_[name] = TensorRef::rows(file_, prefix_ + key, begin, count);
  used_.insert(key);
}

void LdmComponentKeys::mapSqueezed(const std::string& name, const std::string& key) {
  shape(key);
  table_[name] = TensorRef::squeezed1x1(file_, prefix_ + key);
  used_.insert(key);
}

void LdmComponentKeys::mapTransposed(const std::string& name, const std::string& key) {
  shape(key, 2);
  table_[name] = TensorRef::transposed2d(file_, prefix_ + key);
  used_.insert(key);
}

void LdmComponentKeys::ignore(const std::string& key) {
  if (has(key)) used_.insert(key);
}

void LdmComponentKeys::ignoreUnder(std::string_view keyPrefix) {
  for (const std::string& key : under(keyPrefix)) used_.insert(key);
}

void LdmComponentKeys::requireAllUsed(const std::string& why) const {
  for (const std::string& key : keys_)
    if (!used_.count(key)) fail("unexpected tensor '" + prefix_ + key + "': " + why);
}

std::string LdmComponentKeys::description() const { return path() + " (" + component_ + ", prefix '" + prefix_ + "')"; }

}  // namespace sdgen::models
