#pragma once
// Turns Expr and Sink trees into Slang generic types (shaders/expr.slang) and appends their runtime
// parameters to a kernel's parameter block. Node parameter offsets are assigned in tree order after the
// kernel's own header words, so trees of the same structure produce the same type string: the type string
// is the kernel's specialization key.
#include <string>

#include "engine/param_block.h"
#include "graph/expr.h"

namespace sdgen::graph {

struct CodegenOptions {
  // Vector mode: the kernel calls eval4/store4 on groups of 4 along the innermost axis. Subtrees that cannot
  // read/write 16-byte (fp32) or 8-byte (fp16) aligned vectors are wrapped in Scalar4 (4 scalar accesses).
  bool vector = false;
  // Linear mode: the kernel calls evalL/storeL with a linear index (requires isLinear on the whole tree).
  bool linear = false;
};

class ExprCodegen {
 public:
  ExprCodegen(ParamBlock& params, CodegenOptions options) : params_(params), options_(options) {}
  std::string emit(const Expr& e);
  std::string emit(const Sink& s);
  // Number of leaves/sinks that use native vector access, and that were wrapped in Scalar4.
  int nativeVectorNodes() const { return native_; }
  int scalarWrappedNodes() const { return wrapped_; }

 private:
  std::string emitNode(const Expr& e, bool vec);
  std::string emitSink(const Sink& s, bool vec);
  ParamBlock& params_;
  CodegenOptions options_;
  int native_ = 0, wrapped_ = 0;
};

// Whether evalL/storeL with the kernel's dense linear index is valid for the whole tree.
bool isLinear(const Expr& e);
bool isLinear(const Sink& s);

}  // namespace sdgen::graph
