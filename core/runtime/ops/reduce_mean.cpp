// ReduceMean (ONNX since 1; axes as an input since opset 18): mean over the reduced axes, keepdims
// (default 1) and noop_with_empty_axes as the specification defines them.

#include "core/runtime/reduce.h"

#include <cmath>

namespace qs::runtime {
namespace {

double fold(double acc, double x) {
    return acc + x;
}

double finish(double acc, double n) {
    return acc / n;
}

double grad(double, double, double dy, double n) {
    return dy / n;
}

const ReduceKind kKind{.init = 0.0,
                       .fold = fold,
                       .finish = finish,
                       .grad = grad,
                       .shiftByMax = false,
                       .plainSum = true};

const OpDef kDef{.opType = "ReduceMean",
                 .domain = "",
                 .sinceVersion = 1,
                 .doc = "mean over the reduced axes",
                 .minInputs = 1,
                 .maxInputs = 2,
                 .forward = reduceForwardOf<kKind>,
                 .reference = nullptr,
                 .vjp = reduceVjpOf<kKind>,
                 .samples = reduceSamples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(reduce_mean, kDef)
