#include "core/compression/calibration_dataset.h"

#include <string>

namespace qs::compression {

namespace {
constexpr int64_t kDefaultBatch = 8;
} // namespace

Result<CalibrationData> loadCalibrationData(const graph::Graph& graph,
                                            const DatasetSource& source) {
    const std::vector<graph::ValueId> inputs = graph.runtimeInputs();
    if (inputs.empty()) {
        return Error(Errc::InvalidArgument, "the model has no inputs to feed a dataset to");
    }
    CalibrationData data;
    QS_ASSIGN_OR_RETURN(data.inputs, runtime::loadDataset(graph, source));
    const int64_t fixed = runtime::staticBatchSize(graph.value(inputs[0]));
    if (fixed > 0 && source.batchSize > 0 && source.batchSize != fixed) {
        return Error(Errc::InvalidArgument, "input '" + graph.value(inputs[0]).name +
                                                "' has a static batch of " + std::to_string(fixed) +
                                                ", not " + std::to_string(source.batchSize));
    }
    data.batchSize = fixed > 0 ? fixed : (source.batchSize > 0 ? source.batchSize : kDefaultBatch);
    return data;
}

} // namespace qs::compression
