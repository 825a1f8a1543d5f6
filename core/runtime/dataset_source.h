// Where a model's input samples come from, for every front end that feeds a dataset (calibration,
// data-aware weight compression, `quantscope-cli run`, the GUI dialogs): .npy files (one per
// runtime input, samples on axis 0), a folder of images (one NCHW input; decoded, resized and
// normalised by image_dataset.h) or N seeded random-normal samples. One loader, so the three
// sources mean the same thing and fail with the same clear errors everywhere.
#pragma once

#include "core/graph/graph.h"
#include "core/runtime/image_dataset.h"
#include "core/runtime/tensor.h"
#include "core/support/result.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace qs::runtime {

enum class DatasetKind { None, NpyFiles, ImageFolder, Random };

/// What the user calls each source, so errors name the option they typed (a CLI sets its flags;
/// the defaults read as plain words for the GUI and the API).
struct DatasetOptionNames {
    std::string npy = ".npy file";
    std::string images = "the image folder";
    std::string random = "random samples";
    std::string samples = "the sample limit";
};

struct DatasetSource {
    std::vector<std::string> npyFiles; ///< one per runtime input, in order
    std::string imagesDir;             ///< PNG/JPEG/BMP images for a one-input NCHW model
    /// Seeded standard-normal samples: N rows, or N runs of the static batch when the first
    /// input's first dim is static (so the data always fits the model).
    int64_t randomSamples = 0;
    uint64_t seed = 0; ///< of the first input's random samples; +1 per further input
    /// Keep the first N rows of .npy files and images (positive; default: all).
    int64_t maxSamples = std::numeric_limits<int64_t>::max();
    ImageNormalization normalization;
    DatasetOptionNames names;

    /// How many sources are set (a valid source has exactly one).
    int sourceCount() const;
    /// The one source set, or None when none or several are.
    DatasetKind kind() const;

    bool empty() const { return sourceCount() == 0; }

    /// "images DIR", "npy FILE...", "random N (seed S)" for reports.
    std::string describe() const;
};

/// The first dim of `input` when static, else 0.
int64_t staticBatchSize(const graph::Value& input);

/// One tensor per runtime input of `model`, samples on axis 0. Refuses no or several sources,
/// a .npy count that is not the input count, images for a model without a single NCHW input,
/// random samples for non-float or scalar inputs, and a non-positive sample limit.
Result<std::vector<Tensor>> loadDataset(const graph::Graph& model, const DatasetSource& source);

} // namespace qs::runtime
