// Calibration datasets are the runtime's dataset sources (core/runtime/dataset_source.h) with
// calibration's defaults: at most 300 samples, and errors that name the --calib-* options.
#pragma once

#include "core/runtime/dataset_source.h"

namespace qs::quantization {

constexpr int64_t kDefaultCalibrationSamples = 300;

struct CalibrationDataSource : runtime::DatasetSource {
    CalibrationDataSource();
};

/// One tensor per runtime input of `model`, samples on axis 0 (runtime::loadDataset).
Result<std::vector<runtime::Tensor>> loadCalibrationData(const graph::Graph& model,
                                                         const CalibrationDataSource& source);

} // namespace qs::quantization
