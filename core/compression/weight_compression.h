// Weight compression of a whole model, as NNCF's data-free weight compression does it
// (reference/nncf-quantization.md §5): find the constant weights of MatMul/Gemm, Conv and
// Embedding ops, decide each one's mode (primary 4/8-bit mode, backup mode, or float) from the
// ratio and the sensitivities, then rewrite the graph so each compressed weight is an integer
// initializer feeding a DequantizeLinear (per axis for per-channel, blocked with `block_size` for
// group-wise, opset raised to 13 or 21). Planning and rewriting are separate so the GUI can show
// and edit the plan before applying it.
#pragma once

#include "core/compression/activation_statistics.h"
#include "core/compression/compression_mode.h"
#include "core/compression/opset_upgrade.h"
#include "core/graph/graph.h"
#include "core/support/progress.h"
#include "core/support/result.h"

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace qs::compression {

struct WeightCompressionOptions {
    CompressionMode mode = CompressionMode::Int8Asym;
    int64_t groupSize = 0; ///< 0: the mode's default (128 for 4-bit, -1 = per channel for 8-bit)
    double ratio = 1.0;    ///< share of ratio-defining parameters in the primary mode
    GroupSizeFallback groupSizeFallback = GroupSizeFallback::Error;
    CompressionMode backupMode = CompressionMode::Int8Asym; ///< Int8Asym, Int8Sym or None
    bool allLayers = false; ///< the last MatMul and embeddings become ratio-defining too
    /// Ranks the ratio-defining weights when ratio < 1; the activation metrics need a dataset.
    SensitivityMetric sensitivity = SensitivityMetric::WeightQuantizationError;
};

/// Where a weight sits in the model and what becomes of it.
struct WeightDecision {
    std::string valueName; ///< the float initializer
    std::string nodeName;  ///< first weighted consumer
    std::string opType;
    std::string metatype; ///< NNCF metatype name of the consumer
    std::vector<int64_t> dims;
    int64_t numElements = 0;
    int64_t channelAxis = 0; ///< output-channel axis (non-negative)
    bool ratioDefining = false;
    CompressionMode mode = CompressionMode::None;
    int64_t groupSize = -1;           ///< -1: per channel
    double sensitivity = 0.0;         ///< set when the ratio is below 1
    double activationStatistic = 0.0; ///< the layer-input factor of a data-aware metric
    std::string note;                 ///< why the decision differs from the default, if it does
};

struct CompressionPlan {
    WeightCompressionOptions options;
    std::vector<WeightDecision> weights; ///< in topological order of their consumers
};

/// Validates `options` (mode not None, ratio in [0, 1], group size -1 or positive, backup mode
/// 8-bit or None).
Result<void> validateOptions(const WeightCompressionOptions& options);

/// Finds the weights and decides their modes. Group-size fallback ERROR on a weight whose
/// reduction channel the group size does not divide gives InvalidArgument naming the layer.
/// A data-aware sensitivity metric runs the model over `data` when mixing (ratio < 1, 4-bit
/// mode); without `data` it is refused.
Result<CompressionPlan> planWeightCompression(const graph::Graph& graph,
                                              const WeightCompressionOptions& options,
                                              Progress& progress,
                                              const runtime::Dataset* data = nullptr);

/// Size figures of an applied plan.
struct CompressionSummary {
    int64_t compressedWeights = 0;
    int64_t floatBytesBefore = 0; ///< bytes of the compressed weights before
    int64_t bytesAfter = 0;       ///< their integer codes, scales and zero points
    int64_t opset = 0;            ///< default-domain opset of the result
    int64_t irVersion = 0;
    OpsetUpgrade upgrade; ///< how the opset was raised (ONNX's converter for opset 7-10)
};

/// Quantizes the planned weights and rewrites `graph`: integer initializer (+ scale, zero
/// point) -> DequantizeLinear -> the consumers. Raises the opset (13 for 8-bit, 21 and IR 10 when
/// a 4-bit weight is present).
Result<CompressionSummary> applyWeightCompression(graph::Graph& graph, const CompressionPlan& plan,
                                                  Progress& progress);

/// Replaces each planned weight by its quantize-dequantize in float32, keeping the graph
/// otherwise unchanged: the simulation a compressed model must reproduce.
Result<void> applyDequantizedWeights(graph::Graph& graph, const CompressionPlan& plan);

/// NNCF's "Statistics of the bitwidth distribution" table: "Weight compression mode | % all
/// parameters (layers) | % ratio-defining parameters (layers)".
std::string formatBitwidthTable(const CompressionPlan& plan);

/// The plan as JSON (options, per-weight decisions, the table's rows).
nlohmann::json planToJson(const CompressionPlan& plan);

/// "int4_asym, group size 128", "int8_asym, per-channel", "float".
std::string decisionModeLabel(CompressionMode mode, int64_t groupSize);

} // namespace qs::compression
