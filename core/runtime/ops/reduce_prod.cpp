// ReduceProd (ONNX since 1; axes as an input since opset 18): product over the reduced axes,
// keepdims (default 1) and noop_with_empty_axes as the specification defines them.

#include "core/runtime/reduce.h"

#include <cmath>

namespace qs::runtime {
namespace {

double fold(double acc, double x) {
    return acc * x;
}

const ReduceKind kKind{
    .init = 1.0, .fold = fold, .finish = nullptr, .grad = nullptr, .shiftByMax = false};

const OpDef kDef{.opType = "ReduceProd",
                 .domain = "",
                 .sinceVersion = 1,
                 .doc = "product over the reduced axes",
                 .minInputs = 1,
                 .maxInputs = 2,
                 .forward = reduceForwardOf<kKind>,
                 .reference = nullptr,
                 .vjp = nullptr,
                 .samples = reduceSamples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(reduce_prod, kDef)
