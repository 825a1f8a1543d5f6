// `quantscope-cli diff A B [--model MODEL] [--hw HW] [--calib-... [--labels-npy ...]]
//  --out DIFF.html [--csv DIR] [--expand-all] [--theme light|dark]`: A and B are two setups
// (SETUP.json, with --model) or sessions (.qscope, saved for the same model) of one model, or a
// model and its compressed export (two .onnx files: the export's quantizers, pruned channels and
// float16 weights recovered by name; with a dataset the SQNR of every shared tensor of B against
// A and the first layer under --divergence-db); the page
// shows which quantizers changed bit width, config or state, the quantizers and weight bytes per
// bit width on both sides, the pruning sections that kept other channel counts, and the sizes and
// BitOps ratios before and after; with a dataset both are calibrated (SQNR per point, accuracy
// with labels). Qt starts on the offscreen platform, as for `render`.

#include "app/cli/command.h"
#include "app/cli/offscreen_qt.h"
#include "core/report/review_diff.h"
#include "core/session/pruning_masks_section.h"
#include "core/session/review_source.h"
#include "core/session/session_file.h"
#include "ui/features/review_report/review_report_writer.h"
#include "ui/theme.h"

#include <filesystem>
#include <iostream>
#include <memory>

namespace qs::cli {

namespace {
struct DiffOptions {
    std::string a;
    std::string b;
    std::string modelPath;
    std::string hw = "cpu";
    runtime::DatasetRequest dataset = cliDatasetRequest(true);
    std::string outPath;
    std::string csvDir;
    std::string theme = "light";
    double divergenceDb = 20.0;
    bool expandAll = false;
};

bool isSession(const std::string& path) {
    return std::filesystem::path(path).extension() == ".qscope";
}

bool isModel(const std::string& path) {
    return std::filesystem::path(path).extension() == ".onnx";
}

/// MODEL.onnx against EXPORT.onnx.
Result<void> runExportDiff(const DiffOptions& options) {
    QS_ASSIGN_OR_RETURN(const graph::Graph model, importModelFor(options.a, options.dataset));
    QS_ASSIGN_OR_RETURN(const graph::Graph exported, importModelFor(options.b, options.dataset));
    StderrProgressBar progress;
    QS_ASSIGN_OR_RETURN(const session::ExportDiffOutcome outcome,
                        session::gatherExportDiff(model, exported,
                                                  {.modelPath = options.a,
                                                   .exportPath = options.b,
                                                   .dataset = options.dataset,
                                                   .divergenceDb = options.divergenceDb,
                                                   .date = {}},
                                                  progress));
    const auto app = startOffscreenQt();
    const bool dark = ui::applyTheme(ui::themeFromName(QString::fromStdString(options.theme)));
    QS_TRY(ui::writeReviewDiff(
        model, outcome.diff, outcome.marks, ui::graphThemeFor(dark),
        {.htmlPath = options.outPath, .csvDir = options.csvDir, .expandAll = options.expandAll},
        progress));
    std::cout << "Diff: " << options.outPath << " (" << outcome.diff.quantizers.rows.size()
              << " quantizers, " << outcome.structure.pruned.size() << " pruned weights, "
              << outcome.structure.float16Initializers << " float16 initializers in B)\n";
    if (outcome.comparison) {
        for (const auto& [name, value] : outcome.diff.facts) {
            if (name == "First divergent layer" || name == "SQNR of the last tensor" ||
                name == "Outputs of B against A" || name == "Accuracy") {
                // The accuracy text names itself ("Top-1 accuracy: ...").
                std::cout << (name == "Accuracy" ? value : name + ": " + value) << "\n";
            }
        }
    }
    return {};
}

/// Both sides are setups of one graph: a session that works on its pruned model (its pruning
/// applied) has other quantization points than the model file's.
Result<void> refuseAppliedPruning(const std::string& path) {
    if (!isSession(path) || !std::filesystem::exists(path)) {
        return success();
    }
    QS_ASSIGN_OR_RETURN(const session::SessionFile file, session::readSessionFile(path));
    if (session::sessionHasAppliedPruning(file)) {
        return Error(Errc::InvalidArgument,
                     "session '" + path +
                         "' works on its pruned model (pruning applied); diff compares setups "
                         "of the model file's graph (review it with report --session)");
    }
    return success();
}

/// The request of one side: a session, or a setup of --model.
session::ReviewRequest sideRequest(const DiffOptions& options, const std::string& path,
                                   const std::string& modelPath) {
    session::ReviewRequest request;
    request.modelPath = modelPath;
    request.hw = options.hw;
    request.dataset = options.dataset;
    (isSession(path) ? request.sessionPath : request.setupPath) = path;
    return request;
}

Result<void> runDiffImpl(const DiffOptions& options) {
    std::string modelPath = options.modelPath;
    QS_TRY(report::checkReportOutputs(options.outPath, options.csvDir));
    if (isModel(options.a) != isModel(options.b)) {
        return Error(Errc::Usage, "A and B are both models (a model and its export) or neither");
    }
    if (isModel(options.a)) {
        return runExportDiff(options);
    }
    if (modelPath.empty()) {
        const std::string& saved = isSession(options.a) ? options.a : options.b;
        if (!isSession(saved)) {
            return Error(Errc::Usage, "two setups need --model MODEL");
        }
        QS_ASSIGN_OR_RETURN(const session::SessionFile file, session::readSessionFile(saved));
        modelPath = file.modelPath;
    }
    for (const std::string& side : {options.a, options.b}) {
        QS_TRY(refuseAppliedPruning(side));
    }
    QS_ASSIGN_OR_RETURN(const graph::Graph model, importModelFor(modelPath, options.dataset));
    StderrProgressBar progress;
    QS_ASSIGN_OR_RETURN(
        const report::ReviewReport a,
        session::gatherReviewReport(model, sideRequest(options, options.a, modelPath), progress)
            .context("A"));
    QS_ASSIGN_OR_RETURN(
        const report::ReviewReport b,
        session::gatherReviewReport(model, sideRequest(options, options.b, modelPath), progress)
            .context("B"));
    const report::ReviewDiff diff = report::diffReviews(a, b, a.header.source, b.header.source);
    const auto app = startOffscreenQt();
    const bool dark = ui::applyTheme(ui::themeFromName(QString::fromStdString(options.theme)));
    QS_TRY(ui::writeReviewDiff(
        model, diff, b.marks, ui::graphThemeFor(dark),
        {.htmlPath = options.outPath, .csvDir = options.csvDir, .expandAll = options.expandAll},
        progress));
    std::cout << "Diff: " << options.outPath << " (" << diff.quantizers.rows.size()
              << " quantizers changed, " << diff.unchanged << " unchanged, "
              << diff.pruning.rows.size() << " pruning sections changed)\n";
    return {};
}
} // namespace

Command addDiffCommand(CLI::App& parent) {
    auto options = std::make_shared<DiffOptions>();
    CLI::App* app = parent.add_subcommand(
        "diff",
        "Compare two setups or sessions of one model, or a model and its export, on one HTML page "
        "(and CSV)");
    app->add_option("A", options->a, "The first setup JSON or .qscope session, or a float model")
        ->required();
    app->add_option("B", options->b,
                    "The second setup JSON or .qscope session, or the model's compressed export "
                    "(QDQ, weight-compressed, pruned or FP16 ONNX)")
        ->required();
    app->add_option("--model", options->modelPath,
                    "The ONNX model (needed for setups; sessions name theirs)");
    app->add_option("--hw", options->hw,
                    "HW config of the proposal the setups' candidates come from")
        ->capture_default_str();
    addDatasetOptions(*app, options->dataset,
                      {.npy = "Calibrate both on .npy samples first (SQNR per point)",
                       .images = "Calibrate both on a folder of images first",
                       .random = "Calibrate both on N seeded standard-normal samples first"});
    app->add_option("--out,-o", options->outPath, "The HTML page to write")
        ->required()
        ->type_name("DIFF.html");
    app->add_option("--csv", options->csvDir, "Also write the tables as CSV into this folder")
        ->type_name("DIR");
    app->add_option("--divergence-db", options->divergenceDb,
                    "A model against its export: the first tensor under this SQNR has diverged")
        ->capture_default_str()
        ->check(CLI::Range(-1000.0, 1000.0));
    app->add_flag("--expand-all", options->expandAll, "Draw B's graph with every group open");
    app->add_option("--theme", options->theme, "Colours of the graph: light (default) or dark")
        ->check(CLI::IsMember({"light", "dark"}));
    return {app, [options] {
                auto result = runDiffImpl(*options);
                return result.ok() ? kExitOk : reportError(result.error());
            }};
}

} // namespace qs::cli
