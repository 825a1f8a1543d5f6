// Calibration datasets for a model: a folder of images (decoded, resized to the model's NCHW input
// and normalised), .npy files (one per runtime input, samples on axis 0) or seeded random-normal
// samples. Images and .npy files are cut to the first `maxSamples` samples.
#pragma once

#include "core/graph/graph.h"
#include "core/runtime/image_dataset.h"
#include "core/runtime/tensor.h"
#include "core/support/result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace qs::quantization {

struct CalibrationDataSource {
    std::string imagesDir;             ///< a folder of PNG/JPEG/BMP images (one-input NCHW model)
    std::vector<std::string> npyFiles; ///< one per runtime input
    int64_t randomSamples = 0;         ///< seeded standard-normal samples
    int64_t maxSamples = 300;          ///< cap for images and .npy files
    uint64_t seed = 0;
    runtime::ImageNormalization normalization;

    /// "images DIR", "npy FILE", "random N" for reports.
    std::string describe() const;
};

/// One tensor per runtime input of `model`, samples on axis 0. Exactly one source must be set.
Result<std::vector<runtime::Tensor>> loadCalibrationData(const graph::Graph& model,
                                                         const CalibrationDataSource& source);

} // namespace qs::quantization
