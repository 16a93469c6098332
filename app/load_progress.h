#pragma once
// The model load's progress line (LoadOptions::progress), for loads that take over a second: nothing for a fast
// load; once one has run for `after`, "loading model: UNet (2/3), 1.2 s" on stderr, then the next component as
// it starts (a terminal redraws the line each second in place, a log gets one line per component), and
// "model loaded in 1.9 s" at the end.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "models/pipeline/text_to_image.h"

namespace sdgen::app {

// "loading model: UNet (2/3), 1.2 s"
std::string formatLoadProgress(const pipeline::LoadProgress& p, double elapsedSeconds);

class LoadProgressPrinter {
 public:
  LoadProgressPrinter(std::FILE* out, bool terminal, std::chrono::milliseconds after = std::chrono::seconds(1));
  ~LoadProgressPrinter();  // ends an open line
  LoadProgressPrinter(const LoadProgressPrinter&) = delete;
  LoadProgressPrinter& operator=(const LoadProgressPrinter&) = delete;

  void update(const pipeline::LoadProgress& p);
  // For LoadOptions::progress; the printer must outlive the load.
  std::function<void(const pipeline::LoadProgress&)> callback() {
    return [this](const pipeline::LoadProgress& p) { update(p); };
  }

 private:
  using Clock = std::chrono::steady_clock;
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  void printLocked();  // the current component's line
  void loop();

  std::FILE* out_;
  bool terminal_;
  std::chrono::milliseconds after_;
  std::mutex mutex_;
  std::condition_variable wake_;
  Clock::time_point start_;
  pipeline::LoadProgress current_;
  bool started_ = false, stop_ = false, printedAny_ = false, lineOpen_ = false;
  int printedIndex_ = 0;  // the last component a line was printed for
  std::thread thread_;
};

}  // namespace sdgen::app
