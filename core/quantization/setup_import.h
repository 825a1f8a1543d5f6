// Importing a saved setup (a `quantize --setup-out` file, or NNCF's own SingleConfigQuantizerSetup
// state) onto an open model's quantization state: the setup becomes one chosen config per point
// of the current proposal, so the graph shows it and every later edit starts from it. A setup made
// under other settings (another HW config, preset or rule) does not follow from this proposal;
// that is an error naming the first point that differs, never a partial import.
#pragma once

#include "core/quantization/quantization_state.h"

namespace qs::quantization {

/// The choices that make `state`'s proposal finalize to `setup`'s quantizers: each active point
/// of `setup` matched to the proposal's point at the same insertion point, its config one of
/// that point's candidates (equal up to an unforced signedness). The finalized result is compared
/// with `setup` (points and configs); a difference is an error naming the point.
Result<QuantizerConfigChoice> choicesForSetup(const QuantizationState& state,
                                              const SingleConfigQuantizerSetup& setup);

} // namespace qs::quantization
