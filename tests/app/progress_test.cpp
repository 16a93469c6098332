// Progress bar text, the plain (non-terminal) step lines, and the timing summary's arithmetic; the model load's
// progress line: silent for a load under the threshold, past it a line per component (or one line redrawn on a
// terminal) and the total at the end.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>

#include "app/load_progress.h"
#include "app/progress.h"

namespace sdgen::app {
namespace {

std::string captured(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  int c;
  while ((c = std::fgetc(f)) != EOF) s.push_back(static_cast<char>(c));
  return s;
}

TEST(Progress, Durations) {
  EXPECT_EQ(formatDuration(0), "0:00");
  EXPECT_EQ(formatDuration(4.4), "0:04");
  EXPECT_EQ(formatDuration(4.6), "0:05");
  EXPECT_EQ(formatDuration(75), "1:15");
  EXPECT_EQ(formatDuration(3725), "1:02:05");
  EXPECT_EQ(formatDuration(-3), "0:00");
}

TEST(Progress, BarWithRateAndEstimate) {
  // Step 5 of 20, 4 steps in 2 s since step 1: 2.0 it/s, 15 steps left -> 7.5 s -> "0:08".
  EXPECT_EQ(formatProgressBar(5, 20, 2.0, 20), "step 5/20 [#####...............] 2.0 it/s, 0:08 left");
  // Slow steps switch to seconds per iteration: 2 steps in 5 s = 2.50 s/it, 7 left = 17.5 s -> "0:18".
  EXPECT_EQ(formatProgressBar(3, 10, 5.0, 10), "step 3/10 [###.......] 2.50 s/it, 0:18 left");
  // Step 1 carries compile time: no rate yet.
  EXPECT_EQ(formatProgressBar(1, 4, 0.0, 8), "step 1/4 [##......]");
  EXPECT_EQ(formatProgressBar(4, 4, 3.0, 8), "step 4/4 [########] 1.0 it/s, 0:00 left");
  // Out-of-range input is clamped, never overflowing the bar.
  EXPECT_EQ(formatProgressBar(9, 4, 0.0, 4).substr(0, 15), "step 4/4 [####]");
}

TEST(Progress, PlainLinesWhenNotATerminal) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    ProgressReporter r(f, /*terminal=*/false);
    r.begin("image 2/3");
    for (int i = 1; i <= 3; ++i) r.step(i, 3);
    r.end();
    r.begin("");
    r.step(1, 2);
  }
  EXPECT_EQ(captured(f), "image 2/3: step 1/3\nimage 2/3: step 2/3\nimage 2/3: step 3/3\nstep 1/2\n");
  std::fclose(f);
}

TEST(Progress, TerminalRedrawsOneLine) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    ProgressReporter r(f, /*terminal=*/true);
    r.begin("");
    r.step(1, 2);
    r.step(2, 2);
  }  // the destructor ends the open line
  const std::string s = captured(f);
  EXPECT_EQ(s.substr(0, 19), "\rstep 1/2 [########");
  EXPECT_NE(s.find("\rstep 2/2 [##############################]"), std::string::npos) << s;
  EXPECT_EQ(std::count(s.begin(), s.end(), '\n'), 1) << s;
  EXPECT_EQ(s.back(), '\n');
  std::fclose(f);
}

TEST(Progress, Median) {
  EXPECT_EQ(median({}), 0.0);
  EXPECT_EQ(median({5}), 5.0);
  EXPECT_EQ(median({9, 1, 5}), 5.0);
  EXPECT_EQ(median({4, 1, 3, 100}), 3.5);
}

