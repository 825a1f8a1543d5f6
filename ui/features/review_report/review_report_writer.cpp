#include "ui/features/review_report/review_report_writer.h"

#include "core/support/atomic_file.h"
#include "ui/bitwidth_chart_drawing.h"
#include "ui/features/pruning/pruning_overlay.h"
#include "ui/graph_export.h"
#include "ui/graph_items.h"
#include "ui/graph_scene.h"

namespace qs::ui {

namespace {

/// The kept-channel bar of each pruning section under its entry's box, as the GUI's overlay
/// draws it.
void addPruningBars(GraphScene& scene, const report::ReviewPruning& pruning) {
    for (size_t s = 0; s < pruning.sections.size(); ++s) {
        const report::ReviewPruning::Section& section = pruning.sections[s];
        for (NodeItem* node : scene.nodeItems()) {
            if (!node->content().io && !node->group() &&
                node->content().fullName == QString::fromStdString(section.entry)) {
                new PruningEntryItem(node, static_cast<int>(s), section.channels, section.kept,
                                     pruningSectionColor(static_cast<int>(s)),
                                     section.constraint != "free");
            }
        }
    }
}

} // namespace

Result<report::ReviewGraphics> drawReviewGraphics(const graph::Graph& graph,
                                                  const report::ReviewReport& report,
                                                  const GraphTheme& theme, bool expandAll,
                                                  Progress& progress, GraphScene* scene) {
    report::ReviewGraphics graphics;
    QByteArray svg;
    if (scene != nullptr) {
        QS_ASSIGN_OR_RETURN(svg, sceneSvg(*scene));
    } else {
        QS_ASSIGN_OR_RETURN(svg, renderGraphSvg(graph, theme, progress, report.marks,
                                                {.expandAll = expandAll,
                                                 .expandedGroups = report.expandedGroups,
                                                 .decorate = [&report](GraphScene& drawn) {
                                                     if (report.pruning) {
                                                         addPruningBars(drawn, *report.pruning);
                                                     }
                                                 }}));
    }
    graphics.graphSvg = svg.toStdString();
    graphics.bitwidthChartSvg =
        bitwidthChartSvg(report.bitwidths, theme, BitwidthChartDrawing::Panels::Distribution)
            .toStdString();
    graphics.opTypeChartSvg =
        bitwidthChartSvg(report.bitwidths, theme, BitwidthChartDrawing::Panels::OpTypes)
            .toStdString();
    return graphics;
}

Result<void> writeReviewReport(const graph::Graph& graph, const report::ReviewReport& report,
                               const GraphTheme& theme, const ReviewWriteOptions& options,
                               Progress& progress) {
    if (options.htmlPath.empty()) {
        return Error(Errc::Usage, "no path for the review report");
    }
    QS_ASSIGN_OR_RETURN(
        const report::ReviewGraphics graphics,
        drawReviewGraphics(graph, report, theme, options.expandAll, progress, options.scene));
    QS_TRY(writeFileAtomically(options.htmlPath, report::reviewHtml(report, graphics)));
    if (!options.csvDir.empty()) {
        QS_TRY(report::writeReviewCsv(report, options.csvDir)
                   .context("CSV folder '" + options.csvDir + "'"));
    }
    return {};
}

Result<void> writeReviewDiff(const graph::Graph& graph, const report::ReviewDiff& diff,
                             const std::vector<quantization::QuantizerMark>& marksB,
                             const GraphTheme& theme, const ReviewWriteOptions& options,
                             Progress& progress) {
    if (options.htmlPath.empty()) {
        return Error(Errc::Usage, "no path for the diff page");
    }
    QS_ASSIGN_OR_RETURN(const QByteArray svg, renderGraphSvg(graph, theme, progress, marksB,
                                                             {.expandAll = options.expandAll,
                                                              .expandedGroups = std::nullopt,
                                                              .decorate = {}}));
    QS_TRY(writeFileAtomically(options.htmlPath, report::reviewDiffHtml(diff, svg.toStdString())));
    if (!options.csvDir.empty()) {
        QS_TRY(report::writeTablesCsv(diff.tables(), options.csvDir)
                   .context("CSV folder '" + options.csvDir + "'"));
    }
    return {};
}

} // namespace qs::ui
