// `quantscope-cli report (MODEL [--setup SETUP.json] [--hw HW] | [MODEL] --session S.qscope)
//  [--calib-npy FILE... | --calib-images DIR | --calib-classes DIR | --calib-random N]
//  [--labels-npy LABELS.npy] [--input-shape NAME=DIMS]... --out REVIEW.html [--csv DIR]
//  [--expand-all] [--theme light|dark]`: the review report of a compression result — one
// self-contained HTML page (header facts, the graph with its badges, bit-width charts, the
// sortable quantizer table, NNCF's bitwidth table, the session's HAWQ / pruning /
// weight-compression sections) and, with --csv, every table as CSV. With a dataset the setup is
// calibrated first (ranges, scales, SQNR, cosine, accuracy with labels). Qt starts here, on the
// offscreen platform, as for `render`.

#include "app/cli/command.h"
#include "app/cli/offscreen_qt.h"
#include "core/session/review_source.h"
#include "core/session/session_file.h"
#include "ui/features/review_report/review_report_writer.h"
#include "ui/theme.h"

#include <iostream>
#include <memory>

namespace qs::cli {

namespace {
struct ReportOptions {
    std::string modelPath;
    session::ReviewRequest request;
    runtime::DatasetRequest dataset = cliDatasetRequest(true);
    std::string outPath;
    std::string csvDir;
    std::string theme = "light";
    bool expandAll = false;
};

Result<void> runReportImpl(ReportOptions& options) {
    session::ReviewRequest request = options.request;
    QS_TRY(report::checkReportOutputs(options.outPath, options.csvDir));
    request.dataset = options.dataset;
    request.modelPath = options.modelPath;
    if (request.modelPath.empty()) {
        if (request.sessionPath.empty()) {
            return Error(Errc::Usage, "give MODEL, or --session with the model it was saved for");
        }
        QS_ASSIGN_OR_RETURN(const session::SessionFile saved,
                            session::readSessionFile(request.sessionPath));
        request.modelPath = saved.modelPath;
    }
    QS_ASSIGN_OR_RETURN(
        const graph::Graph model,
        importSessionModel(request.modelPath, options.dataset, request.sessionPath));
    StderrProgressBar progress;
    QS_ASSIGN_OR_RETURN(const report::ReviewReport review,
                        session::gatherReviewReport(model, request, progress));
    const auto app = startOffscreenQt();
    const bool dark = ui::applyTheme(ui::themeFromName(QString::fromStdString(options.theme)));
    QS_TRY(ui::writeReviewReport(
        model, review, ui::graphThemeFor(dark),
        {.htmlPath = options.outPath, .csvDir = options.csvDir, .expandAll = options.expandAll},
        progress));
    std::cout << "Review report: " << options.outPath << " (" << review.quantizers.rows.size()
              << " quantizers";
    if (review.hawq) {
        std::cout << ", HAWQ";
    }
    if (review.pruning) {
        std::cout << ", pruning";
    }
    if (review.compressionPlan) {
        std::cout << ", weight compression";
    }
    std::cout << ")\n";
    if (!options.csvDir.empty()) {
        std::cout << "CSV: " << options.csvDir << "\n";
    }
    return {};
}
} // namespace

Command addReportCommand(CLI::App& parent) {
    auto options = std::make_shared<ReportOptions>();
    CLI::App* app = parent.add_subcommand(
        "report", "Write the review report: one self-contained HTML page (and CSV) of a setup "
                  "or session");
    app->add_option("MODEL", options->modelPath,
                    "ONNX model file (with --session: defaults to the session's model)");
    auto* setup = app->add_option("--setup", options->request.setupPath,
                                  "Review this setup JSON (from quantize --setup-out or hawq)")
                      ->type_name("SETUP.json");
    app->add_option("--session", options->request.sessionPath,
                    "Review this .qscope session, with its HAWQ, pruning and weight-compression "
                    "sections")
        ->type_name("S.qscope")
        ->excludes(setup);
    app->add_option("--hw", options->request.hw,
                    "HW config of the proposal (without --setup / --session: the setup reviewed; "
                    "with --setup: where the candidates come from)")
        ->capture_default_str();
    addDatasetOptions(*app, options->dataset,
                      {.npy = "Calibrate on .npy samples first (ranges, scales, SQNR, cosine)",
                       .images = "Calibrate on a folder of images first",
                       .random = "Calibrate on N seeded standard-normal samples first"});
    app->add_option("--out,-o", options->outPath, "The HTML page to write")
        ->required()
        ->type_name("REVIEW.html");
    app->add_option("--csv", options->csvDir,
                    "Also write every table as CSV into this folder (quantizers.csv, ...)")
        ->type_name("DIR");
    app->add_flag("--expand-all", options->expandAll,
                  "Draw the graph with every group open (default: as the GUI first shows it)");
    app->add_option("--theme", options->theme, "Colours of the graph: light (default) or dark")
        ->check(CLI::IsMember({"light", "dark"}));
    return {app, [options] {
                auto result = runReportImpl(*options);
                return result.ok() ? kExitOk : reportError(result.error());
            }};
}

} // namespace qs::cli