TEST(Progress, TimingSummaryAddsImagesAndCountsLoadOnce) {
  pipeline::StageTimings a;
  a.loadMs = 1000;
  a.compileMs = 300;
  a.encodeMs = 10;
  a.decodeMs = 50;
  a.decodeRunMs = 40;
  a.postprocessMs = 10;
  a.stepMs = {200, 100, 110};
  pipeline::StageTimings b = a;
  b.loadMs = 1000;  // the same load reported again: counted once
  b.compileMs = 0;
  b.stepMs = {120, 90};
  TimingTotals t;
  t.add(a);
  t.add(b);
  t.pngEncodeMs = 12.5;
  t.fileWriteMs = 3.5;
  EXPECT_EQ(t.images, 2);
  EXPECT_EQ(t.loadMs, 1000);
  EXPECT_EQ(t.compileMs, 300);
  EXPECT_EQ(t.encodeMs, 20);
  EXPECT_EQ(t.decodeMs, 100);
  ASSERT_EQ(t.stepMs.size(), 5u);
  const std::string s = formatTimingSummary(t);
  EXPECT_NE(s.find("timings (2 images):"), std::string::npos) << s;
  EXPECT_NE(s.find("model load          1000.0 ms"), std::string::npos) << s;
  EXPECT_NE(s.find("kernel compile       300.0 ms"), std::string::npos) << s;
  EXPECT_NE(s.find("text encode           20.0 ms"), std::string::npos) << s;
  EXPECT_NE(s.find("denoise              620.0 ms  (5 steps, median 110.0 ms/step)"), std::string::npos) << s;
  EXPECT_NE(s.find("decode               100.0 ms  (decoder run + readback 80.0, post-process 20.0)  (median 50.00 ms "
                   "per image)"), std::string::npos) << s;
  EXPECT_NE(s.find("GPU wait 0.0)  (median 10.00 ms per image)"), std::string::npos) << s;
  EXPECT_NE(s.find("png encode            12.5 ms"), std::string::npos) << s;
  EXPECT_NE(s.find("file write             3.5 ms"), std::string::npos) << s;
}

// The model load's progress line (app/load_progress.h).
void loadThreeComponents(LoadProgressPrinter& printer, std::chrono::milliseconds each) {
  const char* names[] = {"text encoder", "UNet", "VAE decoder"};
  double ms = 0;
  for (int i = 0; i < 3; ++i) {
    printer.update({names[i], i + 1, 3, ms, false});
    std::this_thread::sleep_for(each);
    ms += double(each.count());
  }
  printer.update({"", 3, 3, ms, true});
}

TEST(LoadProgress, Format) {
  EXPECT_EQ(formatLoadProgress({"UNet", 2, 3, 0, false}, 1.234), "loading model: UNet (2/3), 1.2 s");
}

TEST(LoadProgress, FastLoadsPrintNothing) {
  for (bool terminal : {false, true}) {
    std::FILE* f = std::tmpfile();
    ASSERT_NE(f, nullptr);
    {
      LoadProgressPrinter p(f, terminal, std::chrono::seconds(60));
      loadThreeComponents(p, std::chrono::milliseconds(1));
    }
    EXPECT_EQ(captured(f), "") << terminal;
    std::fclose(f);
  }
}

TEST(LoadProgress, SlowLoadsPrintEachComponentThenTheTotal) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    LoadProgressPrinter p(f, /*terminal=*/false, std::chrono::milliseconds(0));
    loadThreeComponents(p, std::chrono::milliseconds(5));
  }
  const std::string s = captured(f);
  EXPECT_EQ(s.rfind("loading model: text encoder (1/3), ", 0), 0u) << s;
  EXPECT_NE(s.find("\nloading model: UNet (2/3), "), std::string::npos) << s;
  EXPECT_NE(s.find("\nloading model: VAE decoder (3/3), "), std::string::npos) << s;
  EXPECT_NE(s.find("\nmodel loaded in "), std::string::npos) << s;
  EXPECT_EQ(std::count(s.begin(), s.end(), '\n'), 4) << s;  // one line per component: no duplicates
  EXPECT_EQ(s.find('\r'), std::string::npos) << s;
  std::fclose(f);
}

TEST(LoadProgress, TheLineAppearsOnceTheThresholdPassesMidComponent) {
  // Told of the UNet at 0 s, nothing more until well past the threshold: the printer's own thread prints it.
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    LoadProgressPrinter p(f, /*terminal=*/true, std::chrono::milliseconds(50));
    p.update({"UNet", 1, 1, 0, false});
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    p.update({"", 1, 1, 400, true});
  }
  const std::string s = captured(f);
  EXPECT_EQ(s.rfind("\rloading model: UNet (1/1), ", 0), 0u) << s;
  EXPECT_NE(s.find("\r\033[Kmodel loaded in "), std::string::npos) << s;
  EXPECT_EQ(std::count(s.begin(), s.end(), '\n'), 1) << s;
  std::fclose(f);
}

}  // namespace
}  // namespace sdgen::app
