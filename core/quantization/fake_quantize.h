// Fake-quant simulation of a calibrated setup: a copy of the model in which every quantizer acts
// exactly at its insertion point. An activation quantizer becomes QuantizeLinear→DequantizeLinear
// (preceded by a Clip, or Max/Min per channel, when its integer grid is narrower than the 8/16-bit
// storage type, e.g. 4-bit or narrow range) — so the simulation computes what a QDQ model
// computes. A pre-hook quantizer rewires only its one (node, port) edge, so other consumers of the
// tensor still see the float value; a post-hook one replaces the tensor for all consumers; a weight
// quantizer gives its node a fake-quantized copy of the weight.
#pragma once

#include "core/graph/graph.h"
#include "core/quantization/quantizer_parameters.h"
#include "core/quantization/quantizer_setup.h"
#include "core/support/result.h"

#include <cstdint>
#include <map>
#include <span>

namespace qs::quantization {

/// y = (clip(round(x / scale) + zp, quantMin, quantMax) - zp) * scale, round half to even, per
/// channel along params.channelAxis of `shape` (ONNX QuantizeLinear / DequantizeLinear arithmetic).
Result<void> fakeQuantize(std::span<float> values, std::span<const int64_t> shape,
                          const QuantizerParameters& params);

struct FakeQuantizedModel {
    graph::Graph graph;
    std::map<int, graph::ValueId> quantizerInput;  ///< activation qp -> tensor its quantizer reads
    std::map<int, graph::ValueId> quantizerOutput; ///< activation qp -> fake-quantized tensor
};

/// Inserts every quantizer of `setup` with its `parameters` into a copy of `model`. Post-hooks go
/// in before pre-hooks, so a requantizer on an edge reads its parent's quantized output.
Result<FakeQuantizedModel> insertFakeQuantizers(const graph::Graph& model,
                                                const SingleConfigQuantizerSetup& setup,
                                                const QuantizerParametersMap& parameters);

} // namespace qs::quantization
