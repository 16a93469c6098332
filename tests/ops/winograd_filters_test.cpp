// ops::winograd::packFilters: the threaded, row-ordered filter transform gives U[36][Cin][Cout] equal, bit for
// bit, to one filterTransform per (co, ci) written where the kernels read it, for shapes that split over threads
// and shapes that do not.
#include <gtest/gtest.h>

#include <cstring>

#include "ops/conv2d_winograd_math.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

TEST(WinogradFilters, PackedLayoutEqualsOneTransformPerFilter) {
  struct Shape { int cout, cin; };
  for (Shape s : {Shape{3, 5}, Shape{37, 129}, Shape{130, 131}, Shape{257, 96}}) {
    SCOPED_TRACE(std::to_string(s.cout) + "x" + std::to_string(s.cin));
    const std::vector<float> w = test::randomFloats(size_t(s.cout) * s.cin * 9, uint32_t(s.cout * 1000 + s.cin));
    const std::vector<float> u = ops::winograd::packFilters(w, s.cout, s.cin);
    ASSERT_EQ(u.size(), size_t(36) * s.cin * s.cout);
    for (int co = 0; co < s.cout; ++co)
      for (int ci = 0; ci < s.cin; ++ci) {
        const auto t = ops::winograd::filterTransform(std::span<const float, 9>(w.data() + (size_t(co) * s.cin + ci) * 9, 9));
        for (int e = 0; e < 36; ++e) {
          const float want = static_cast<float>(t[e]), got = u[(size_t(e) * s.cin + ci) * s.cout + co];
          ASSERT_EQ(std::memcmp(&want, &got, 4), 0) << "co " << co << " ci " << ci << " e " << e;
        }
      }
  }
}

}  // namespace
}  // namespace sdgen
