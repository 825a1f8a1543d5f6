// HAWQ's quantization noise per layer (reference/nncf-quantization.md §4, "Perturbation"):
// ||Q(W) - W||^2 (not normalised) for each allowed config of each weight quantizer, computed
// directly with our quantizer formulas — the weight's own range per output channel (or per tensor)
// as calibration takes it, then §3's parameters and the element-wise fake-quant. Each config once;
// NNCF needs covering sequences and model rebuilds for this.
#pragma once

#include "core/graph/graph.h"
#include "core/mixed_precision/bitops.h"
#include "core/mixed_precision/hawq_problem.h"
#include "core/quantization/quantization_state.h"
#include "core/support/progress.h"

#include <optional>

namespace qs::mixed_precision {

/// ||Q(W) - W||^2 of `weight` under `config` (channel axis `axis` for a per-channel config).
Result<double> weightPerturbation(const graph::TensorData& weight,
                                  const quantization::QuantizerConfig& config,
                                  std::optional<int64_t> axis);

/// Every layer's perturbation for each of its allowed bit widths (the config configForBits picks).
Result<LayerPerturbations> layerPerturbations(const graph::Graph& model,
                                              const quantization::QuantizationState& state,
                                              const HawqProblem& problem, Progress& progress);

} // namespace qs::mixed_precision
