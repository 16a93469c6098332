#include "ops/linear_norm.h"

#include "graph/expr_nodes.h"
#include "ops/linear_gemm.h"

namespace sdgen::ops {

using namespace graph;

namespace {

const ExprNode& strip(const Expr& e) {  // through implicit broadcasts
  const ExprNode* n = &e.node();
  while (n->kind == ExprKind::Broadcast) n = &n->children[0].node();
  return *n;
}

bool isBinary(const ExprNode& n, BinaryOp op) { return n.kind == ExprKind::Binary && n.op == int(op); }
bool isConstant(const ExprNode& n) { return n.kind == ExprKind::Constant; }

// buffer(view) * constant(c): the (sum or sum-of-squares) view and c.
bool scaledStat(const ExprNode& n, TensorView& view, float& c) {
  if (!isBinary(n, BinaryOp::Mul)) return false;
  const ExprNode &b = strip(n.children[0]), &k = strip(n.children[1]);
  if (b.kind != ExprKind::Buffer || !isConstant(k)) return false;
  view = b.tensor;
  c = k.value;
  return true;
}

// A dense fp32 vector of k elements along the last axis (broadcast over the others: stride 0, as
// graph::broadcast folds it into the view).
bool vectorOfK(const ExprNode& n, int64_t k, VkDeviceAddress& address) {
  if (n.kind != ExprKind::Buffer) return false;
  const TensorView& t = n.tensor;
  if (t.isInt32 || t.dtype != DType::F32 || t.shape.empty() || t.shape.back() != k || t.strides.back() != 1 ||
      t.address % 16)
    return false;
  for (size_t i = 0; i + 1 < t.shape.size(); ++i)
    if (t.shape[i] != 1 && t.strides[i] != 0) return false;
  address = t.address;
  return true;
}

}  // namespace

std::optional<RowNorm> rowNormOf(const Expr& a, int64_t k) {
  // ((x - mean) * rstd) * gamma + beta
  const ExprNode& top = a.node();
  if (!isBinary(top, BinaryOp::Add)) return std::nullopt;
  const ExprNode& scaled = strip(top.children[0]);
  if (!isBinary(scaled, BinaryOp::Mul)) return std::nullopt;
  const ExprNode& normalized = strip(scaled.children[0]);
  if (!isBinary(normalized, BinaryOp::Mul)) return std::nullopt;
  const ExprNode& centered = strip(normalized.children[0]);
  if (!isBinary(centered, BinaryOp::Sub)) return std::nullopt;
  RowNorm r;
  if (!vectorOfK(strip(scaled.children[1]), k, r.gamma) || !vectorOfK(strip(top.children[1]), k, r.beta))
    return std::nullopt;
  const Expr& x = centered.children[0];
  if (rawHalfRowStride(x, k) == 0) return std::nullopt;
  r.x = x.node().tensor;
  // mean = sum * (1 / K)
  TensorView sum, sq;
  float c = 0, c2 = 0;
  if (!scaledStat(strip(centered.children[1]), sum, c)) return std::nullopt;
  // rstd = rsqrt(max(sq * (1 / K) - mean * mean, 0) + eps)
  const ExprNode& rstd = strip(normalized.children[1]);
  if (rstd.kind != ExprKind::Unary || rstd.op != int(UnaryOp::Rsqrt)) return std::nullopt;
  const ExprNode& plusEps = strip(rstd.children[0]);
  if (!isBinary(plusEps, BinaryOp::Add) || !isConstant(strip(plusEps.children[1]))) return std::nullopt;
  const ExprNode& clamped = strip(plusEps.children[0]);
  if (!isBinary(clamped, BinaryOp::Max) || !isConstant(strip(clamped.children[1])) ||
      strip(clamped.children[1]).value != 0.f)
    return std::nullopt;
  const ExprNode& var = strip(clamped.children[0]);
  if (!isBinary(var, BinaryOp::Sub) || !scaledStat(strip(var.children[0]), sq, c2)) return std::nullopt;
  const ExprNode& meanSq = strip(var.children[1]);
  TensorView m1, m2;
  float c3 = 0, c4 = 0;
  if (!isBinary(meanSq, BinaryOp::Mul) || !scaledStat(strip(meanSq.children[0]), m1, c3) ||
      !scaledStat(strip(meanSq.children[1]), m2, c4))
    return std::nullopt;
  // One statistics tensor: (sum, sum of squares) interleaved, row g's pair at 2 g (the layer-norm view: the
  // rows' strides are twice the dense ones of x's leading axes, 0 along K).
  if (sum.dtype != DType::F32 || sum.isInt32 || sq.address != sum.address + 4 || m1.address != sum.address ||
      m2.address != sum.address || sum.address % 8 || c != c2 || c != c3 || c != c4 || c != float(1.0 / double(k)))
    return std::nullopt;
  if (sum.shape != x.shape() || sum.strides.back() != 0) return std::nullopt;
  int64_t dense = 2;
  for (size_t i = sum.shape.size() - 1; i-- > 0;) {
    if (sum.shape[i] != 1 && sum.strides[i] != dense) return std::nullopt;
    dense *= sum.shape[i];
  }
  r.stats = sum.address;
  r.invCount = c;
  r.eps = strip(plusEps.children[1]).value;
  return r;
}

}  // namespace sdgen::ops
