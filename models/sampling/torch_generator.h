#pragma once
// PyTorch's CPU random generator, reproduced so that a seed gives the same initial latents and the same
// ancestral-sampling noise as diffusers with generator=torch.Generator("cpu").manual_seed(seed):
//
//   - the engine is MT19937 seeded with the low 32 bits of the seed (torch's at::mt19937);
//   - a float uniform is the low 24 bits of one 32-bit draw times 2^-24; a double uniform is the low 53 bits
//     of a 64-bit draw (first 32-bit draw in the high half) times 2^-53;
//   - torch.randn of a contiguous float32 tensor of 16 or more elements first fills the tensor with float
//     uniforms, then applies Box-Muller to each chunk of 16 (element j pairs with j + 8: radius from the
//     first, angle from the second, cosine into j, sine into j + 8); when the size is not a multiple of 16,
//     the last 16 elements are drawn again and transformed again;
//   - fewer than 16 elements: one double-precision normal per element (Box-Muller on two double uniforms,
//     the second result cached for the next call, which is how successive small draws interleave).
//
// On x86-64 CPUs with AVX2 (what PyTorch's wheels select on essentially every PC and server) the 16-element
// transform uses vector approximations of log and sin/cos (avx_mathfun, the Cephes polynomials) with fused
// multiply-adds; Math::Avx2 reproduces them bit for bit. Math::Scalar is the path without AVX2 (e.g. ARM
// builds, or ATEN_CPU_CAPABILITY=default): libm's logf/sinf/cosf. Both were checked bit-exact against
// torch 2.11 (see docs/models.md, "Samplers").
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <vector>

namespace sdgen::sampling {

class TorchCpuGenerator {
 public:
  enum class Math { Avx2, Scalar };

  explicit TorchCpuGenerator(uint64_t seed = 67280421310721ull, Math math = Math::Avx2);

  // torch.Generator.manual_seed: restarts the engine and forgets the cached normal sample.
  void manualSeed(uint64_t seed);
  uint64_t initialSeed() const { return seed_; }

  // torch.randn(shape, generator=g) for a contiguous float32 tensor of out.size() elements (only the element
  // count matters). Successive calls continue the stream, as successive torch calls do.
  void randn(std::span<float> out);
  std::vector<float> randn(size_t count);

  // The primitives the above is made of (torch.rand of a float tensor draws uniformFloat per element).
  uint32_t random();
  uint64_t random64();
  float uniformFloat();    // [0, 1), 24-bit
  double uniformDouble();  // [0, 1), 53-bit
  double normalDouble();   // at::normal_distribution<double>(0, 1) with its cached second sample

 private:
  void boxMuller16(float* data) const;

  std::mt19937 engine_;
  uint64_t seed_ = 0;
  Math math_;
  std::optional<double> nextDoubleNormal_;
};

}  // namespace sdgen::sampling
