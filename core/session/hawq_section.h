// The HAWQ section of a session (issue 15), written by `quantscope-cli hawq --session` and by the
// GUI: what a HAWQ run chose — the request (target, mode, search, bits, samples, iterations), the
// chosen candidate's ratio and metric, per layer its node, average trace and chosen weight bits —
// and everything a later session needs to show the Pareto explorer again without recomputing
// traces: the settings the proposal was built with, the model's hash (a different model makes the
// section stale), the traces (weights-mode per-tensor scores, SCORES.json inline), per layer its
// weight quantizer, MACs and perturbations, every candidate, the trace-order and front indices,
// the chosen and the selected candidate. The chosen configs themselves live in the quantization
// section.
//   {"compression_ratio_target", "mode", "search", "bits", "samples", "iterations", "ratio",
//    "metric", "merged_quantizers", "requantizers",
//    "layers": [{"node", "avg_trace", "weight_bits", "weight_qp", "macs",
//                "perturbation": {"4": 0.31, "8": 0.0012}}],
//    "model_hash", "settings": {"hw_config", "preset", "rule"}, "traces": {SCORES.json},
//    "candidates": [{"weight_bits", "activation_bits", "ratio", "metric"}],
//    "trace_order": [...], "pareto": [...], "chosen", "selected", "notes": [...],
//    "dataset_request": {...} (optional, sections.h)}
// A section without "candidates" (an older file) is a summary only: it cannot restore the explorer.
#pragma once

#include "core/graph/graph.h"
#include "core/hessian/hessian_scores.h"
#include "core/mixed_precision/hawq_workflow.h"
#include "core/session/session_file.h"
#include "core/support/result.h"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qs::session {

inline constexpr std::string_view kHawqSection = "hawq";

struct HawqSummary {
    double target = 0.0;
    std::string mode;
    std::string search;
    std::vector<int> bits;
    int64_t samples = 0;
    int iterations = 0;
    double ratio = 0.0;
    double metric = 0.0;
    int mergedQuantizers = 0;
    int requantizers = 0;

    struct Layer {
        std::string node;
        double avgTrace = 0.0;
        int weightBits = 0;
        int weightQp = -1;
        int64_t macs = 0;
        std::map<int, double> perturbation; ///< by bit width

        bool operator==(const Layer&) const = default;
    };

    std::vector<Layer> layers;

    /// The analysis, for restoring the explorer (empty candidates: a summary only).
    std::string modelHash;
    quantization::QuantizationSettings settings;
    std::optional<hessian::HessianScores> traces;
    std::vector<mixed_precision::HawqCandidate> candidates;
    std::vector<size_t> traceOrder;
    std::vector<size_t> pareto;
    size_t chosen = 0;
    size_t selected = 0;
    std::vector<std::string> notes;
    /// The data the traces were computed on, to run HAWQ again on it (absent in older files and
    /// in runs from saved traces).
    std::optional<runtime::DatasetRequest> dataset;

    bool restorable() const { return !candidates.empty() && traces.has_value(); }

    bool operator==(const HawqSummary& other) const;
};

/// The section of `outcome` (run for `request` on the model with hash `modelHash`), with
/// candidate `selected` as the one applied.
HawqSummary summarize(const mixed_precision::HawqOutcome& outcome,
                      const mixed_precision::HawqRequest& request, std::string modelHash = {},
                      std::optional<size_t> selected = std::nullopt);

nlohmann::json toJson(const HawqSummary& summary);

/// Reads what toJson writes; a malformed section is an error naming the field.
Result<HawqSummary> hawqSummaryFromJson(const nlohmann::json& json);

/// The session's HAWQ summary, if it has one.
Result<std::optional<HawqSummary>> hawqSummary(const SessionFile& session);

/// The outcome a restorable section describes, on `model`: the proposal rebuilt with the section's
/// settings, the problem rebuilt and checked against the saved layers (same weight quantizers and
/// nodes), MACs, perturbations, traces and candidates taken as saved (nothing recomputed), the
/// chosen candidate applied to the state. Errors: a summary-only section, a section that does not
/// match the model's quantizers (naming the first difference), out-of-range indices.
Result<mixed_precision::HawqOutcome> restoreHawqOutcome(const graph::Graph& model,
                                                        const HawqSummary& summary);

/// The request the section was run with (settings, target, bits, mode, search, samples,
/// iterations, and the dataset when the section has it).
mixed_precision::HawqRequest requestOf(const HawqSummary& summary);

} // namespace qs::session
