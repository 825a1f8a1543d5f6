// A float model against its compressed export (issue 20, point 2): `quantscope-cli diff
// MODEL.onnx EXPORT.onnx`. The export's structure is recovered in the float model's vocabulary
// by matching node names (our exporters keep every original node and tensor name; what they add
// has new names): each QuantizeLinear/DequantizeLinear pair and each weight DequantizeLinear
// becomes a quantizer at NNCF's insertion point on the float graph (post-hook when it covers
// every consumer of the tensor, else pre-hooks), a weight with fewer channels is a pruned one
// (the kept channels found by matching the sliced rows exactly), float16 initializers count as
// FP16. With a dataset both models run sample by sample and every tensor the two share is
// compared: SQNR of B against A, the drop a layer adds to its inputs' SQNR, and the first layer
// whose SQNR falls under a threshold (where B diverges).
#pragma once

#include "core/graph/graph.h"
#include "core/quantization/quantizer_setup.h"
#include "core/report/accuracy.h"
#include "core/report/review_diff.h"
#include "core/runtime/dataset_request.h"
#include "core/support/progress.h"
#include "core/support/result.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace qs::report {

/// A weight the export keeps fewer output channels of.
struct PrunedWeight {
    std::string node;   ///< the op reading it
    std::string weight; ///< its name in A
    int64_t axis = 0;   ///< output-channel axis
    int64_t channels = 0;
    int64_t kept = 0;
    bool matched = false;                ///< every kept row found in A (then prunedChannels holds)
    std::vector<int64_t> prunedChannels; ///< A's channels B dropped, ascending
};

/// What the export changed, named as in A.
struct ExportStructure {
    quantization::SingleConfigQuantizerSetup setup; ///< the quantizers, on A's insertion points
    std::map<int, std::string> dequantizedValue;    ///< activation qp id -> B's DQ output
    /// A's tensor -> the B value its node computes (same name, unless the exporter renamed a
    /// graph output it put a quantizer or Cast behind).
    std::map<std::string, std::string> tensorInB;
    std::vector<PrunedWeight> pruned;
    /// B tensor name -> A's channel (axis 1) of each of its channels, for pruned tensors.
    std::map<std::string, std::vector<int64_t>> channelMaps;
    int float16Initializers = 0;
    std::map<std::string, int> insertedOps; ///< op type -> B nodes A does not have
    std::vector<std::string> missingNodes;  ///< A nodes B lacks
    int64_t bytesA = 0;                     ///< initializer bytes at their stored types
    int64_t bytesB = 0;
    std::vector<std::string> notes; ///< what could not be placed, and why
};

/// Recovers `b`'s changes against `a`; B's nodes are A's by tensor names, else by node names the
/// file gave them. Fails when the two share no node (not an export of `a`).
Result<ExportStructure> recoverExportStructure(const graph::Graph& a, const graph::Graph& b);

/// One tensor both models compute.
struct TensorComparison {
    std::string tensor;   ///< A's name (for a quantizer: the tensor it quantizes)
    std::string producer; ///< A's node, or "quantizer N" for a DQ output of B
    std::string opType;
    double sqnrDb = 0.0;               ///< +inf: B equals A
    std::optional<double> inputSqnrDb; ///< the lowest SQNR among the producer's inputs
    std::string note;                  ///< "channels 12 of 16 (pruned)"
    int quantizer = -1;                ///< the qp id of a DQ output row
};

struct ExportComparison {
    int64_t samples = 0;
    double divergenceDb = 20.0;
    std::vector<TensorComparison> tensors; ///< in A's topological order
    std::optional<size_t> firstDivergent;  ///< first with sqnrDb < divergenceDb
    std::optional<size_t> largestDrop;     ///< the largest inputSqnrDb - sqnrDb
    std::vector<std::string> skipped;      ///< tensors not comparable, and why
    /// With labels: both models' accuracy on the first output (floatModel: A, compressed: B).
    std::optional<AccuracyComparison> accuracy;
    std::optional<OutputAgreement> agreement; ///< of the first outputs: argmax agreement, cosine
};

/// Runs both models on every sample of `dataset` (loaded for `a`) and compares each shared tensor.
Result<ExportComparison> compareExport(const graph::Graph& a, const graph::Graph& b,
                                       const ExportStructure& structure,
                                       const runtime::Dataset& dataset, double divergenceDb,
                                       Progress& progress);

/// The diff page of `a` (the float model's report) against `b` (the report of the recovered setup
/// on the same graph), with the export's tables and, when run, the comparison.
ReviewDiff exportDiff(const ReviewReport& a, const ReviewReport& b,
                      const ExportStructure& structure, const ExportComparison* comparison);

} // namespace qs::report
