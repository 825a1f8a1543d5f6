// `quantscope-cli hawq MODEL --hw cpu|gpu|npu|FILE.json --compression-ratio R [--bits 2,4,8]
//  [--mode liberal|strict] [--search trace-order|pareto] [--preset performance|mixed] [--rule RULE]
//  (--calib-npy X.npy... | --calib-images DIR | --calib-random N) [--samples N] [--iterations K]
//  [--batch B] [--seed S] [--traces-in F | --traces-out F] --setup-out SETUP.json
//  [--report HAWQ.json] [--pareto-out PARETO.csv] [--bitwidth-dot GRAPH.dot]
//  [--input-shape NAME=DIMS]... [--session FILE.qscope] [--threads T]`:
// HAWQ mixed precision (core/mixed_precision): average traces from the Hessian service (or a
// saved `hessian` JSON), NNCF's trace-order candidates or the exact Pareto front, the choice for
// the BitOps ratio, applied to the setup. Prints NNCF's log line, the per-layer table and NNCF's
// bitwidth distribution table; `quantize --setup-in SETUP.json ... --out` exports it.

#include "app/cli/command.h"
#include "core/mixed_precision/hawq_workflow.h"
#include "core/quantization/calibration_workflow.h"
#include "core/quantization/quantizer_setup_report.h"
#include "core/report/calibration_report.h"
#include "core/report/hawq_report.h"
#include "core/report/hessian_report.h"
#include "core/runtime/parallel.h"
#include "core/runtime/processor_support.h"
#include "core/session/hawq_section.h"
#include "core/session/pruning_masks_section.h"
#include "core/session/sections.h"
#include "core/session/session_file.h"
#include "core/support/atomic_file.h"

#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>

