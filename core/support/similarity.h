// Cosine similarity from the sums a caller accumulates anyway (x·y, |x|², |y|²), with the one
// convention every report uses: two all-zero vectors agree (1), one all-zero vector does not (0).
#pragma once

#include <cmath>

namespace qs {

inline double cosineFromSums(double dot, double normSqX, double normSqY) {
    if (normSqX == 0.0 && normSqY == 0.0) {
        return 1.0;
    }
    if (normSqX > 0.0 && normSqY > 0.0) {
        return dot / std::sqrt(normSqX * normSqY);
    }
    return 0.0;
}

} // namespace qs
