// The model load's progress line: silent for a load under the threshold; past it, a line per component (or one
// line redrawn on a terminal) and the total at the end.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>

#include "app/load_progress.h"

namespace sdgen::app {
namespace {

std::string captured(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  char buf[256];
  while (size_t n = std::fread(buf, 1, sizeof buf, f)) s.append(buf, n);
  return s;
}

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
