#include "ops/conv2d_input_affine.h"

#include <cstdlib>
#include <cstring>
#include <vector>

#include "graph/expr_nodes.h"
#include "ops/conv2d_kernels.h"
#include "ops/elementwise.h"

namespace sdgen::ops {

using namespace graph;

namespace {

bool isBinary(const ExprNode& n, BinaryOp op) { return n.kind == ExprKind::Binary && n.op == int(op); }

// Whether the value of e (in the rank-4 NHWC frame of the conv input, shapes aligned right) depends only on
// the image and the channel: constant along H and W.
bool imageChannelOnly(const Expr& e) {
  const ExprNode& n = e.node();
  const Shape s = pad4(n.shape);
  if (s[1] == 1 && s[2] == 1) return true;  // broadcast along H and W by its consumer
  switch (n.kind) {
    case ExprKind::Constant:
    case ExprKind::Uniform: return true;
    case ExprKind::Buffer: {
      const Shape st = padStrides4(n.tensor);
      return (s[1] == 1 || st[1] == 0) && (s[2] == 1 || st[2] == 0);
    }
    case ExprKind::Broadcast:
    case ExprKind::Unary:
    case ExprKind::Clamp:
    case ExprKind::Binary:
      for (const Expr& c : n.children)
        if (!imageChannelOnly(c)) return false;
      return true;
    case ExprKind::RepeatInterleave: return imageChannelOnly(n.children[0]);
    default: return false;
  }
}

// The factors of a product tree (a * b * c ...), in order.
void factorsOf(const Expr& e, std::vector<Expr>& out) {
  const ExprNode& n = e.node();
  if (isBinary(n, BinaryOp::Mul)) {
    factorsOf(n.children[0], out);
    factorsOf(n.children[1], out);
  } else {
    out.push_back(e);
  }
}

// [N, 1, 1, C] of an image/channel-only expression seen at the input's shape.
Expr atImageChannel(const Expr& e, const Shape& x) { return slice(slice(broadcast(e, x), 1, 0, 1), 2, 0, 1); }

}  // namespace

std::optional<ConvInputAffine> convInputAffineOf(const Expr& input) {
  ConvInputAffine a;
  const Expr* e = &input;
  if (e->node().kind == ExprKind::Unary && e->node().op == int(UnaryOp::Silu)) {
    a.silu = true;
    e = &e->node().children[0];
  }
  const ExprNode& sum = e->node();
  if (!isBinary(sum, BinaryOp::Add)) return std::nullopt;
  const bool shiftFirst = imageChannelOnly(sum.children[0]);
  const Expr& product = sum.children[shiftFirst ? 1 : 0];
  const Expr& shift = sum.children[shiftFirst ? 0 : 1];
  if (!imageChannelOnly(shift)) return std::nullopt;
  std::vector<Expr> factors;
  factorsOf(product, factors);
  Expr scale, center;
  const Expr* raw = nullptr;
  for (const Expr& f : factors) {
    if (imageChannelOnly(f)) {
      scale = scale ? scale * f : f;
      continue;
    }
    if (raw) return std::nullopt;  // a second factor that varies over the image
    const ExprNode& fn = f.node();
    if (isBinary(fn, BinaryOp::Sub) && imageChannelOnly(fn.children[1])) {
      raw = &fn.children[0];
      center = fn.children[1];
    } else {
      raw = &f;
    }
  }
  if (!raw || !convInputRawHalf(*raw) || raw->shape() != input.shape()) return std::nullopt;
  a.x = raw->node().tensor;
  const Shape& xs = a.x.shape;
  if (xs[3] % 8) return std::nullopt;
  if (!scale) scale = constant(1.f);
  a.scale = atImageChannel(scale, xs);
  a.shift = atImageChannel(center ? shift - center * scale : shift, xs);
  return a;
}

Expr convInputAffineTable(const ConvInputAffine& a) { return concat(a.scale, a.shift, 3); }

Expr convInputThroughTable(Context& ctx, CommandSequence& seq, const ConvInputAffine& a, Conv2dScratch& scratch,
                           const std::string& label) {
  const Shape& xs = a.x.shape;
  const int64_t n = xs[0], cin = xs[3];
  const uint64_t bytes = uint64_t(n) * 2 * uint64_t(cin) * 4;
  const TensorView t = view(scratch.acquire(bytes, Conv2dScratch::Slot::Partials), DType::F32, {n, 1, 1, 2 * cin});
  elementwise(ctx, seq, convInputAffineTable(a), bufferSink(t), {.label = label});
  // The table seen at the input's shape: stride 0 along H and W.
  const TensorView scale{t.address, DType::F32, xs, {2 * cin, 0, 0, 1}};
  TensorView shift = scale;
  shift.address += uint64_t(cin) * 4;
  const Expr value = buffer(a.x) * buffer(scale) + buffer(shift);
  return a.silu ? silu(value) : value;
}

bool convInputTableWanted(int64_t inputElements) {
  const char* v = std::getenv("SDGEN_CONV_FUSE_NORM");
  if (v && std::strcmp(v, "0") == 0) return false;
  if (v && std::strcmp(v, "1") == 0) return true;
  return inputElements >= (int64_t(1) << 22);
}

}  // namespace sdgen::ops
