#include "core/report/tensor_statistics.h"

#include "core/graph/data_type.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace qs::report {

Result<TensorStatistics> tensorStatistics(const graph::TensorData& tensor) {
    const graph::DataType dtype = tensor.dtype();
    if (!graph::isFloatingPoint(dtype) && !graph::isInteger(dtype)) {
        return Error(Errc::Unsupported, "no statistics for a tensor of type " +
                                            std::string(graph::dataTypeName(dtype)));
    }
    if (tensor.bytes().size() != tensor.expectedByteSize()) {
        return Error(Errc::InvalidModel, "tensor holds " + std::to_string(tensor.bytes().size()) +
                                             " bytes, its shape needs " +
                                             std::to_string(tensor.expectedByteSize()));
    }
    TensorStatistics stats;
    stats.count = tensor.numElements();
    if (stats.count == 0) {
        return stats;
    }
    // Welford's running mean and variance: one pass, stable for millions of weights.
    double m2 = 0;
    stats.min = stats.max = tensor.elementAsDouble(0);
    for (int64_t i = 0; i < stats.count; ++i) {
        const double x = tensor.elementAsDouble(i);
        stats.min = std::min(stats.min, x);
        stats.max = std::max(stats.max, x);
        const double delta = x - stats.mean;
        stats.mean += delta / static_cast<double>(i + 1);
        m2 += delta * (x - stats.mean);
    }
    stats.stddev = std::sqrt(m2 / static_cast<double>(stats.count));
    return stats;
}

} // namespace qs::report
