// Where the dataset of data-aware weight compression comes from: .npy files (one per model input,
// samples on axis 0), a folder of images (one NCHW input) or N seeded random-normal samples —
// the same sources `quantscope-cli run` takes — turned into CalibrationData for the executor.
#pragma once

#include "core/compression/activation_statistics.h"
#include "core/graph/graph.h"
#include "core/support/result.h"

#include <cstdint>
#include <filesystem>
#include <vector>

namespace qs::compression {

struct DatasetSource {
    std::vector<std::filesystem::path> npyFiles; ///< one per runtime input, in order
    std::filesystem::path imageFolder;           ///< ImageNet-normalised, resized to H x W
    int64_t randomSamples = 0;
    uint64_t seed = 0;
    /// Samples per executor run; 0: the input's static first dim if it has one, else 8.
    int64_t batchSize = 0;

    /// Exactly one source must be set.
    bool empty() const { return npyFiles.empty() && imageFolder.empty() && randomSamples <= 0; }
};

/// Loads the dataset for `graph`'s runtime inputs. Refuses more than one source, a wrong number
/// of .npy files, images for a model without a single NCHW input, random samples for non-float
/// inputs, and a batch size the input's static first dim does not allow.
Result<CalibrationData> loadCalibrationData(const graph::Graph& graph, const DatasetSource& source);

} // namespace qs::compression
