#include "graph/expr.h"

#include <algorithm>
#include <functional>
#include <optional>

#include "engine/error.h"
#include "graph/expr_nodes.h"

namespace sdgen::graph {

const Shape& Expr::shape() const { return node_->shape; }
const Shape& Sink::shape() const { return node_->shape; }

Shape pad4(const Shape& s) {
  Shape out(4 - s.size(), 1);
  out.insert(out.end(), s.begin(), s.end());
  return out;
}

Shape padStrides4(const TensorView& t) {
  Shape out(4 - t.strides.size(), 0);
  out.insert(out.end(), t.strides.begin(), t.strides.end());
  return out;
}

namespace {

std::shared_ptr<ExprNode> make(ExprKind kind, Shape shape, std::vector<Expr> children = {}) {
  auto n = std::make_shared<ExprNode>();
  n->kind = kind;
  n->shape = std::move(shape);
  n->children = std::move(children);
  return n;
}

void checkRank(const Shape& s, const char* what) {
  if (s.empty() || s.size() > 4) throw Error(std::string(what) + ": rank must be 1..4, got " + shapeString(s));
  for (auto d : s)
    if (d <= 0) throw Error(std::string(what) + ": dimensions must be positive, got " + shapeString(s));
}

int normAxis(int axis, size_t rank, const char* what) {
  int r = static_cast<int>(rank);
  if (axis < -r || axis >= r)
    throw Error(std::string(what) + ": axis " + std::to_string(axis) + " out of range for rank " + std::to_string(r));
  return axis < 0 ? axis + r : axis;
}

bool isBuffer(const Expr& e) { return e.node().kind == ExprKind::Buffer; }

Expr bufferWith(const TensorView& t) {
  auto n = make(ExprKind::Buffer, t.shape);
  n->tensor = t;
  return Expr(n);
}

// The strides of a view (shape, strides) reshaped to `to` without moving data, or nullopt where no strides
// can express it (PyTorch's view rule): the old axes split into runs that are contiguous in memory, each run
// holding the same elements as a run of new axes, whose strides then follow from the run's innermost stride.
// Broadcast (stride 0) axes are left to the Reshape node.
std::optional<Shape> viewStrides(const Shape& from, const Shape& strides, const Shape& to) {
  if (from.empty() || to.empty()) return std::nullopt;
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1 && strides[i] == 0) return std::nullopt;
  Shape out(to.size(), 0);
  int view = static_cast<int>(to.size()) - 1;
  int64_t base = strides.back(), runElems = 1, viewElems = 1;
  for (int d = static_cast<int>(from.size()) - 1; d >= 0; --d) {
    runElems *= from[d];
    // The run ends at axis d when the next-outer axis is not contiguous with it.
    if (d == 0 || (from[d - 1] != 1 && strides[d - 1] != runElems * base)) {
      while (view >= 0 && (viewElems < runElems || to[view] == 1)) {
        out[view] = viewElems * base;
        viewElems *= to[view];
        --view;
      }
      if (viewElems != runElems) return std::nullopt;
      if (d > 0) {
        base = strides[d - 1];
        runElems = viewElems = 1;
      }
    }
  }
  if (view != -1) return std::nullopt;
  return out;
}

}  // namespace

Expr buffer(const TensorView& t) {
  checkRank(t.shape, "buffer");
  if (t.strides.size() != t.shape.size()) throw Error("buffer: strides and shape differ in rank");
  if (t.isInt32) throw Error("buffer: int32 tensors can only be used as gather indices");
  return bufferWith(t);
}

Expr constant(float value) {
  auto n = make(ExprKind::Constant, {1});
  n->value = value;
  return Expr(n);
}

Expr uniform(uint32_t slot) {
  auto n = make(ExprKind::Uniform, {1});
  n->slot = slot;
  return Expr(n);
}

Expr kernelOutput(const Shape& shape) {
  checkRank(shape, "kernelOutput");
  return Expr(make(ExprKind::KernelOutput, shape));
}

Expr unary(UnaryOp op, const Expr& a) {
  auto n = make(ExprKind::Unary, a.shape(), {a});
  n->op = static_cast<int>(op);
  return Expr(n);
}

Expr clamp(const Expr& a, float lo, float hi) {
  if (!(lo <= hi)) throw Error("clamp: lo " + std::to_string(lo) + " > hi " + std::to_string(hi));
  auto n = make(ExprKind::Clamp, a.shape(), {a});
  n->value = lo;
  n->value2 = hi;
  return Expr(n);
}

static Shape broadcastShapes(const Shape& a, const Shape& b, const char* what) {
  size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1)
      throw Error(std::string(what) + ": shapes " + shapeString(a) + " and " + shapeString(b) +
                  " cannot be broadcast together");
    out[i] = std::max(da, db);
  }
  return out;
}

