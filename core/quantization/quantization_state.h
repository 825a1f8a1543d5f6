// QuantizationState: everything one open model needs to show and edit its quantizers — the
// settings (HW config, preset, propagation rule), the proposal from propagation, the chosen config
// per point and the finalized setup — plus the per-quantizer view the GUI and the renderer draw
// (QuantizerMark: where it sits, what it is, whether it is active, merged away or a requantizer).
// Changing a choice only re-finalizes; changing a setting re-runs propagation.
#pragma once

#include "core/graph/graph.h"
#include "core/quantization/finalize_setup.h"
#include "core/quantization/quantizer_propagation_solver.h"
#include "core/quantization/quantizer_setup.h"
#include "core/support/result.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qs::quantization {

/// What propagation depends on besides the model.
struct QuantizationSettings {
    std::string hw = "cpu"; ///< built-in device name or a HW config JSON file
    QuantizationPreset preset = QuantizationPreset::Performance;
    QuantizerPropagationRule rule = QuantizerPropagationRule::MergeAllInOne;

    bool operator==(const QuantizationSettings&) const = default;
};

/// Proposal, choices and the finalized setup of one model.
struct QuantizationState {
    QuantizationSettings settings;
    QuantizationProposal proposal;
    QuantizerConfigChoice choice;
    SingleConfigQuantizerSetup setup;
};

/// Runs propagation with `settings`, chooses the first (preset-constrained) config of every
/// point, and finalizes.
Result<QuantizationState> computeQuantization(const graph::Graph& model,
                                              const QuantizationSettings& settings);

/// Sets point `pointId`'s config (one of its candidates) and re-finalizes; on error `state` is
/// unchanged.
Result<void> chooseConfig(QuantizationState& state, int pointId, const QuantizerConfig& config);

/// Sets several points' configs at once (one re-finalization); on error `state` is unchanged.
Result<void> chooseConfigs(QuantizationState& state, const QuantizerConfigChoice& changes);

/// For each of `pointIds`, its first candidate with `bits` bits; points without one are left
/// out.
QuantizerConfigChoice configsWithBitwidth(const QuantizationState& state,
                                          const std::vector<int>& pointIds, int bits);

/// What became of a quantizer of the proposal.
enum class QuantizerStatus { Active, Merged, Requantizer };

/// "active", "merged" or "requant".
std::string_view statusName(QuantizerStatus status);

/// One quantizer as drawn and listed: its point, chosen config and relations.
struct QuantizerMark {
    int id = 0;
    InsertionPoint point;
    QuantizerConfig config; ///< chosen (for merged ones: the absorbing one's)
    int candidateCount = 1; ///< candidate configs in the proposal
    QuantizerStatus status = QuantizerStatus::Active;
    std::optional<int> linkedTo;     ///< absorbing quantizer, or requantizer's parent
    std::optional<int> unifiedGroup; ///< unified-scale group id
    std::vector<std::string> directlyQuantized;

    bool operator==(const QuantizerMark&) const = default;
};

/// Every quantizer of `setup`, plus, with the proposal, the ones merged away; by id.
std::vector<QuantizerMark> quantizerMarks(const SingleConfigQuantizerSetup& setup,
                                          const MultiConfigQuantizerSetup* proposal);

/// Quantizers and weight parameters per bit width, activations and weights apart (bits 0:
/// float). Only active quantizers and requantizers count.
struct BitwidthDistribution {
    std::map<int, int> activationQuantizers;
    std::map<int, int> weightQuantizers;
    std::map<int, int64_t> weightParameters; ///< elements of the quantized weight tensors
};

/// The distribution of `setup` over `model` (weights: the initializer inputs of rank >= 2 of
/// each weight point's op).
BitwidthDistribution bitwidthDistribution(const SingleConfigQuantizerSetup& setup,
                                          const graph::Graph& model);

/// The `--rule` spelling ("merge_all_in_one", ...) of `rule`.
std::string_view ruleArgument(QuantizerPropagationRule rule);

/// The rule spelt as `--rule` takes it.
std::optional<QuantizerPropagationRule> ruleFromArgument(std::string_view text);

} // namespace qs::quantization
