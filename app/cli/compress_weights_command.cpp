// `quantscope-cli compress-weights MODEL --mode int4_asym|int4_sym|int8_asym|int8_sym
//   [--group-size G] [--ratio R] [--group-fallback error|ignore|adjust] [--backup-mode M]
//   [--all-layers] [--calib-images DIR | --calib-npy X.npy... | --calib-random N]
//   [--calib-batch B] [--seed S] [--sensitivity-metric M] --out OUT.onnx [--report REPORT.json]
//   [--dequantized-out SIM.onnx]`
// Prints NNCF's bitwidth table and the size before and after. With a dataset the ratio mixing
// ranks weights by max_activation_variance (NNCF's data-aware default) unless told otherwise.

#include "app/cli/command.h"
#include "core/compression/compression_workflow.h"
#include "core/onnx/model_io.h"
#include "core/report/compression_report.h"
#include "core/session/sections.h"
#include "core/session/session_file.h"
#include "core/support/atomic_file.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>

namespace qs::cli {

namespace {
struct CompressOptions {
    std::string modelPath;
    std::string mode;
    int64_t groupSize = 0;
    double ratio = 1.0;
    std::string groupFallback = "error";
    std::string backupMode = "int8_asym";
    bool allLayers = false;
    /// The dataset option group (core/runtime/dataset_request.h).
    runtime::DatasetRequest dataset = cliDatasetRequest(false);
    std::string sensitivityMetric; ///< empty: NNCF's default for the presence of a dataset
    std::string outPath;
    std::string reportPath;
    std::string dequantizedOutPath;
    std::string sessionPath;
};

Result<compression::WeightCompressionOptions> toCoreOptions(const CompressOptions& options) {
    compression::WeightCompressionOptions core;
    QS_ASSIGN_OR_RETURN(core.mode, compression::parseMode(options.mode));
    QS_ASSIGN_OR_RETURN(core.groupSizeFallback, compression::parseFallback(options.groupFallback));
    QS_ASSIGN_OR_RETURN(core.backupMode, compression::parseMode(options.backupMode));
    core.groupSize = options.groupSize;
    core.ratio = options.ratio;
    core.allLayers = options.allLayers;
    if (!options.sensitivityMetric.empty()) {
        QS_ASSIGN_OR_RETURN(core.sensitivity,
                            compression::parseSensitivityMetric(options.sensitivityMetric));
    } else if (!options.dataset.empty()) {
        core.sensitivity = compression::SensitivityMetric::MaxActivationVariance;
    }
    QS_TRY(compression::validateOptions(core));
    return core;
}

Result<int64_t> fileSize(const std::string& path) {
    std::error_code error;
    const auto size = std::filesystem::file_size(path, error);
    if (error) {
        return Error(Errc::Io, "cannot stat '" + path + "': " + error.message());
    }
    return static_cast<int64_t>(size);
}

/// onnx::checker where our 1.12 headers can judge the result: no int4 and opset <= 17.
void checkIfPossible(const graph::Graph& graph, std::ostream& out) {
    bool hasInt4 = false;
    for (const graph::ValueId id : graph.initializers()) {
        const graph::DataType dtype = graph.value(id).dtype;
        hasInt4 = hasInt4 || dtype == graph::DataType::Int4 || dtype == graph::DataType::UInt4;
    }
    if (hasInt4 || graph.opsetVersion() > onnx::kCheckerMaxOpset) {
        out << "onnx::checker: skipped (ONNX 1.12 knows neither int4 nor opset "
            << graph.opsetVersion() << ")\n";
        return;
    }
    const auto checked = onnx::checkModel(graph);
    out << "onnx::checker: " << (checked.ok() ? "passed" : checked.error().toString()) << '\n';
}

Result<void> writeReport(const CompressOptions& options,
                         const compression::WeightCompressionOutcome& outcome) {
    nlohmann::json report = report::toJson(outcome);
    report["model"] = options.modelPath;
    report["output"] = options.outPath;
    return writeFileAtomically(options.reportPath, report.dump(2) + "\n");
}

Result<void> printSizes(const CompressOptions& options,
                        const compression::CompressionSummary& summary) {
    QS_ASSIGN_OR_RETURN(const int64_t before, fileSize(options.modelPath));
    QS_ASSIGN_OR_RETURN(const int64_t after, fileSize(options.outPath));
    std::cout << "Model size: " << report::mebibytesText(before) << " -> "
              << report::mebibytesText(after) << " (" << std::fixed << std::setprecision(2)
              << (after > 0 ? static_cast<double>(before) / static_cast<double>(after) : 0.0)
              << "x smaller)\n"
              << "Opset " << summary.opset << ", IR version " << summary.irVersion << "\n";
    if (summary.upgrade.upgraded()) {
        std::cout << "Upgraded: " << summary.upgrade.describe() << "\n";
    }
    return success();
}

/// The float model with quantize-dequantized weights: what the compressed model must compute.
Result<void> writeSimulation(const graph::Graph& graph, const compression::CompressionPlan& plan,
                             const std::string& path) {
    graph::Graph simulated = graph;
    QS_TRY(compression::applyDequantizedWeights(simulated, plan));
    return onnx::exportModel(simulated, path);
}

/// --session: the plan goes into the session's compression section; the file's other sections
/// stay (a new session is created for the model when the file does not exist).
Result<void> writeSession(const CompressOptions& options,
                          const compression::CompressionPlan& plan) {
    QS_ASSIGN_OR_RETURN(std::optional<session::SessionFile> saved,
                        readSessionFor(options.sessionPath, options.modelPath));
    session::SessionFile file = saved ? std::move(*saved) : session::SessionFile{};
    if (!saved) {
        file.modelPath = std::filesystem::absolute(options.modelPath).string();
        QS_ASSIGN_OR_RETURN(file.modelHash, session::hashModelFile(options.modelPath));
    }
    session::setCompressionPlan(file, plan);
    QS_TRY(session::writeSessionFile(options.sessionPath, file));
    std::cout << "Session: " << options.sessionPath << "\n";
    return success();
}

/// After the export: --report, the console report, sizes, the checker and --session.
Result<void> writeResults(const CompressOptions& options, const graph::Graph& graph,
                          const compression::WeightCompressionOutcome& outcome) {
    if (!options.reportPath.empty()) {
        QS_TRY(writeReport(options, outcome));
    }
    std::cout << report::compressionText(outcome);
    QS_TRY(printSizes(options, *outcome.summary));
    checkIfPossible(graph, std::cout);
    if (!options.sessionPath.empty()) {
        QS_TRY(writeSession(options, outcome.plan));
    }
    return success();
}

Result<void> runCompress(const CompressOptions& options) {
    compression::WeightCompressionRequest request{.dataset = options.dataset};
    QS_ASSIGN_OR_RETURN(request.options, toCoreOptions(options));
    QS_ASSIGN_OR_RETURN(graph::Graph graph, importSessionModel(options.modelPath, options.dataset,
                                                               options.sessionPath));
    StderrProgressBar progress;
    QS_ASSIGN_OR_RETURN(compression::WeightCompressionOutcome outcome,
                        compression::planCompression(graph, request, progress));
    if (!options.dequantizedOutPath.empty()) {
        QS_TRY(writeSimulation(graph, outcome.plan, options.dequantizedOutPath));
    }
    const graph::Graph floatModel = graph; // weights are shared: this copies the node tables
    QS_TRY(compression::applyCompression(graph, outcome, progress));
    QS_TRY(compression::scoreCompression(floatModel, graph, options.dataset, outcome, progress));
    if (auto accuracy = report::compressionAccuracy(outcome); !accuracy.ok()) {
        return std::move(accuracy).error().context("--labels-npy");
    }
    QS_TRY(onnx::exportModel(graph, options.outPath));
    return writeResults(options, graph, outcome);
}
} // namespace

Command addCompressWeightsCommand(CLI::App& parent) {
    auto options = std::make_shared<CompressOptions>();
    CLI::App* app = parent.add_subcommand(
        "compress-weights", "Compress MatMul/Gemm/Conv/Embedding weights to int8/int4 "
                            "(DequantizeLinear export), NNCF-style");
    app->add_option("MODEL", options->modelPath, "ONNX model file")->required();
    app->add_option("--mode", options->mode, "int4_asym | int4_sym | int8_asym | int8_sym")
        ->required();
    app->add_option("--group-size", options->groupSize,
                    "Group size along the reduction axis; -1 = per channel "
                    "(default: 128 for int4, -1 for int8)");
    app->add_option("--ratio", options->ratio,
                    "Share of ratio-defining parameters in the 4-bit mode, the rest in the "
                    "backup mode (default 1)");
    app->add_option("--group-fallback", options->groupFallback,
                    "When the group size does not divide a channel: error | ignore | adjust");
    app->add_option("--backup-mode", options->backupMode,
                    "Mode of the weights outside the ratio: int8_asym | int8_sym | none");
    app->add_flag("--all-layers", options->allLayers,
                  "Let the last MatMul and the embeddings take the 4-bit mode too");
    addDatasetOptions(*app, options->dataset,
                      {.npy = "Dataset .npy per model input, samples on axis 0 (repeatable)",
                       .images = "Folder of images for data-aware sensitivity (one NCHW input); "
                                 "with labels, also both models' accuracy",
                       .random = "N seeded random-normal samples as the dataset",
                       .seedAlias = "--seed"});
    app->add_option("--sensitivity-metric", options->sensitivityMetric,
                    "weight_quantization_error | mean_activation_variance | "
                    "max_activation_variance | mean_activation_magnitude (default: "
                    "max_activation_variance with a dataset, else weight_quantization_error)");
    app->add_option("--out", options->outPath, "Compressed ONNX file to write")->required();
    app->add_option("--report", options->reportPath, "Write the per-weight plan as JSON");
    app->add_option("--dequantized-out", options->dequantizedOutPath,
                    "Also write the float model with quantize-dequantized weights");
    app->add_option("--session", options->sessionPath,
                    "Save the plan in this .qscope session (created if missing; its other "
                    "sections are kept)")
        ->type_name("FILE.qscope");
    return {app, [options] {
                const auto result = runCompress(*options);
                return result.ok() ? kExitOk : reportError(result.error());
            }};
}

} // namespace qs::cli
