#include "core/compression/calibration_dataset.h"

#include "core/runtime/batching.h"
#include "core/runtime/image_dataset.h"
#include "core/runtime/npy.h"

#include <string>

namespace qs::compression {

namespace {
constexpr int64_t kDefaultBatch = 8;

/// The first dim of `input` when static, else 0.
int64_t staticBatch(const graph::Value& input) {
    if (!input.shape.rankKnown || input.shape.rank() == 0) {
        return 0;
    }
    const graph::Dim& dim = input.shape.dims[0];
    return dim.isKnown() ? dim.size : 0;
}

Result<std::vector<runtime::Tensor>> loadNpy(const graph::Graph& graph,
                                             const std::vector<graph::ValueId>& inputs,
                                             const DatasetSource& source) {
    if (source.npyFiles.size() != inputs.size()) {
        return Error(Errc::InvalidArgument, "the model has " + std::to_string(inputs.size()) +
                                                " input(s), got " +
                                                std::to_string(source.npyFiles.size()) +
                                                " .npy file(s); give one per input, in order");
    }
    std::vector<runtime::Tensor> tensors;
    for (size_t i = 0; i < inputs.size(); ++i) {
        QS_ASSIGN_OR_RETURN(
            runtime::Tensor tensor,
            runtime::readNpy(source.npyFiles[i])
                .context("dataset for input '" + graph.value(inputs[i]).name + "'"));
        tensors.push_back(std::move(tensor));
    }
    return tensors;
}

Result<std::vector<runtime::Tensor>> loadImages(const graph::Graph& graph,
                                                const std::vector<graph::ValueId>& inputs,
                                                const DatasetSource& source) {
    if (inputs.size() != 1) {
        return Error(Errc::InvalidArgument, "an image folder needs a model with one input");
    }
    const graph::Value& value = graph.value(inputs[0]);
    QS_ASSIGN_OR_RETURN(const runtime::Shape shape, runtime::concreteInputShape(value, 1));
    if (shape.size() != 4) {
        return Error(Errc::InvalidArgument, "an image folder needs an NCHW input, '" + value.name +
                                                "' is " + runtime::shapeToString(shape));
    }
    QS_ASSIGN_OR_RETURN(runtime::Tensor images,
                        runtime::loadImageFolder(source.imageFolder, shape[1], shape[2], shape[3]));
    return std::vector<runtime::Tensor>{std::move(images)};
}

/// N samples per input: N times the static first dim when there is one.
Result<std::vector<runtime::Tensor>> randomInputs(const graph::Graph& graph,
                                                  const std::vector<graph::ValueId>& inputs,
                                                  const DatasetSource& source) {
    std::vector<runtime::Tensor> tensors;
    uint64_t seed = source.seed;
    for (const graph::ValueId id : inputs) {
        const graph::Value& value = graph.value(id);
        if (value.dtype != graph::DataType::Float) {
            return Error(Errc::Unsupported, "random samples fill float inputs only; '" +
                                                value.name + "' is " +
                                                std::string(graph::dataTypeName(value.dtype)) +
                                                " (give .npy files instead)");
        }
        QS_ASSIGN_OR_RETURN(runtime::Shape shape,
                            runtime::concreteInputShape(value, source.randomSamples));
        if (shape.empty()) {
            return Error(Errc::InvalidArgument, "input '" + value.name + "' is a scalar");
        }
        if (staticBatch(value) > 0) {
            shape[0] = staticBatch(value) * source.randomSamples;
        }
        tensors.push_back(runtime::randomNormal(shape, seed++));
    }
    return tensors;
}
} // namespace

Result<CalibrationData> loadCalibrationData(const graph::Graph& graph,
                                            const DatasetSource& source) {
    const int sources = static_cast<int>(!source.npyFiles.empty()) +
                        static_cast<int>(!source.imageFolder.empty()) +
                        static_cast<int>(source.randomSamples > 0);
    if (sources != 1) {
        return Error(Errc::InvalidArgument,
                     "give exactly one dataset: .npy files, an image folder or random samples");
    }
    const std::vector<graph::ValueId> inputs = graph.runtimeInputs();
    if (inputs.empty()) {
        return Error(Errc::InvalidArgument, "the model has no inputs to feed a dataset to");
    }
    CalibrationData data;
    if (!source.npyFiles.empty()) {
        QS_ASSIGN_OR_RETURN(data.inputs, loadNpy(graph, inputs, source));
    } else if (!source.imageFolder.empty()) {
        QS_ASSIGN_OR_RETURN(data.inputs, loadImages(graph, inputs, source));
    } else {
        QS_ASSIGN_OR_RETURN(data.inputs, randomInputs(graph, inputs, source));
    }
    const int64_t fixed = staticBatch(graph.value(inputs[0]));
    if (fixed > 0 && source.batchSize > 0 && source.batchSize != fixed) {
        return Error(Errc::InvalidArgument, "input '" + graph.value(inputs[0]).name +
                                                "' has a static batch of " + std::to_string(fixed) +
                                                ", not " + std::to_string(source.batchSize));
    }
    data.batchSize = fixed > 0 ? fixed : (source.batchSize > 0 ? source.batchSize : kDefaultBatch);
    return data;
}

} // namespace qs::compression
