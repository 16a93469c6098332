#pragma once
// The node structures behind Expr and Sink (used by construction and codegen only).
#include <vector>

#include "graph/expr.h"

namespace sdgen::graph {

enum class ExprKind {
  Buffer, Constant, Uniform, KernelOutput, Unary, Clamp, Binary,
  Broadcast, Reshape, Permute, Slice, Concat, Upsample2x, ResizeNearest, Gather, RepeatInterleave
};

struct ExprNode {
  ExprKind kind;
  Shape shape;
  std::vector<Expr> children;
  TensorView tensor;      // Buffer: the tensor; Gather: the indices
  float value = 0, value2 = 0;  // Constant; Clamp lo/hi
  uint32_t slot = 0;      // Uniform
  int op = 0;             // UnaryOp / BinaryOp
  int axis = 0;           // Slice, Concat (in this node's rank)
  int64_t start = 0;      // Slice; RepeatInterleave factor
  std::vector<int> perm;  // Permute
};

enum class SinkKind { Buffer, Accumulate, Permute, Partition, Map, SubPixel };

struct SinkNode {
  SinkKind kind;
  Shape shape;
  TensorView tensor;  // Buffer, Accumulate
  std::vector<Sink> children;
  Expr epilogue;      // Map
  std::vector<int> perm;
  int axis = 0;
};

// Shapes padded on the left to rank 4, as kernels see them.
Shape pad4(const Shape& s);
Shape padStrides4(const TensorView& t);

}  // namespace sdgen::graph
