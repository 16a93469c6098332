#pragma once
// The few NumPy/PyTorch array constructors diffusers' schedulers are built from, with their exact arithmetic
// (operation order, rounding, endpoint handling), so that timesteps and sigmas come out identical.
#include <cstdint>
#include <vector>

namespace sdgen::sampling::numpy_like {

// np.linspace(start, stop, num) in float64: i * ((stop - start) / (num - 1)) + start, the last value exactly
// stop; num == 1 gives {start}.
std::vector<double> linspace(double start, double stop, int num);

// np.arange(start, stop, step) in float64 for a non-integer step: ceil((stop - start) / step) values
// start + i * delta, where delta = (start + step) - start as NumPy's fill computes it.
std::vector<double> arange(double start, double stop, double step);

// np.round / Tensor.round: to the nearest integer, halves to even.
double roundHalfEven(double v);

// np.interp(x, [0, 1, ..., n-1], fp) for x in [0, n-1].
double interpUnitGrid(double x, const std::vector<double>& fp);

// torch.linspace(start, end, steps, dtype=torch.float32) on the CPU: float arithmetic from both ends,
// start + step * i for the first half and end - step * (steps - 1 - i) for the second, each one fused
// multiply-add as torch's x86 builds compute it.
std::vector<float> torchLinspaceF32(double start, double end, int steps);

}  // namespace sdgen::sampling::numpy_like
