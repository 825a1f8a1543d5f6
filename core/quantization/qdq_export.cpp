#include "core/quantization/qdq_export.h"

#include "core/compression/integer_quantizer.h"
#include "core/compression/opset_upgrade.h"
#include "core/onnx/model_io.h"
#include "core/quantization/insertion_point_values.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace qs::quantization {

using graph::DataType;
using graph::Graph;
using graph::ValueId;

namespace {
constexpr int kMaxExportBits = 16;
constexpr int kInt4Bits = 4;
constexpr int kInt8Bits = 8;

/// The integer type a grid is stored in and that type's range.
struct Storage {
    DataType dtype = DataType::Int8;
    int64_t min = -128;
    int64_t max = 127;

    bool isInt4() const { return dtype == DataType::Int4 || dtype == DataType::UInt4; }

    bool isInt16() const { return dtype == DataType::Int16 || dtype == DataType::UInt16; }

    /// int4 and int16 QuantizeLinear/DequantizeLinear came with opset 21.
    bool needsOpset21() const { return isInt4() || isInt16(); }
};

Error pointError(int id, const std::string& what) {
    return Error(Errc::InvalidArgument, "quantizer " + std::to_string(id) + ": " + what);
}

/// int4/uint4 for 4-bit grids (activations only with `int4Activations`), int16/uint16 above 8
/// bits, int8/uint8 otherwise; signed when the grid goes below zero.
Result<Storage> storageFor(int id, const QuantizerParameters& p, bool int4) {
    const int bits = p.qconfig.numBits;
    if (bits < 1 || bits > kMaxExportBits) {
        return Error(Errc::Unsupported, "quantizer " + std::to_string(id) + ": " +
                                            std::to_string(bits) +
                                            "-bit grids cannot be exported (1 to 16 bits)");
    }
    const bool isSigned = p.quantMin < 0;
    Storage storage;
    if (bits == kInt4Bits && int4) {
        storage = isSigned ? Storage{DataType::Int4, -8, 7} : Storage{DataType::UInt4, 0, 15};
    } else if (bits > kInt8Bits) {
        storage = isSigned ? Storage{DataType::Int16, -32768, 32767}
                           : Storage{DataType::UInt16, 0, 65535};
    } else if (!isSigned) {
        storage = Storage{DataType::UInt8, 0, 255};
    }
    if (p.quantMin > p.quantMax || p.quantMin < storage.min || p.quantMax > storage.max) {
        return pointError(id, "integer grid [" + std::to_string(p.quantMin) + ", " +
                                  std::to_string(p.quantMax) + "] does not fit " +
                                  std::string(graph::dataTypeName(storage.dtype)));
    }
    return storage;
}

Result<void> validateParameters(int id, const QuantizerParameters& p) {
    if (p.scale.empty() || p.scale.size() != p.zeroPoint.size()) {
        return pointError(id, "needs one scale and zero point per channel (got " +
                                  std::to_string(p.scale.size()) + " and " +
                                  std::to_string(p.zeroPoint.size()) + ")");
    }
    if (!p.isPerChannel() && p.scale.size() != 1) {
        return pointError(id, "a per-tensor quantizer has " + std::to_string(p.scale.size()) +
                                  " scales");
    }
    for (size_t c = 0; c < p.scale.size(); ++c) {
        if (!(p.scale[c] > 0.0F) || !std::isfinite(p.scale[c])) {
            return pointError(id, "scale " + std::to_string(p.scale[c]) + " is not positive");
        }
        if (p.zeroPoint[c] < p.quantMin || p.zeroPoint[c] > p.quantMax) {
            return pointError(id,
                              "zero point " + std::to_string(p.zeroPoint[c]) + " is off the grid");
        }
    }
    return success();
}

/// Integer values (on the storage's range) as a tensor of the storage type: int4 packed two per
/// byte, two's complement bytes for int8, little-endian 16-bit words for int16/uint16.
graph::TensorPtr integerTensor(const Storage& storage, std::vector<int64_t> dims,
                               const std::vector<int32_t>& values) {
    if (storage.isInt16()) {
        std::vector<uint16_t> words(values.size());
        std::transform(values.begin(), values.end(), words.begin(),
                       [](int32_t v) { return static_cast<uint16_t>(v); });
        return graph::TensorData::fromValues<uint16_t>(storage.dtype, std::move(dims), words);
    }
    std::vector<uint8_t> bytes(values.size());
    std::transform(values.begin(), values.end(), bytes.begin(),
                   [](int32_t v) { return static_cast<uint8_t>(v); });
    if (storage.isInt4()) {
        return std::make_shared<const graph::TensorData>(storage.dtype, std::move(dims),
                                                         compression::packInt4(bytes));
    }
    return graph::TensorData::fromValues<uint8_t>(storage.dtype, std::move(dims), bytes);
}

bool sameGrid(const QuantizerParameters& a, const QuantizerParameters& b) {
    return a.quantMin == b.quantMin && a.quantMax == b.quantMax && a.channelAxis == b.channelAxis;
}

bool sameEncoding(const QuantizerParameters& a, const QuantizerParameters& b) {
    return sameGrid(a, b) && a.scale == b.scale && a.zeroPoint == b.zeroPoint;
}

/// One exported quantizer: its point, parameters, where it goes and how it is stored.
struct PlannedQuantizer {
    int id = 0;
    const SingleConfigQuantizationPoint* point = nullptr;
    const QuantizerParameters* params = nullptr;
    Storage storage;
    std::optional<int> unifiedGroup;
    ResolvedInsertionPoint target;

