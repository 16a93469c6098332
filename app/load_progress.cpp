#include "app/load_progress.h"

namespace sdgen::app {

std::string formatLoadProgress(const pipeline::LoadProgress& p, double elapsedSeconds) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "loading model: %.60s (%d/%d), %.1f s", p.component.c_str(), p.index, p.count,
                elapsedSeconds);
  return buf;
}

LoadProgressPrinter::LoadProgressPrinter(std::FILE* out, bool terminal, std::chrono::milliseconds after)
    : out_(out), terminal_(terminal), after_(after), thread_([this] { loop(); }) {}

LoadProgressPrinter::~LoadProgressPrinter() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  if (lineOpen_) std::fputc('\n', out_);
}

void LoadProgressPrinter::printLocked() {
  const std::string line = formatLoadProgress(current_, elapsed());
  if (terminal_)
    std::fprintf(out_, "\r%-60s", line.c_str());
  else
    std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
  lineOpen_ = terminal_;
  printedAny_ = true;
  printedIndex_ = current_.index;
}

void LoadProgressPrinter::update(const pipeline::LoadProgress& p) {
  {
    std::lock_guard lock(mutex_);
    if (!started_) {
      started_ = true;
      start_ = Clock::now() - std::chrono::microseconds(int64_t(p.elapsedMs * 1000));
    }
    current_ = p;
    if (p.done) {
      if (printedAny_) {
        std::fprintf(out_, "%smodel loaded in %.1f s\n", lineOpen_ ? "\r\033[K" : "", elapsed());
        std::fflush(out_);
        lineOpen_ = false;
      }
      stop_ = true;
    } else if (Clock::now() - start_ >= after_) {
      printLocked();  // past the threshold: each component as it starts
    }
  }
  wake_.notify_all();
}

void LoadProgressPrinter::loop() {
  std::unique_lock lock(mutex_);
  wake_.wait(lock, [&] { return stop_ || started_; });
  while (!stop_) {
    // Sleep until the threshold (then each second on a terminal), or until told of the next component.
    const auto due = printedAny_ ? Clock::now() + std::chrono::seconds(1) : start_ + after_;
    const int seen = current_.index;
    wake_.wait_until(lock, due, [&] { return stop_ || current_.index != seen; });
    if (stop_ || Clock::now() < due) continue;
    if (terminal_ || printedIndex_ != current_.index) printLocked();
  }
}

}  // namespace sdgen::app
