#include "models/pipeline/latent_preview.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/error.h"

namespace sdgen::pipeline {

LatentRgbProjection defaultLatentRgbProjection(int channels) {
  LatentRgbProjection p;
  p.channels = channels;
  p.weights.assign(size_t(3) * (channels + 1), 0.f);
  const int stride = channels + 1;
  if (channels == 4) {
    // Rows: latent channels 0..3; columns: R, G, B. Approximate linear map of SD 1.x/2.x's VAE decoder, on the
    // sampler's latents (before dividing by the scaling factor), to RGB in [-1, 1].
    const float f[4][3] = {{0.298f, 0.207f, 0.208f}, {0.187f, 0.286f, 0.173f}, {-0.158f, 0.189f, 0.264f},
                           {-0.184f, -0.271f, -0.473f}};
    for (int rgb = 0; rgb < 3; ++rgb) {
      for (int c = 0; c < 4; ++c) p.weights[rgb * stride + c] = f[c][rgb] * 0.5f;  // [-1, 1] -> [0, 1]
      p.weights[rgb * stride + 4] = 0.5f;
    }
  } else {
    for (int rgb = 0; rgb < 3; ++rgb) {
      for (int c = 0; c < channels; ++c) p.weights[rgb * stride + c] = 0.5f / float(std::max(channels, 1));
      p.weights[rgb * stride + channels] = 0.5f;
    }
  }
  return p;
}

void LatentRgbFit::add(const std::vector<float>& latents, int64_t h, int64_t w, const std::vector<float>& image,
                       int scale) {
  const int n = channels + 1;
  if (ata.empty()) {
    ata.assign(size_t(n) * n, 0.0);
    atb.assign(size_t(n) * 3, 0.0);
  }
  if (latents.size() != size_t(h * w * channels) || image.size() != size_t(h * scale * w * scale * 3))
    throw Error("latent preview fit: latents of " + std::to_string(latents.size()) + " values and an image of " +
                std::to_string(image.size()) + " do not match a " + std::to_string(h) + "x" + std::to_string(w) +
                "x" + std::to_string(channels) + " latent");
  const int64_t iw = w * scale;
  std::vector<double> x(n);
  for (int64_t y = 0; y < h; ++y)
    for (int64_t xx = 0; xx < w; ++xx) {
      for (int c = 0; c < channels; ++c) x[c] = latents[(y * w + xx) * channels + c];
      x[channels] = 1.0;
      double target[3] = {0, 0, 0};
      for (int dy = 0; dy < scale; ++dy)
        for (int dx = 0; dx < scale; ++dx)
          for (int k = 0; k < 3; ++k) target[k] += image[((y * scale + dy) * iw + xx * scale + dx) * 3 + k];
      for (double& t : target) t /= double(scale) * scale;
      for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) ata[i * n + j] += x[i] * x[j];
        for (int k = 0; k < 3; ++k) atb[i * 3 + k] += x[i] * target[k];
      }
      ++samples;
    }
}

LatentRgbProjection LatentRgbFit::solve() const {
  const int n = channels + 1;
  if (samples < size_t(4 * n)) return defaultLatentRgbProjection(channels);  // too few pixels to trust a fit
  // Gaussian elimination with partial pivoting on (A^T A + ridge) X = A^T b; the small ridge keeps a channel
  // that never varied from making the system singular.
  std::vector<double> m = ata, r = atb;
  for (int i = 0; i < n; ++i) m[i * n + i] += 1e-6 * double(samples);
  for (int col = 0; col < n; ++col) {
    int pivot = col;
    for (int row = col + 1; row < n; ++row)
      if (std::abs(m[row * n + col]) > std::abs(m[pivot * n + col])) pivot = row;
    for (int j = 0; j < n; ++j) std::swap(m[col * n + j], m[pivot * n + j]);
    for (int k = 0; k < 3; ++k) std::swap(r[col * 3 + k], r[pivot * 3 + k]);
    const double d = m[col * n + col];
    if (std::abs(d) < 1e-12) return defaultLatentRgbProjection(channels);
    for (int row = 0; row < n; ++row) {
      if (row == col) continue;
      const double f = m[row * n + col] / d;
      if (f == 0) continue;
      for (int j = 0; j < n; ++j) m[row * n + j] -= f * m[col * n + j];
      for (int k = 0; k < 3; ++k) r[row * 3 + k] -= f * r[col * 3 + k];
    }
  }
  LatentRgbProjection p;
  p.channels = channels;
  p.weights.resize(size_t(3) * n);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k) p.weights[k * n + i] = float(r[i * 3 + k] / m[i * n + i]);
  return p;
}

std::vector<uint8_t> projectLatents(const LatentRgbProjection& p, const std::vector<float>& latents) {
  const int c = p.channels, n = c + 1;
  const size_t pixels = c ? latents.size() / c : 0;
  std::vector<uint8_t> rgb(pixels * 3);
  for (size_t i = 0; i < pixels; ++i)
    for (int k = 0; k < 3; ++k) {
      float v = p.weights[k * n + c];
      for (int j = 0; j < c; ++j) v += p.weights[k * n + j] * latents[i * c + j];
      rgb[i * 3 + k] = static_cast<uint8_t>(std::nearbyint(std::clamp(v, 0.f, 1.f) * 255.f));
    }
  return rgb;
}

}  // namespace sdgen::pipeline
