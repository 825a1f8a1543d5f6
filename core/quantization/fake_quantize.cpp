// Fake-quant graph rewrite and the element-wise fake-quant used for weights.

#include "core/quantization/fake_quantize.h"

#include "core/quantization/insertion_point_values.h"
#include "core/runtime/op_util.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace qs::quantization {
namespace {

/// The smallest ONNX integer type holding the grid (int8/uint8 up to 8 bits, else 16).
graph::DataType storageType(const QuantizerParameters& params) {
    const bool wide = params.qconfig.numBits > 8;
    if (params.quantMin < 0) {
        return wide ? graph::DataType::Int16 : graph::DataType::Int8;
    }
    return wide ? graph::DataType::UInt16 : graph::DataType::UInt8;
}

std::pair<int64_t, int64_t> storageRange(graph::DataType type) {
    switch (type) {
    case graph::DataType::Int8:
        return {std::numeric_limits<int8_t>::min(), std::numeric_limits<int8_t>::max()};
    case graph::DataType::UInt8:
        return {0, std::numeric_limits<uint8_t>::max()};
    case graph::DataType::Int16:
        return {std::numeric_limits<int16_t>::min(), std::numeric_limits<int16_t>::max()};
    default:
        return {0, std::numeric_limits<uint16_t>::max()};
    }
}

graph::TensorPtr zeroPointData(const QuantizerParameters& params, graph::DataType type,
                               std::vector<int64_t> dims) {
    const auto count = params.zeroPoint.size();
    switch (type) {
    case graph::DataType::Int8: {
        std::vector<int8_t> v(params.zeroPoint.begin(), params.zeroPoint.end());
        return graph::TensorData::fromValues<int8_t>(type, std::move(dims), v);
    }
    case graph::DataType::UInt8: {
        std::vector<uint8_t> v(params.zeroPoint.begin(), params.zeroPoint.end());
        return graph::TensorData::fromValues<uint8_t>(type, std::move(dims), v);
    }
    case graph::DataType::Int16: {
        std::vector<int16_t> v(params.zeroPoint.begin(), params.zeroPoint.end());
        return graph::TensorData::fromValues<int16_t>(type, std::move(dims), v);
    }
    default: {
        std::vector<uint16_t> v(count);
        std::transform(params.zeroPoint.begin(), params.zeroPoint.end(), v.begin(),
                       [](int32_t z) { return static_cast<uint16_t>(z); });
        return graph::TensorData::fromValues<uint16_t>(type, std::move(dims), v);
    }
    }
}

class Rewriter {
public:
    explicit Rewriter(graph::Graph& graph)
        : m_graph(graph) {}