namespace qs::cli {

namespace {

struct HawqOptions {
    std::string modelPath;
    std::string hw = "cpu";
    std::string preset = "performance";
    std::string rule = "merge_all_in_one";
    double compressionRatio = 0.0;
    std::vector<int> bits{2, 4, 8};
    std::string mode = "liberal";
    std::string search = "trace-order";
    int64_t samples = 32;
    int iterations = 100;
    int64_t batch = 0;
    uint64_t seed = 0;
    runtime::DatasetRequest dataset{.names = {.npy = "--calib-npy",
                                              .images = "--calib-images",
                                              .random = "--calib-random",
                                              .samples = "--samples",
                                              .batch = "--calib-batch"}};
    std::string tracesIn;
    std::string tracesOut;
    std::string setupOut;
    std::string reportOut;
    std::string paretoOut;
    std::string bitwidthDot;
    std::string sessionPath;
    int threads = 0;
};

Error usage(const std::string& message) {
    return Error(Errc::Usage, message);
}

/// Bad data or a model that cannot do what was asked: exit 1, not a usage error.
Error badInput(const std::string& message) {
    return Error(Errc::InvalidArgument, message);
}

Result<mixed_precision::HawqRequest> requestFromFlags(const HawqOptions& options) {
    mixed_precision::HawqRequest request;
    const std::optional<quantization::QuantizerPropagationRule> rule =
        quantization::ruleFromArgument(options.rule);
    if (!rule) {
        return usage("unknown --rule '" + options.rule + "'");
    }
    request.settings = {.hw = options.hw,
                        .preset = options.preset == "mixed"
                                      ? quantization::QuantizationPreset::Mixed
                                      : quantization::QuantizationPreset::Performance,
                        .rule = *rule};
    request.compressionRatio = options.compressionRatio;
    request.bits = options.bits;
    QS_ASSIGN_OR_RETURN(request.mode,
                        mixed_precision::parseAssignmentMode(options.mode).context("--mode"));
    QS_ASSIGN_OR_RETURN(request.search,
                        mixed_precision::parseSearch(options.search).context("--search"));
    request.samples = options.samples;
    request.iterations = options.iterations;
    request.batch = options.batch;
    request.seed = options.seed;
    if (!options.tracesIn.empty()) {
        if (!options.tracesOut.empty()) {
            return usage("--traces-in and --traces-out do not combine");
        }
        QS_ASSIGN_OR_RETURN(const std::string text, readFile(options.tracesIn));
        const nlohmann::json json = nlohmann::json::parse(text, nullptr, false);
        if (json.is_discarded()) {
            return badInput("--traces-in '" + options.tracesIn + "' is not JSON");
        }
        QS_ASSIGN_OR_RETURN(request.traces,
                            report::hessianScoresFromJson(
                                json, std::filesystem::path(options.tracesIn).parent_path())
                                .context("--traces-in '" + options.tracesIn + "'"));
    } else if (options.dataset.empty()) {
        return usage("hawq needs a dataset for the traces (--calib-npy, --calib-images or "
                     "--calib-random) or --traces-in");
    }
    request.dataset = options.dataset;
    return request;
}

/// Writes `text()` to `path` when the flag `flag` was given.
Result<void> writeIfAsked(const std::string& path, const char* flag,
                          const std::function<std::string()>& text) {
    if (path.empty()) {
        return success();
    }
    return writeFileAtomically(path, text()).context(flag);
}

/// With labels: the float model and the chosen mixed-precision setup, calibrated and simulated on
/// the same dataset (what `quantize --setup-in` then exports), scored against them.
Result<std::optional<report::AccuracyComparison>>
mixedPrecisionAccuracy(const HawqOptions& options, const graph::Graph& model,
                       const mixed_precision::HawqOutcome& outcome, Progress& progress) {
    if (!options.dataset.hasLabels()) {
        return std::optional<report::AccuracyComparison>();
    }
    QS_ASSIGN_OR_RETURN(const quantization::CalibrationOutcome calibrated,
                        quantization::runCalibration(model, outcome.state.setup,
                                                     {.dataset = options.dataset}, progress));
    return report::calibrationAccuracy(calibrated).context("--labels-npy");
}

Result<void> writeOutputs(const HawqOptions& options, const graph::Graph& model,
                          const mixed_precision::HawqOutcome& outcome,
                          const std::optional<report::AccuracyComparison>& accuracy) {
    QS_TRY(writeIfAsked(options.setupOut, "--setup-out",
                        [&] { return outcome.state.setup.toJson().dump(2) + "\n"; }));
    QS_TRY(writeIfAsked(options.tracesOut, "--traces-out", [&] {
        return report::toJson(outcome.analysis.traceScores, {}).dump(1) + "\n";
    }));
    QS_TRY(writeIfAsked(options.reportOut, "--report", [&] {
        nlohmann::json json = report::toJson(outcome);
        if (accuracy) {
            json["accuracy"] = report::toJson(*accuracy, "mixed_precision");
        }
        json["model"] = options.modelPath;
        json["hw"] = options.hw;
        return json.dump(2) + "\n";
    }));
    QS_TRY(writeIfAsked(options.paretoOut, "--pareto-out",
                        [&] { return report::hawqParetoCsv(outcome); }));
    return writeIfAsked(options.bitwidthDot, "--bitwidth-dot",
                        [&] { return report::hawqBitwidthDot(model, outcome); });
}

/// --session: the quantization section of the chosen setup and the HAWQ section; the file's other
/// sections (and its view) are kept when it exists and belongs to MODEL.
Result<void> writeSession(const HawqOptions& options, const mixed_precision::HawqRequest& request,
                          const mixed_precision::HawqOutcome& outcome) {
    QS_ASSIGN_OR_RETURN(std::optional<session::SessionFile> saved,
                        readSessionFor(options.sessionPath, options.modelPath));
    QS_ASSIGN_OR_RETURN(const std::string hash, session::hashModelFile(options.modelPath));
    QS_ASSIGN_OR_RETURN(session::SessionFile file,
                        session::captureSession(options.modelPath, hash, outcome.state));
    if (saved) {
        file.view = saved->view;
        file.sections = std::move(saved->sections);
    }
    session::setSection(file, session::kHawqSection,
                        session::toJson(session::summarize(outcome, request, hash)));
    QS_TRY(session::writeSessionFile(options.sessionPath, file));
    std::cout << "Session: " << options.sessionPath << "\n";
    return success();
}

/// --traces-in comes from `hessian` on the model file; a session that works on its pruned model
/// needs the traces of that graph, which only this command computes.
Result<void> checkTracesForSession(const HawqOptions& options) {
    if (options.tracesIn.empty() || options.sessionPath.empty() ||
        !std::filesystem::exists(options.sessionPath)) {
        return success();
    }
    QS_ASSIGN_OR_RETURN(const session::SessionFile saved,
                        session::readSessionFile(options.sessionPath));
    if (session::sessionHasAppliedPruning(saved)) {
        return usage("--traces-in holds traces of the model file's graph, but --session '" +
                     options.sessionPath +
                     "' works on its pruned model: drop --traces-in so hawq computes them");
    }
    return success();
}

Result<void> runHawqCommand(const HawqOptions& options) {
    QS_ASSIGN_OR_RETURN(const mixed_precision::HawqRequest request, requestFromFlags(options));
    QS_TRY(checkTracesForSession(options));
    QS_TRY(runtime::checkProcessorSupport());
    runtime::setNumThreads(options.threads);
    QS_ASSIGN_OR_RETURN(
        const graph::Graph model,
        importSessionModel(options.modelPath, options.dataset, options.sessionPath));
    StderrProgressBar bar;
    QS_ASSIGN_OR_RETURN(const mixed_precision::HawqOutcome outcome,
                        mixed_precision::runHawq(model, request, bar));
    QS_ASSIGN_OR_RETURN(const std::optional<report::AccuracyComparison> accuracy,
                        mixedPrecisionAccuracy(options, model, outcome, bar));
    for (const std::string& note : outcome.analysis.problem.notes) {
        std::cerr << "note: " << note << '\n';
    }
    for (const std::string& note : outcome.analysis.traceScores.notes) {
        std::cerr << "note: " << note << '\n';
    }
    std::cerr << "hawq: traces " << outcome.timings.tracesSeconds << " s, perturbation "
              << outcome.timings.perturbationSeconds << " s, search "
              << outcome.timings.searchSeconds << " s\n";
    std::cout << report::hawqLogLine(outcome) << '\n';
    std::cout << report::hawqText(outcome);
    std::cout << quantization::bitwidthSummaryTable(outcome.state.setup);
    if (accuracy) {
        std::cout << report::accuracyText(*accuracy, "mixed precision");
    }
    QS_TRY(writeOutputs(options, model, outcome, accuracy));
    if (!options.sessionPath.empty()) {
        QS_TRY(writeSession(options, request, outcome));
    }
    return success();
}

} // namespace

Command addHawqCommand(CLI::App& parent) {
    auto options = std::make_shared<HawqOptions>();
    CLI::App* app = parent.add_subcommand(
        "hawq", "HAWQ mixed precision: bit widths per layer from Hessian traces under a BitOps "
                "compression ratio (NNCF's trace-order search or the exact Pareto front)");
    app->add_option("MODEL", options->modelPath, "ONNX model file")->required();
    app->add_option("--hw", options->hw, "cpu, gpu, npu or a HW config JSON")
        ->capture_default_str();
    app->add_option("--compression-ratio", options->compressionRatio,
                    "Target BitOps compression ratio (uniform INT8 = 1.0, INT4 = 2.0)")
        ->required()
        ->check(CLI::PositiveNumber);
    app->add_option("--bits", options->bits, "Candidate bit widths")
        ->delimiter(',')
        ->capture_default_str();
    app->add_option("--mode", options->mode, "Activation bit-width assignment")
        ->check(CLI::IsMember({"liberal", "strict"}))
        ->capture_default_str();
    app->add_option(
           "--search", options->search,
           "trace-order (NNCF's candidates) or pareto (exact front by dynamic programming)")
        ->check(CLI::IsMember({"trace-order", "pareto"}))
        ->capture_default_str();
    app->add_option("--preset", options->preset, "performance or mixed")
        ->check(CLI::IsMember({"performance", "mixed"}))
        ->capture_default_str();
    app->add_option("--rule", options->rule, "Quantizer propagation rule at branches")
        ->capture_default_str();
    app->add_option("--samples", options->samples, "Samples for the Hessian traces")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    app->add_option("--iterations", options->iterations, "Hutchinson iterations")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    app->add_option("--batch", options->batch, "Hessian batch (default min(32, N))")
        ->check(CLI::PositiveNumber);
    app->add_option("--seed", options->seed, "Seed of the Rademacher draws")->capture_default_str();
    addDatasetOptions(*app, options->dataset,
                      {.npy = "Samples from .npy files (axis 0), one per model input",
                       .images = "Samples from a folder of PNG/JPEG/BMP images",
                       .random = "N seeded standard-normal samples"});
    app->add_option("--traces-in", options->tracesIn,
                    "Weights-mode per-tensor scores (a `hessian` JSON) instead of computing them");
    app->add_option("--traces-out", options->tracesOut, "Write the computed scores (hessian JSON)");
    app->add_option("--setup-out", options->setupOut, "The chosen setup (quantize --setup-in)")
        ->required();
    app->add_option("--report", options->reportOut, "HAWQ.json");
    app->add_option("--pareto-out", options->paretoOut, "Every candidate as CSV");
    app->add_option("--bitwidth-dot", options->bitwidthDot,
                    "The graph with its quantizers coloured by bit width (NNCF's conventions)");
    app->add_option("--session", options->sessionPath,
                    "Write the chosen setup and the HAWQ section into this .qscope session "
                    "(other sections kept)");
    app->add_option("--threads", options->threads, "Kernel threads (0 = all cores)");
    return {app, [options] {
                auto result = runHawqCommand(*options);
                return result.ok() ? kExitOk : reportError(result.error());
            }};
}

} // namespace qs::cli
