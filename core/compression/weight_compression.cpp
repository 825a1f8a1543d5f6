#include "core/compression/weight_compression.h"

#include "core/compression/integer_quantizer.h"
#include "core/compression/opset_upgrade.h"
#include "core/graph/metatype.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <sstream>
#include <unordered_set>

namespace qs::compression {

using graph::Graph;
using graph::NodeId;
using graph::ValueId;

namespace {
/// Group size marking a weight the IGNORE fallback leaves in float.
constexpr int64_t kIgnoredGroupSize = -2;

enum class WeightKind { MatMul, Embedding, Other };

struct Candidate {
    ValueId value;
    NodeId node; ///< the first consumer
    int port = -1;
    WeightKind kind = WeightKind::Other;
    WeightDecision decision;
};

WeightKind kindOf(std::string_view metatypeName) {
    if (metatypeName == "ONNXMatMulMetatype" || metatypeName == "ONNXGemmMetatype") {
        return WeightKind::MatMul;
    }
    if (metatypeName == "ONNXEmbeddingMetatype") {
        return WeightKind::Embedding;
    }
    return WeightKind::Other;
}

bool isGraphInput(const Graph& graph, ValueId value) {
    const auto& inputs = graph.inputs();
    return std::find(inputs.begin(), inputs.end(), value) != inputs.end();
}

/// The float32 constant weights of weighted ops, each once (the first consumer decides its
/// channel axis), in topological order.
Result<std::vector<Candidate>> collectWeights(const Graph& graph) {
    QS_ASSIGN_OR_RETURN(const std::vector<NodeId> order, graph.topologicalOrder());
    std::vector<Candidate> candidates;
    std::unordered_set<uint32_t> seen;
    for (const NodeId id : order) {
        const graph::Metatype& meta = graph::metatypeOf(graph, id);
        if (!meta.hasWeights) {
            continue;
        }
        for (const int port : graph::constantWeightPorts(graph, id)) {
            const ValueId valueId = graph.node(id).inputs[static_cast<size_t>(port)];
            const graph::Value& value = graph.value(valueId);
            const auto axis = graph::weightOutputChannelAxis(graph, id, port);
            if (!value.isInitializer() || value.initializer->dtype() != graph::DataType::Float ||
                value.initializer->dims().size() < 2 || !axis || seen.contains(valueId.index()) ||
                isGraphInput(graph, valueId)) {
                continue;
            }
            seen.insert(valueId.index());
            Candidate candidate;
            candidate.value = valueId;
            candidate.node = id;
            candidate.port = port;
            candidate.kind = kindOf(meta.name);
            WeightDecision& decision = candidate.decision;
            decision.valueName = value.name;
            decision.nodeName = graph.node(id).name;
            decision.opType = graph.node(id).opType;
            decision.metatype = std::string(meta.name);
            decision.dims = value.initializer->dims();
            decision.numElements = value.initializer->numElements();
            const auto rank = static_cast<int64_t>(decision.dims.size());
            decision.channelAxis = *axis < 0 ? *axis + rank : *axis;
            candidates.push_back(std::move(candidate));
        }
    }
    return candidates;
}

/// §5 "Ratio": MatMul/Gemm weights but the last, plus embeddings with all_layers; everything in
/// the 8-bit modes. Group-wise needs a single reduction axis.
void markRatioDefining(std::vector<Candidate>& candidates, const WeightCompressionOptions& options,
                       int64_t groupSize) {
    if (modeBits(options.mode) == 8) {
        for (Candidate& candidate : candidates) {
            candidate.decision.ratioDefining = true;
        }
    } else {
        Candidate* lastMatMul = nullptr;
        for (Candidate& candidate : candidates) {
            if (candidate.kind == WeightKind::MatMul) {
                candidate.decision.ratioDefining = true;
                lastMatMul = &candidate;
            }
            if (candidate.kind == WeightKind::Embedding && options.allLayers) {
                candidate.decision.ratioDefining = true;
            }
        }
        if (lastMatMul != nullptr && !options.allLayers) {
            lastMatMul->decision.ratioDefining = false;
            lastMatMul->decision.note = "last MatMul: backup mode unless --all-layers";
        }
    }
    if (groupSize <= 0) {
        return;
    }
    for (Candidate& candidate : candidates) {
        WeightDecision& decision = candidate.decision;
        if (decision.ratioDefining && decision.dims.size() != 2) {
            decision.ratioDefining = false;
            decision.note = "several reduction axes: group-wise needs one, backup mode";
        }
    }
}

std::string layerName(const WeightDecision& decision) {
    return "node '" + decision.nodeName + "' (" + decision.opType + "), weight '" +
           decision.valueName + "'";
}

/// §5 "Grouping" fallback for a ratio-defining weight whose channel `groupSize` does not divide.
/// Sets the decision's group size; false when the weight is dropped from the ratio-defining set.
Result<void> resolveGroupSize(WeightDecision& decision, int64_t groupSize,
                              GroupSizeFallback fallback) {
    decision.groupSize = groupSize;
    if (groupSize <= 0) {
        return success();
    }
    const int64_t channel = decision.numElements / decision.dims[size_t(decision.channelAxis)];
    if (channel % groupSize == 0) {
        return success();
    }
    const std::string problem = "Channel size " + std::to_string(channel) +
                                " should be divisible by size of group " +
                                std::to_string(groupSize);
    switch (fallback) {
    case GroupSizeFallback::Error:
        return Error(Errc::InvalidArgument,
                     layerName(decision) + ": " + problem +
                         " (choose another --group-size or --group-fallback ignore|adjust)");
    case GroupSizeFallback::Ignore:
        decision.ratioDefining = false;
        decision.groupSize = kIgnoredGroupSize;
        decision.note = "ignored: " + problem;
        return success();
    case GroupSizeFallback::Adjust: {
        const int64_t adjusted = channel & -channel;
        if (adjusted >= kMinAdjustedGroupSize) {
            decision.groupSize = adjusted;
            decision.note = "group size adjusted to " + std::to_string(adjusted);
        } else {
            decision.ratioDefining = false;
            decision.note = "adjusted group size " + std::to_string(adjusted) + " < " +
                            std::to_string(kMinAdjustedGroupSize) + ": backup mode";
        }
        return success();
    }
    }
    return success();
}

Result<WeightLayout> layoutOf(const WeightDecision& decision) {
    return makeWeightLayout(decision.dims, decision.channelAxis);
}

std::span<const float> floatsOf(const Graph& graph, ValueId value) {
    return graph.value(value).initializer->as<float>();
}

/// §5 data-aware metrics: the layer-input statistic of every ratio-defining MatMul/Gemm weight,
/// 0 for embeddings (they go 4-bit first, as in NNCF).
Result<void> multiplyByActivationStatistics(const Graph& graph, std::vector<Candidate>& candidates,
                                            SensitivityMetric metric, const CalibrationData& data,
                                            Progress& progress) {
    std::vector<ActivationProbe> probes;
    std::vector<Candidate*> probed;
    for (Candidate& candidate : candidates) {
        if (!candidate.decision.ratioDefining) {
            continue;
        }
        if (candidate.kind != WeightKind::MatMul) {
            candidate.decision.activationStatistic = 0.0;
            candidate.decision.sensitivity = 0.0;
            continue;
        }
        QS_ASSIGN_OR_RETURN(ActivationProbe probe,
                            activationProbeOf(graph, candidate.node, candidate.port));
        probes.push_back(probe);
        probed.push_back(&candidate);
    }
    if (probes.empty()) {
        return success();
    }
    QS_ASSIGN_OR_RETURN(const std::vector<double> statistics,
                        collectActivationStatistics(graph, probes, metric, data, progress)
                            .context(std::string(sensitivityMetricName(metric))));
    for (size_t i = 0; i < probed.size(); ++i) {
        probed[i]->decision.activationStatistic = statistics[i];
        probed[i]->decision.sensitivity *= statistics[i];
    }
    return success();
}

/// §5 WEIGHT_QUANTIZATION_ERROR: 1 / (INT8_ASYM per-channel max_mean error + eps); the
/// data-aware metrics multiply it by a statistic of the layer's input activations.
Result<void> computeSensitivities(const Graph& graph, std::vector<Candidate>& candidates,
                                  const WeightCompressionOptions& options,
                                  const CalibrationData* data, Progress& progress) {
    const float eps = std::numeric_limits<float>::epsilon();
    size_t done = 0;
    for (Candidate& candidate : candidates) {
        ++done;
        if (!candidate.decision.ratioDefining) {
            continue;
        }
        if (progress.isCancelled()) {
            return Error(Errc::Cancelled, "weight compression cancelled");
        }
        progress.report(static_cast<double>(done) / static_cast<double>(candidates.size()),
                        "sensitivity of " + candidate.decision.valueName);
        QS_ASSIGN_OR_RETURN(const WeightLayout layout, layoutOf(candidate.decision));
        QS_ASSIGN_OR_RETURN(const double error,
                            quantizationError(floatsOf(graph, candidate.value), layout,
                                              CompressionMode::Int8Asym, -1, ErrorMetric::MaxMean));
        candidate.decision.sensitivity = 1.0 / (error + static_cast<double>(eps));
    }
    if (isDataAware(options.sensitivity) && data != nullptr) {
        QS_TRY(multiplyByActivationStatistics(graph, candidates, options.sensitivity, *data,
                                              progress));
    }
    return success();
}

/// §5 selection: ascending sensitivity; add while (n4 + n) / total < ratio, stop at the first
/// weight that would reach it.
void assignByRatio(std::vector<Candidate>& candidates, const WeightCompressionOptions& options) {
    std::vector<size_t> order;
    int64_t total = 0;
    for (size_t i = 0; i < candidates.size(); ++i) {
        if (candidates[i].decision.ratioDefining) {
            order.push_back(i);
            total += candidates[i].decision.numElements;
        }
    }
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return candidates[a].decision.sensitivity < candidates[b].decision.sensitivity;
    });
    int64_t primary = 0;
    for (const size_t index : order) {
        WeightDecision& decision = candidates[index].decision;
        const double share =
            static_cast<double>(primary + decision.numElements) / static_cast<double>(total);
        if (share >= options.ratio) {
            break;
        }
        decision.mode = options.mode;
        primary += decision.numElements;
    }
}

