#pragma once
// Progress of the denoising loop on stderr, and the timing summary printed at the end of a run.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "models/pipeline/text_to_image.h"

namespace sdgen::app {

// "step 3/20 [###...........................] 3.2 it/s, 0:04 left". `secondsSinceFirstStep` is the time from
// the end of step 1 to the end of step `step`: step 1 carries one-off work (kernel compiles, recording), so the
// rate and the estimate are taken over the steps after it and are left out while step < 2.
std::string formatProgressBar(int step, int steps, double secondsSinceFirstStep, int barWidth = 30);

// 4 -> "0:04", 75 -> "1:15", 3725 -> "1:02:05" (rounded to whole seconds).
std::string formatDuration(double seconds);

// Reports steps as they complete: on a terminal one line redrawn in place, otherwise (a log, a pipe) one plain
// "step i/N" line per step.
class ProgressReporter {
 public:
  ProgressReporter(std::FILE* out, bool terminal);
  ~ProgressReporter();  // ends a bar left open
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  // Before each image: e.g. "image 2/4" (empty for a single image).
  void begin(const std::string& label);
  void step(int step, int steps);
  // After the image: moves off the bar line.
  void end();

  // Whether stderr is an interactive terminal (isatty).
  static bool stderrIsTerminal();

 private:
  using Clock = std::chrono::steady_clock;
  std::FILE* out_;
  bool terminal_;
  bool lineOpen_ = false;
  std::string label_;
  Clock::time_point firstStepDone_;
};

// Stage times summed over every image of a run (model load counted once).
struct TimingTotals {
  double loadMs = 0, compileMs = 0, encodeMs = 0, decodeMs = 0;
  double tokenizeMs = 0, textSubmitMs = 0, startMs = 0;  // encodeMs's parts (pipeline::StageTimings)
  double decodeRunMs = 0, postprocessMs = 0;             // decodeMs's parts
  double pngEncodeMs = 0, fileWriteMs = 0;  // the images' PNG encoding and atomic writes (fsync), by the caller
  std::vector<double> stepMs;
  std::vector<double> encodeEach, decodeEach;  // per image: the first carries one-time work (graph recording)
  int images = 0;

  void add(const pipeline::StageTimings& t);  // one generate(); takes loadMs from the first
};

double median(std::vector<double> values);

// Multi-line table: model load, kernel compile, text encode, denoise (total, steps, median per step), decode,
// PNG encode, file write; with several images, the median per image of text encode and decode too.
std::string formatTimingSummary(const TimingTotals& totals);

}  // namespace sdgen::app
