#pragma once
// Softmax along the innermost axis of an expression, written through a sink, in one launch.
#include <string>

#include "engine/command_sequence.h"
#include "engine/context.h"
#include "graph/expr.h"

namespace sdgen::ops {

void softmax(Context& ctx, CommandSequence& seq, const graph::Expr& input, const graph::Sink& out,
             const std::string& label = "softmax");

}  // namespace sdgen::ops