/// Primary mode for the ratio-defining weights (unless mixing chose), backup mode for the rest,
/// float for the ones the group-size fallback ignored.
std::vector<WeightDecision> finalizeDecisions(std::vector<Candidate>& candidates,
                                              const WeightCompressionOptions& options,
                                              bool mixing) {
    std::vector<WeightDecision> decisions;
    decisions.reserve(candidates.size());
    for (Candidate& candidate : candidates) {
        WeightDecision& decision = candidate.decision;
        if (decision.groupSize == kIgnoredGroupSize) {
            decision.groupSize = -1;
            decision.mode = CompressionMode::None;
        } else if (decision.ratioDefining && !mixing) {
            decision.mode = options.mode;
        } else if (decision.mode == CompressionMode::None) {
            decision.mode = options.backupMode;
            decision.groupSize = -1;
        }
        decisions.push_back(std::move(decision));
    }
    return decisions;
}
} // namespace

std::string decisionModeLabel(CompressionMode mode, int64_t groupSize) {
    if (mode == CompressionMode::None) {
        return "float";
    }
    return std::string(modeName(mode)) +
           (groupSize > 0 ? ", group size " + std::to_string(groupSize) : ", per-channel");
}

Result<void> validateOptions(const WeightCompressionOptions& options) {
    if (options.mode == CompressionMode::None) {
        return Error(Errc::InvalidArgument, "the compression mode cannot be 'none'");
    }
    if (!(options.ratio >= 0.0 && options.ratio <= 1.0)) {
        return Error(Errc::InvalidArgument,
                     "ratio " + std::to_string(options.ratio) + " is outside [0, 1]");
    }
    if (options.groupSize < -1) {
        return Error(Errc::InvalidArgument, "group size " + std::to_string(options.groupSize) +
                                                " must be -1 (per channel) or positive");
    }
    if (modeBits(options.backupMode) == 4) {
        return Error(Errc::InvalidArgument, "the backup mode must be int8_asym, int8_sym or none");
    }
    return success();
}