    /// The type's range is wider than the grid (sub-8-bit in int8, narrow range).
    bool needsClip() const {
        return params->quantMin != storage.min || params->quantMax != storage.max;
    }
};

std::map<int, int> groupOfPoint(const SingleConfigQuantizerSetup& setup) {
    std::map<int, int> group;
    for (const auto& [gid, members] : setup.unifiedScaleGroups) {
        for (const int member : members) {
            group[member] = gid;
        }
    }
    return group;
}

Result<std::vector<PlannedQuantizer>> planQuantizers(const SingleConfigQuantizerSetup& setup,
                                                     const QuantizerParametersMap& parameters,
                                                     const QdqExportOptions& options) {
    const std::map<int, int> group = groupOfPoint(setup);
    std::map<int, std::vector<const QuantizerParameters*>> membersSeen;
    std::vector<PlannedQuantizer> planned;
    for (const auto& [id, point] : setup.quantizationPoints) {
        if (setup.mergedInto.contains(id)) {
            continue;
        }
        const auto it = parameters.find(id);
        if (it == parameters.end()) {
            return pointError(id,
                              "no calibrated parameters for " + point.insertionPoint.toString());
        }
        PlannedQuantizer q{id, &point, &it->second, {}, std::nullopt, {}};
        QS_TRY(validateParameters(id, *q.params));
        const bool int4 = options.int4Activations || point.insertionPoint.isWeight;
        QS_ASSIGN_OR_RETURN(q.storage, storageFor(id, *q.params, int4));
        if (const auto g = group.find(id); g != group.end()) {
            // Members share one range; those on the same grid must then share scale and zero
            // point. A member given another bit width (a requantizer) gets its own.
            q.unifiedGroup = g->second;
            for (const QuantizerParameters* other : membersSeen[g->second]) {
                if (sameGrid(*other, *q.params) && !sameEncoding(*other, *q.params)) {
                    return pointError(id, "unified-scale group " + std::to_string(g->second) +
                                              " members on one grid have different scales or "
                                              "zero points");
                }
            }
            membersSeen[g->second].push_back(q.params);
        }
        planned.push_back(q);
    }
    return planned;
}

/// Builds the graph edits; keeps the initializers a unified group shares.
class QdqInserter {
public:
    QdqInserter(Graph& graph, QdqExportSummary& summary)
        : m_graph(graph)
        , m_summary(summary) {}

