// ReduceL2 (ONNX since 1; axes as an input since opset 18): sqrt of the sum of squares over the
// reduced axes, keepdims (default 1) and noop_with_empty_axes as the specification defines them.

#include "core/runtime/reduce.h"

#include <cmath>

namespace qs::runtime {
namespace {

double fold(double acc, double x) {
    return acc + x * x;
}

double finish(double acc, double) {
    return std::sqrt(acc);
}

double grad(double x, double y, double dy, double) {
    return y > 0 ? dy * x / y : 0.0;
}

const ReduceKind kKind{
    .init = 0.0, .fold = fold, .finish = finish, .grad = grad, .shiftByMax = false};

const OpDef kDef{.opType = "ReduceL2",
                 .domain = "",
                 .sinceVersion = 1,
                 .doc = "sqrt of the sum of squares over the reduced axes",
                 .minInputs = 1,
                 .maxInputs = 2,
                 .forward = reduceForwardOf<kKind>,
                 .reference = nullptr,
                 .vjp = reduceVjpOf<kKind>,
                 .samples = reduceSamples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(reduce_l2, kDef)
