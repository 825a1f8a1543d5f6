// QDQ export (reference/nncf-quantization.md §3 "FQ → ONNX QDQ", §7): a finalized quantizer setup
// with calibrated parameters becomes QuantizeLinear→DequantizeLinear pairs placed exactly at the
// insertion points. A pre-hook quantizer is a pair on that one edge (other consumers keep the float
// tensor), a post-hook one a pair on the output shared by all consumers, a weight an integer
// initializer (already quantized) with a per-axis DequantizeLinear. Members of a unified-scale
// group on the same grid share one scale and zero point initializer (a member with another bit
// width, e.g. a 4-bit requantizer, has the group's range on its own grid). Unlike NNCF, bit widths
// other than 8 export too: 4-bit grids as int4/uint4, 9..16-bit ones as int16/uint16 (opset 21),
// and any grid narrower than its integer type (2..7 bits, 9..15 bits, narrow range) gets a Clip to
// the grid's range in front of the pair, so the model computes exactly the grid.
#pragma once

#include "core/compression/opset_upgrade.h"
#include "core/graph/graph.h"
#include "core/quantization/quantizer_parameters.h"
#include "core/quantization/quantizer_setup.h"
#include "core/support/result.h"

#include <cstdint>
#include <filesystem>

namespace qs::quantization {

struct QdqExportOptions {
    /// Run onnx::checker before writing when it can judge the model (opset <= 17, no int4).
    bool check = true;
    /// 4-bit activation grids as int4/uint4 QuantizeLinear (opset 21). Off: int8/uint8 behind a
    /// Clip, the same grid at opset 13, for runtimes whose int4 QuantizeLinear fails (ONNX Runtime
    /// 1.30 at optimization levels above "disabled", see core/quantization/README.md). Weights
    /// stay int4 either way.
    bool int4Activations = true;
};

/// What an export added.
struct QdqExportSummary {
    int activationPairs = 0;    ///< QuantizeLinear→DequantizeLinear pairs on activations
    int weightDequantizers = 0; ///< integer weights feeding a DequantizeLinear
    int clippedGrids = 0;       ///< pairs behind a Clip (or Max/Min) to a narrower grid
    int64_t opset = 0;          ///< default-domain opset of the result
    int64_t irVersion = 0;
    bool checked = false;              ///< onnx::checker ran and passed
    compression::OpsetUpgrade upgrade; ///< how the opset was raised (ONNX's converter for 7-10)
};

/// Returns `model` with the quantizers of `setup` (every point not merged away; requantizers are
/// pairs of their own) inserted. Original inputs, outputs and names are kept (a quantized graph
/// output keeps its name on the dequantized value); new values are named `<tensor>_q<id>`
/// (integer), `<tensor>_dq<id>` (dequantized), `<tensor>_q<id>_scale`, ... The opset is raised to
/// 13 (21 and IR 10 with a 4-bit or 16-bit grid). InvalidArgument naming the point when a parameter
/// is missing or inconsistent (sizes, non-positive scale, zero point off the grid, unified members
/// on one grid that differ); Unsupported for grids wider than 16 bits or quantizers on non-float
/// tensors.
Result<graph::Graph> insertQdqNodes(const graph::Graph& model,
                                    const SingleConfigQuantizerSetup& setup,
                                    const QuantizerParametersMap& parameters,
                                    const QdqExportOptions& options = {},
                                    QdqExportSummary* summary = nullptr);

/// insertQdqNodes, onnx::checker when possible, then an atomic write of the ONNX file.
Result<QdqExportSummary> exportQdqModel(const graph::Graph& model,
                                        const SingleConfigQuantizerSetup& setup,
                                        const QuantizerParametersMap& parameters,
                                        const std::filesystem::path& path,
                                        const QdqExportOptions& options = {});

} // namespace qs::quantization
