// The quantizer propagation solver (reference/nncf-quantization.md §1.3-1.7): places an initial
// PropagatingQuantizer on every float input of each INPUTS_QUANTIZABLE op, moves them upward
// through quantization-agnostic ops and concats in NNCF's deque order, merges them at branching
// nodes according to the QuantizerPropagationRule, forms unified-scale groups, and turns the
// result into a QuantizationProposal (a MultiConfigQuantizerSetup over an InsertionPointGraph).
#pragma once

#include "core/graph/graph.h"
#include "core/graph/metatype.h"
#include "core/quantization/hw_config.h"
#include "core/quantization/insertion_point_graph.h"
#include "core/quantization/quantizer_setup.h"
#include "core/support/result.h"

#include <memory>

namespace qs::quantization {

enum class QuantizationPreset { Performance, Mixed };

struct PropagationOptions {
    QuantizerPropagationRule rule = QuantizerPropagationRule::MergeAllInOne;
    bool quantizeOutputs = false;
    QuantizerConstraints activationConstraints; ///< global constraints (preset, user parameters)
    QuantizerConstraints weightConstraints;
    IgnoredScope ignoredScope;
    /// Config-linked scopes (NNCF's additional_unified_scale_op_scopes): the input quantizers of
    /// the named ops of each list share one scale. As in NNCF, lists yielding two or fewer
    /// quantizers are skipped.
    std::vector<std::vector<std::string>> additionalUnifiedScaleOpScopes;
};

/// Options NNCF's MinMax derives from a preset: PERFORMANCE = symmetric activations, MIXED =
/// asymmetric activations, weights symmetric; per-tensor only below opset 13.
PropagationOptions presetOptions(QuantizationPreset preset, int64_t opset);

/// The solver's result: the proposal plus the graph it refers to, so that finalisation (and
/// re-finalisation after a changed choice) never re-runs propagation.
struct QuantizationProposal {
    std::shared_ptr<const InsertionPointGraph> graph;
    MultiConfigQuantizerSetup setup;
    std::vector<graph::QuantizationTrait> operatorTraits; ///< by InsertionPointGraph node
    std::vector<std::vector<int>> edgeQuantizers;         ///< activation qp ids affecting each edge
    std::vector<std::string> log;                         ///< debug notes ("could not merge ...")
};

/// Runs propagation over `model` with `hw`.
Result<QuantizationProposal> proposeQuantizerSetup(const graph::Graph& model, const HWConfig& hw,
                                                   const PropagationOptions& options);

} // namespace qs::quantization
