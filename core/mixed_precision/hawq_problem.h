// HawqProblem: what NNCF's HAWQ precision init (reference/nncf-quantization.md §4) searches over,
// taken from a quantization proposal. The weightable layers (one per weight quantizer) with their
// allowed bit widths, MACs and feeding activation quantizer (NNCF's
// weight_qp_id_per_activation_qp_id), the activation quantizers with theirs, and the adjacency
// groups (GroupsOfAdjacentQuantizers: the shared-input operation set groups, joined with the
// activation quantizer feeding each layer so a group decides its own activation bits). Strict mode
// narrows every group to its common bit widths here, before any candidate is built.
#pragma once

#include "core/graph/graph.h"
#include "core/quantization/quantization_state.h"
#include "core/runtime/tensor.h"
#include "core/support/result.h"

#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace qs::mixed_precision {

/// NNCF's bitwidth_assignment_mode.
enum class BitwidthAssignmentMode { Liberal, Strict };

/// "liberal" / "strict".
std::string_view assignmentModeName(BitwidthAssignmentMode mode);
Result<BitwidthAssignmentMode> parseAssignmentMode(std::string_view text);

/// One weight quantizer of the proposal: a weightable layer.
struct WeightLayer {
    int weightQp = -1;
    std::string node;   ///< the weighted op (the quantizer's target node)
    std::string weight; ///< its weight initializer
    int64_t numel = 0;
    int64_t macs = 0;                 ///< 0 when the shapes do not tell (a note says so)
    std::vector<int> bitsAllowed;     ///< ascending, restricted to the requested bits
    std::optional<size_t> activation; ///< index into HawqProblem::activations feeding it
    size_t group = 0;
};

/// An activation quantizer of the proposal.
struct ActivationQuantizer {
    int qp = -1;
    /// Its candidate bit widths within the requested bits, ascending. Empty: it has none of them
    /// and keeps `currentBits`.
    std::vector<int> bitsAllowed;
    int currentBits = 8;
    size_t group = 0;
};

struct AdjacencyGroup {
    std::vector<size_t> layers;      ///< indices into HawqProblem::layers
    std::vector<size_t> activations; ///< indices into HawqProblem::activations
};

struct HawqProblem {
    std::vector<WeightLayer> layers; ///< in weight quantizer id order
    std::vector<ActivationQuantizer> activations;
    std::vector<AdjacencyGroup> groups;
    /// The bit widths the sequences are built from: every bit width some layer allows, ascending.
    std::vector<int> bits;
    BitwidthAssignmentMode mode = BitwidthAssignmentMode::Liberal;
    std::vector<std::string> notes;
};

/// Builds the problem from `state`'s proposal over `model`; `bits` restricts the candidate
/// configs; weight quantizers in `fixed` stay out of the search (they keep their config and are
/// not counted in the BitOps). Errors: no weight quantizer, a layer with none of `bits`, strict
/// mode with a group whose quantizers share no bit width (naming the group's quantizers).
Result<HawqProblem> buildHawqProblem(const graph::Graph& model,
                                     const quantization::QuantizationState& state,
                                     std::span<const int> bits, BitwidthAssignmentMode mode,
                                     const std::set<int>& fixed = {});

/// MACs of one sample for the layers whose shapes import could not tell (macs == 0), from a
/// forward run of `oneSample` (the runtime inputs of one sample); drops their notes.
Result<void> measureUnknownMacs(const graph::Graph& model,
                                std::span<const runtime::Tensor> oneSample, HawqProblem& problem);

/// Strict mode: narrows each group's layers to the bit widths all of the group's quantizers allow;
/// an error names a group whose allowed sets do not intersect (buildHawqProblem calls it).
Result<void> narrowToCommonBits(HawqProblem& problem);

/// The config a quantizer takes for `bits`: its first candidate with those bits whose mode is
/// the preset's (activations: symmetric for PERFORMANCE, asymmetric for MIXED; weights always
/// symmetric), else its first candidate with those bits; nullopt when it has none.
std::optional<quantization::QuantizerConfig>
configForBits(const quantization::MultiConfigQuantizationPoint& point, int bits,
              quantization::QuantizationPreset preset);

} // namespace qs::mixed_precision
