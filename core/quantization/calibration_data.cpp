// Calibration datasets: images, .npy files or random samples shaped for the model's inputs.

#include "core/quantization/calibration_data.h"

#include "core/runtime/batching.h"
#include "core/runtime/npy.h"

#include <algorithm>

namespace qs::quantization {
namespace {

runtime::Tensor firstSamples(const runtime::Tensor& tensor, int64_t maxSamples) {
    if (tensor.rank() == 0 || tensor.shape()[0] <= maxSamples) {
        return tensor;
    }
    return runtime::sliceBatch(tensor, 0, maxSamples);
}

Result<std::vector<runtime::Tensor>> loadImages(const graph::Graph& model,
                                                const CalibrationDataSource& source) {
    const std::vector<graph::ValueId> inputs = model.runtimeInputs();
    if (inputs.size() != 1) {
        return Error(Errc::InvalidArgument, "--calib-images needs a model with one input");
    }
    const graph::Value& value = model.value(inputs[0]);
    QS_ASSIGN_OR_RETURN(runtime::Shape shape, runtime::concreteInputShape(value, 1));
    if (shape.size() != 4) {
        return Error(Errc::InvalidArgument, "--calib-images needs an NCHW input, '" + value.name +
                                                "' is " + runtime::shapeToString(shape));
    }
    QS_ASSIGN_OR_RETURN(runtime::Tensor images,
                        runtime::loadImageFolder(source.imagesDir, shape[1], shape[2], shape[3],
                                                 source.normalization));
    return std::vector<runtime::Tensor>{firstSamples(images, source.maxSamples)};
}

Result<std::vector<runtime::Tensor>> loadNpy(const graph::Graph& model,
                                             const CalibrationDataSource& source) {
    const std::vector<graph::ValueId> inputs = model.runtimeInputs();
    if (source.npyFiles.size() != inputs.size()) {
        return Error(Errc::InvalidArgument,
                     "the model has " + std::to_string(inputs.size()) +
                         " input(s); give one --calib-npy per input, in order");
    }
    std::vector<runtime::Tensor> tensors;
    for (const std::string& path : source.npyFiles) {
        QS_ASSIGN_OR_RETURN(runtime::Tensor tensor,
                            runtime::readNpy(path).context("--calib-npy '" + path + "'"));
        tensors.push_back(firstSamples(tensor, source.maxSamples));
    }
    return tensors;
}

Result<std::vector<runtime::Tensor>> randomSamples(const graph::Graph& model,
                                                   const CalibrationDataSource& source) {
    std::vector<runtime::Tensor> tensors;
    uint64_t seed = source.seed;
    for (const graph::ValueId id : model.runtimeInputs()) {
        const graph::Value& value = model.value(id);
        if (value.dtype != graph::DataType::Float) {
            return Error(Errc::Unsupported, "--calib-random fills float inputs only; '" +
                                                value.name + "' is " +
                                                std::string(graph::dataTypeName(value.dtype)));
        }
        QS_ASSIGN_OR_RETURN(runtime::Shape shape,
                            runtime::concreteInputShape(value, source.randomSamples));
        if (shape.empty()) {
            return Error(Errc::Unsupported, "--calib-random needs inputs with a batch axis");
        }
        shape[0] = source.randomSamples; // samples on axis 0, also for a static batch of 1
        tensors.push_back(runtime::randomNormal(shape, seed++));
    }
    return tensors;
}

} // namespace

std::string CalibrationDataSource::describe() const {
    if (!imagesDir.empty()) {
        return "images " + imagesDir;
    }
    if (!npyFiles.empty()) {
        std::string out = "npy";
        for (const std::string& f : npyFiles) {
            out += " " + f;
        }
        return out;
    }
    return "random " + std::to_string(randomSamples) + " (seed " + std::to_string(seed) + ")";
}

Result<std::vector<runtime::Tensor>> loadCalibrationData(const graph::Graph& model,
                                                         const CalibrationDataSource& source) {
    const int sources = (source.imagesDir.empty() ? 0 : 1) + (source.npyFiles.empty() ? 0 : 1) +
                        (source.randomSamples > 0 ? 1 : 0);
    if (sources != 1) {
        return Error(Errc::InvalidArgument,
                     "give exactly one of --calib-images DIR, --calib-npy FILE, --calib-random N");
    }
    if (source.maxSamples <= 0) {
        return Error(Errc::InvalidArgument, "--calib-samples must be positive");
    }
    if (!source.imagesDir.empty()) {
        return loadImages(model, source);
    }
    if (!source.npyFiles.empty()) {
        return loadNpy(model, source);
    }
    return randomSamples(model, source);
}

} // namespace qs::quantization
