#include "models/nn/tensor_views.h"

#include "engine/error.h"

namespace sdgen::nn {

graph::TensorView reshaped(const graph::TensorView& t, const graph::Shape& shape) {
  if (!t.dense()) throw Error("reshape of a strided view " + graph::shapeString(t.shape));
  if (graph::numel(shape) != graph::numel(t.shape))
    throw Error("reshape " + graph::shapeString(t.shape) + " to " + graph::shapeString(shape) +
                ": element counts differ");
  graph::TensorView v = t;
  v.shape = shape;
  v.strides = graph::denseStrides(shape);
  return v;
}

}  // namespace sdgen::nn
