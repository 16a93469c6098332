#pragma once
// The ElementwiseKernel: evaluates any expression tree and writes it through any sink in one launch
// (two when the item count is not a whole number of workgroups: a bounds-check-free interior dispatch and a
// checked border dispatch).
#include <optional>
#include <string>

#include "engine/command_sequence.h"
#include "engine/context.h"
#include "graph/expr.h"

namespace sdgen::ops {

struct ElementwiseOptions {
  std::optional<bool> vector;  // unset: vector whenever the innermost dimension is a multiple of 4
  bool linear = true;          // use the linear-index path when the whole tree allows it
  bool splitInterior = true;   // false: one checked dispatch over everything
  std::string label = "elementwise";
};

// What was chosen, for tests and profiles.
struct ElementwiseInfo {
  std::string exprType, sinkType;
  bool vector = false, linear = false;
  int dispatches = 0;
  int nativeVectorNodes = 0, scalarWrappedNodes = 0;
};

ElementwiseInfo elementwise(Context& ctx, CommandSequence& seq, const graph::Expr& value, const graph::Sink& out,
                            const ElementwiseOptions& options = {});

// Memory ranges of the tensors an expression/sink touches (for CommandSequence hazard tracking).
std::vector<MemRange> rangesOf(const std::vector<graph::TensorView>& tensors);

}  // namespace sdgen::ops
