// `quantscope-cli run MODEL (--input X.npy... | --images DIR | --random N) [--batch B] [--fp16]
//  [--threads T] [--input-shape NAME=DIMS] [--passes P] [--verbose] [--out Y.npy] [--out-dir DIR]`:
//  runs the model on the executor, after the graph passes P ("inference" or a comma-separated
//  list); with --fp16 it also reports each output's deviation from a float32 run, with --verbose
//  each pass's name, time and changes and the time per op type.

#include "app/cli/command.h"
#include "core/onnx/model_io.h"
#include "core/pass/pass.h"
#include "core/report/accuracy.h"
#include "core/runtime/dataset_request.h"
#include "core/runtime/npy.h"
#include "core/runtime/parallel.h"
#include "core/runtime/probe_runner.h"
#include "core/runtime/processor_support.h"
#include "core/support/atomic_file.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace qs::cli {

namespace {
runtime::DatasetRequest runDatasetRequest() {
    runtime::DatasetRequest request = cliDatasetRequest(false);
    request.names.npy = "--input";
    request.names.images = "--images";
    request.names.random = "--random";
    request.names.batch = "--batch";
    return request;
}

struct RunOptions {
    std::string modelPath;
    /// The dataset option group; errors name run's own --input / --images / --random / --batch.
    runtime::DatasetRequest dataset = runDatasetRequest();
    std::vector<float> mean;
    std::vector<float> std;
    bool fp16 = false;
    int threads = 0;
    std::string passes;
    bool verbose = false;
    std::string out;
    std::string outDir;
};

/// The dataset with the --mean / --std normalisation for --images.
runtime::DatasetRequest datasetRequest(const RunOptions& options) {
    runtime::DatasetRequest source = options.dataset;
    if (options.mean.size() == 3) {
        std::copy(options.mean.begin(), options.mean.end(), source.normalization.mean.begin());
    }
    if (options.std.size() == 3) {
        std::copy(options.std.begin(), options.std.end(), source.normalization.std.begin());
    }
    return source;
}

/// Imports the model with the --input-shape overrides and runs --passes on it.
Result<graph::Graph> loadGraph(const RunOptions& options) {
    QS_ASSIGN_OR_RETURN(graph::Graph graph, importModelFor(options.modelPath, options.dataset));
    if (options.passes.empty()) {
        return graph;
    }
    const std::string_view pipeline =
        options.passes == "inference" ? pass::kInferencePipeline : std::string_view(options.passes);
    pass::PassContext context;
    QS_TRY(pass::runPipeline(graph, pipeline, context).context("--passes"));
    if (options.verbose) {
        for (const pass::PassTiming& timing : context.timings) {
            std::cerr << "pass " << timing.name << ": " << timing.seconds * 1000.0 << " ms"
                      << (timing.changed ? "" : " (no change)") << '\n';
        }
        for (const std::string& line : context.log) {
            std::cerr << "  " << line << '\n';
        }
    }
    return graph;
}

/// Reports how far half storage moved each output from a float32 run of the same inputs.
Result<void> reportFp16Deviation(const runtime::Executor& executor, const runtime::Dataset& dataset,
                                 const std::vector<runtime::Tensor>& outputs) {
    QS_ASSIGN_OR_RETURN(runtime::Executor reference,
                        runtime::Executor::create(executor.graph(), {}));
    NullProgress quiet;
    QS_ASSIGN_OR_RETURN(std::vector<runtime::Tensor> exact,
                        runtime::runBatched(reference, dataset, quiet));
    for (size_t o = 0; o < outputs.size(); ++o) {
        double maxAbs = 0.0;
        double maxDiff = 0.0;
        for (int64_t i = 0; i < exact[o].numElements(); ++i) {
            maxAbs = std::max(maxAbs, std::abs(exact[o].elementAsDouble(i)));
            maxDiff = std::max(
                maxDiff, std::abs(exact[o].elementAsDouble(i) - outputs[o].elementAsDouble(i)));
        }
        std::cerr << "fp16 output '" << executor.graph().value(executor.graph().outputs()[o]).name
                  << "': max |fp16 - fp32| / max |fp32| = " << (maxAbs > 0 ? maxDiff / maxAbs : 0.0)
                  << '\n';
    }
    return success();
}

/// With labels: the top-1 (and top-5) accuracy of the first output.
Result<void> printAccuracy(const runtime::Dataset& dataset,
                           const std::vector<runtime::Tensor>& outputs) {
    if (!dataset.labels || outputs.empty()) {
        return success();
    }
    QS_ASSIGN_OR_RETURN(const std::vector<int64_t> labels,
                        report::labelsFromTensor(*dataset.labels).context("--labels-npy"));
    QS_ASSIGN_OR_RETURN(const report::Accuracy accuracy,
                        report::computeAccuracy(outputs[0], labels).context("--labels-npy"));
    std::cout << std::fixed << std::setprecision(2) << "Top-1 accuracy: " << 100.0 * accuracy.top1()
              << " % (" << accuracy.top1Correct << "/" << accuracy.samples << ")";
    if (accuracy.top5()) {
        std::cout << ", top-5 " << 100.0 * *accuracy.top5() << " %";
    }
    std::cout << std::defaultfloat << '\n';
    return success();
}

/// An output name made safe as a file name.
std::string fileNameFor(std::string name) {
    for (char& c : name) {
        const bool safe =
            std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.';
        c = safe ? c : '_';
    }
    return name;
}

Result<void> writeOutputs(const RunOptions& options, const runtime::Executor& executor,
                          const std::vector<runtime::Tensor>& outputs) {
    if (!options.out.empty()) {
        QS_TRY(runtime::writeNpy(outputs[0], options.out).context("--out"));
    }
    if (!options.outDir.empty()) {
        QS_TRY(ensureFolder(options.outDir).context("--out-dir"));
        for (size_t i = 0; i < outputs.size(); ++i) {
            const std::string name = executor.graph().value(executor.graph().outputs()[i]).name;
            QS_TRY(runtime::writeNpy(outputs[i], std::filesystem::path(options.outDir) /
                                                     (fileNameFor(name) + ".npy")));
        }
    }
    if (options.out.empty() && options.outDir.empty()) {
        std::cout << "output 0: " << runtime::shapeToString(outputs[0].shape()) << '\n';
    }
    return success();
}

/// Where the outputs go, checked before the run rather than after it.
Result<void> checkDestinations(const RunOptions& options) {
    if (!options.out.empty()) {
        QS_TRY(checkWritableTarget(options.out).context("--out"));
    }
    if (!options.outDir.empty()) {
        QS_TRY(ensureFolder(options.outDir).context("--out-dir"));
        QS_TRY(checkWritableTarget(std::filesystem::path(options.outDir) / "output.npy")
                   .context("--out-dir"));
    }
    return success();
}

/// The nodes that took longest (a fused chain under its first node's name), with the op types
/// they ran: where a model spends its time, which the per-op-type totals spread over dozens of
/// nodes.
void printSlowestNodes(const graph::Graph& graph, const runtime::RunStats& stats) {
    constexpr size_t kShown = 10;
    std::vector<std::pair<double, std::string>> nodes;
    for (const auto& [name, seconds] : stats.secondsByNode) {
        nodes.emplace_back(seconds, name);
    }
    std::sort(nodes.begin(), nodes.end(), std::greater<>());
    nodes.resize(std::min(nodes.size(), kShown));
    if (nodes.empty()) {
        return;
    }
    std::map<std::string, std::string> opTypes;
    for (const graph::NodeId id : graph.nodeIds()) {
        opTypes[graph.node(id).name] = graph.node(id).opType;
    }
    for (const auto& [name, opType] : stats.opTypeByNode) {
        opTypes[name] = opType;
    }
    std::cerr << "slowest nodes:\n";
    for (const auto& [seconds, name] : nodes) {
        const auto type = opTypes.find(name);
        std::cerr << "  " << (name.empty() ? std::string("(unnamed)") : name) << " ("
                  << (type != opTypes.end() ? type->second : std::string("?"))
                  << "): " << seconds * 1000.0 << " ms\n";
    }
}

Result<void> runModel(const RunOptions& options) {
    QS_TRY(runtime::checkProcessorSupport());
    QS_TRY(checkDestinations(options));
    runtime::setNumThreads(options.threads);
    QS_ASSIGN_OR_RETURN(graph::Graph graph, loadGraph(options));
    QS_ASSIGN_OR_RETURN(
        runtime::Executor executor,
        runtime::Executor::create(std::move(graph),
                                  {.fp16 = options.fp16, .releasePackedWeights = true}));
    // One pass over the data: .npy and random batches are read (drawn) as they run, and outputs
    // are kept only for what needs their values.
    runtime::DatasetRequest request = datasetRequest(options);
    request.readByBatch = true;
    QS_ASSIGN_OR_RETURN(const runtime::Dataset dataset,
                        runtime::loadDataset(executor.graph(), request));
    const bool shapesOnly =
        options.out.empty() && options.outDir.empty() && !options.fp16 && !dataset.labels;
    const int64_t batches = runtime::BatchStream(dataset).batchCount();
    StderrProgressBar bar;
    NullProgress quiet;
    runtime::RunStats stats;
    stats.profile = options.verbose;
    QS_ASSIGN_OR_RETURN(std::vector<runtime::Tensor> outputs,
                        runtime::runBatched(executor, dataset,
                                            batches > 1 ? static_cast<Progress&>(bar) : quiet,
                                            &stats, shapesOnly));
    std::cerr << "ran " << dataset.samples() << " sample(s) in " << batches
              << " batch(es): " << stats.seconds * 1000.0 << " ms, peak activations "
              << stats.peakActivationBytes / 1024 << " KiB\n";
    for (const auto& [opType, seconds] : stats.secondsByOpType) {
        std::cerr << "  " << opType << ": " << seconds * 1000.0 << " ms\n";
    }
    if (options.verbose && stats.reusedShapeSteps > 0) {
        std::cerr << "  shape arithmetic kept from an earlier batch: " << stats.reusedShapeSteps
                  << " step runs\n";
    }
    printSlowestNodes(executor.graph(), stats);
    if (options.fp16) {
        QS_TRY(reportFp16Deviation(executor, dataset, outputs));
    }
    QS_TRY(printAccuracy(dataset, outputs));
    return writeOutputs(options, executor, outputs);
}
} // namespace

