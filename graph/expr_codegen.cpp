#include "graph/expr_codegen.h"

#include "engine/error.h"
#include "graph/expr_nodes.h"

namespace sdgen::graph {

namespace {

const char* storageType(const TensorView& t) { return t.dtype == DType::F16 ? "F16Storage" : "F32Storage"; }

// Unit inner stride, other strides multiples of 4 and a 4-element-aligned address: every group of 4 along the
// innermost axis starting at w % 4 == 0 is one aligned 16/8-byte access.
bool alignedVector(const TensorView& t) {
  Shape st = padStrides4(t);
  if (st[3] != 1) return false;
  for (int i = 0; i < 3; ++i)
    if (st[i] % 4) return false;
  return t.address % (4 * t.elementSize()) == 0;
}

// The linear-index period of a tensor for the linear path: 0 when dense (every size>1 axis at its row-major
// stride), n when it is a dense suffix of n elements broadcast over leading axes; -1 otherwise.
int64_t linearPeriod(const TensorView& t) {
  Shape s = pad4(t.shape), st = padStrides4(t);
  int k = 0;
  while (k < 4 && (s[k] == 1 || st[k] == 0)) ++k;  // leading broadcast or unit axes
  int64_t expect = 1;
  for (int i = 3; i >= k; --i) {
    if (s[i] != 1 && st[i] != expect) return -1;
    expect *= s[i];
  }
  bool broadcastLeading = false;
  for (int i = 0; i < k; ++i) broadcastLeading |= s[i] != 1;
  return broadcastLeading ? expect : 0;
}

int padOf(const Shape& s) { return 4 - static_cast<int>(s.size()); }

std::vector<int> perm4(const std::vector<int>& perm) {
  int pad = 4 - static_cast<int>(perm.size());
  std::vector<int> p;
  for (int i = 0; i < pad; ++i) p.push_back(i);
  for (int x : perm) p.push_back(x + pad);
  return p;
}

std::string permArgs(const std::vector<int>& p) {
  return std::to_string(p[0]) + "," + std::to_string(p[1]) + "," + std::to_string(p[2]) + "," + std::to_string(p[3]);
}

void pushStrides(ParamBlock& pb, const TensorView& t) {
  for (auto s : padStrides4(t)) pb.i32(static_cast<int32_t>(s));
}

// Whether this node itself can produce 4 consecutive innermost elements natively (children are handled by
// their own emission).
bool nativeVector(const ExprNode& n) {
  Shape s = pad4(n.shape);
  switch (n.kind) {
    case ExprKind::Buffer: {
      Shape st = padStrides4(n.tensor);
      return st[3] == 0 || alignedVector(n.tensor);
    }
    case ExprKind::Permute: return perm4(n.perm)[3] == 3;
    case ExprKind::Slice: return n.axis + padOf(n.shape) != 3 || n.start % 4 == 0;
    case ExprKind::Concat: {
      int axis = n.axis + padOf(n.shape);
      return axis != 3 || pad4(n.children[0].shape())[3] % 4 == 0;
    }
    case ExprKind::Reshape: return pad4(n.children[0].shape())[3] % 4 == 0;
    // Along the innermost axis, 4 consecutive outputs share one source element when factor % 4 == 0.
    case ExprKind::RepeatInterleave: return n.axis + padOf(n.shape) != 3 || n.start % 4 == 0;
    default: return true;
  }
}

}  // namespace

std::string ExprCodegen::emit(const Expr& e) { return emitNode(e, options_.vector); }
std::string ExprCodegen::emit(const Sink& s) { return emitSink(s, options_.vector); }

std::string ExprCodegen::emitNode(const Expr& e, bool vec) {
  const ExprNode& n = e.node();
  if (vec && !nativeVector(n)) {
    wrapped_++;
    return "Scalar4<" + emitNode(e, false) + ">";
  }
  if (vec && (n.kind == ExprKind::Buffer)) native_++;
  const std::string O = std::to_string(params_.size());
  auto child = [&](size_t i, bool v) { return emitNode(n.children[i], v); };
  switch (n.kind) {
    case ExprKind::Buffer: {
      params_.address(n.tensor.address);
      pushStrides(params_, n.tensor);
      int64_t period = linearPeriod(n.tensor);
      params_.i32(static_cast<int32_t>(period > 0 ? period : 0));
      int ls = padStrides4(n.tensor)[3] == 0 ? 0 : 1;
      return "Buf<" + O + "," + storageType(n.tensor) + "," + std::to_string(ls) + "," + (period > 0 ? "1" : "0") +
             ">";
    }
    case ExprKind::Constant: params_.f32(n.value); return "Const<" + O + ">";
    case ExprKind::Uniform: params_.u32(n.slot); return "Uniform<" + O + ">";
    case ExprKind::KernelOutput: return "KernelOut";
    case ExprKind::Unary: return "Unary<" + std::to_string(n.op) + "," + child(0, vec) + ">";
    case ExprKind::Clamp: params_.f32(n.value).f32(n.value2); return "Clamp<" + O + "," + child(0, vec) + ">";
    case ExprKind::Binary: {
      std::string a = child(0, vec);
      return "Binary<" + std::to_string(n.op) + "," + a + "," + child(1, vec) + ">";
    }
    case ExprKind::Broadcast: {
      Shape s = pad4(n.shape), cs = pad4(n.children[0].shape());
      for (int i = 0; i < 4; ++i) params_.i32(cs[i] == 1 && s[i] != 1 ? 0 : 1);
      params_.i32(static_cast<int32_t>(numel(cs)));
      bool lastB = cs[3] == 1 && s[3] != 1;
      // With the innermost axis broadcast, the child is read as one scalar and splat.
      return "Bcast<" + O + "," + (lastB ? "1" : "0") + "," + child(0, vec && !lastB) + ">";
    }
    case ExprKind::Reshape: {
      Shape s = pad4(n.shape), cs = pad4(n.children[0].shape());
      for (int i = 1; i < 4; ++i) params_.i32(static_cast<int32_t>(s[i]));
      for (int i = 1; i < 4; ++i) params_.i32(static_cast<int32_t>(cs[i]));
      return "Reshape<" + O + "," + child(0, vec) + ">";
    }
    case ExprKind::Permute: return "Perm<" + permArgs(perm4(n.perm)) + "," + child(0, vec) + ">";
    case ExprKind::Slice:
      params_.i32(static_cast<int32_t>(n.start));
      return "Slice<" + O + "," + std::to_string(n.axis + padOf(n.shape)) + "," + child(0, vec) + ">";
    case ExprKind::Concat: {
      params_.i32(static_cast<int32_t>(n.children[0].shape()[n.axis]));
      std::string a = child(0, vec);
      return "Concat<" + O + "," + std::to_string(n.axis + padOf(n.shape)) + "," + a + "," + child(1, vec) + ">";
    }
    case ExprKind::Upsample2x: return "Upsample2x<" + child(0, vec) + ">";
    case ExprKind::ResizeNearest: {
      const Shape& in = n.children[0].shape();
      for (int64_t v : {in[1], n.shape[1], in[2], n.shape[2]}) params_.i32(static_cast<int32_t>(v));
      return "ResizeNearest<" + O + "," + child(0, vec) + ">";
    }
    case ExprKind::RepeatInterleave: {
      params_.i32(static_cast<int32_t>(n.start));
      int axis = n.axis + padOf(n.shape);
      bool inner = axis == 3;  // vector mode on the innermost axis: the child is read once and splat
      return "RepeatInterleave<" + O + "," + std::to_string(axis) + "," + (inner ? "1" : "0") + "," +
             child(0, vec && !inner) + ">";
    }
    case ExprKind::Gather: {
      params_.address(n.tensor.address);
      Shape st = n.tensor.strides;
      while (st.size() < 3) st.insert(st.begin(), 0);
      for (auto x : st) params_.i32(static_cast<int32_t>(x));
      return "Gather<" + O + "," + child(0, vec) + ">";
    }
  }
  throw Error("expression codegen: unknown node");
}

std::string ExprCodegen::emitSink(const Sink& s, bool vec) {
  const SinkNode& n = s.node();
  const std::string O = std::to_string(params_.size());
  switch (n.kind) {
    case SinkKind::Buffer:
    case SinkKind::Accumulate: {
      if (vec && !alignedVector(n.tensor)) {
        wrapped_++;
        return "Scalar4Sink<" + emitSink(s, false) + ">";
      }
      if (vec) native_++;
      params_.address(n.tensor.address);
      pushStrides(params_, n.tensor);
      return std::string(n.kind == SinkKind::Buffer ? "BufSink<" : "AccumulateSink<") + O + "," +
             storageType(n.tensor) + ">";
    }
    case SinkKind::Permute: {
      auto p = perm4(n.perm);
      if (vec && p[3] != 3) {
        wrapped_++;
        return "Scalar4Sink<" + emitSink(s, false) + ">";
      }
      return "PermSink<" + permArgs(p) + "," + emitSink(n.children[0], vec) + ">";
    }
    case SinkKind::Partition: {
      int axis = n.axis + padOf(n.shape);
      int64_t part = n.children[0].shape()[n.axis];
      if (vec && axis == 3 && part % 4 != 0) {
        wrapped_++;
        return "Scalar4Sink<" + emitSink(s, false) + ">";
      }
      params_.i32(static_cast<int32_t>(part));
      std::string t = "PartitionSink<" + O + "," + std::to_string(axis);
      for (size_t i = 0; i < 4; ++i) t += "," + (i < n.children.size() ? emitSink(n.children[i], vec) : "NullSink");
      return t + ">";
    }
    case SinkKind::Map: {
      std::string e = emitNode(n.epilogue, vec);
      return "MapSink<" + e + "," + emitSink(n.children[0], vec) + ">";
    }
    case SinkKind::SubPixel: {  // moves rows, never the innermost axis: vector stores stay whole
      params_.i32(static_cast<int32_t>(n.children[0].shape()[0]));
      return "SubPixelSink<" + O + "," + emitSink(n.children[0], vec) + ">";
    }
  }
  throw Error("sink codegen: unknown node");
}

bool isLinear(const Expr& e) {
  const ExprNode& n = e.node();
  switch (n.kind) {
    case ExprKind::Buffer: return linearPeriod(n.tensor) >= 0;
    case ExprKind::Constant:
    case ExprKind::Uniform:
    case ExprKind::KernelOutput: return true;
    case ExprKind::Unary:
    case ExprKind::Clamp:
    case ExprKind::Reshape: return isLinear(n.children[0]);
    case ExprKind::Binary: return isLinear(n.children[0]) && isLinear(n.children[1]);
    case ExprKind::Broadcast: {
      // Linear when the child is a dense suffix: leading size-1 axes, then exactly this shape's trailing axes.
      Shape s = pad4(n.shape), cs = pad4(n.children[0].shape());
      int k = 0;
      while (k < 4 && cs[k] == 1) ++k;
      for (int i = k; i < 4; ++i)
        if (cs[i] != s[i]) return false;
      return isLinear(n.children[0]);
    }
    default: return false;
  }
}

bool isLinear(const Sink& s) {
  const SinkNode& n = s.node();
  switch (n.kind) {
    case SinkKind::Buffer:
    case SinkKind::Accumulate: return linearPeriod(n.tensor) == 0;
    case SinkKind::Map: return isLinear(n.epilogue) && isLinear(n.children[0]);
    default: return false;
  }
}

}  // namespace sdgen::graph
