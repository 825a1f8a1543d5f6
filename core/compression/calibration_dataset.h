// The dataset of data-aware weight compression: the runtime's dataset source (.npy files, an
// image folder or seeded random samples, core/runtime/dataset_source.h) turned into
// CalibrationData for the executor, with the batch size its runs take.
#pragma once

#include "core/compression/activation_statistics.h"
#include "core/graph/graph.h"
#include "core/runtime/dataset_source.h"
#include "core/support/result.h"

#include <cstdint>

namespace qs::compression {

struct DatasetSource : runtime::DatasetSource {
    /// Samples per executor run; 0: the input's static first dim if it has one, else 8.
    int64_t batchSize = 0;
};

/// Loads the dataset for `graph`'s runtime inputs (runtime::loadDataset). Also refuses a model
/// without inputs and a batch size the input's static first dim does not allow.
Result<CalibrationData> loadCalibrationData(const graph::Graph& graph, const DatasetSource& source);

} // namespace qs::compression
