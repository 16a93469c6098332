#include "app/serve/request_log.h"

#include <cmath>
#include <ctime>

#include "app/serve/json_body.h"
#include "app/serve/validation_error.h"

namespace sdgen::serve {

namespace {
std::string utcNow() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  const size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof buf - n, ".%03dZ", static_cast<int>(ms));
  return buf;
}
}  // namespace

uint64_t RequestLog::begin() {
  std::lock_guard lock(mutex_);
  const uint64_t id = next_++;
  // A request whose response never went out (a connection dropped inside httplib) leaves its entry: the
  // oldest go first, so the map stays bounded.
  while (open_.size() >= kMaxOpen) open_.erase(open_.begin());
  open_[id] = Entry{std::chrono::steady_clock::now(), nlohmann::json::object()};
  return id;
}

void RequestLog::annotate(uint64_t id, const nlohmann::json& fields) {
  std::lock_guard lock(mutex_);
  auto it = open_.find(id);
  if (it != open_.end()) it->second.fields.update(fields);
}

void RequestLog::finish(uint64_t id, const std::string& remote, const std::string& method, const std::string& path,
                        int status) {
  nlohmann::ordered_json line = {{"ts", utcNow()}, {"req", id}, {"remote", remote}, {"method", shorten(method, 16)},
                         {"path", shorten(path, 200)}, {"status", status}};
  {
    std::lock_guard lock(mutex_);
    auto it = open_.find(id);
    if (it != open_.end()) {
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - it->second.start).count();
      line["ms"] = std::round(ms * 10) / 10;
      for (auto& [k, v] : it->second.fields.items()) line[k] = v;
      open_.erase(it);
    }
  }
  write(line);
}

void RequestLog::event(const nlohmann::json& fields) {
  nlohmann::ordered_json line = {{"ts", utcNow()}};
  for (auto& [k, v] : fields.items()) line[k] = v;
  write(line);
}

void RequestLog::write(const nlohmann::ordered_json& line) {
  // ts, req, remote, method, path, status, ms first (ordered_json keeps the order), then the handler's fields.
  const std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::lock_guard lock(mutex_);  // whole lines, never interleaved
  std::fputs(text.c_str(), out_);
  std::fflush(out_);
}

}  // namespace sdgen::serve
