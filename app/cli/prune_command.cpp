// `quantscope-cli prune MODEL --target-memory 50%|BYTES [--hw cpu|gpu|npu|FILE.json] [--simd N]
//  [--no-simd-padding] [--importance lfh|l2|random] [--samples N] [--iterations K]
//  [--no-early-stop]
//  [--hessian-batch B] [--seed S] [--scores-in SCORES.json] [--lock NODE]...
//  [--keep NODE=CHANNELS]... (--calib-npy ...|--calib-images DIR|--calib-random N)
//  [--input-shape ...] [--threads T] --out PRUNED.onnx [--report PRUNING.json]
//  [--session S.qscope]`:
// SIMD structured pruning (core/pruning): the per-section table and the totals on stdout,
// PRUNING.json (core/report/pruning_report.h), the pruned model. --session makes the session of
// MODEL work on the pruned model (its pruning section applied), so `quantize`, `hawq`,
// `compress-weights` and `report` with the same --session continue on it: one pipeline, one
// session, as the GUI's Compress ▸ Continue with Pruned Model.

#include "app/cli/command.h"
#include "core/onnx/model_io.h"
#include "core/pruning/pruning_workflow.h"
#include "core/quantization/hw_config.h"
#include "core/report/hessian_report.h"
#include "core/report/pruning_report.h"
#include "core/runtime/parallel.h"
#include "core/runtime/processor_support.h"
#include "core/session/pruning_masks_section.h"
#include "core/session/session_file.h"
#include "core/support/atomic_file.h"

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>

