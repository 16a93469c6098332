#include "ops/conv2d_tune_cache.h"

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/error.h"
#include "engine/file_util.h"
#include "ops/conv2d_candidates.h"

namespace sdgen::ops {

using nlohmann::json;

static constexpr const char* kFormat = "sdgen conv autotune";
static constexpr size_t kMaxKeyChars = 512;

ConvTuneCache::ConvTuneCache(std::string path, std::string device) : path_(std::move(path)), device_(std::move(device)) {}

static bool shortString(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() && !it->get_ref<const std::string&>().empty() &&
         it->get_ref<const std::string&>().size() <= kMaxKeyChars;
}

std::vector<ConvTuneCache::Stored> ConvTuneCache::parse(const std::string& text, std::string& what,
                                                        size_t& dropped) const {
  std::vector<Stored> out;
  // The file's structure is 4 levels deep (root, entries, entry, ms, value); deeper values are discarded while
  // parsing, so a hostile file cannot make the document deep.
  json root = json::parse(
      text, [](int depth, json::parse_event_t, json&) { return depth <= 4; }, false);
  if (root.is_discarded() || !root.is_object()) {
    what = "is not valid JSON";
    return out;
  }
  if (root.value("format", std::string()) != kFormat) {
    what = "is not an sdgen conv autotune file";
    return out;
  }
  auto version = root.find("version");
  if (version == root.end() || !version->is_number_integer() || version->get<int64_t>() != kVersion) {
    what = "has version " + (version == root.end() ? std::string("(none)") : version->dump().substr(0, 32)) +
           ", this sdgen writes " + std::to_string(kVersion);
    return out;
  }
  auto entries = root.find("entries");
  if (entries == root.end() || !entries->is_array()) {
    what = "has no entries array";
    return out;
  }
  for (const json& e : *entries) {
    if (out.size() >= kMaxEntries) {
      ++dropped;
      continue;
    }
    auto ms = e.is_object() ? e.find("ms") : e.end();
    if (!e.is_object() || !shortString(e, "device") || !shortString(e, "problem") || !shortString(e, "family") ||
        ms == e.end() || !ms->is_object() || ms->empty() || ms->size() > kMaxCandidates) {
      ++dropped;
      continue;
    }
    Stored s{e["device"].get<std::string>(), e["problem"].get<std::string>(), {e["family"].get<std::string>(), {}}};
    bool ok = true;
    for (auto it = ms->begin(); it != ms->end() && ok; ++it) {
      const bool finite = it.value().is_number() && std::isfinite(it.value().get<double>());
      const double v = finite ? it.value().get<double>() : 0.0;
      ok = finite && v > 0 && v < 1e6 && parseConvCandidate(it.key()).has_value();
      if (ok) s.entry.ms[it.key()] = v;
    }
    if (ok && e.contains("chosen")) {  // optional; when present, one of the measured candidates
      ok = shortString(e, "chosen") && s.entry.ms.count(e["chosen"].get<std::string>()) > 0;
      if (ok) s.entry.chosen = e["chosen"].get<std::string>();
    }
    if (!ok) {
      ++dropped;  // a stale entry (a candidate this version does not know) or a broken one: measured again
      continue;
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<ConvTuneCache::Stored> ConvTuneCache::readFileEntries(bool warn) {
  std::error_code ec;
  if (!std::filesystem::exists(path_, ec)) return {};
  const auto size = std::filesystem::file_size(path_, ec);
  if (ec) {
    if (warn) warnings_.push_back(path_ + ": cannot read its size (" + ec.message() + "); ignored");
    return {};
  }
  if (size > kMaxFileBytes) {
    if (warn)
      warnings_.push_back(path_ + ": " + std::to_string(size) + " bytes, more than the " +
                          std::to_string(kMaxFileBytes) + " a tuning cache may have; ignored and rewritten");
    return {};
  }
  std::optional<std::string> text = readFile(path_);
  if (!text) {
    if (warn) warnings_.push_back(path_ + ": cannot be read; ignored");
    return {};
  }
  std::string what;
  size_t dropped = 0;
  std::vector<Stored> stored = parse(*text, what, dropped);
  if (warn && !what.empty()) warnings_.push_back(path_ + " " + what + "; ignored and rewritten");
  if (warn && dropped)
    warnings_.push_back(path_ + ": " + std::to_string(dropped) + " malformed or stale entries ignored");
  return stored;
}

void ConvTuneCache::load() {
  entries_.clear();
  for (Stored& s : readFileEntries(true))
    if (s.device == device_) entries_[s.problem] = std::move(s.entry);
}

const ConvTuneEntry* ConvTuneCache::find(const std::string& problem) const {
  auto it = entries_.find(problem);
  return it == entries_.end() ? nullptr : &it->second;
}

void ConvTuneCache::put(const std::string& problem, ConvTuneEntry entry) {
  entries_[problem] = entry;
  written_[problem] = std::move(entry);
}

bool ConvTuneCache::save() {
  // Merge with the file as it is now: another process may have added entries since load().
  std::vector<Stored> merged;
  for (Stored& s : readFileEntries(false))
    if (!(s.device == device_ && written_.count(s.problem))) merged.push_back(std::move(s));
  for (const auto& [problem, entry] : written_) merged.push_back({device_, problem, entry});
  if (merged.size() > kMaxEntries) merged.erase(merged.begin(), merged.end() - kMaxEntries);  // oldest first
  json entries = json::array();
  for (const Stored& s : merged) {
    json ms = json::object();
    for (const auto& [name, v] : s.entry.ms) ms[name] = v;
    json e{{"device", s.device}, {"problem", s.problem}, {"family", s.entry.family}, {"ms", ms}};
    if (!s.entry.chosen.empty()) e["chosen"] = s.entry.chosen;
    entries.push_back(std::move(e));
  }
  json root{{"format", kFormat}, {"version", kVersion}, {"entries", entries}};
  try {
    writeFileAtomic(path_, root.dump(1) + "\n");
  } catch (const std::exception& e) {  // a read-only or missing directory: tuning still works, uncached
    warnings_.push_back(std::string("cannot write the tuning cache: ") + e.what() +
                        " (tuning results are kept for this process only)");
    return false;
  }
  return true;
}

}  // namespace sdgen::ops
