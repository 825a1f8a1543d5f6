// ReduceSumSquare (ONNX since 1; axes as an input since opset 18): sum of squares over the reduced
// axes, keepdims (default 1) and noop_with_empty_axes as the specification defines them.

#include "core/runtime/reduce.h"

#include <cmath>

namespace qs::runtime {
namespace {

double fold(double acc, double x) {
    return acc + x * x;
}

double grad(double x, double, double dy, double) {
    return 2.0 * x * dy;
}

const ReduceKind kKind{
    .init = 0.0, .fold = fold, .finish = nullptr, .grad = grad, .shiftByMax = false};

const OpDef kDef{.opType = "ReduceSumSquare",
                 .domain = "",
                 .sinceVersion = 1,
                 .doc = "sum of squares over the reduced axes",
                 .minInputs = 1,
                 .maxInputs = 2,
                 .forward = reduceForwardOf<kKind>,
                 .reference = nullptr,
                 .vjp = reduceVjpOf<kKind>,
                 .samples = reduceSamples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(reduce_sum_square, kDef)
