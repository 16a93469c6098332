// The semantic test's image analysis on pictures drawn here with known content: every shape, color, cell and
// size is read back, and the analysis behaves as analysis.py specifies on the edge cases (no shape, noise specks).
#include <gtest/gtest.h>

#include <cmath>

#include "tests/builtin/image_analysis.h"

namespace sdgen::test {
namespace {

struct Rgb {
  uint8_t r, g, b;
};

// A 64x64 picture: one shape of half-side `half` centred at (cx, cy) on a plain background.
std::vector<uint8_t> draw(const std::string& shape, double cx, double cy, double half, Rgb fg, Rgb bg) {
  std::vector<uint8_t> img(64 * 64 * 3);
  for (int y = 0; y < 64; ++y)
    for (int x = 0; x < 64; ++x) {
      const double px = x + 0.5 - cx, py = y + 0.5 - cy;  // pixel centre relative to the shape's centre
      bool inside = false;
      if (shape == "square") inside = std::abs(px) <= half && std::abs(py) <= half;
      if (shape == "circle") inside = px * px + py * py <= half * half;
      if (shape == "triangle")  // apex up: at height py the half-width grows from 0 (top) to `half` (bottom)
        inside = py >= -half && py <= half && std::abs(px) <= half * (py + half) / (2 * half);
      const Rgb c = inside ? fg : bg;
      uint8_t* p = &img[(y * 64 + x) * 3];
      p[0] = c.r, p[1] = c.g, p[2] = c.b;
    }
  return img;
}

TEST(ImageAnalysis, ReadsShapeColorCellAndSize) {
  const struct {
    const char* name;
    Rgb rgb;
  } colors[] = {{"red", {230, 30, 30}},  {"orange", {245, 140, 20}}, {"yellow", {240, 220, 30}}, {"green", {40, 180, 60}},
                {"blue", {40, 80, 230}}, {"purple", {140, 50, 210}}, {"pink", {245, 100, 180}}};
  const double centres[] = {13, 32, 51};
  int n = 0;
  for (const char* shape : {"circle", "square", "triangle"})
    for (int cell = 0; cell < 9; ++cell)
      for (double half : {7.0, 10.0}) {
        const auto& color = colors[n++ % 7];
        const Rgb bg = n % 2 ? Rgb{250, 250, 250} : Rgb{15, 15, 15};
        ImageAnalysis a = analyseImage(draw(shape, centres[cell % 3], centres[cell / 3], half, color.rgb, bg), 64, 64);
        ASSERT_TRUE(a.found);
        EXPECT_EQ(a.shape, shape) << "fill " << a.fill << ", cell " << cell << ", half " << half;
        EXPECT_EQ(a.color, color.name) << "hue " << a.hue;
        EXPECT_EQ(a.position, cell);
        EXPECT_EQ(a.size, half > 8 ? "large" : "small") << shape << " half " << half;
        EXPECT_EQ(a.background[0], bg.r);
      }
}

TEST(ImageAnalysis, NamedHuesAndGray) {
  EXPECT_EQ(hueDegrees(255, 0, 0), 0);
  EXPECT_DOUBLE_EQ(hueDegrees(0, 255, 0), 120);
  EXPECT_DOUBLE_EQ(hueDegrees(0, 0, 255), 240);
  EXPECT_DOUBLE_EQ(hueDegrees(255, 0, 128), 360 - 30.117647058823529);  // magenta-red: (g - b) / c wraps mod 6
  EXPECT_EQ(hueDegrees(128, 128, 128), 0);
  EXPECT_EQ(nearestShapeColor(355), "red");
  EXPECT_EQ(nearestShapeColor(225), "blue");
}

TEST(ImageAnalysis, PlainPicturesAndSpecksHaveNoShape) {
  std::vector<uint8_t> plain(64 * 64 * 3, 128);
  EXPECT_FALSE(analyseImage(plain, 64, 64).found);
  // A 2x2 speck is below the 16-pixel minimum; a 4x4 one (exactly 16 pixels) is found, as a square.
  std::vector<uint8_t> speck = draw("square", 32, 32, 1.4, {230, 30, 30}, {250, 250, 250});
  EXPECT_FALSE(analyseImage(speck, 64, 64).found);
  ImageAnalysis four = analyseImage(draw("square", 32, 32, 2.4, {230, 30, 30}, {250, 250, 250}), 64, 64);
  EXPECT_TRUE(four.found);
  EXPECT_EQ(four.pixels, 16);
  EXPECT_EQ(four.shape, "square");
}

TEST(ImageAnalysis, TheLargestComponentWins) {
  // Two shapes: the larger one decides color, shape and cell.
  std::vector<uint8_t> img = draw("circle", 13, 13, 7, {40, 80, 230}, {15, 15, 15});
  std::vector<uint8_t> big = draw("square", 51, 51, 10, {240, 220, 30}, {15, 15, 15});
  for (size_t i = 0; i < img.size(); i += 3)
    if (big[i] != 15) img[i] = big[i], img[i + 1] = big[i + 1], img[i + 2] = big[i + 2];
  ImageAnalysis a = analyseImage(img, 64, 64);
  EXPECT_EQ(a.color, "yellow");
  EXPECT_EQ(a.shape, "square");
  EXPECT_EQ(a.position, 8);
}

}  // namespace
}  // namespace sdgen::test
