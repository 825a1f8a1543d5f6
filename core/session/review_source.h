// Where a review report (core/report/review_report.h) comes from when it is made from files: a
// model with a setup JSON, or a `.qscope` session with its HAWQ, pruning and weight-compression
// sections, or neither (the proposal for a HW config); calibrated on a dataset when one is given.
// `quantscope-cli report` calls gatherReviewReport(); the GUI builds ReviewInputs from its open
// document and uses the section converters below.
#pragma once

#include "core/graph/graph.h"
#include "core/report/export_diff.h"
#include "core/report/review_report.h"
#include "core/runtime/dataset_request.h"
#include "core/session/hawq_section.h"
#include "core/session/pruning_masks_section.h"
#include "core/support/progress.h"
#include "core/support/result.h"

#include <map>
#include <string>

namespace qs::session {

struct ReviewRequest {
    std::string modelPath;
    std::string setupPath;           ///< a setup JSON (quantize --setup-out), or
    std::string sessionPath;         ///< a session saved for this model
    std::string hw = "cpu";          ///< the proposal without either; with a setup, its candidates
    runtime::DatasetRequest dataset; ///< empty: no calibration
    std::string date;                ///< empty: now
};

/// The report's view of a HAWQ section.
report::ReviewHawq reviewHawqOf(const HawqSummary& summary);

/// The report's view of a pruning section.
report::ReviewPruning reviewPruningOf(const PruningMasksSection& section);

/// Adds the HAWQ ("hawq"), pruning ("pruning") and weight-compression ("compression") sections
/// of `sections` (a session's, or the GUI's document states') to `inputs`; a malformed one is an
/// error naming it.
Result<void> addReviewSections(report::ReviewInputs& inputs,
                               const std::map<std::string, nlohmann::json, std::less<>>& sections);

/// Reads the setup or the session (which must be saved for this model; a malformed section is an
/// error naming it), calibrates when the request has a dataset (progress: the calibration) and
/// builds the report.
Result<report::ReviewReport> gatherReviewReport(const graph::Graph& model,
                                                const ReviewRequest& request, Progress& progress);

/// A float model against its compressed export (`quantscope-cli diff MODEL.onnx EXPORT.onnx`).
struct ExportDiffRequest {
    std::string modelPath;
    std::string exportPath;
    runtime::DatasetRequest dataset; ///< empty: structure only, no per-tensor SQNR
    double divergenceDb = 20.0;      ///< a tensor under this SQNR has diverged
    std::string date;                ///< empty: now
};

struct ExportDiffOutcome {
    report::ExportStructure structure;
    std::optional<report::ExportComparison> comparison;
    report::ReviewDiff diff;
    std::vector<quantization::QuantizerMark> marks; ///< B's quantizers on the float graph
};

/// Recovers `exported`'s structure on `model`, runs both on the dataset when the request has one
/// (progress: the comparison) and builds the diff page's content.
Result<ExportDiffOutcome> gatherExportDiff(const graph::Graph& model, const graph::Graph& exported,
                                           const ExportDiffRequest& request, Progress& progress);

/// The quantizers of another setup JSON, `.qscope` session or compressed export (.onnx) of
/// `model` (saved at `modelPath`), on `model`'s insertion points: what the GUI's Compare… overlays.
/// `hw` gives a setup's candidates.
Result<std::vector<quantization::QuantizerMark>> comparisonMarks(const graph::Graph& model,
                                                                 const std::string& modelPath,
                                                                 const std::string& otherPath,
                                                                 const std::string& hw);

} // namespace qs::session
