#pragma once
// The attention tests' fixture (tests/ops/attention_test.cpp, attention_tail_split_test.cpp): q, k, v inputs, a
// naive float64 softmax(Q K^T * scale) V, and one recorded run compared against it.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "engine/command_sequence.h"
#include "graph/expr.h"
#include "ops/attention.h"
#include "tests/graph/tensor_fixture.h"

namespace sdgen::test {

class AttentionFixture : public TensorTest {
 protected:
  using Expr = graph::Expr;
  using Shape = graph::Shape;
  using TensorView = graph::TensorView;
  // The tensor-core kernel rounds Q, K, V and P to fp16: the fp16 bound in both storage types.
  double tolerance() const override { return coopTolerance_ ? 5e-3 : TensorTest::tolerance(); }
  bool coopTolerance_ = false;

  // Naive attention over the reference values of q [B, Sq, H, D], k and v [B, Sk, H, D]; row-major result.
  std::vector<double> reference(const Expr& q, const Expr& k, const Expr& v, bool causal, double scale = 0) {
    const Shape &qs = q.shape(), &ks = k.shape();
    const int64_t B = qs[0], Sq = qs[1], H = qs[2], D = qs[3], Sk = ks[1];
    if (scale == 0) scale = 1 / std::sqrt(double(D));
    auto qv = test::evalReference(q, mem_), kv = test::evalReference(k, mem_), vv = test::evalReference(v, mem_);
    std::vector<double> out(qv.size()), s(Sk);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < Sq; ++i) {
          const double* qi = &qv[((b * Sq + i) * H + h) * D];
          double mx = -INFINITY, sum = 0;
          for (int64_t j = 0; j < Sk; ++j) {
            const double* kj = &kv[((b * Sk + j) * H + h) * D];
            double dot = 0;
            for (int64_t d = 0; d < D; ++d) dot += qi[d] * kj[d];
            s[j] = causal && j > i ? -INFINITY : dot * scale;
            mx = std::max(mx, s[j]);
          }
          for (int64_t j = 0; j < Sk; ++j) sum += s[j] = std::exp(s[j] - mx);
          for (int64_t d = 0; d < D; ++d) {
            double acc = 0;
            for (int64_t j = 0; j < Sk; ++j) acc += s[j] * vv[((b * Sk + j) * H + h) * D + d];
            out[((b * Sq + i) * H + h) * D + d] = acc / sum;
          }
        }
    return out;
  }
  // A row-major [B, S, H, D] result as [B, H, S, D] (for outputs written through a permuted sink).
  static std::vector<double> headMajorOf(const std::vector<double>& x, int64_t B, int64_t S, int64_t H, int64_t D) {
    std::vector<double> t(x.size());
    for (int64_t b = 0; b < B; ++b)
      for (int64_t s = 0; s < S; ++s)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t d = 0; d < D; ++d) t[((b * H + h) * S + s) * D + d] = x[((b * S + s) * H + h) * D + d];
    return t;
  }
  // Dense q, k, v buffers; q in a wider range so the softmax is peaked and the running max moves.
  struct Problem {
    Expr q, k, v;
  };
  Problem dense(int64_t B, int64_t Sq, int64_t Sk, int64_t H, int64_t D, uint32_t seed) {
    return {input({B, Sq, H, D}, seed, -3.f, 3.f), input({B, Sk, H, D}, seed + 1), input({B, Sk, H, D}, seed + 2)};
  }
  ops::AttentionInfo run(const Problem& p, ops::AttentionOptions options, const std::string& what) {
    TensorView out = output(p.q.shape());
    CommandSequence seq(ctx());
    auto info = ops::attention(ctx(), seq, p.q, p.k, p.v, bufferSink(out), options);
    seq.run();
    compare(read(out), reference(p.q, p.k, p.v, options.causal, options.scale.value_or(0)),
            what + " (" + (info.coopMatrix ? info.coopTile.describe()
                           : info.lanesRowsPerLane ? "lanes kernel, " + std::to_string(info.lanesRowsPerLane) +
                                                     " rows per lane"
                                                   : info.tile.describe()) + ")");
    return info;
  }
};

}  // namespace sdgen::test