    /// Fake-quantizes `input` into a new value and returns it.
    Result<graph::ValueId> addQuantizer(int id, graph::ValueId input,
                                        const QuantizerParameters& params) {
        const std::string prefix = "qs_fq_" + std::to_string(id) + "_";
        const graph::DataType type = storageType(params);
        const bool perChannel = params.isPerChannel();
        const std::vector<int64_t> dims =
            perChannel ? std::vector<int64_t>{static_cast<int64_t>(params.scale.size())}
                       : std::vector<int64_t>{};
        const graph::ValueId scale = m_graph.addInitializer(
            prefix + "scale",
            graph::TensorData::fromValues<float>(graph::DataType::Float, dims, params.scale));
        const graph::ValueId zeroPoint =
            m_graph.addInitializer(prefix + "zero_point", zeroPointData(params, type, dims));
        std::vector<graph::Attribute> axis;
        if (perChannel) {
            axis.push_back(runtime::intAttribute("axis", *params.channelAxis));
        }
        graph::ValueId x = input;
        const auto [typeMin, typeMax] = storageRange(type);
        if (params.quantMin != typeMin || params.quantMax != typeMax) {
            QS_ASSIGN_OR_RETURN(x, addGridClip(prefix, input, params));
        }
        const graph::ValueId q = m_graph.addValue(prefix + "q", type, m_graph.value(input).shape);
        const graph::ValueId y =
            m_graph.addValue(prefix + "dq", graph::DataType::Float, m_graph.value(input).shape);
        m_graph.addNode(prefix + "QuantizeLinear", "QuantizeLinear", {x, scale, zeroPoint}, {q},
                        axis);
        m_graph.addNode(prefix + "DequantizeLinear", "DequantizeLinear", {q, scale, zeroPoint}, {y},
                        axis);
        return y;
    }

private:
    /// Clips x to the grid's float range [(qmin - zp) s, (qmax - zp) s]: Clip per tensor, Max/Min
    /// with [C, 1, ...] bounds per channel.
    Result<graph::ValueId> addGridClip(const std::string& prefix, graph::ValueId input,
                                       const QuantizerParameters& params) {
        const size_t count = params.scale.size();
        std::vector<float> lo(count);
        std::vector<float> hi(count);
        for (size_t c = 0; c < count; ++c) {
            lo[c] = static_cast<float>(params.quantMin - params.zeroPoint[c]) * params.scale[c];
            hi[c] = static_cast<float>(params.quantMax - params.zeroPoint[c]) * params.scale[c];
        }
        const graph::TensorShape shape =
            m_graph.value(input).shape; // a copy: adding values below reallocates
        std::vector<int64_t> dims;
        if (params.isPerChannel()) {
            const auto axis = static_cast<size_t>(*params.channelAxis);
            if (!shape.rankKnown || axis >= shape.rank()) {
                return Error(Errc::Unsupported, "per-channel clip of '" +
                                                    m_graph.value(input).name +
                                                    "' needs a known rank above the channel axis");
            }
            dims.assign(shape.rank() - axis, 1);
            dims[0] = static_cast<int64_t>(count);
        }
        const auto constant = [&](const std::string& name, const std::vector<float>& v) {
            return m_graph.addInitializer(prefix + name, graph::TensorData::fromValues<float>(
                                                             graph::DataType::Float, dims, v));
        };
        const graph::ValueId loValue = constant("clip_min", lo);
        const graph::ValueId hiValue = constant("clip_max", hi);
        const graph::ValueId out =
            m_graph.addValue(prefix + "clipped", graph::DataType::Float, shape);
        if (!params.isPerChannel()) {
            m_graph.addNode(prefix + "Clip", "Clip", {input, loValue, hiValue}, {out});
            return out;
        }
        const graph::ValueId lower =
            m_graph.addValue(prefix + "lower", graph::DataType::Float, shape);
        m_graph.addNode(prefix + "Max", "Max", {input, loValue}, {lower});
        m_graph.addNode(prefix + "Min", "Min", {lower, hiValue}, {out});
        return out;
    }

    graph::Graph& m_graph;
};

Result<void> quantizeWeight(graph::Graph& graph, int id, const ResolvedInsertionPoint& at,
                            const QuantizerParameters& params) {
    const graph::Value& weight = graph.value(at.value);
    if (weight.initializer->dtype() != graph::DataType::Float) {
        return Error(Errc::Unsupported, "weight '" + weight.name + "' is not float32");
    }
    std::vector<float> values(weight.initializer->as<float>().begin(),
                              weight.initializer->as<float>().end());
    const std::vector<int64_t> dims = weight.initializer->dims();
    QS_TRY(fakeQuantize(values, dims, params).context("weight '" + weight.name + "'"));
    const graph::ValueId quantized = graph.addInitializer(
        weight.name + "_qs_fq_" + std::to_string(id),
        graph::TensorData::fromValues<float>(graph::DataType::Float, dims, values));
    graph.setNodeInput(*at.node, at.port, quantized);
    return success();
}

} // namespace

