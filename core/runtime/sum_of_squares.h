// Sum of squares of a float run, accumulated in double: the Hessian estimator reduces every
// target's gradient (millions of elements per sweep in weights mode) this way, and float sums
// of that many squares would lose the small channels' share.
#pragma once

#include <cstdint>

namespace qs::runtime {

/// x[0]^2 + ... + x[count-1]^2 in double (several partial sums, so the order is fixed by
/// `count` alone: the same run gives the same bits wherever it sits in memory).
double sumOfSquares(const float* x, int64_t count);

} // namespace qs::runtime