    Result<void> insertWeight(const PlannedQuantizer& q);
    Result<void> insertPostHook(const PlannedQuantizer& q);
    Result<void> insertPreHook(const PlannedQuantizer& q);

private:
    struct Encoding {
        ValueId scale;
        ValueId zeroPoint;
    };

    std::string uniqueName(const std::string& base) const {
        return compression::uniqueValueName(m_graph, base);
    }

    static std::string tag(const PlannedQuantizer& q) { return "_q" + std::to_string(q.id); }

    Encoding encodingOf(const PlannedQuantizer& q, const std::string& base);
    graph::TensorPtr zeroPointTensor(const PlannedQuantizer& q) const;
    std::vector<int64_t> paramDims(const PlannedQuantizer& q) const;
    Result<ValueId> clipToGrid(const PlannedQuantizer& q, ValueId x, const std::string& base);
    Result<void> addPair(const PlannedQuantizer& q, ValueId x, ValueId dequantized);
    Result<void> checkFloat(const PlannedQuantizer& q, ValueId x) const;

    Graph& m_graph;
    QdqExportSummary& m_summary;
    /// Per unified group, the initializers made so far and the parameters they encode.
    std::map<int, std::vector<std::pair<const QuantizerParameters*, Encoding>>> m_groupEncodings;
};

std::vector<int64_t> QdqInserter::paramDims(const PlannedQuantizer& q) const {
    if (!q.params->isPerChannel()) {
        return {};
    }
    return {static_cast<int64_t>(q.params->scale.size())};
}

graph::TensorPtr QdqInserter::zeroPointTensor(const PlannedQuantizer& q) const {
    return integerTensor(q.storage, paramDims(q), q.params->zeroPoint);
}

QdqInserter::Encoding QdqInserter::encodingOf(const PlannedQuantizer& q, const std::string& base) {
    if (q.unifiedGroup) {
        for (const auto& [params, encoding] : m_groupEncodings[*q.unifiedGroup]) {
            if (sameEncoding(*params, *q.params)) {
                return encoding;
            }
        }
    }
    std::string prefix = base + tag(q);
    if (q.unifiedGroup) {
        prefix = "unified_scale_group_" + std::to_string(*q.unifiedGroup) + "_" +
                 std::to_string(q.params->qconfig.numBits) + "bit";
    }
    Encoding encoding;
    encoding.scale = m_graph.addInitializer(
        uniqueName(prefix + "_scale"),
        graph::TensorData::fromValues<float>(DataType::Float, paramDims(q), q.params->scale));
    encoding.zeroPoint =
        m_graph.addInitializer(uniqueName(prefix + "_zero_point"), zeroPointTensor(q));
    if (q.unifiedGroup) {
        m_groupEncodings[*q.unifiedGroup].emplace_back(q.params, encoding);
    }
    return encoding;
}

Result<void> QdqInserter::checkFloat(const PlannedQuantizer& q, ValueId x) const {
    // Undefined: shape inference did not reach it; propagation treated it as float.
    const DataType dtype = m_graph.value(x).dtype;
    if (dtype != DataType::Float && dtype != DataType::Undefined) {
        return Error(Errc::Unsupported,
                     "quantizer " + std::to_string(q.id) + ": tensor '" + m_graph.value(x).name +
                         "' is " + std::string(graph::dataTypeName(m_graph.value(x).dtype)) +
                         ", only float32 tensors are quantized");
    }
    return success();
}

/// Clip(x, (qmin - zp)·s, (qmax - zp)·s): after it, QuantizeLinear's rounding stays on the grid.
/// Per-channel bounds need a broadcastable [C, 1, ..., 1] tensor, which Clip (scalar min/max) does
/// not take, so those become Max then Min.
Result<ValueId> QdqInserter::clipToGrid(const PlannedQuantizer& q, ValueId x,
                                        const std::string& base) {
    const QuantizerParameters& p = *q.params;
    std::vector<float> low;
    std::vector<float> high;
    for (size_t c = 0; c < p.scale.size(); ++c) {
        low.push_back(static_cast<float>(p.quantMin - p.zeroPoint[c]) * p.scale[c]);
        high.push_back(static_cast<float>(p.quantMax - p.zeroPoint[c]) * p.scale[c]);
    }
    std::vector<int64_t> boundDims;
    if (p.isPerChannel()) {
        const graph::TensorShape& shape = m_graph.value(x).shape;
        const int64_t axis = *p.channelAxis;
        if (!shape.rankKnown || axis < 0 || axis >= static_cast<int64_t>(shape.rank())) {
            return pointError(q.id, "per-channel axis " + std::to_string(axis) +
                                        " does not fit tensor '" + m_graph.value(x).name +
                                        "' of shape " + shape.toString());
        }
        boundDims.assign(shape.rank() - static_cast<size_t>(axis), 1);
        boundDims.front() = static_cast<int64_t>(low.size());
    }
    const ValueId lowValue = m_graph.addInitializer(
        uniqueName(base + tag(q) + "_low"),
        graph::TensorData::fromValues<float>(DataType::Float, boundDims, low));
    const ValueId highValue = m_graph.addInitializer(
        uniqueName(base + tag(q) + "_high"),
        graph::TensorData::fromValues<float>(DataType::Float, boundDims, high));
    const graph::TensorShape shape = m_graph.value(x).shape;
    const ValueId clipped =
        m_graph.addValue(uniqueName(base + tag(q) + "_clipped"), DataType::Float, shape);
    const std::string clippedName = m_graph.value(clipped).name;
    if (!p.isPerChannel()) {
        m_graph.addNode(clippedName + "_Clip", "Clip", {x, lowValue, highValue}, {clipped});
    } else {
        const ValueId raised =
            m_graph.addValue(uniqueName(base + tag(q) + "_raised"), DataType::Float, shape);
        m_graph.addNode(m_graph.value(raised).name + "_Max", "Max", {x, lowValue}, {raised});
        m_graph.addNode(clippedName + "_Min", "Min", {raised, highValue}, {clipped});
    }
    ++m_summary.clippedGrids;
    return clipped;
}

/// [Clip →] QuantizeLinear → DequantizeLinear from `x` into the (new, unproduced) `dequantized`.
Result<void> QdqInserter::addPair(const PlannedQuantizer& q, ValueId x, ValueId dequantized) {
    const std::string base = m_graph.value(x).name;
    ValueId input = x;
    if (q.needsClip()) {
        QS_ASSIGN_OR_RETURN(input, clipToGrid(q, x, base));
    }
    const Encoding encoding = encodingOf(q, base);
    const ValueId quantized =
        m_graph.addValue(uniqueName(base + tag(q)), q.storage.dtype, m_graph.value(x).shape);
    std::vector<graph::Attribute> attributes;
    if (q.params->isPerChannel()) {
        attributes.push_back({"axis", int64_t{*q.params->channelAxis}, {}});
    }
    std::vector<graph::Attribute> quantizeAttributes = attributes;
    if (q.storage.isInt4()) {
        // Redundant with the zero point's type, but it names the 4-bit output for runtimes that
        // unpack int4 constants into bytes (ours).
        quantizeAttributes.push_back({"output_dtype", static_cast<int64_t>(q.storage.dtype), {}});
    }
    const std::string name = m_graph.value(quantized).name;
    m_graph.addNode(name + "_QuantizeLinear", "QuantizeLinear",
                    {input, encoding.scale, encoding.zeroPoint}, {quantized},
                    std::move(quantizeAttributes));
    m_graph.addNode(name + "_DequantizeLinear", "DequantizeLinear",
                    {quantized, encoding.scale, encoding.zeroPoint}, {dequantized},
                    std::move(attributes));
    ++m_summary.activationPairs;
    return success();
}

Result<void> QdqInserter::insertPreHook(const PlannedQuantizer& q) {
    const graph::NodeId node = *q.target.node;
    const uint32_t port = q.target.port;
    // The port's current input: a requantizer's parent may already sit on this tensor.
    const ValueId x = m_graph.node(node).inputs[port];
    QS_TRY(checkFloat(q, x));
    const ValueId dequantized =
        m_graph.addValue(uniqueName(m_graph.value(x).name + "_dq" + std::to_string(q.id)),
                         DataType::Float, m_graph.value(x).shape);
    QS_TRY(addPair(q, x, dequantized));
    m_graph.setNodeInput(node, port, dequantized);
    return success();
}

Result<void> QdqInserter::insertPostHook(const PlannedQuantizer& q) {
    const ValueId x = q.target.value;
    QS_TRY(checkFloat(q, x));
    const std::string originalName = m_graph.value(x).name;
    const ValueId dequantized =
        m_graph.addValue(uniqueName(originalName + "_dq" + std::to_string(q.id)), DataType::Float,
                         m_graph.value(x).shape);
    const bool isGraphOutput = m_graph.isOutput(x);
    // Every consumer (and a graph output) reads the dequantized value; the new Q node reads x.
    m_graph.replaceAllUses(x, dequantized);
    QS_TRY(addPair(q, x, dequantized));
    if (isGraphOutput) {
        // The output keeps its name; the float tensor in front of the quantizer is renamed.
        m_graph.renameValue(x, uniqueName(originalName + "_float"));
        m_graph.renameValue(dequantized, originalName);
    }
    return success();
}

Result<void> QdqInserter::insertWeight(const PlannedQuantizer& q) {
    const ValueId w = q.target.value;
    const graph::Value& weight = m_graph.value(w);
    if (!weight.isInitializer() || weight.initializer->dtype() != DataType::Float) {
        return Error(Errc::Unsupported, "quantizer " + std::to_string(q.id) + ": weight '" +
                                            weight.name + "' is not a float32 initializer");
    }
    const std::vector<int64_t> dims = weight.initializer->dims();
    const QuantizerParameters& p = *q.params;
    int64_t inner = 1;
    int64_t channels = 1;
    if (p.isPerChannel()) {
        const auto rank = static_cast<int64_t>(dims.size());
        const int64_t axis = *p.channelAxis < 0 ? *p.channelAxis + rank : *p.channelAxis;
        if (!q.target.weightAxis || axis != *q.target.weightAxis) {
            return pointError(q.id, "per-channel axis " + std::to_string(*p.channelAxis) +
                                        " is not the output-channel axis of weight '" +
                                        weight.name + "'");
        }
        channels = dims[static_cast<size_t>(axis)];
        for (size_t d = static_cast<size_t>(axis) + 1; d < dims.size(); ++d) {
            inner *= dims[d];
        }
        if (static_cast<int64_t>(p.scale.size()) != channels) {
            return pointError(q.id, std::to_string(p.scale.size()) + " scales for " +
                                        std::to_string(channels) + " channels of '" + weight.name +
                                        "'");
        }
    }
    const auto values = weight.initializer->as<float>();
    std::vector<int32_t> codes(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
        const auto c = static_cast<size_t>((static_cast<int64_t>(i) / inner) % channels);
        // saturate(round_half_to_even(w / s) + zp), divided in double as our QuantizeLinear
        // kernel and fakeQuantize do, so the codes are the simulation's.
        const double rounded = std::nearbyint(static_cast<double>(values[i]) / p.scale[c]);
        const double code = std::clamp(rounded + p.zeroPoint[c], static_cast<double>(p.quantMin),
                                       static_cast<double>(p.quantMax));
        codes[i] = static_cast<int32_t>(code);
    }
    const std::string base = weight.name;
    const ValueId quantized =
        m_graph.addInitializer(uniqueName(base + tag(q)), integerTensor(q.storage, dims, codes));
    const Encoding encoding = encodingOf(q, base);
    const ValueId dequantized = m_graph.addValue(uniqueName(base + "_dq" + std::to_string(q.id)),
                                                 DataType::Float, graph::TensorShape::ofDims(dims));
    std::vector<graph::Attribute> attributes;
    if (p.isPerChannel()) {
        attributes.push_back({"axis", *q.target.weightAxis, {}});
    }
    m_graph.addNode(m_graph.value(quantized).name + "_DequantizeLinear", "DequantizeLinear",
                    {quantized, encoding.scale, encoding.zeroPoint}, {dequantized},
                    std::move(attributes));
    m_graph.setNodeInput(*q.target.node, q.target.port, dequantized);
    ++m_summary.weightDequantizers;
    return success();
}

enum class Stage { Weight, PostHook, PreHook };

Stage stageOf(const PlannedQuantizer& q) {
    if (q.point->insertionPoint.isWeight) {
        return Stage::Weight;
    }
    return q.point->insertionPoint.inputPortId ? Stage::PreHook : Stage::PostHook;
}

Result<void> insertOne(QdqInserter& inserter, const PlannedQuantizer& q) {
    const std::string where =
        "quantizer " + std::to_string(q.id) + " at " + q.point->insertionPoint.toString();
    switch (stageOf(q)) {
    case Stage::Weight:
        return inserter.insertWeight(q).context(where);
    case Stage::PostHook:
        return inserter.insertPostHook(q).context(where);
    case Stage::PreHook:
        return inserter.insertPreHook(q).context(where);
    }
    return success();
}

Result<void> insertAll(Graph& graph, const std::vector<PlannedQuantizer>& planned,
                       QdqExportSummary& counts) {
    QdqInserter inserter(graph, counts);
    // Post-hooks before pre-hooks: a requantizer on an edge then wraps its parent's output.
    for (const Stage stage : {Stage::Weight, Stage::PostHook, Stage::PreHook}) {
        for (const PlannedQuantizer& q : planned) {
            if (stageOf(q) == stage) {
                QS_TRY(insertOne(inserter, q));
            }
        }
    }
    return success();
}

/// Opset 13 for any quantizer, 21 (and IR 10) with an int4 or int16 grid.
Result<void> raiseOpsetFor(Graph& graph, const std::vector<PlannedQuantizer>& planned,
                           compression::OpsetUpgrade& upgrade) {
    if (planned.empty()) {
        return success();
    }
    const bool opset21 = std::any_of(planned.begin(), planned.end(), [](const PlannedQuantizer& q) {
        return q.storage.needsOpset21();
    });
    return compression::raiseOpsetAndIrVersion(
               graph, opset21 ? compression::kInt4QdqOpset : compression::kPerAxisQdqOpset,
               &upgrade)
        .context("QDQ export");
}
} // namespace