namespace qs::cli {

namespace {

struct PruneOptions {
    std::string modelPath;
    std::string target;
    std::string hw = "cpu";
    int64_t simd = 0;
    bool noPadding = false;
    bool noEarlyStop = false;
    std::string importance = "lfh";
    int64_t samples = 32;
    int iterations = hessian::kDefaultHessianIterations;
    int64_t hessianBatch = 0;
    uint64_t seed = 0;
    std::string scoresIn;
    std::vector<std::string> lock;
    std::vector<std::string> keep;
    runtime::DatasetRequest dataset = cliDatasetRequest(false);
    int threads = 0;
    std::string out;
    std::string report;
    std::string sessionPath;
};

Error usage(const std::string& message) {
    return Error(Errc::Usage, message);
}

/// Bad data or a model that cannot do what was asked: exit 1, not a usage error.
Error badInput(const std::string& message) {
    return Error(Errc::InvalidArgument, message);
}

/// "NODE=CHANNELS".
Result<std::pair<std::string, int64_t>> parseKeep(const std::string& text) {
    const size_t eq = text.rfind('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
        return usage("--keep expects NODE=CHANNELS, got '" + text + "'");
    }
    try {
        size_t used = 0;
        const std::string number = text.substr(eq + 1);
        const int64_t kept = std::stoll(number, &used);
        if (used != number.size() || kept < 1) {
            throw std::invalid_argument(text);
        }
        return std::pair{text.substr(0, eq), kept};
    } catch (const std::exception&) {
        return usage("--keep expects NODE=CHANNELS with CHANNELS >= 1, got '" + text + "'");
    }
}

Result<pruning::PruningRequest> requestFromFlags(const PruneOptions& options) {
    if (options.target.empty()) {
        return usage("prune needs --target-memory 50% or a byte count");
    }
    pruning::PruningRequest request;
    QS_ASSIGN_OR_RETURN(request.target, pruning::parseTargetMemory(options.target));
    QS_ASSIGN_OR_RETURN(request.importance,
                        pruning::parseImportance(options.importance).context("--importance"));
    // Read before any work starts, so a bad file is the command's one line on stderr.
    QS_TRY(quantization::HWConfig::fromArgument(options.hw).context("--hw"));
    request.hw = options.hw;
    request.simd = options.simd;
    request.simdPadding = !options.noPadding;
    request.samples = options.samples;
    request.iterations = options.iterations;
    request.earlyStop = !options.noEarlyStop;
    request.hessianBatch = options.hessianBatch;
    request.seed = options.seed;
    request.lock = options.lock;
    for (const std::string& text : options.keep) {
        QS_ASSIGN_OR_RETURN(auto keep, parseKeep(text));
        request.keep.push_back(std::move(keep));
    }
    request.dataset = options.dataset;
    if (!options.scoresIn.empty()) {
        if (request.importance != pruning::ImportanceMetric::Lfh) {
            return usage("--scores-in gives LFH scores; it does not go with --importance " +
                         options.importance);
        }
        QS_ASSIGN_OR_RETURN(const std::string text, readFile(options.scoresIn));
        const nlohmann::json json = nlohmann::json::parse(text, nullptr, false);
        if (json.is_discarded()) {
            return badInput("not valid JSON").context("--scores-in '" + options.scoresIn + "'");
        }
        QS_ASSIGN_OR_RETURN(request.scores,
                            report::hessianScoresFromJson(
                                json, std::filesystem::path(options.scoresIn).parent_path())
                                .context("--scores-in '" + options.scoresIn + "'"));
    } else if (request.importance == pruning::ImportanceMetric::Lfh && request.dataset.empty()) {
        return usage("--importance lfh needs a dataset (--calib-npy, --calib-images or "
                     "--calib-random) or --scores-in");
    }
    return request;
}

/// The session --session names, for MODEL: read when it exists (saved for this model), else new
/// with --hw's quantization settings.
Result<session::SessionFile> sessionToPrune(const PruneOptions& options, std::string hash) {
    QS_ASSIGN_OR_RETURN(std::optional<session::SessionFile> saved,
                        readSessionFor(options.sessionPath, options.modelPath));
    session::SessionFile file = saved ? std::move(*saved) : session::SessionFile{};
    if (!saved) {
        file.settings.hw = options.hw;
    }
    file.modelPath = std::filesystem::absolute(options.modelPath).string();
    file.modelHash = std::move(hash);
    return file;
}

/// --session: the session now works on the pruned model. What belonged to the dense graph (the
/// quantizer choices, calibration, HAWQ, weight compression, Hessian scores) no longer applies
/// and is dropped, said on stderr; the quantization settings and the view stay.
Result<void> writePrunedSession(const PruneOptions& options, const pruning::PruningRequest& request,
                                const pruning::PruningAnalysis& analysis,
                                const pruning::PruningOutcome& outcome) {
    QS_ASSIGN_OR_RETURN(std::string hash, session::hashModelFile(options.modelPath));
    QS_ASSIGN_OR_RETURN(session::SessionFile file, sessionToPrune(options, hash));
    std::string dropped;
    if (!file.choices.empty()) {
        dropped = std::to_string(file.choices.size()) + " quantizer choices";
        file.choices.clear();
    }
    for (const auto& [key, json] : file.sections) {
        if (key != session::kPruningSection) {
            dropped += (dropped.empty() ? "" : ", ") + key;
        }
    }
    file.sections.clear();
    session::PruningMasksSection section =
        session::capturePruning(request, analysis, outcome, analysis.hessian, std::move(hash));
    section.applied = true;
    session::setPruningMasksSection(file, section);
    QS_TRY(session::writeSessionFile(options.sessionPath, file).context("--session"));
    if (!dropped.empty()) {
        std::cerr << "note: --session: the session now works on the pruned model; dropped what "
                     "belonged to the dense one ("
                  << dropped << ")\n";
    }
    std::cout << "Session: " << options.sessionPath << " (works on the pruned model)\n";
    return success();
}

/// The notes, the pruned model, PRUNING.json, the table and the session.
Result<void> writeOutputs(const PruneOptions& options, const pruning::PruningRequest& request,
                          const pruning::PruningAnalysis& analysis,
                          const pruning::PruningOutcome& outcome) {
    for (const std::string& note : analysis.notes) {
        std::cerr << "note: " << note << '\n';
    }
    if (analysis.detection.sections.empty()) {
        std::cerr << "note: the model has no pruning section; the pruned model equals the dense "
                     "one\n";
    }
    QS_TRY(onnx::exportModel(outcome.pruned, options.out).context("--out"));
    if (!options.report.empty()) {
        QS_TRY(writeFileAtomically(options.report, report::toJson(analysis, outcome).dump(1) + "\n")
                   .context("--report"));
    }
    std::cout << report::pruningText(analysis, outcome);
    if (!options.sessionPath.empty()) {
        QS_TRY(writePrunedSession(options, request, analysis, outcome));
    }
    return success();
}

Result<void> runPrune(const PruneOptions& options) {
    QS_ASSIGN_OR_RETURN(const pruning::PruningRequest request, requestFromFlags(options));
    if (!options.sessionPath.empty()) {
        // A session of another model fails before the scores are computed.
        QS_ASSIGN_OR_RETURN(const session::SessionFile early, sessionToPrune(options, {}));
    }
    QS_TRY(runtime::checkProcessorSupport());
    runtime::setNumThreads(options.threads);
    const auto start = std::chrono::steady_clock::now();
    QS_ASSIGN_OR_RETURN(const graph::Graph graph,
                        importModelFor(options.modelPath, options.dataset));
    StderrProgressBar bar;
    pruning::PruningAnalysis analysis;
    QS_ASSIGN_OR_RETURN(pruning::PruningOutcome outcome,
                        pruning::runPruning(graph, request, bar, &analysis));
    QS_TRY(pruning::scorePruning(graph, options.dataset, outcome, bar));
    if (auto accuracy = report::pruningAccuracy(outcome); !accuracy.ok()) {
        return std::move(accuracy).error().context("--labels-npy");
    }
    bar.report(1.0, "done");
    QS_TRY(writeOutputs(options, request, analysis, outcome));
    const double total =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cerr << "prune: scores " << analysis.scoringSeconds << " s, greedy "
              << outcome.greedySeconds * 1000.0 << " ms (" << outcome.greedySteps
              << " groups), total " << total << " s\n";
    return success();
}

} // namespace

Command addPruneCommand(CLI::App& parent) {
    auto options = std::make_shared<PruneOptions>();
    CLI::App* app = parent.add_subcommand(
        "prune", "SIMD structured pruning under a weight-memory target (label-free Hessian "
                 "importance, greedy SIMD groups)");
    app->add_option("MODEL", options->modelPath, "ONNX model file")->required();
    app->add_option("--target-memory", options->target,
                    "Weight memory to reach: a percentage of the dense FP32 bytes (50%) or bytes")
        ->required();
    app->add_option("--hw", options->hw, "cpu, gpu, npu or a HW config JSON (SIMD sizes)")
        ->capture_default_str();
    app->add_option("--simd", options->simd,
                    "SIMD group size for every node (default: the HW config's; 1 = plain "
                    "channel pruning)")
        ->check(CLI::PositiveNumber);
    app->add_flag("--no-simd-padding", options->noPadding,
                  "Count memory without rounding output channels up to the SIMD size");
    app->add_option("--importance", options->importance, "lfh, l2 or random")
        ->check(CLI::IsMember({"lfh", "l2", "random"}))
        ->capture_default_str();
    app->add_option("--samples", options->samples, "Samples of the LFH scores")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    app->add_option("--iterations", options->iterations, "Hutchinson iterations")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    app->add_flag("--no-early-stop", options->noEarlyStop,
                  "Run every Hutchinson iteration (default: MCT's weights-mode early stop, "
                  "relative change below 1e-3 after 10 iterations)");
    app->add_option("--hessian-batch", options->hessianBatch,
                    "Samples per Hessian sweep (default: min(32, samples))")
        ->check(CLI::PositiveNumber);
    app->add_option("--seed", options->seed, "Seed of the Rademacher draws and of random scores")
        ->capture_default_str();
    app->add_option("--scores-in", options->scoresIn,
                    "SCORES.json of `hessian --mode weights --granularity per-channel` instead "
                    "of computing the LFH scores");
    app->add_option("--lock", options->lock, "Never prune this entry node (repeatable)");
    app->add_option("--keep", options->keep,
                    "Keep exactly CHANNELS channels of this entry node (repeatable)")
        ->type_name("NODE=CHANNELS");
    addDatasetOptions(*app, options->dataset,
                      {.npy = "LFH samples from .npy files (axis 0), one per model input",
                       .images = "LFH samples from a folder of images (resized, ImageNet "
                                 "mean/std)",
                       .random = "N seeded standard-normal LFH samples"});
    app->add_option("--threads", options->threads, "Kernel threads (0 = all cores)");
    app->add_option("--out", options->out, "The pruned ONNX model")->required();
    app->add_option("--report", options->report, "PRUNING.json");
    app->add_option("--session", options->sessionPath,
                    "Make this .qscope session (created, or updated when saved for MODEL) work on "
                    "the pruned model: quantize, hawq, compress-weights and report with the same "
                    "--session continue on it");
    return {app, [options] {
                auto result = runPrune(*options);
                return result.ok() ? kExitOk : reportError(result.error());
            }};
}

} // namespace qs::cli
