// What a HAWQ run looks like outside (issue 15): HAWQ.json (layers with traces, allowed bits,
// perturbations, chosen bits; every candidate; the chosen one, the front, merged quantizers and
// requantizers), NNCF's log line, the per-layer bit-width table, the --pareto-out CSV, and NNCF's
// bitwidth_graph.dot conventions (reference/nncf-quantization.md §4: AFQ/WFQ labels, fill by bit
// width 2 purple, 4 red, 6 orange, 8 green, _G<group>).
#pragma once

#include "core/graph/graph.h"
#include "core/mixed_precision/hawq_workflow.h"

#include <nlohmann/json.hpp>

#include <string>

namespace qs::report {

/// HAWQ.json.
nlohmann::json toJson(const mixed_precision::HawqOutcome& outcome);

/// "Chosen HAWQ bitwidth sequence with ratio=1.52, bitwidth per weightable layer=[4, 8, ...]".
std::string hawqLogLine(const mixed_precision::HawqOutcome& outcome);

/// One row per layer: node, MACs, average trace, allowed bits, chosen weight and activation bits,
/// the chosen config's perturbation; then the front size, merged quantizers and requantizers.
std::string hawqText(const mixed_precision::HawqOutcome& outcome);

/// index,ratio,metric,on_front,chosen,weight_bits — one row per candidate.
std::string hawqParetoCsv(const mixed_precision::HawqOutcome& outcome);

/// The model graph with the final setup's quantizers as AFQ/WFQ nodes, coloured by bit width.
std::string hawqBitwidthDot(const graph::Graph& model, const mixed_precision::HawqOutcome& outcome);

} // namespace qs::report