Expr binary(BinaryOp op, const Expr& a, const Expr& b) {
  Shape s = broadcastShapes(a.shape(), b.shape(), "binary operation");
  auto n = make(ExprKind::Binary, s, {broadcast(a, s), broadcast(b, s)});
  n->op = static_cast<int>(op);
  return Expr(n);
}

Expr neg(const Expr& a) { return unary(UnaryOp::Neg, a); }
Expr abs(const Expr& a) { return unary(UnaryOp::Abs, a); }
Expr exp(const Expr& a) { return unary(UnaryOp::Exp, a); }
Expr log(const Expr& a) { return unary(UnaryOp::Log, a); }
Expr sqrt(const Expr& a) { return unary(UnaryOp::Sqrt, a); }
Expr rsqrt(const Expr& a) { return unary(UnaryOp::Rsqrt, a); }
Expr sin(const Expr& a) { return unary(UnaryOp::Sin, a); }
Expr cos(const Expr& a) { return unary(UnaryOp::Cos, a); }
Expr tanh(const Expr& a) { return unary(UnaryOp::Tanh, a); }
Expr sigmoid(const Expr& a) { return unary(UnaryOp::Sigmoid, a); }
Expr relu(const Expr& a) { return unary(UnaryOp::Relu, a); }
Expr silu(const Expr& a) { return unary(UnaryOp::Silu, a); }
Expr gelu(const Expr& a) { return unary(UnaryOp::Gelu, a); }
Expr geluTanh(const Expr& a) { return unary(UnaryOp::GeluTanh, a); }
Expr quickGelu(const Expr& a) { return unary(UnaryOp::QuickGelu, a); }
Expr min(const Expr& a, const Expr& b) { return binary(BinaryOp::Min, a, b); }
Expr max(const Expr& a, const Expr& b) { return binary(BinaryOp::Max, a, b); }
Expr operator+(const Expr& a, const Expr& b) { return binary(BinaryOp::Add, a, b); }
Expr operator-(const Expr& a, const Expr& b) { return binary(BinaryOp::Sub, a, b); }
Expr operator*(const Expr& a, const Expr& b) { return binary(BinaryOp::Mul, a, b); }
Expr operator/(const Expr& a, const Expr& b) { return binary(BinaryOp::Div, a, b); }

Expr broadcast(const Expr& a, const Shape& shape) {
  checkRank(shape, "broadcast");
  const Shape& s = a.shape();
  if (s == shape) return a;
  if (s.size() > shape.size())
    throw Error("broadcast: cannot broadcast " + shapeString(s) + " to lower rank " + shapeString(shape));
  size_t off = shape.size() - s.size();
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] != 1 && s[i] != shape[i + off])
      throw Error("broadcast: cannot broadcast " + shapeString(s) + " to " + shapeString(shape));
  if (a.node().kind == ExprKind::Constant || a.node().kind == ExprKind::Uniform) {  // scalars fit any shape
    auto n = std::make_shared<ExprNode>(a.node());
    n->shape = shape;
    return Expr(n);
  }
  if (isBuffer(a)) {  // fold into the view: stride 0 on expanded axes
    TensorView t = a.node().tensor;
    Shape strides(shape.size(), 0);
    for (size_t i = 0; i < s.size(); ++i) strides[i + off] = s[i] == 1 ? 0 : t.strides[i];
    t.shape = shape;
    t.strides = strides;
    return bufferWith(t);
  }
  return Expr(make(ExprKind::Broadcast, shape, {a}));
}

Expr reshape(const Expr& a, const Shape& shape) {
  checkRank(shape, "reshape");
  if (numel(shape) != numel(a.shape()))
    throw Error("reshape: " + shapeString(a.shape()) + " has " + std::to_string(numel(a.shape())) +
                " elements, " + shapeString(shape) + " has " + std::to_string(numel(shape)));
  if (shape == a.shape()) return a;
  if (isBuffer(a)) {  // fold into the view where strides can express it (a slice's heads, a dense tensor)
    TensorView t = a.node().tensor;
    if (auto strides = viewStrides(t.shape, t.strides, shape)) {
      t.shape = shape;
      t.strides = *strides;
      return bufferWith(t);
    }
  }
  return Expr(make(ExprKind::Reshape, shape, {a}));
}

static void checkPerm(const std::vector<int>& perm, size_t rank, const char* what) {
  std::vector<bool> seen(rank, false);
  bool ok = perm.size() == rank;
  for (int p : perm) {
    if (!ok || p < 0 || p >= static_cast<int>(rank) || seen[p]) { ok = false; break; }
    seen[p] = true;
  }
  if (!ok) {
    std::string ps;
    for (int p : perm) ps += (ps.empty() ? "" : ",") + std::to_string(p);
    throw Error(std::string(what) + ": [" + ps + "] is not a permutation of " + std::to_string(rank) + " axes");
  }
}

