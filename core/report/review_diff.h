// The diff of two review reports of the same model (issue 20, point 2): which quantizers changed
// bit width, config or state (matched by insertion point; a point only one side has is "added" or
// "removed"), which pruning sections kept other channel counts, and the size / BitOps figures
// before and after. `quantscope-cli diff A B` builds both reports from setups or sessions and
// writes reviewDiffHtml(); the CSV holds the same rows.
#pragma once

#include "core/report/review_report.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace qs::report {

struct ReviewDiff {
    std::string nameA; ///< where A came from ("session a.qscope")
    std::string nameB;
    ReviewHeader a;
    ReviewHeader b;
    ReviewTable quantizers; ///< changed points only
    ReviewTable pruning;    ///< sections whose kept channels differ
    ReviewTable bitwidths;  ///< quantizers per bit width, A and B
    int unchanged = 0;      ///< points equal on both sides
    std::vector<std::string> notes;
    /// Facts under the standard ones, and tables after them (a model against its export).
    std::vector<std::pair<std::string, std::string>> facts;
    std::vector<ReviewTable> extra;

    std::vector<ReviewTable> tables() const {
        std::vector<ReviewTable> all{quantizers, bitwidths, pruning};
        all.insert(all.end(), extra.begin(), extra.end());
        return all;
    }
};

/// One insertion point whose quantizer differs between two sides (the GUI's Compare… overlay).
struct MarkChange {
    std::string change; ///< "added", "removed", "bit width", "state" or "config"
    std::optional<quantization::QuantizerMark> a;
    std::optional<quantization::QuantizerMark> b;
};

/// The points of `a` and `b` (by InsertionPoint::toString()) whose bit width, state or config
/// differ, or that only one side has.
std::map<std::string, MarkChange> markChanges(const std::vector<quantization::QuantizerMark>& a,
                                              const std::vector<quantization::QuantizerMark>& b);

/// The differences of `b` against `a` (the same model).
ReviewDiff diffReviews(const ReviewReport& a, const ReviewReport& b, std::string nameA,
                       std::string nameB);

/// The page: both headers side by side, the changed quantizers, bit widths and pruning sections;
/// `graphSvg` (B's graph, empty: none) inline with zoom and pan.
std::string reviewDiffHtml(const ReviewDiff& diff, const std::string& graphSvg);

} // namespace qs::report