Result<CompressionPlan> planWeightCompression(const Graph& graph,
                                              const WeightCompressionOptions& options,
                                              Progress& progress, const CalibrationData* data) {
    QS_TRY(validateOptions(options));
    if (isDataAware(options.sensitivity) && data == nullptr) {
        return Error(Errc::InvalidArgument,
                     "sensitivity metric '" +
                         std::string(sensitivityMetricName(options.sensitivity)) +
                         "' needs a dataset");
    }
    const int64_t groupSize =
        options.groupSize == 0 ? defaultGroupSize(options.mode) : options.groupSize;
    QS_ASSIGN_OR_RETURN(std::vector<Candidate> candidates, collectWeights(graph));
    markRatioDefining(candidates, options, groupSize);
    for (Candidate& candidate : candidates) {
        if (candidate.decision.ratioDefining) {
            QS_TRY(resolveGroupSize(candidate.decision, groupSize, options.groupSizeFallback));
        }
    }
    const bool mixing = options.ratio < 1.0 && modeBits(options.mode) == 4;
    if (mixing) {
        QS_TRY(computeSensitivities(graph, candidates, options, data, progress));
        assignByRatio(candidates, options);
    }
    CompressionPlan plan;
    plan.options = options;
    plan.weights = finalizeDecisions(candidates, options, mixing);
    progress.report(1.0, "plan ready");
    return plan;
}

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
        if (progress.isCancelled()) {
            return Error(Errc::Cancelled, "weight compression cancelled");
        }
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

