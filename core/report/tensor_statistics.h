// Statistics of one constant tensor (a weight): element count, min, max, mean and standard
// deviation — what the GUI's inspector shows for an op's weights.
#pragma once

#include "core/graph/tensor.h"
#include "core/support/result.h"

#include <cstdint>

namespace qs::report {

struct TensorStatistics {
    int64_t count = 0;
    double min = 0;
    double max = 0;
    double mean = 0;
    double stddev = 0; ///< population standard deviation
};

/// Statistics over every element of `tensor`; a non-numeric tensor or one whose bytes do not
/// match its shape is an error.
Result<TensorStatistics> tensorStatistics(const graph::TensorData& tensor);

} // namespace qs::report
