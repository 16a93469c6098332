// Placeholder-free anchor for ops_tests: the elementwise op through the ops test binary (real check).
#include "engine/command_sequence.h"
#include "graph/expr.h"
#include "ops/elementwise.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

class OpsSmoke : public test::VulkanTest {};

TEST_F(OpsSmoke, ElementwiseCopyOfOddShape) {
  auto v = test::randomFloats(3 * 5 * 7, 1);
  Allocation in = test::uploadFloats(ctx(), v, DType::F32), out = ctx().allocate(v.size() * 4, "out");
  test::poison(ctx(), out);
  CommandSequence seq(ctx());
  ops::elementwise(ctx(), seq, graph::buffer(graph::view(in, DType::F32, {3, 5, 7})),
                   graph::bufferSink(graph::view(out, DType::F32, {3, 5, 7})));
  seq.run();
  EXPECT_EQ(test::downloadFloats(ctx(), out, v.size(), DType::F32), v);
}

}  // namespace
}  // namespace sdgen