Result<void> fakeQuantize(std::span<float> values, std::span<const int64_t> shape,
                          const QuantizerParameters& params) {
    int64_t channels = 1;
    int64_t inner = static_cast<int64_t>(values.size());
    if (params.isPerChannel()) {
        const auto axis = static_cast<size_t>(*params.channelAxis);
        if (axis >= shape.size() || shape[axis] != static_cast<int64_t>(params.scale.size())) {
            return Error(Errc::InvalidArgument, "per-channel parameters do not match the tensor's "
                                                "channel axis");
        }
        channels = shape[axis];
        inner = 1;
        for (size_t d = axis + 1; d < shape.size(); ++d) {
            inner *= shape[d];
        }
    }
    const int64_t outer = static_cast<int64_t>(values.size()) / (channels * inner);
    const auto qmin = static_cast<double>(params.quantMin);
    const auto qmax = static_cast<double>(params.quantMax);
    for (int64_t o = 0; o < outer; ++o) {
        for (int64_t c = 0; c < channels; ++c) {
            const auto ci = static_cast<size_t>(c);
            const double scale = params.scale[ci];
            const double zp = params.zeroPoint[ci];
            float* block = values.data() + (o * channels + c) * inner;
            for (int64_t i = 0; i < inner; ++i) {
                const double q = std::clamp(std::nearbyint(block[i] / scale) + zp, qmin, qmax);
                block[i] = static_cast<float>(q - zp) * params.scale[ci];
            }
        }
    }
    return success();
}

namespace {

/// One activation quantizer: a pre-hook rewires its (node, port) edge; a post-hook moves every
/// consumer (and graph output) to the quantized value, through a placeholder so the quantizer
/// itself keeps reading the float tensor.
Result<void> insertActivationQuantizer(FakeQuantizedModel& out, int id,
                                       const ResolvedInsertionPoint& at, bool preHook,
                                       const QuantizerParameters& params) {
    Rewriter rewriter(out.graph);
    graph::ValueId placeholder;
    if (!preHook) {
        placeholder = out.graph.addValue("qs_fq_" + std::to_string(id) + "_pending",
                                         graph::DataType::Float, out.graph.value(at.value).shape);
        out.graph.replaceAllUses(at.value, placeholder);
    }
    QS_ASSIGN_OR_RETURN(const graph::ValueId y, rewriter.addQuantizer(id, at.value, params));
    if (preHook) {
        out.graph.setNodeInput(*at.node, at.port, y);
    } else {
        out.graph.replaceAllUses(placeholder, y);
    }
    out.quantizerInput[id] = at.value;
    out.quantizerOutput[id] = y;
    return success();
}

} // namespace

Result<FakeQuantizedModel> insertFakeQuantizers(const graph::Graph& model,
                                                const SingleConfigQuantizerSetup& setup,
                                                const QuantizerParametersMap& parameters) {
    FakeQuantizedModel out{.graph = model, .quantizerInput = {}, .quantizerOutput = {}};
    // Weights and post-hooks first, then pre-hooks, which then read what the post-hooks produce.
    for (const bool preHooks : {false, true}) {
        for (const auto& [id, point] : setup.quantizationPoints) {
            const InsertionPoint& ip = point.insertionPoint;
            if ((!ip.isWeight && ip.inputPortId.has_value()) != preHooks) {
                continue;
            }
            const auto params = parameters.find(id);
            if (params == parameters.end()) {
                return Error(Errc::InvalidArgument, "no parameters for quantizer #" +
                                                        std::to_string(id) + " at '" +
                                                        ip.toString() + "'");
            }
            QS_ASSIGN_OR_RETURN(const ResolvedInsertionPoint at,
                                resolveInsertionPoint(out.graph, ip));
            QS_TRY(
                (ip.isWeight ? quantizeWeight(out.graph, id, at, params->second)
                             : insertActivationQuantizer(out, id, at, preHooks, params->second))
                    .context("quantizer #" + std::to_string(id) + " at '" + ip.toString() + "'"));
        }
    }
    return out;
}

} // namespace qs::quantization
