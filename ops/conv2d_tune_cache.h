#pragma once
// The autotune's persistent cache (conv-tune-v1.json in SDGEN_CACHE_DIR): per device and problem, the measured
// milliseconds of every candidate. One file serves every device of a machine (entries carry their device key).
// Reading never throws: a missing, unreadable, oversized, corrupt or other-version file, and entries that are
// malformed or name candidates this version does not know, are ignored (with a warning) and rewritten by the
// next save. Writes merge into the file as it is then and replace it atomically (temporary file + rename).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sdgen::ops {

// One problem's measurements on one device.
struct ConvTuneEntry {
  std::string family;               // the weights it concerns: "Cin 320 Cout 640 3x3 s1 p1 d1 f16"
  std::map<std::string, double> ms;  // by ConvCandidate::name(), each > 0
  // The tuning run's first-ranked candidate (one of `ms`; empty in entries of earlier files): later runs try it
  // first, so that they plan what the tuning run ranked first whatever the rule's preference among near-equal
  // candidates there, and pack Winograd filters exactly where it is Winograd (ConvTuner::packWinogradFilters).
  std::string chosen;
};

class ConvTuneCache {
 public:
  static constexpr int kVersion = 1;
  static constexpr uint64_t kMaxFileBytes = uint64_t(4) << 20;  // larger files are not read (hostile or broken)
  static constexpr size_t kMaxEntries = 20000;                  // of all devices; the rest is dropped on save
  static constexpr size_t kMaxCandidates = 64;                  // per entry

  // `path`: the cache file; `device`: this device's key (convTuneDeviceKey).
  ConvTuneCache(std::string path, std::string device);

  // Reads this device's entries from the file (replacing those in memory).
  void load();
  // This device's entry for a problem key; null when none.
  const ConvTuneEntry* find(const std::string& problem) const;
  const std::map<std::string, ConvTuneEntry>& entries() const { return entries_; }
  // Adds or replaces an entry in memory; save() writes it.
  void put(const std::string& problem, ConvTuneEntry entry);
  // Writes the entries put since construction into the file, keeping the file's other valid entries (other
  // devices, other processes). False (and a warning) when the file cannot be written.
  bool save();

  const std::string& path() const { return path_; }
  // What was ignored or failed, for the user (sdgen prints them to stderr).
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  struct Stored {
    std::string device, problem;
    ConvTuneEntry entry;
  };
  // The valid entries of the file's text (any device); `what` is set when the whole file is ignored.
  std::vector<Stored> parse(const std::string& text, std::string& what, size_t& dropped) const;
  std::vector<Stored> readFileEntries(bool warn);

  std::string path_, device_;
  std::map<std::string, ConvTuneEntry> entries_;  // this device's, by problem key
  std::map<std::string, ConvTuneEntry> written_;  // put since construction: what save() merges into the file
  std::vector<std::string> warnings_;
};

}  // namespace sdgen::ops