Expr permute(const Expr& a, const std::vector<int>& perm) {
  checkPerm(perm, a.shape().size(), "permute");
  Shape s(perm.size());
  for (size_t j = 0; j < perm.size(); ++j) s[j] = a.shape()[perm[j]];
  if (isBuffer(a)) {  // fold: permuted strides
    TensorView t = a.node().tensor;
    Shape st(perm.size());
    for (size_t j = 0; j < perm.size(); ++j) st[j] = t.strides[perm[j]];
    t.shape = s;
    t.strides = st;
    return bufferWith(t);
  }
  auto n = make(ExprKind::Permute, s, {a});
  n->perm = perm;
  return Expr(n);
}

Expr transpose(const Expr& a, int axis0, int axis1) {
  size_t r = a.shape().size();
  axis0 = normAxis(axis0, r, "transpose");
  axis1 = normAxis(axis1, r, "transpose");
  std::vector<int> perm(r);
  for (size_t i = 0; i < r; ++i) perm[i] = static_cast<int>(i);
  std::swap(perm[axis0], perm[axis1]);
  return permute(a, perm);
}

Expr slice(const Expr& a, int axis, int64_t start, int64_t length) {
  axis = normAxis(axis, a.shape().size(), "slice");
  int64_t dim = a.shape()[axis];
  if (start < 0 || length <= 0 || start + length > dim)
    throw Error("slice: [" + std::to_string(start) + ", " + std::to_string(start + length) + ") outside axis " +
                std::to_string(axis) + " of " + shapeString(a.shape()));
  Shape s = a.shape();
  s[axis] = length;
  if (isBuffer(a)) {  // fold: offset the address
    TensorView t = a.node().tensor;
    t.address += uint64_t(start * t.strides[axis]) * t.elementSize();
    t.shape = s;
    return bufferWith(t);
  }
  auto n = make(ExprKind::Slice, s, {a});
  n->axis = axis;
  n->start = start;
  return Expr(n);
}

Expr sliceLastDim(const Expr& a, int64_t start, int64_t length) {
  return slice(a, static_cast<int>(a.shape().size()) - 1, start, length);
}

Expr concat(const Expr& a, const Expr& b, int axis) {
  if (a.shape().size() != b.shape().size())
    throw Error("concat: ranks differ: " + shapeString(a.shape()) + " and " + shapeString(b.shape()));
  axis = normAxis(axis, a.shape().size(), "concat");
  Shape s = a.shape();
  for (size_t i = 0; i < s.size(); ++i)
    if (static_cast<int>(i) != axis && a.shape()[i] != b.shape()[i])
      throw Error("concat along axis " + std::to_string(axis) + ": shapes " + shapeString(a.shape()) + " and " +
                  shapeString(b.shape()) + " differ on axis " + std::to_string(i));
  s[axis] += b.shape()[axis];
  auto n = make(ExprKind::Concat, s, {a, b});
  n->axis = axis;
  return Expr(n);
}

Expr upsample2x(const Expr& a) {
  if (a.shape().size() != 4) throw Error("upsample2x: expects an NHWC tensor of rank 4, got " + shapeString(a.shape()));
  Shape s = a.shape();
  s[1] *= 2;
  s[2] *= 2;
  return Expr(make(ExprKind::Upsample2x, s, {a}));
}

Expr resizeNearest(const Expr& a, int64_t height, int64_t width) {
  const Shape& in = a.shape();
  if (in.size() != 4 || height <= 0 || width <= 0)
    throw Error("resizeNearest: expects an NHWC tensor of rank 4 and a positive size, got " + shapeString(in) + " to " +
                std::to_string(height) + "x" + std::to_string(width));
  if (height == in[1] * 2 && width == in[2] * 2) return upsample2x(a);
  if (height == in[1] && width == in[2]) return a;
  return Expr(make(ExprKind::ResizeNearest, {in[0], height, width, in[3]}, {a}));
}

Expr repeatInterleave(const Expr& a, int axis, int64_t factor) {
  axis = normAxis(axis, a.shape().size(), "repeatInterleave");
  if (factor < 1) throw Error("repeatInterleave: factor must be >= 1, got " + std::to_string(factor));
  if (factor == 1) return a;
  Shape s = a.shape();
  s[axis] *= factor;
  auto n = make(ExprKind::RepeatInterleave, s, {a});
  n->axis = axis;
  n->start = factor;
  return Expr(n);
}

Expr gather(const Expr& table, const TensorView& indices) {
  if (table.shape().size() != 2) throw Error("gather: table must be [V, D], got " + shapeString(table.shape()));
  if (!indices.isInt32) throw Error("gather: indices must be an int32 tensor (graph::indexView)");
  if (indices.shape.size() > 3) throw Error("gather: indices rank must be <= 3, got " + shapeString(indices.shape));
  Shape s = indices.shape;
  s.push_back(table.shape()[1]);
  auto n = make(ExprKind::Gather, s, {table});
  n->tensor = indices;
  return Expr(n);
}

