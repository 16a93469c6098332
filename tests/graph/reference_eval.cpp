#include "tests/graph/reference_eval.h"

#include <cmath>
#include <stdexcept>

#include "graph/expr_nodes.h"
#include "tests/test_support.h"

namespace sdgen::test {

using namespace graph;

Allocation HostMemory::upload(Context& ctx, const std::vector<float>& values, DType dtype) {
  Allocation a = uploadFloats(ctx, values, dtype);
  Region r{a.size(), dtype, false, {}};
  for (float v : values) r.values.push_back(roundTo(dtype, v));
  regions_[a.address()] = std::move(r);
  return a;
}

Allocation HostMemory::uploadIndices(Context& ctx, const std::vector<int32_t>& values) {
  Allocation a = ctx.allocate(values.size() * 4, "indices");
  ctx.upload(a, 0, {reinterpret_cast<const uint8_t*>(values.data()), values.size() * 4});
  Region r{a.size(), DType::F32, true, {}};
  for (int32_t v : values) r.values.push_back(v);
  regions_[a.address()] = std::move(r);
  return a;
}

double HostMemory::read(const TensorView& t, int64_t elementOffset) const {
  auto it = regions_.upper_bound(t.address);
  if (it == regions_.begin()) throw std::runtime_error("reference: unknown tensor address");
  --it;
  uint64_t byte = t.address - it->first + uint64_t(elementOffset) * t.elementSize();
  uint64_t elemSize = it->second.isInt ? 4 : dtypeSize(it->second.dtype);
  if (byte % elemSize || byte / elemSize >= it->second.values.size())
    throw std::runtime_error("reference: read outside uploaded data");
  return it->second.values[byte / elemSize];
}

static double applyUnary(UnaryOp op, double x) {
  switch (op) {
    case UnaryOp::Neg: return -x;
    case UnaryOp::Abs: return std::fabs(x);
    case UnaryOp::Exp: return std::exp(x);
    case UnaryOp::Log: return std::log(x);
    case UnaryOp::Sqrt: return std::sqrt(x);
    case UnaryOp::Rsqrt: return 1 / std::sqrt(x);
    case UnaryOp::Sin: return std::sin(x);
    case UnaryOp::Cos: return std::cos(x);
    case UnaryOp::Tanh: return std::tanh(x);
    case UnaryOp::Sigmoid: return 1 / (1 + std::exp(-x));
    case UnaryOp::Relu: return x > 0 ? x : 0;
    case UnaryOp::Silu: return x / (1 + std::exp(-x));
    case UnaryOp::Gelu: return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case UnaryOp::GeluTanh: return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    case UnaryOp::QuickGelu: return x / (1 + std::exp(-1.702 * x));
  }
  return 0;
}

static double applyBinary(BinaryOp op, double a, double b) {
  switch (op) {
    case BinaryOp::Add: return a + b;
    case BinaryOp::Sub: return a - b;
    case BinaryOp::Mul: return a * b;
    case BinaryOp::Div: return a / b;
    case BinaryOp::Min: return std::min(a, b);
    case BinaryOp::Max: return std::max(a, b);
  }
  return 0;
}

double evalReference(const Expr& e, const Coord& c, const HostMemory& mem, double k) {
  const ExprNode& n = e.node();
  auto child = [&](size_t i, const Coord& cc) { return evalReference(n.children[i], cc, mem, k); };
  switch (n.kind) {
    case ExprKind::Buffer: {
      int64_t off = 0;
      for (size_t i = 0; i < c.size(); ++i) off += c[i] * n.tensor.strides[i];
      return mem.read(n.tensor, off);
    }
    case ExprKind::Constant: return n.value;
    case ExprKind::Uniform: throw std::runtime_error("reference: uniforms need a value");
    case ExprKind::KernelOutput: return k;
    case ExprKind::Unary: return applyUnary(static_cast<UnaryOp>(n.op), child(0, c));
    case ExprKind::Clamp: return std::min<double>(std::max<double>(child(0, c), n.value), n.value2);
    case ExprKind::Binary:
      return applyBinary(static_cast<BinaryOp>(n.op), child(0, c), child(1, c));
    case ExprKind::Broadcast: {
      const Shape& cs = n.children[0].shape();
      Coord cc(cs.size());
      size_t off = c.size() - cs.size();
      for (size_t i = 0; i < cs.size(); ++i) cc[i] = cs[i] == 1 ? 0 : c[i + off];
      return child(0, cc);
    }
    case ExprKind::Reshape: {
      int64_t lin = 0;
      for (size_t i = 0; i < c.size(); ++i) lin = lin * n.shape[i] + c[i];
      const Shape& cs = n.children[0].shape();
      Coord cc(cs.size());
      for (size_t i = cs.size(); i-- > 0;) {
        cc[i] = lin % cs[i];
        lin /= cs[i];
      }
      return child(0, cc);
    }
    case ExprKind::Permute: {
      Coord cc(c.size());
      for (size_t j = 0; j < c.size(); ++j) cc[n.perm[j]] = c[j];
      return child(0, cc);
    }
    case ExprKind::Slice: {
      Coord cc = c;
      cc[n.axis] += n.start;
      return child(0, cc);
    }
    case ExprKind::Concat: {
      int64_t na = n.children[0].shape()[n.axis];
      if (c[n.axis] < na) return child(0, c);
      Coord cc = c;
      cc[n.axis] -= na;
      return child(1, cc);
    }
    case ExprKind::Upsample2x: return child(0, {c[0], c[1] / 2, c[2] / 2, c[3]});
    case ExprKind::ResizeNearest: {
      const Shape& in = n.children[0].shape();
      return child(0, {c[0], c[1] * in[1] / n.shape[1], c[2] * in[2] / n.shape[2], c[3]});
    }
    case ExprKind::RepeatInterleave: {
      Coord cc = c;
      cc[n.axis] /= n.start;
      return child(0, cc);
    }
    case ExprKind::Gather: {
      int64_t off = 0;
      for (size_t i = 0; i + 1 < c.size(); ++i) off += c[i] * n.tensor.strides[i];
      int64_t row = static_cast<int64_t>(mem.read(n.tensor, off));
      return child(0, {row, c.back()});
    }
  }
  throw std::runtime_error("reference: unknown node");
}

std::vector<double> evalReference(const Expr& e, const HostMemory& mem) {
  const Shape& s = e.shape();
  std::vector<double> out(numel(s));
  Coord c(s.size(), 0);
  for (int64_t i = 0; i < numel(s); ++i) {
    int64_t rem = i;
    for (size_t a = s.size(); a-- > 0;) {
      c[a] = rem % s[a];
      rem /= s[a];
    }
    out[i] = evalReference(e, c, mem);
  }
  return out;
}

}  // namespace sdgen::test
