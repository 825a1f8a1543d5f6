#include "core/quantization/calibration_data.h"

namespace qs::quantization {

CalibrationDataSource::CalibrationDataSource() {
    maxSamples = kDefaultCalibrationSamples;
    names = {.npy = "--calib-npy",
             .images = "--calib-images",
             .random = "--calib-random",
             .samples = "--calib-samples"};
}

Result<std::vector<runtime::Tensor>> loadCalibrationData(const graph::Graph& model,
                                                         const CalibrationDataSource& source) {
    return runtime::loadDataset(model, source);
}

} // namespace qs::quantization
