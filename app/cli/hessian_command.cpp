// `quantscope-cli hessian MODEL --mode activation|weights --granularity per-tensor|per-channel|
//  per-element [--op-type OP]... [--target NODE]... [--output VALUE]... --samples N [--batch B]
//  [--iterations K] [--tolerance T] [--seed S] (--calib-npy X.npy... | --calib-images DIR |
//  --calib-random N) [--input-shape NAME=DIMS]... [--threads T] [--sample-range A:B]
//  --out SCORES.json [--npy-dir DIR]`
// and `quantscope-cli hessian --merge S1.json S2.json ... --out ALL.json [--npy-dir DIR]`:
// label-free Hessian scores of many target nodes at once (core/hessian), a progress bar on
// stderr, a table of the targets sorted by score, SCORES.json (core/report/hessian_report.h).

#include "app/cli/command.h"
#include "core/hessian/hessian_service.h"
#include "core/onnx/model_io.h"
#include "core/report/hessian_report.h"
#include "core/runtime/dataset_request.h"
#include "core/runtime/npy.h"
#include "core/runtime/parallel.h"
#include "core/runtime/processor_support.h"
#include "core/support/atomic_file.h"

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <numeric>

namespace qs::cli {

namespace {

struct HessianOptions {
    std::string modelPath;
    std::string mode;
    std::string granularity;
    std::vector<std::string> opTypes;
    std::vector<std::string> targets;
    std::vector<std::string> outputs;
    int64_t samples = 0;
    int64_t batch = 0;
    int iterations = hessian::kDefaultHessianIterations;
    double tolerance = 0.0;
    uint64_t seed = 0;
    runtime::DatasetRequest dataset{.names = {.npy = "--calib-npy",
                                              .images = "--calib-images",
                                              .random = "--calib-random",
                                              .samples = "--samples",
                                              .batch = "--calib-batch"}};
    int threads = 0;
    std::string sampleRange;
    std::vector<std::string> merge;
    std::string out;
    std::string npyDir;
};

Error usage(const std::string& message) {
    return Error(Errc::Usage, message);
}

/// Bad data or a model that cannot do what was asked: exit 1, not a usage error.
Error badInput(const std::string& message) {
    return Error(Errc::InvalidArgument, message);
}

/// "A:B" with 0 <= A < B.
Result<std::pair<int64_t, int64_t>> parseSampleRange(const std::string& text) {
    const size_t colon = text.find(':');
    try {
        if (colon == std::string::npos) {
            throw std::invalid_argument(text);
        }
        size_t used = 0;
        const int64_t a = std::stoll(text.substr(0, colon), &used);
        const std::string rest = text.substr(colon + 1);
        size_t usedB = 0;
        const int64_t b = std::stoll(rest, &usedB);
        if (used != colon || usedB != rest.size() || a < 0 || b <= a) {
            throw std::invalid_argument(text);
        }
        return std::pair{a, b};
    } catch (const std::exception&) {
        return usage("--sample-range expects A:B with 0 <= A < B, got '" + text + "'");
    }
}

/// A node name made safe as a file name.
std::string fileNameFor(std::string name) {
    for (char& c : name) {
        const bool safe =
            std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.';
        c = safe ? c : '_';
    }
    return name;
}

/// SCORES.json, and per-target .npy files under --npy-dir (per-element scores).
Result<void> writeScores(const HessianOptions& options, const hessian::HessianScores& scores) {
    std::map<std::string, std::string> npyFiles;
    if (!options.npyDir.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(options.npyDir, ec);
        if (ec) {
            return Error(Errc::Io, "cannot create '" + options.npyDir + "': " + ec.message());
        }
        const std::filesystem::path base = std::filesystem::absolute(options.out).parent_path();
        for (const hessian::HessianTargetScores& target : scores.targets) {
            const std::filesystem::path file =
                std::filesystem::path(options.npyDir) / (fileNameFor(target.node) + ".npy");
            QS_TRY(runtime::writeNpy(report::perSampleTensor(target), file).context("--npy-dir"));
            npyFiles[target.node] =
                std::filesystem::absolute(file).lexically_relative(base).generic_string();
        }
    }
    return writeFileAtomically(options.out, report::toJson(scores, npyFiles).dump(1) + "\n")
        .context("--out");
}

/// The targets sorted by score (per-tensor: the mean; otherwise the mean's sum, the per-tensor
/// equivalent), on stdout.
void printTable(const hessian::HessianScores& scores) {
    std::vector<std::pair<double, const hessian::HessianTargetScores*>> rows;
    for (const hessian::HessianTargetScores& target : scores.targets) {
        const std::vector<double> mean = target.mean();
        rows.emplace_back(std::accumulate(mean.begin(), mean.end(), 0.0), &target);
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    size_t width = 4;
    for (const auto& row : rows) {
        width = std::max(width, row.second->node.size());
    }
    std::cout << std::left << std::setw(static_cast<int>(width)) << "node"
              << "  " << std::setw(14) << "score"
              << "  numel\n";
    for (const auto& [score, target] : rows) {
        std::cout << std::left << std::setw(static_cast<int>(width)) << target->node << "  "
                  << std::setw(14) << std::setprecision(6) << score << "  " << target->numel()
                  << '\n';
    }
}

Result<void> runMerge(const HessianOptions& options) {
    std::vector<hessian::HessianScores> shards;
    for (const std::string& path : options.merge) {
        QS_ASSIGN_OR_RETURN(const std::string text, readFile(path));
        nlohmann::json json = nlohmann::json::parse(text, nullptr, false);
        if (json.is_discarded()) {
            return Error(Errc::InvalidArgument, "not valid JSON").context("--merge '" + path + "'");
        }
        QS_ASSIGN_OR_RETURN(
            hessian::HessianScores shard,
            report::hessianScoresFromJson(json, std::filesystem::path(path).parent_path())
                .context("--merge '" + path + "'"));
        shards.push_back(std::move(shard));
    }
    QS_ASSIGN_OR_RETURN(hessian::HessianScores merged,
                        hessian::mergeHessianShards(shards).context("--merge"));
    QS_TRY(writeScores(options, merged));
    std::cerr << "merged " << shards.size() << " shard(s): " << merged.sampleIndices.size()
              << " samples, " << merged.targets.size() << " targets\n";
    printTable(merged);
    return success();
}

/// --target, else every node of --op-type (default: the service's Conv/ConvTranspose/Gemm/
/// MatMul choice).
Result<std::vector<std::string>> chooseTargets(const HessianOptions& options,
                                               const graph::Graph& graph, hessian::HessianMode mode,
                                               std::vector<std::string>& notes) {
    if (!options.targets.empty()) {
        return options.targets;
    }
    QS_ASSIGN_OR_RETURN(hessian::HessianOutputs outputs,
                        hessian::resolveOutputs(graph, options.outputs));
    if (options.opTypes.empty()) {
        std::vector<std::string> names = hessian::defaultTargetNodes(graph, mode, outputs, notes);
        if (names.empty()) {
            return badInput("the model has no Conv, ConvTranspose, Gemm or MatMul node to score");
        }
        return names;
    }
    std::vector<std::string> names;
    QS_ASSIGN_OR_RETURN(const std::vector<graph::NodeId> order, graph.topologicalOrder());
    for (const graph::NodeId id : order) {
        const graph::Node& node = graph.node(id);
        if (std::find(options.opTypes.begin(), options.opTypes.end(), node.opType) ==
            options.opTypes.end()) {
            continue;
        }
        if (mode == hessian::HessianMode::Activation && !node.outputs.empty() &&
            std::find(outputs.values.begin(), outputs.values.end(), node.outputs[0]) !=
                outputs.values.end()) {
            notes.push_back("node '" + node.name +
                            "' is left out: its output is a differentiated "
                            "output");
            continue;
        }
        names.push_back(node.name);
    }
    if (names.empty()) {
        return badInput("no node of the --op-type types to score");
    }
    return names;
}

/// MODEL with the --input-shape overrides.
Result<graph::Graph> importModel(const HessianOptions& options) {
    onnx::ImportOptions importOptions;
    for (const std::string& text : options.dataset.inputShapes) {
        QS_ASSIGN_OR_RETURN(onnx::InputShapeOverride parsed,
                            onnx::parseInputShapeOverride(text).context("--input-shape"));
        importOptions.inputShapes.push_back(std::move(parsed));
    }
    return onnx::importModel(options.modelPath, importOptions)
        .context("model '" + options.modelPath + "'");
}

/// --batch, else the input's static batch, else min(32, samples); a static batch must be used.
Result<int64_t> hessianBatch(const HessianOptions& options, const graph::Graph& graph,
                             int64_t samples) {
    const std::vector<graph::ValueId> inputs = graph.runtimeInputs();
    const int64_t fixed = inputs.empty() ? 0 : runtime::staticBatchSize(graph.value(inputs[0]));
    const int64_t batch =
        options.batch > 0 ? options.batch
                          : (fixed > 0 ? fixed : std::min(hessian::kDefaultHessianBatch, samples));
    if (fixed > 0 && batch != fixed) {
        return usage("the model's input '" + graph.value(inputs[0]).name +
                     "' has a static batch of " + std::to_string(fixed) + ": use --batch " +
                     std::to_string(fixed) + " (or --input-shape to make it dynamic)");
    }
    return batch;
}

/// The request from the flags (everything but the targets and the batch, which need the model).
Result<hessian::HessianScoresRequest> requestFromFlags(const HessianOptions& options) {
    if (options.modelPath.empty()) {
        return usage("hessian needs MODEL (or --merge)");
    }
    if (options.mode.empty() || options.granularity.empty()) {
        return usage("hessian needs --mode and --granularity");
    }
    QS_ASSIGN_OR_RETURN(const hessian::HessianMode mode,
                        hessian::parseMode(options.mode).context("--mode"));
    QS_ASSIGN_OR_RETURN(const hessian::HessianScoresGranularity granularity,
                        hessian::parseGranularity(options.granularity).context("--granularity"));
    if (options.dataset.empty()) {
        return usage("hessian needs a dataset: --calib-npy, --calib-images or --calib-random");
    }
    if (granularity == hessian::HessianScoresGranularity::PerElement && options.npyDir.empty()) {
        std::cerr << "note: per-element scores are inlined in --out; --npy-dir writes them as "
                     ".npy files instead\n";
    }
    hessian::HessianScoresRequest request;
    request.mode = mode;
    request.granularity = granularity;
    request.samples = options.samples;
    if (!options.sampleRange.empty()) {
        QS_ASSIGN_OR_RETURN(const auto range, parseSampleRange(options.sampleRange));
        if (options.samples > 0 && range.second > options.samples) {
            return usage("--sample-range " + options.sampleRange + " reaches past --samples " +
                         std::to_string(options.samples));
        }
        request.firstSample = range.first;
        request.samples = range.second - range.first;
    }
    if (request.samples <= 0) {
        return usage("hessian needs --samples N (N > 0) or --sample-range A:B");
    }
    request.iterations = options.iterations;
    request.earlyStop = options.tolerance > 0.0;
    request.tolerance = request.earlyStop ? options.tolerance : hessian::kDefaultHessianTolerance;
    request.outputs = options.outputs;
    return request;
}

Result<void> runHessian(const HessianOptions& options) {
    if (!options.merge.empty()) {
        return runMerge(options);
    }
    QS_ASSIGN_OR_RETURN(hessian::HessianScoresRequest request, requestFromFlags(options));
    const hessian::HessianMode mode = request.mode;
    QS_TRY(runtime::checkProcessorSupport());
    runtime::setNumThreads(options.threads);
    QS_ASSIGN_OR_RETURN(graph::Graph graph, importModel(options));
    std::vector<std::string> notes;
    if (!options.targets.empty() || !options.opTypes.empty()) {
        // Without either the service picks its defaults (and drops unsuitable ones).
        QS_ASSIGN_OR_RETURN(request.targetNodes, chooseTargets(options, graph, mode, notes));
    }
    QS_ASSIGN_OR_RETURN(request.batch, hessianBatch(options, graph, request.samples));
    runtime::DatasetRequest source = options.dataset;
    if (source.kind() != runtime::DatasetKind::Random) {
        source.maxSamples = request.firstSample + request.samples;
    }
    QS_ASSIGN_OR_RETURN(runtime::Dataset data,
                        runtime::loadDataset(graph, source).context("dataset"));
    QS_ASSIGN_OR_RETURN(runtime::Executor executor, runtime::Executor::create(std::move(graph)));
    hessian::TensorBatchSource samples(std::move(data.inputs), request.batch);
    hessian::HessianService service(executor, samples, options.seed);
    StderrProgressBar bar;
    QS_ASSIGN_OR_RETURN(hessian::HessianScores scores, service.fetch(request, bar));
    bar.report(1.0, "done");
    for (const std::string& note : notes) {
        scores.notes.push_back(note);
    }
    for (const std::string& note : scores.notes) {
        std::cerr << "note: " << note << '\n';
    }
    std::cerr << "hessian: " << scores.targets.size() << " targets, " << scores.sampleIndices.size()
              << " samples (" << request.firstSample << ".."
              << request.firstSample + request.samples - 1 << "), batch " << request.batch << ", "
              << service.stats().sweeps << " reverse sweeps\n";
    QS_TRY(writeScores(options, scores));
    printTable(scores);
    return success();
}

} // namespace

Command addHessianCommand(CLI::App& parent) {
    auto options = std::make_shared<HessianOptions>();
    CLI::App* app = parent.add_subcommand(
        "hessian", "Label-free Hessian scores (Hutchinson) of many nodes at once; or --merge "
                   "shards of a run");
    app->add_option("MODEL", options->modelPath, "ONNX model file");
    app->add_option("--mode", options->mode,
                    "activation (w.r.t. each target's output) or weights (its weight initializer)")
        ->check(CLI::IsMember({"activation", "weights"}));
    app->add_option("--granularity", options->granularity,
                    "per-tensor, per-channel (sums to per-tensor) or per-element")
        ->check(CLI::IsMember({"per-tensor", "per-channel", "per-element", "per_tensor",
                               "per_output_channel", "per_element"}));
    app->add_option("--op-type", options->opTypes,
                    "Score every node of this op type (repeatable; default Conv, ConvTranspose, "
                    "Gemm, MatMul)");
    app->add_option("--target", options->targets, "Score this node (repeatable)");
    app->add_option("--output", options->outputs,
                    "Differentiate this value as Y (repeatable; default every graph output)");
    app->add_option("--samples", options->samples, "Number of samples N")
        ->check(CLI::PositiveNumber);
    app->add_option("--batch", options->batch, "Hessian batch size (default min(32, N))")
        ->check(CLI::PositiveNumber);
    app->add_option("--iterations", options->iterations, "Hutchinson iterations")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    app->add_option("--tolerance", options->tolerance,
                    "Early stop: after 10 iterations stop a batch once the largest relative "
                    "change of a target's mean score is below T (default: off)")
        ->check(CLI::PositiveNumber);
    app->add_option("--seed", options->seed, "Seed of the Rademacher draws")->capture_default_str();
    addDatasetOptions(*app, options->dataset,
                      {.npy = "Samples from .npy files (axis 0), one per model input",
                       .images = "Samples from a folder of PNG/JPEG/BMP images (resized, "
                                 "ImageNet mean/std)",
                       .random = "N seeded standard-normal samples"});
    app->add_option("--threads", options->threads, "Kernel threads (0 = all cores)");
    app->add_option("--sample-range", options->sampleRange,
                    "Compute samples A..B-1 only (a shard; join shards with --merge)")
        ->type_name("A:B");
    app->add_option("--merge", options->merge,
                    "Join SCORES.json shards of disjoint sample ranges into --out")
        ->expected(1, -1);
    app->add_option("--out", options->out, "SCORES.json")->required();
    app->add_option("--npy-dir", options->npyDir,
                    "Write each target's per-sample scores as <node>.npy [N, ...] here instead "
                    "of inlining them (for per-element scores)");
    return {app, [options] {
                auto result = runHessian(*options);
                return result.ok() ? kExitOk : reportError(result.error());
            }};
}

} // namespace qs::cli
