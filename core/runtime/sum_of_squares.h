// Sums of a float run, and of its squares, accumulated in double: the Hessian estimator reduces
// every target's gradient (millions of elements per sweep in weights mode) this way, and float
// sums of that many squares would lose the small channels' share; GlobalAveragePool sums planes
// of up to 112 x 112 with it.
#pragma once

#include <cstdint>

namespace qs::runtime {

/// x[0]^2 + ... + x[count-1]^2 in double (several partial sums, so the order is fixed by
/// `count` alone: the same run gives the same bits wherever it sits in memory).
double sumOfSquares(const float* x, int64_t count);

/// x[0] + ... + x[count-1] in double, in the same partial sums as sumOfSquares: one chain of
/// dependent adds ran at a quarter of the rate.
double sumInDouble(const float* x, int64_t count);

/// (x[0] - center)^2 + ... + (x[count-1] - center)^2 in double, in the same partial sums (a
/// variance about a mean computed first: no cancellation of two large sums).
double sumOfSquaredDeviations(const float* x, int64_t count, double center);

} // namespace qs::runtime
