// Weight compression, the plan step: which weights, the ratio-defining set, group-size fallbacks,
// sensitivities and the ratio mixing (apply and report are weight_compression_apply.cpp and
// weight_compression_report.cpp).

#include "core/compression/weight_compression.h"

#include "core/compression/integer_quantizer.h"
#include "core/compression/weight_compression_internal.h"
#include "core/graph/metatype.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_set>

namespace qs::compression {

using graph::Graph;
using graph::NodeId;
using graph::ValueId;
using internal::floatsOf;
using internal::layerName;
using internal::layoutOf;

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
        return Error(Errc::Usage,
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

/// 0 for embeddings (they go 4-bit first, as in NNCF).
Result<void> multiplyByActivationStatistics(const Graph& graph, std::vector<Candidate>& candidates,
                                            SensitivityMetric metric, const runtime::Dataset& data,
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
                                  const runtime::Dataset* data, Progress& progress) {
    const float eps = std::numeric_limits<float>::epsilon();
    size_t done = 0;
    for (Candidate& candidate : candidates) {
        ++done;
        if (!candidate.decision.ratioDefining) {
            continue;
        }
        QS_TRY(checkCancelled(progress));
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
        return Error(Errc::Usage, "the compression mode cannot be 'none'");
    }
    if (!(options.ratio >= 0.0 && options.ratio <= 1.0)) {
        return Error(Errc::Usage, "ratio " + std::to_string(options.ratio) + " is outside [0, 1]");
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
                                              Progress& progress, const runtime::Dataset* data) {
    QS_TRY(validateOptions(options));
    if (isDataAware(options.sensitivity) && data == nullptr) {
        return Error(Errc::Usage, "sensitivity metric '" +
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

} // namespace qs::compression
