#include "core/runtime/dataset_source.h"

#include "core/runtime/batching.h"
#include "core/runtime/npy.h"

namespace qs::runtime {
namespace {

Tensor firstSamples(Tensor tensor, int64_t maxSamples) {
    if (tensor.rank() == 0 || tensor.shape()[0] <= maxSamples) {
        return tensor;
    }
    return sliceBatch(tensor, 0, maxSamples);
}

Result<std::vector<Tensor>> loadNpy(const graph::Graph& model,
                                    const std::vector<graph::ValueId>& inputs,
                                    const DatasetSource& source) {
    if (source.npyFiles.size() != inputs.size()) {
        return Error(Errc::InvalidArgument,
                     "the model has " + std::to_string(inputs.size()) + " input(s), got " +
                         std::to_string(source.npyFiles.size()) + " .npy file(s); give one " +
                         source.names.npy + " per input, in order");
    }
    std::vector<Tensor> tensors;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const std::string& path = source.npyFiles[i];
        QS_ASSIGN_OR_RETURN(Tensor tensor,
                            readNpy(path).context(source.names.npy + " '" + path + "' for input '" +
                                                  model.value(inputs[i]).name + "'"));
        tensors.push_back(firstSamples(std::move(tensor), source.maxSamples));
    }
    return tensors;
}

Result<std::vector<Tensor>> loadImages(const graph::Graph& model,
                                       const std::vector<graph::ValueId>& inputs,
                                       const DatasetSource& source) {
    if (inputs.size() != 1) {
        return Error(Errc::InvalidArgument, source.names.images +
                                                " needs a model with one input, this one has " +
                                                std::to_string(inputs.size()));
    }
    const graph::Value& value = model.value(inputs[0]);
    QS_ASSIGN_OR_RETURN(const Shape shape, concreteInputShape(value, 1));
    if (shape.size() != 4) {
        return Error(Errc::InvalidArgument, source.names.images + " needs an NCHW input, '" +
                                                value.name + "' is " + shapeToString(shape));
    }
    QS_ASSIGN_OR_RETURN(Tensor images, loadImageFolder(source.imagesDir, shape[1], shape[2],
                                                       shape[3], source.normalization));
    return std::vector<Tensor>{firstSamples(std::move(images), source.maxSamples)};
}

Result<std::vector<Tensor>> randomSamples(const graph::Graph& model,
                                          const std::vector<graph::ValueId>& inputs,
                                          const DatasetSource& source) {
    std::vector<Tensor> tensors;
    uint64_t seed = source.seed;
    for (const graph::ValueId id : inputs) {
        const graph::Value& value = model.value(id);
        if (value.dtype != graph::DataType::Float) {
            return Error(Errc::Unsupported, source.names.random + " can fill float inputs only; '" +
                                                value.name + "' is " +
                                                std::string(graph::dataTypeName(value.dtype)) +
                                                " (give " + source.names.npy + " instead)");
        }
        QS_ASSIGN_OR_RETURN(Shape shape, concreteInputShape(value, source.randomSamples));
        if (shape.empty()) {
            return Error(Errc::Unsupported, source.names.random +
                                                " needs inputs with a batch axis; '" + value.name +
                                                "' is a scalar");
        }
        // Samples on axis 0 also for a static batch: N runs of it.
        const int64_t fixed = staticBatchSize(value);
        shape[0] = (fixed > 0 ? fixed : 1) * source.randomSamples;
        tensors.push_back(randomNormal(shape, seed++));
    }
    return tensors;
}

} // namespace

int DatasetSource::sourceCount() const {
    return static_cast<int>(!npyFiles.empty()) + static_cast<int>(!imagesDir.empty()) +
           static_cast<int>(randomSamples > 0);
}

DatasetKind DatasetSource::kind() const {
    if (sourceCount() != 1) {
        return DatasetKind::None;
    }
    if (!npyFiles.empty()) {
        return DatasetKind::NpyFiles;
    }
    return imagesDir.empty() ? DatasetKind::Random : DatasetKind::ImageFolder;
}

std::string DatasetSource::describe() const {
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

int64_t staticBatchSize(const graph::Value& input) {
    if (!input.shape.rankKnown || input.shape.rank() == 0) {
        return 0;
    }
    const graph::Dim& dim = input.shape.dims[0];
    return dim.isKnown() ? dim.size : 0;
}

Result<std::vector<Tensor>> loadDataset(const graph::Graph& model, const DatasetSource& source) {
    if (source.maxSamples <= 0) {
        return Error(Errc::InvalidArgument, source.names.samples + " must be positive");
    }
    const std::vector<graph::ValueId> inputs = model.runtimeInputs();
    switch (source.kind()) {
    case DatasetKind::NpyFiles:
        return loadNpy(model, inputs, source);
    case DatasetKind::ImageFolder:
        return loadImages(model, inputs, source);
    case DatasetKind::Random:
        return randomSamples(model, inputs, source);
    case DatasetKind::None:
        break;
    }
    const DatasetOptionNames& n = source.names;
    return Error(Errc::InvalidArgument,
                 "give exactly one dataset: " + n.npy + ", " + n.images + " or " + n.random);
}

} // namespace qs::runtime
