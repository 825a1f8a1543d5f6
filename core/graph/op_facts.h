// Per-op facts that are not the op's arithmetic (that lives in core/runtime/ops/) nor its
// compression metatype (metatypes.cpp): the family it is drawn and counted in, how its MACs are
// counted, what it is to NNCF's fusing patterns, and its role for channel
// pruning. One row per ONNX op type; every list that used to be spelt out in the quantization,
// report and GUI code reads this table, so adding an op is one row here.
#pragma once

#include <string_view>
#include <vector>

namespace qs::graph {

/// The family an op is drawn in (DESIGN.md's node colours) and grouped by in reports.
enum class OpFamily { Compute, Activation, Normalization, Pooling, Elementwise, Shape, Other };

/// How the multiply-accumulates of one run of the op are counted (report/model_info.cpp).
enum class MacRule {
    None,
    Conv,          ///< output elements x C_in/group x kernel
    ConvTranspose, ///< input elements x C_out/group x kernel
    MatMul,        ///< output elements x K (Gemm and MatMul)
};

/// What channel pruning may do at the op (MCT's SIMD pruning on the ONNX graph).
enum class PruningRole {
    Blocks,     ///< ends a pruning section
    Mixes,      ///< mixes channels through a weight: a section's entry or exit (when group 1)
    PerChannel, ///< acts per channel or element-wise: may sit inside a section
};

struct OpFacts {
    std::string_view opType;
    OpFamily family = OpFamily::Other;
    MacRule macs = MacRule::None;
    bool atomicActivation = false; ///< NNCF's ATOMIC_ACTIVATIONS pattern alternatives
    bool arithmetic = false;       ///< NNCF's ARITHMETIC pattern alternatives (Add, Sub, Mul, Div)
    PruningRole pruningRole = PruningRole::Blocks;
};

/// The facts of `opType` (default domain); an op without a row gets the defaults (Other, no MACs,
/// blocks pruning).
const OpFacts& opFacts(std::string_view opType);

/// Every row, for tests and listings.
const std::vector<OpFacts>& opFactsTable();

} // namespace qs::graph
