#include "app/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace sdgen::app {

std::string formatDuration(double seconds) {
  long total = std::lround(std::max(0.0, seconds));
  long h = total / 3600, m = (total / 60) % 60, s = total % 60;
  char buf[48];
  if (h > 0) std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", h, m, s);
  else std::snprintf(buf, sizeof buf, "%ld:%02ld", m, s);
  return buf;
}

std::string formatProgressBar(int step, int steps, double secondsSinceFirstStep, int barWidth) {
  steps = std::max(steps, 1);
  step = std::clamp(step, 0, steps);
  const int filled = static_cast<int>(int64_t(step) * barWidth / steps);
  std::string s = "step " + std::to_string(step) + "/" + std::to_string(steps) + " [";
  s.append(static_cast<size_t>(filled), '#');
  s.append(static_cast<size_t>(barWidth - filled), '.');
  s += "]";
  if (step >= 2 && secondsSinceFirstStep > 0) {
    const double perStep = secondsSinceFirstStep / (step - 1);
    char buf[64];
    // Like tqdm: it/s while steps are fast, s/it once a step takes longer than a second.
    if (perStep <= 1.0) std::snprintf(buf, sizeof buf, " %.1f it/s", 1.0 / perStep);
    else std::snprintf(buf, sizeof buf, " %.2f s/it", perStep);
    s += buf;
    s += ", " + formatDuration(perStep * (steps - step)) + " left";
  }
  return s;
}

ProgressReporter::ProgressReporter(std::FILE* out, bool terminal) : out_(out), terminal_(terminal) {}

ProgressReporter::~ProgressReporter() { end(); }

bool ProgressReporter::stderrIsTerminal() { return ::isatty(STDERR_FILENO) == 1; }

void ProgressReporter::begin(const std::string& label) {
  end();
  label_ = label.empty() ? std::string() : label + ": ";
}

void ProgressReporter::step(int step, int steps) {
  const auto now = Clock::now();
  if (step <= 1) firstStepDone_ = now;
  const double since = std::chrono::duration<double>(now - firstStepDone_).count();
  if (terminal_) {
    // \r returns to the line start, ESC[K clears what a longer previous line left.
    std::fprintf(out_, "\r%s%s\x1b[K", label_.c_str(), formatProgressBar(step, steps, since).c_str());
    lineOpen_ = true;
  } else {
    std::fprintf(out_, "%sstep %d/%d\n", label_.c_str(), step, steps);
  }
  std::fflush(out_);
}

void ProgressReporter::end() {
  if (lineOpen_) {
    std::fputc('\n', out_);
    std::fflush(out_);
    lineOpen_ = false;
  }
}

void TimingTotals::add(const pipeline::StageTimings& t) {
  if (images == 0) loadMs = t.loadMs;
  compileMs += t.compileMs;
  encodeMs += t.encodeMs;
  tokenizeMs += t.tokenizeMs;
  textSubmitMs += t.textSubmitMs;
  startMs += t.startMs;
  decodeMs += t.decodeMs;
  decodeRunMs += t.decodeRunMs;
  postprocessMs += t.postprocessMs;
  encodeEach.push_back(t.encodeMs);
  decodeEach.push_back(t.decodeMs);
  stepMs.insert(stepMs.end(), t.stepMs.begin(), t.stepMs.end());
  ++images;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  if (values.size() % 2 == 1) return values[mid];
  const double upper = values[mid];
  const double lower = *std::max_element(values.begin(), values.begin() + mid);
  return 0.5 * (lower + upper);
}

std::string formatTimingSummary(const TimingTotals& t) {
  const double denoiseMs = std::accumulate(t.stepMs.begin(), t.stepMs.end(), 0.0);
  char buf[160];
  std::string s = "timings";
  if (t.images > 1) s += " (" + std::to_string(t.images) + " images)";
  s += ":\n";
  auto row = [&](const char* name, double ms, const std::string& extra = {}) {
    std::snprintf(buf, sizeof buf, "  %-15s %10.1f ms%s\n", name, ms, extra.c_str());
    s += buf;
  };
  row("model load", t.loadMs);
  row("kernel compile", t.compileMs);
  std::snprintf(buf, sizeof buf, "  (tokenize %.1f, text submitted %.1f, start latents + GPU wait %.1f)",
                t.tokenizeMs, t.textSubmitMs, t.startMs);
  std::string text = buf;
  if (t.images > 1) {
    std::snprintf(buf, sizeof buf, "  (median %.2f ms per image)", median(t.encodeEach));
    text += buf;
  }
  row("text encode", t.encodeMs, text);
  std::snprintf(buf, sizeof buf, "  (%zu steps, median %.1f ms/step)", t.stepMs.size(), median(t.stepMs));
  row("denoise", denoiseMs, buf);
  std::snprintf(buf, sizeof buf, "  (decoder run + readback %.1f, post-process %.1f)", t.decodeRunMs, t.postprocessMs);
  std::string decode = buf;
  if (t.images > 1) {
    std::snprintf(buf, sizeof buf, "  (median %.2f ms per image)", median(t.decodeEach));
    decode += buf;
  }
  row("decode", t.decodeMs, decode);
  row("png encode", t.pngEncodeMs);
  row("file write", t.fileWriteMs);
  return s;
}

}  // namespace sdgen::app
