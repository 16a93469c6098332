#pragma once
// Fusion expressions (IExpr) and sinks (ISink), built on the host and compiled into kernels as Slang generic
// types (shaders/expr.slang). Building an expression checks shapes and throws sdgen::Error with a message
// naming the operation and the shapes. See docs/fusion.md.
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "graph/tensor.h"

namespace sdgen::graph {

enum class UnaryOp { Neg, Abs, Exp, Log, Sqrt, Rsqrt, Sin, Cos, Tanh, Sigmoid, Relu, Silu, Gelu, GeluTanh, QuickGelu };
enum class BinaryOp { Add, Sub, Mul, Div, Min, Max };

struct ExprNode;
struct SinkNode;

// An immutable expression tree (shared structure, value semantics).
class Expr {
 public:
  Expr() = default;
  explicit Expr(std::shared_ptr<const ExprNode> n) : node_(std::move(n)) {}
  const Shape& shape() const;
  const ExprNode& node() const { return *node_; }
  explicit operator bool() const { return node_ != nullptr; }

 private:
  std::shared_ptr<const ExprNode> node_;
};

class Sink {
 public:
  Sink() = default;
  explicit Sink(std::shared_ptr<const SinkNode> n) : node_(std::move(n)) {}
  const Shape& shape() const;  // the logical shape a kernel writes into this sink
  const SinkNode& node() const { return *node_; }

 private:
  std::shared_ptr<const SinkNode> node_;
};

// ---- leaves ----
Expr buffer(const TensorView& t);
Expr constant(float value);
Expr uniform(uint32_t slot);                // runtime scalar: CommandSequence::setUniform(slot, ...)
Expr kernelOutput(const Shape& shape);     // the enclosing kernel's computed value (epilogues)

// ---- elementwise ----
Expr unary(UnaryOp op, const Expr& a);
Expr clamp(const Expr& a, float lo, float hi);
Expr binary(BinaryOp op, const Expr& a, const Expr& b);  // NumPy broadcasting
Expr neg(const Expr& a);
Expr abs(const Expr& a);
Expr exp(const Expr& a);
Expr log(const Expr& a);
Expr sqrt(const Expr& a);
Expr rsqrt(const Expr& a);
Expr sin(const Expr& a);
Expr cos(const Expr& a);
Expr tanh(const Expr& a);
Expr sigmoid(const Expr& a);
Expr relu(const Expr& a);
Expr silu(const Expr& a);
Expr gelu(const Expr& a);       // erf form
Expr geluTanh(const Expr& a);
Expr quickGelu(const Expr& a);  // x * sigmoid(1.702 x), CLIP
Expr min(const Expr& a, const Expr& b);
Expr max(const Expr& a, const Expr& b);
Expr operator+(const Expr& a, const Expr& b);
Expr operator-(const Expr& a, const Expr& b);
Expr operator*(const Expr& a, const Expr& b);
Expr operator/(const Expr& a, const Expr& b);

// ---- layout ----
Expr broadcast(const Expr& a, const Shape& shape);          // NumPy rules: align right, size-1 axes expand
Expr reshape(const Expr& a, const Shape& shape);            // same element count, row-major order
Expr permute(const Expr& a, const std::vector<int>& perm);  // torch semantics: out.shape[j] = a.shape[perm[j]]
Expr transpose(const Expr& a, int axis0, int axis1);
Expr slice(const Expr& a, int axis, int64_t start, int64_t length);
Expr sliceLastDim(const Expr& a, int64_t start, int64_t length);  // GEGLU halves
Expr concat(const Expr& a, const Expr& b, int axis);
Expr upsample2x(const Expr& a);                               // NHWC nearest, H and W doubled
// NHWC nearest resize to [N, height, width, C] as torch's interpolate(mode="nearest", size=...) does:
// src = floor(dst * in / out). Doubling is upsample2x.
Expr resizeNearest(const Expr& a, int64_t height, int64_t width);
Expr repeatInterleave(const Expr& a, int axis, int64_t factor); // out[.., i, ..] = a[.., i / factor, ..]
Expr gather(const Expr& table, const TensorView& indices);   // table [V, D], indices int32 [...] -> [..., D]

// ---- sinks ----
Sink bufferSink(const TensorView& t);
Sink accumulate(const TensorView& t);                      // read-modify-write: t += value
Sink permute(const Sink& s, const std::vector<int>& perm);  // stores value.permute(perm) into s
Sink partition(const std::vector<Sink>& parts, int axis);  // value split along axis into equal parts (<= 4)
Sink map(const Expr& epilogue, const Sink& s);             // stores epilogue(kernelOutput = value) into s
Sink residualAdd(const Sink& s, const Expr& residual);    // stores value + residual into s
// The four phases of an NHWC 2x upsampling, s [N, 2H, 2W, C] receiving a value [4N, H, W, C]: value[p * N + n,
// y, x, c] goes to s[n, 2y + p / 2, 2x + p % 2, c] (a nearest-upsampled convolution computed per output phase,
// ops/conv2d_coop_upsample.cpp).
Sink subPixel(const Sink& s);

// Every tensor an expression or sink reads or writes (for barriers and liveness).
std::vector<TensorView> tensorsRead(const Expr& e);
std::vector<TensorView> tensorsRead(std::initializer_list<Expr> es);  // every one's, in order
std::vector<TensorView> tensorsRead(const Sink& s);     // accumulate sinks and epilogue inputs
std::vector<TensorView> tensorsWritten(const Sink& s);

}  // namespace sdgen::graph
