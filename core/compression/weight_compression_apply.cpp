// Weight compression, the apply step: the planned weights are quantized and each becomes an
// integer initializer (+ scale, zero point) feeding a DequantizeLinear; or, for the simulation,
// its quantize-dequantize in float32.

#include "core/compression/integer_quantizer.h"
#include "core/compression/opset_upgrade.h"
#include "core/compression/weight_compression.h"
#include "core/compression/weight_compression_internal.h"

namespace qs::compression {

using graph::Graph;
using graph::ValueId;
using internal::floatsOf;
using internal::layerName;
using internal::layoutOf;

namespace {
graph::TensorPtr storageTensor(graph::DataType dtype, const std::vector<int64_t>& dims,
                               std::span<const uint8_t> codes) {
    if (graph::dataTypeBits(dtype) == 4) {
        return std::make_shared<const graph::TensorData>(dtype, dims, packInt4(codes));
    }
    return graph::TensorData::fromValues<uint8_t>(dtype, dims, codes);
}

/// Adds integer codes (+ scale, zero point) and a DequantizeLinear in front of every consumer of
/// `weight`; returns the bytes the new initializers take.
int64_t insertDequantize(Graph& graph, ValueId weight, const QuantizedWeight& quantized) {
    const std::string base = graph.value(weight).name;
    const std::vector<int64_t> dims = graph.value(weight).initializer->dims();
    const graph::DataType storage = storageType(quantized.mode);
    std::vector<ValueId> inputs;
    graph::TensorPtr codes = storageTensor(storage, dims, quantized.codes);
    int64_t bytes = static_cast<int64_t>(codes->bytes().size());
    inputs.push_back(graph.addInitializer(uniqueValueName(graph, base + "_quantized"), codes));
    auto scales = graph::TensorData::fromValues<float>(graph::DataType::Float, quantized.scaleDims,
                                                       std::span<const float>(quantized.scales));
    bytes += static_cast<int64_t>(scales->bytes().size());
    inputs.push_back(graph.addInitializer(uniqueValueName(graph, base + "_scale"), scales));
    if (!quantized.zeroPoints.empty()) {
        graph::TensorPtr zeroPoints =
            storageTensor(storage, quantized.scaleDims, quantized.zeroPoints);
        bytes += static_cast<int64_t>(zeroPoints->bytes().size());
        inputs.push_back(
            graph.addInitializer(uniqueValueName(graph, base + "_zero_point"), zeroPoints));
    }
    const ValueId output = graph.addValue(uniqueValueName(graph, base + "_dequantized"),
                                          graph::DataType::Float, graph::TensorShape::ofDims(dims));
    graph.replaceAllUses(weight, output);
    std::vector<graph::Attribute> attributes = {{"axis", quantized.dequantizeAxis(), {}}};
    if (quantized.groupSize > 0) {
        attributes.push_back({"block_size", quantized.groupSize, {}});
    }
    graph.addNode(base + "_DequantizeLinear", "DequantizeLinear", std::move(inputs), {output},
                  std::move(attributes));
    return bytes;
}

Result<QuantizedWeight> quantizeDecision(const Graph& graph, ValueId value,
                                         const WeightDecision& decision) {
    QS_ASSIGN_OR_RETURN(const WeightLayout layout, layoutOf(decision));
    return std::move(
               quantizeWeight(floatsOf(graph, value), layout, decision.mode, decision.groupSize))
        .context(layerName(decision));
}

Result<ValueId> findWeight(const Graph& graph, const WeightDecision& decision) {
    const auto value = graph.findValue(decision.valueName);
    if (!value || !graph.value(*value).isInitializer()) {
        return Error(Errc::InvalidArgument,
                     "weight '" + decision.valueName + "' of the plan is not in the model");
    }
    return *value;
}
} // namespace

Result<CompressionSummary> applyWeightCompression(Graph& graph, const CompressionPlan& plan,
                                                  Progress& progress) {
    bool needsBlocked = false;
    bool any = false;
    for (const WeightDecision& decision : plan.weights) {
        if (decision.mode == CompressionMode::None) {
            continue;
        }
        any = true;
        needsBlocked = needsBlocked || modeBits(decision.mode) == 4 || decision.groupSize > 0;
    }
    CompressionSummary summary;
    if (any) {
        QS_TRY(raiseOpsetAndIrVersion(graph, needsBlocked ? kInt4QdqOpset : kPerAxisQdqOpset,
                                      &summary.upgrade));
    }
    size_t done = 0;
    for (const WeightDecision& decision : plan.weights) {
        ++done;
        if (decision.mode == CompressionMode::None) {
            continue;
        }
        QS_TRY(checkCancelled(progress));
        progress.report(static_cast<double>(done) / static_cast<double>(plan.weights.size()),
                        decision.valueName);
        QS_ASSIGN_OR_RETURN(const ValueId value, findWeight(graph, decision));
        QS_ASSIGN_OR_RETURN(const QuantizedWeight quantized,
                            quantizeDecision(graph, value, decision));
        summary.bytesAfter += insertDequantize(graph, value, quantized);
        summary.floatBytesBefore += decision.numElements * static_cast<int64_t>(sizeof(float));
        ++summary.compressedWeights;
    }
    graph.compact();
    summary.opset = graph.opsetVersion();
    summary.irVersion = graph.metadata().irVersion;
    return summary;
}

Result<void> applyDequantizedWeights(Graph& graph, const CompressionPlan& plan) {
    for (const WeightDecision& decision : plan.weights) {
        if (decision.mode == CompressionMode::None) {
            continue;
        }
        QS_ASSIGN_OR_RETURN(const ValueId value, findWeight(graph, decision));
        QS_ASSIGN_OR_RETURN(const QuantizedWeight quantized,
                            quantizeDecision(graph, value, decision));
        const std::vector<float> restored = dequantizeWeight(quantized);
        graph.value(value).initializer = graph::TensorData::fromValues<float>(
            graph::DataType::Float, decision.dims, std::span<const float>(restored));
    }
    return success();
}

} // namespace qs::compression
