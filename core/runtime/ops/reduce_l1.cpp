// ReduceL1 (ONNX since 1; axes as an input since opset 18): sum of absolute values over the reduced
// axes, keepdims (default 1) and noop_with_empty_axes as the specification defines them.

#include "core/runtime/reduce.h"

#include <cmath>

namespace qs::runtime {
namespace {

double fold(double acc, double x) {
    return acc + std::abs(x);
}

double grad(double x, double, double dy, double) {
    return x > 0 ? dy : (x < 0 ? -dy : 0.0);
}

const ReduceKind kKind{
    .init = 0.0, .fold = fold, .finish = nullptr, .grad = grad, .shiftByMax = false};

const OpDef kDef{.opType = "ReduceL1",
                 .domain = "",
                 .sinceVersion = 1,
                 .doc = "sum of absolute values over the reduced axes",
                 .minInputs = 1,
                 .maxInputs = 2,
                 .forward = reduceForwardOf<kKind>,
                 .reference = nullptr,
                 .vjp = reduceVjpOf<kKind>,
                 .samples = reduceSamples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(reduce_l1, kDef)
