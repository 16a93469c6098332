#pragma once
// Structured logs: one JSON line per request on stderr, written when the response goes out, e.g.
//   {"ts":"2025-01-02T03:04:05.678Z","req":17,"remote":"127.0.0.1:50412","method":"POST",
//    "path":"/sdapi/v1/txt2img","status":200,"ms":812.4,"job":9,"engine":1,"size":"64x64","steps":12,
//    "images":1,"outcome":"done"}
// Handlers add fields to their request's line; the request id also goes to the client as X-Request-Id.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

namespace sdgen::serve {

class RequestLog {
 public:
  explicit RequestLog(std::FILE* out) : out_(out) {}

  // When a request arrives: a new id, remembered with the start time. Returns the id.
  uint64_t begin();
  // Adds fields to request `id`'s line.
  void annotate(uint64_t id, const nlohmann::json& fields);
  // Writes the line (id 0: a request that never reached begin(), e.g. a body over the limit).
  void finish(uint64_t id, const std::string& remote, const std::string& method, const std::string& path, int status);
  // A line that belongs to no request (startup, shutdown).
  void event(const nlohmann::json& fields);

 private:
  struct Entry {
    std::chrono::steady_clock::time_point start;
    nlohmann::json fields;
  };
  void write(const nlohmann::ordered_json& line);
  static constexpr size_t kMaxOpen = 4096;

  std::FILE* out_;
  std::mutex mutex_;
  uint64_t next_ = 1;
  std::map<uint64_t, Entry> open_;
};

}  // namespace sdgen::serve