Result<Graph> insertQdqNodes(const Graph& model, const SingleConfigQuantizerSetup& setup,
                             const QuantizerParametersMap& parameters,
                             const QdqExportOptions& options, QdqExportSummary* summary) {
    QS_ASSIGN_OR_RETURN(std::vector<PlannedQuantizer> planned,
                        planQuantizers(setup, parameters, options));
    Graph graph = model;
    QdqExportSummary counts;
    QS_TRY(raiseOpsetFor(graph, planned, counts.upgrade));
    for (PlannedQuantizer& q : planned) {
        QS_ASSIGN_OR_RETURN(q.target, resolveInsertionPoint(graph, q.point->insertionPoint));
    }
    QS_TRY(insertAll(graph, planned, counts));
    graph.compact();
    QS_TRY(graph::verify(graph).context("QDQ export produced an inconsistent graph"));
    counts.opset = graph.opsetVersion();
    counts.irVersion = graph.metadata().irVersion;
    if (summary != nullptr) {
        *summary = counts;
    }
    return graph;
}

Result<QdqExportSummary> exportQdqModel(const Graph& model, const SingleConfigQuantizerSetup& setup,
                                        const QuantizerParametersMap& parameters,
                                        const std::filesystem::path& path,
                                        const QdqExportOptions& options) {
    QdqExportSummary summary;
    QS_ASSIGN_OR_RETURN(const Graph graph,
                        insertQdqNodes(model, setup, parameters, options, &summary));
    if (options.check && onnx::checkerCanJudge(graph)) {
        QS_TRY(onnx::checkModel(graph).context("the QDQ model"));
        summary.checked = true;
    }
    QS_TRY(onnx::exportModel(graph, path));
    return summary;
}

} // namespace qs::quantization
