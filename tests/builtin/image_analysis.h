#pragma once
// The simple image analysis of the built-in model's semantic test: what shape, color, position and size one
// generated picture shows. The same procedure as models/builtin/train/analysis.py (docs/builtin-model.md), which
// scored diffusers' images of the same prompts; keep the two in step.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace sdgen::test {

struct ImageAnalysis {
  bool found = false;
  std::string color, shape, size;
  double hue = 0, fill = 0;
  int position = -1;  // 3x3 cell, row-major from the top left
  int pixels = 0;
  std::array<double, 3> background{};
};

// rgb: uint8 [height, width, 3], top row first.
ImageAnalysis analyseImage(const std::vector<uint8_t>& rgb, int width, int height);

double hueDegrees(double r, double g, double b);  // HSV hue in [0, 360); 0 for gray
std::string nearestShapeColor(double hue);        // the named shape color of circularly nearest hue

}  // namespace sdgen::test
