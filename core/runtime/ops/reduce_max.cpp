// ReduceMax (ONNX since 1; axes as an input since opset 18): maximum over the reduced axes,
// keepdims (default 1) and noop_with_empty_axes as the specification defines them.

#include "core/runtime/reduce.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace qs::runtime {
namespace {

double fold(double acc, double x) {
    return std::max(acc, x);
}

const ReduceKind kKind{.init = -std::numeric_limits<double>::infinity(),
                       .fold = fold,
                       .finish = nullptr,
                       .grad = nullptr,
                       .shiftByMax = false,
                       .plainSum = false,
                       .extremum = 1};

const OpDef kDef{.opType = "ReduceMax",
                 .domain = "",
                 .sinceVersion = 1,
                 .doc = "maximum over the reduced axes",
                 .minInputs = 1,
                 .maxInputs = 2,
                 .forward = reduceForwardOf<kKind>,
                 .reference = nullptr,
                 .vjp = reduceVjpOf<kKind>,
                 .samples = reduceSamplesDistinct};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(reduce_max, kDef)