Command addRunCommand(CLI::App& parent) {
    auto options = std::make_shared<RunOptions>();
    CLI::App* app = parent.add_subcommand("run", "Run a model on the built-in executor");
    app->add_option("MODEL", options->modelPath, "ONNX model file")->required();
    addDatasetOptions(*app, options->dataset,
                      {.npy = "Input .npy, samples on axis 0 (one per model input, in order)",
                       .images = "Folder of PNG/JPEG/BMP images, resized to the input's H x W",
                       .random = "Run N seeded random-normal samples",
                       .seedAlias = "--seed"});
    app->add_option("--mean", options->mean, "Per-channel mean for --images (default ImageNet)")
        ->expected(3);
    app->add_option("--std", options->std, "Per-channel std for --images (default ImageNet)")
        ->expected(3);
    app->add_flag("--fp16", options->fp16, "Store weights and activations as float16");
    app->add_option("--threads", options->threads, "Kernel threads (0 = all cores)");
    app->add_option("--passes", options->passes,
                    "Graph passes before running: 'inference' (" +
                        std::string(pass::kInferencePipeline) + ") or a comma-separated list");
    app->add_flag("--verbose", options->verbose,
                  "Print each pass's name, time and changes, the time per op type and the "
                  "slowest nodes");
    app->add_option("--out", options->out, "Write the first output here (.npy)");
    app->add_option("--out-dir", options->outDir, "Write every output as <name>.npy here");
    return {app, [options] {
                auto result = runModel(*options);
                return result.ok() ? kExitOk : reportError(result.error());
            }};
}

} // namespace qs::cli
