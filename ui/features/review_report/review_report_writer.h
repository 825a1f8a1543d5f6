// Writing a review report (core/report/review_report.h) with the pictures only Qt can draw: the
// graph from the same scene code as `render` (ui/graph_export), with the report's quantizer
// badges, and the Bit Widths dock's charts (BitwidthChartDrawing), both as inline SVG. The CLI's
// `report` command and File ▸ Export ▸ Review Report… both call writeReviewReport().
#pragma once

#include "core/graph/graph.h"
#include "core/report/review_diff.h"
#include "core/report/review_report.h"
#include "core/support/progress.h"
#include "core/support/result.h"
#include "ui/graph_theme.h"

#include <string>

namespace qs::ui {

class GraphScene;

struct ReviewWriteOptions {
    std::string htmlPath;   ///< REVIEW.html, written atomically
    std::string csvDir;     ///< empty: no CSV
    bool expandAll = false; ///< every group open instead of the GUI's first view
    /// Draw this scene as it is laid out (the GUI page's: the user's open groups and overlays)
    /// instead of laying the graph out again; no layout runs, so the GUI thread is not held up.
    GraphScene* scene = nullptr;
};

/// The graph and chart SVGs of `report` over `graph` (the graph from `scene` when given).
Result<report::ReviewGraphics> drawReviewGraphics(const graph::Graph& graph,
                                                  const report::ReviewReport& report,
                                                  const GraphTheme& theme, bool expandAll,
                                                  Progress& progress, GraphScene* scene = nullptr);

/// Draws the pictures, writes the page to options.htmlPath and, with a CSV folder, every table
/// there. An unwritable path is an error naming it; the old file is left as it was.
Result<void> writeReviewReport(const graph::Graph& graph, const report::ReviewReport& report,
                               const GraphTheme& theme, const ReviewWriteOptions& options,
                               Progress& progress);

/// The diff page of `diff` with B's graph (`marksB` as its badges) to options.htmlPath, and its
/// tables as CSV with a folder.
Result<void> writeReviewDiff(const graph::Graph& graph, const report::ReviewDiff& diff,
                             const std::vector<quantization::QuantizerMark>& marksB,
                             const GraphTheme& theme, const ReviewWriteOptions& options,
                             Progress& progress);

} // namespace qs::ui