// ---- sinks ----

static std::shared_ptr<SinkNode> makeSink(SinkKind kind, Shape shape) {
  auto n = std::make_shared<SinkNode>();
  n->kind = kind;
  n->shape = std::move(shape);
  return n;
}

Sink bufferSink(const TensorView& t) {
  checkRank(t.shape, "bufferSink");
  if (t.isInt32) throw Error("bufferSink: int32 tensors are not writable by kernels");
  for (auto s : t.strides)
    if (s == 0) throw Error("bufferSink: a broadcast (stride 0) view cannot be written");
  auto n = makeSink(SinkKind::Buffer, t.shape);
  n->tensor = t;
  return Sink(n);
}

Sink accumulate(const TensorView& t) {
  Sink b = bufferSink(t);
  auto n = makeSink(SinkKind::Accumulate, t.shape);
  n->tensor = t;
  return Sink(n);
}

Sink permute(const Sink& s, const std::vector<int>& perm) {
  checkPerm(perm, s.shape().size(), "permute sink");
  // value.permute(perm) has the child's shape: child[j] = value[perm[j]].
  Shape v(perm.size());
  for (size_t j = 0; j < perm.size(); ++j) v[perm[j]] = s.shape()[j];
  auto n = makeSink(SinkKind::Permute, v);
  n->children = {s};
  n->perm = perm;
  return Sink(n);
}

Sink partition(const std::vector<Sink>& parts, int axis) {
  if (parts.empty() || parts.size() > 4) throw Error("partition: needs 1..4 parts, got " + std::to_string(parts.size()));
  Shape s = parts[0].shape();
  axis = normAxis(axis, s.size(), "partition");
  for (auto& p : parts)
    if (p.shape() != parts[0].shape())
      throw Error("partition: parts must have equal shapes, got " + shapeString(p.shape()) + " and " +
                  shapeString(parts[0].shape()));
  s[axis] *= static_cast<int64_t>(parts.size());
  auto n = makeSink(SinkKind::Partition, s);
  n->children = parts;
  n->axis = axis;
  return Sink(n);
}

Sink map(const Expr& epilogue, const Sink& s) {
  if (epilogue.shape() != s.shape())
    throw Error("map sink: epilogue shape " + shapeString(epilogue.shape()) + " differs from sink shape " +
                shapeString(s.shape()));
  auto n = makeSink(SinkKind::Map, s.shape());
  n->children = {s};
  n->epilogue = epilogue;
  return Sink(n);
}

Sink residualAdd(const Sink& s, const Expr& residual) {
  return map(kernelOutput(s.shape()) + broadcast(residual, s.shape()), s);
}

Sink subPixel(const Sink& s) {
  const Shape& c = s.shape();
  if (c.size() != 4 || c[1] % 2 || c[2] % 2)
    throw Error("sub-pixel sink: needs an NHWC sink of even height and width, got " + shapeString(c));
  auto n = makeSink(SinkKind::SubPixel, {4 * c[0], c[1] / 2, c[2] / 2, c[3]});
  n->children = {s};
  return Sink(n);
}

// ---- tensors touched ----

static void collect(const Expr& e, std::vector<TensorView>& out) {
  const ExprNode& n = e.node();
  if (n.kind == ExprKind::Buffer || n.kind == ExprKind::Gather) out.push_back(n.tensor);
  for (auto& c : n.children) collect(c, out);
}

std::vector<TensorView> tensorsRead(const Expr& e) {
  std::vector<TensorView> out;
  collect(e, out);
  return out;
}

std::vector<TensorView> tensorsRead(std::initializer_list<Expr> es) {
  std::vector<TensorView> out;
  for (const Expr& e : es) collect(e, out);
  return out;
}

std::vector<TensorView> tensorsRead(const Sink& s) {
  std::vector<TensorView> out;
  std::function<void(const Sink&)> walk = [&](const Sink& k) {
    const SinkNode& n = k.node();
    if (n.kind == SinkKind::Accumulate) out.push_back(n.tensor);
    if (n.kind == SinkKind::Map) collect(n.epilogue, out);
    for (auto& c : n.children) walk(c);
  };
  walk(s);
  return out;
}

std::vector<TensorView> tensorsWritten(const Sink& s) {
  std::vector<TensorView> out;
  std::function<void(const Sink&)> walk = [&](const Sink& k) {
    const SinkNode& n = k.node();
    if (n.kind == SinkKind::Buffer || n.kind == SinkKind::Accumulate) out.push_back(n.tensor);
    for (auto& c : n.children) walk(c);
  };
  walk(s);
  return out;
}

}  // namespace sdgen::graph
