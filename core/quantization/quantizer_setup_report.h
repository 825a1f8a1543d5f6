// Reports on setups: the proposal as JSON (each point with its candidate configs), NNCF's
// bitwidth summary table ("Num bits (N) | N-bits WQs / Placed WQs | ..."), and the DOT debug
// view in the style of NNCF's quant_prop dumps (reference/nncf-quantization.md §1.9).
#pragma once

#include "core/quantization/quantizer_propagation_solver.h"
#include "core/quantization/quantizer_setup.h"

#include <nlohmann/json.hpp>

#include <string>

namespace qs::quantization {

/// The proposal: quantization_points{id: {qip, qip_class, possible_qconfigs[],
/// directly_quantized_operator_node_names}}, unified/shared groups, requantization links.
nlohmann::json proposalToJson(const MultiConfigQuantizerSetup& setup);

/// NNCF's "Statistics of the bitwidth distribution" table for a final setup.
std::string bitwidthSummaryTable(const SingleConfigQuantizerSetup& setup);

/// DOT of the insertion point graph with the quantizers of `finalSetup` (or, when null, of the
/// proposal with all candidates): red insertion points "TP: ...", quantizer nodes with dashed
/// edges to their points, violet bold integer edges, green barriers, dotted unified-group rings.
std::string quantizerSetupToDot(const QuantizationProposal& proposal,
                                const SingleConfigQuantizerSetup* finalSetup);

} // namespace qs::quantization
