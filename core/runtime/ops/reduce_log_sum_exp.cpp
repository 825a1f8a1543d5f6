// ReduceLogSumExp (ONNX since 1; axes as an input since opset 18): log of the sum of exponentials
// over the reduced axes (max-shifted), keepdims (default 1) and noop_with_empty_axes as the
// specification defines them.

#include "core/runtime/reduce.h"

#include <cmath>

namespace qs::runtime {
namespace {

double fold(double acc, double x) {
    return acc + std::exp(x);
}

double finish(double acc, double) {
    return std::log(acc);
}

double grad(double x, double y, double dy, double) {
    return dy * std::exp(x - y);
}

const ReduceKind kKind{
    .init = 0.0, .fold = fold, .finish = finish, .grad = grad, .shiftByMax = true};

const OpDef kDef{.opType = "ReduceLogSumExp",
                 .domain = "",
                 .sinceVersion = 1,
                 .doc = "log of the sum of exponentials over the reduced axes (max-shifted)",
                 .minInputs = 1,
                 .maxInputs = 2,
                 .forward = reduceForwardOf<kKind>,
                 .reference = nullptr,
                 .vjp = reduceVjpOf<kKind>,
                 .samples = reduceSamples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(reduce_log_sum_exp, kDef)
