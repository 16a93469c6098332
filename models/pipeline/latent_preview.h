#pragma once
// The live preview of a generation: a cheap linear projection of the latents to RGB at latent resolution (no VAE
// decode), fitted to the loaded model from its own decoded images.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace sdgen::pipeline {

// A cheap look at the latents while they denoise: a linear latent -> RGB projection at latent resolution
// (no VAE), for a live preview.
struct LatentPreview {
  int step = 0, steps = 0;
  int width = 0, height = 0;  // latent size (image size / the VAE's scale factor), or the image size (TAESD)
  std::vector<uint8_t> rgb;   // width * height * 3, top row first
  int pixelScale = 8;         // image pixels per preview pixel along each side: the VAE's factor, 1 for TAESD
};

// rgb = clamp(M * [z_0 .. z_{C-1}, 1], 0, 1) per latent pixel: 3 rows of C weights and a bias.
struct LatentRgbProjection {
  int channels = 0;
  std::vector<float> weights;  // 3 x (channels + 1), row-major (R row, G row, B row), last column the bias
};

// The usual approximate factors for Stable Diffusion 1.x/2.x's 4-channel latent space (the community's fit of
// SD's VAE, as in stable-diffusion-webui's "Approx cheap" preview): rgb in [-1, 1] = F^T z, mapped to [0, 1].
// For other channel counts: the channel mean as gray.
LatentRgbProjection defaultLatentRgbProjection(int channels);

// Least-squares fit of a projection from latents (h x w x C, NHWC) and their decoded image (h*s x w*s x 3 in
// [0, 1]): each latent pixel against the mean of its s x s block. Accumulates into `normal` (the normal
// equations, (C+1) x (C+1) then (C+1) x 3) so several images refine one fit; returns the current solution.
struct LatentRgbFit {
  int channels = 0;
  std::vector<double> ata, atb;
  size_t samples = 0;
  void add(const std::vector<float>& latentsNhwc, int64_t h, int64_t w, const std::vector<float>& imageHwc, int scale);
  LatentRgbProjection solve() const;
};

// Applies a projection to NHWC latents.
std::vector<uint8_t> projectLatents(const LatentRgbProjection& p, const std::vector<float>& latentsNhwc);

}  // namespace sdgen::pipeline