namespace {
struct TableRow {
    std::string label;
    int bits = 32;
    int64_t allParams = 0;
    int64_t allLayers = 0;
    int64_t ratioParams = 0;
    int64_t ratioLayers = 0;
};

std::vector<TableRow> tableRows(const CompressionPlan& plan, TableRow& totals) {
    std::map<std::string, TableRow> rows;
    for (const WeightDecision& decision : plan.weights) {
        const std::string label = decisionModeLabel(decision.mode, decision.groupSize);
        TableRow& row = rows[label];
        row.label = label;
        row.bits = decision.mode == CompressionMode::None ? 32 : modeBits(decision.mode);
        row.allParams += decision.numElements;
        ++row.allLayers;
        totals.allParams += decision.numElements;
        ++totals.allLayers;
        if (decision.ratioDefining) {
            row.ratioParams += decision.numElements;
            ++row.ratioLayers;
            totals.ratioParams += decision.numElements;
            ++totals.ratioLayers;
        }
    }
    std::vector<TableRow> out;
    out.reserve(rows.size());
    for (auto& [label, row] : rows) {
        out.push_back(row);
    }
    // Widest precision first, as NNCF lists 8-bit before 4-bit.
    std::stable_sort(out.begin(), out.end(),
                     [](const TableRow& a, const TableRow& b) { return a.bits > b.bits; });
    return out;
}

std::string percentCell(int64_t part, int64_t whole, int64_t layers, int64_t totalLayers) {
    const double percent =
        whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
    std::ostringstream cell;
    cell << std::llround(percent) << "% (" << layers << " / " << totalLayers << ")";
    return cell.str();
}

std::string padded(const std::string& text, size_t width) {
    return " " + text + std::string(width - text.size() + 1, ' ');
}
} // namespace

std::string formatBitwidthTable(const CompressionPlan& plan) {
    TableRow totals;
    const std::vector<TableRow> rows = tableRows(plan, totals);
    std::vector<std::array<std::string, 3>> cells = {{"Weight compression mode",
                                                      "% all parameters (layers)",
                                                      "% ratio-defining parameters (layers)"}};
    for (const TableRow& row : rows) {
        cells.push_back(
            {row.label,
             percentCell(row.allParams, totals.allParams, row.allLayers, totals.allLayers),
             percentCell(row.ratioParams, totals.ratioParams, row.ratioLayers,
                         totals.ratioLayers)});
    }
    std::array<size_t, 3> widths{};
    for (const auto& line : cells) {
        for (size_t col = 0; col < 3; ++col) {
            widths[col] = std::max(widths[col], line[col].size());
        }
    }
    auto rule = [&](char fill) {
        std::string out = "+";
        for (const size_t width : widths) {
            out += std::string(width + 2, fill) + "+";
        }
        return out + "\n";
    };
    std::string out = "Statistics of the bitwidth distribution:\n" + rule('-');
    for (size_t line = 0; line < cells.size(); ++line) {
        out += "|";
        for (size_t col = 0; col < 3; ++col) {
            out += padded(cells[line][col], widths[col]) + "|";
        }
        out += "\n" + rule(line == 0 ? '=' : '-');
    }
    return out;
}

nlohmann::json planToJson(const CompressionPlan& plan) {
    const WeightCompressionOptions& options = plan.options;
    nlohmann::json json;
    json["options"] = {
        {"mode", modeName(options.mode)},
        {"group_size", options.groupSize == 0 ? defaultGroupSize(options.mode) : options.groupSize},
        {"ratio", options.ratio},
        {"group_size_fallback", fallbackName(options.groupSizeFallback)},
        {"backup_mode", modeName(options.backupMode)},
        {"all_layers", options.allLayers},
        {"sensitivity_metric", sensitivityMetricName(options.sensitivity)}};
    nlohmann::json weights = nlohmann::json::array();
    for (const WeightDecision& decision : plan.weights) {
        weights.push_back({{"weight", decision.valueName},
                           {"node", decision.nodeName},
                           {"op_type", decision.opType},
                           {"metatype", decision.metatype},
                           {"shape", decision.dims},
                           {"num_parameters", decision.numElements},
                           {"channel_axis", decision.channelAxis},
                           {"ratio_defining", decision.ratioDefining},
                           {"mode", modeName(decision.mode)},
                           {"group_size", decision.groupSize},
                           {"sensitivity", decision.sensitivity},
                           {"activation_statistic", decision.activationStatistic},
                           {"note", decision.note}});
    }
    json["weights"] = std::move(weights);
    TableRow totals;
    nlohmann::json table = nlohmann::json::array();
    for (const TableRow& row : tableRows(plan, totals)) {
        table.push_back({{"mode", row.label},
                         {"parameters", row.allParams},
                         {"layers", row.allLayers},
                         {"ratio_defining_parameters", row.ratioParams},
                         {"ratio_defining_layers", row.ratioLayers}});
    }
    json["table"] = std::move(table);
    json["totals"] = {{"parameters", totals.allParams},
                      {"layers", totals.allLayers},
                      {"ratio_defining_parameters", totals.ratioParams},
                      {"ratio_defining_layers", totals.ratioLayers}};
    return json;
}

} // namespace qs::compression
