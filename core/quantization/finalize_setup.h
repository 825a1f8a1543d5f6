// Finalisation (reference/nncf-quantization.md §1.8): turns a proposal plus one chosen config per
// point into the SingleConfigQuantizerSetup. Checks each choice against the point's candidates,
// copies a forced signedness, splits per-channel members out of unified groups, folds downstream
// quantizers made redundant by an upstream one on the same tensor path, and records which
// quantizers remain as requantizers below another. Works on the stored proposal only, so
// re-finalising after a changed choice is cheap.
#pragma once

#include "core/quantization/quantizer_propagation_solver.h"
#include "core/quantization/quantizer_setup.h"

namespace qs::quantization {

/// `choice` must give a config for every point to keep; points missing from it are dropped.
Result<SingleConfigQuantizerSetup> finalizeSetup(const QuantizationProposal& proposal,
                                                 const QuantizerConfigChoice& choice);

/// First config of every point whose mode matches the preset (activations: PERFORMANCE
/// symmetric, MIXED asymmetric; weights symmetric); falls back to the first config.
QuantizerConfigChoice selectByPreset(const MultiConfigQuantizerSetup& setup,
                                     QuantizationPreset preset);

/// Applies "NODE[:PORT]=BITS" choices on top of `choice`: the first candidate with that bit width.
/// NODE matches an activation point's target node (PORT selects an input-port point) or, with
/// no activation match, a weight point; "#ID" names a quantizer by id. Unknown nodes and
/// unavailable bit widths are errors.
Result<void> applyBitwidthChoice(const MultiConfigQuantizerSetup& setup, std::string_view spec,
                                 QuantizerConfigChoice& choice);

} // namespace qs::quantization
