// `quantscope-cli run MODEL (--input X.npy... | --images DIR | --random N) [--batch B] [--fp16]
//  [--threads T] [--input-shape NAME=DIMS] [--out Y.npy] [--out-dir DIR]`: runs the model on the
//  executor; with --fp16 it also reports each output's deviation from a float32 run.

#include "app/cli/command.h"
#include "core/onnx/model_io.h"
#include "core/runtime/batching.h"
#include "core/runtime/image_dataset.h"
#include "core/runtime/npy.h"
#include "core/runtime/parallel.h"
#include "core/runtime/processor_support.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>

namespace qs::cli {

namespace {
struct RunOptions {
    std::string modelPath;
    std::vector<std::string> inputs;
    std::string images;
    std::vector<float> mean;
    std::vector<float> std;
    int64_t random = 0;
    int64_t batch = 0;
    uint64_t seed = 0;
    bool fp16 = false;
    int threads = 0;
    std::vector<std::string> inputShapes;
    std::string out;
    std::string outDir;
};

/// A text progress bar on stderr.
class StderrProgress final : public Progress {
public:
    void report(double fraction, std::string_view what) override {
        const int filled = static_cast<int>(fraction * 30.0);
        std::cerr << "\r[" << std::string(static_cast<size_t>(filled), '#')
                  << std::string(static_cast<size_t>(30 - filled), ' ') << "] " << what << "   "
                  << std::flush;
        if (fraction >= 1.0) {
            std::cerr << '\n';
        }
    }

    bool isCancelled() const override { return false; }
};

Result<std::vector<runtime::Tensor>> loadInputs(const RunOptions& options,
                                                const runtime::Executor& executor) {
    std::vector<runtime::Tensor> inputs;
    if (!options.inputs.empty()) {
        if (options.inputs.size() != executor.inputIds().size()) {
            return Error(Errc::InvalidArgument, "the model has " +
                                                    std::to_string(executor.inputIds().size()) +
                                                    " inputs; give one --input per input");
        }
        for (const std::string& path : options.inputs) {
            QS_ASSIGN_OR_RETURN(runtime::Tensor tensor, runtime::readNpy(path));
            inputs.push_back(std::move(tensor));
        }
        return inputs;
    }
    if (!options.images.empty()) {
        if (executor.inputIds().size() != 1) {
            return Error(Errc::InvalidArgument, "--images needs a model with one input");
        }
        const graph::Value& value = executor.graph().value(executor.inputIds()[0]);
        QS_ASSIGN_OR_RETURN(runtime::Shape shape, runtime::concreteInputShape(value, 1));
        if (shape.size() != 4) {
            return Error(Errc::InvalidArgument, "--images needs an NCHW input, '" + value.name +
                                                    "' is " + runtime::shapeToString(shape));
        }
        runtime::ImageNormalization norm;
        if (options.mean.size() == 3) {
            std::copy(options.mean.begin(), options.mean.end(), norm.mean.begin());
        }
        if (options.std.size() == 3) {
            std::copy(options.std.begin(), options.std.end(), norm.std.begin());
        }
        QS_ASSIGN_OR_RETURN(
            runtime::Tensor images,
            runtime::loadImageFolder(options.images, shape[1], shape[2], shape[3], norm));
        inputs.push_back(std::move(images));
        return inputs;
    }
    if (options.random <= 0) {
        return Error(Errc::InvalidArgument, "give --input X.npy, --images DIR or --random N");
    }
    uint64_t seed = options.seed;
    for (const graph::ValueId id : executor.inputIds()) {
        const graph::Value& value = executor.graph().value(id);
        QS_ASSIGN_OR_RETURN(runtime::Shape shape,
                            runtime::concreteInputShape(value, options.random));
        if (value.dtype != graph::DataType::Float) {
            return Error(Errc::Unsupported, "--random fills float inputs only; '" + value.name +
                                                "' is " +
                                                std::string(graph::dataTypeName(value.dtype)));
        }
        inputs.push_back(runtime::randomNormal(shape, seed++));
    }
    return inputs;
}

Result<void> runModel(const RunOptions& options) {
    QS_TRY(runtime::checkProcessorSupport());
    runtime::setNumThreads(options.threads);
    onnx::ImportOptions importOptions;
    for (const std::string& text : options.inputShapes) {
        QS_ASSIGN_OR_RETURN(onnx::InputShapeOverride parsed, onnx::parseInputShapeOverride(text));
        importOptions.inputShapes.push_back(std::move(parsed));
    }
    QS_ASSIGN_OR_RETURN(graph::Graph graph, onnx::importModel(options.modelPath, importOptions)
                                                .context("model '" + options.modelPath + "'"));
    QS_ASSIGN_OR_RETURN(runtime::Executor executor,
                        runtime::Executor::create(std::move(graph), {.fp16 = options.fp16}));
    QS_ASSIGN_OR_RETURN(std::vector<runtime::Tensor> inputs, loadInputs(options, executor));
    const int64_t samples = inputs.empty() || inputs[0].rank() == 0 ? 1 : inputs[0].shape()[0];
    const int64_t batch = options.batch > 0 ? options.batch : (options.random > 0 ? 1 : samples);
    StderrProgress bar;
    runtime::RunStats stats;
    const bool manyBatches = (samples + batch - 1) / batch > 1;
    QS_ASSIGN_OR_RETURN(
        std::vector<runtime::Tensor> outputs,
        runtime::runBatched(executor, inputs, batch, manyBatches ? &bar : nullptr, &stats));
    std::cerr << "ran " << samples << " sample(s) in " << (samples + batch - 1) / batch
              << " batch(es): " << stats.seconds * 1000.0 << " ms, peak activations "
              << stats.peakActivationBytes / 1024 << " KiB\n";
    if (options.fp16) {
        // Report how far half storage moved each output from a float32 run of the same inputs.
        QS_ASSIGN_OR_RETURN(runtime::Executor reference,
                            runtime::Executor::create(executor.graph(), {}));
        QS_ASSIGN_OR_RETURN(std::vector<runtime::Tensor> exact,
                            runtime::runBatched(reference, inputs, batch));
        for (size_t o = 0; o < outputs.size(); ++o) {
            double maxAbs = 0.0;
            double maxDiff = 0.0;
            for (int64_t i = 0; i < exact[o].numElements(); ++i) {
                maxAbs = std::max(maxAbs, std::abs(exact[o].elementAsDouble(i)));
                maxDiff = std::max(
                    maxDiff, std::abs(exact[o].elementAsDouble(i) - outputs[o].elementAsDouble(i)));
            }
            std::cerr << "fp16 output '"
                      << executor.graph().value(executor.graph().outputs()[o]).name
                      << "': max |fp16 - fp32| / max |fp32| = "
                      << (maxAbs > 0 ? maxDiff / maxAbs : 0.0) << '\n';
        }
    }
    if (!options.out.empty()) {
        QS_TRY(runtime::writeNpy(outputs[0], options.out).context("--out"));
    }
    if (!options.outDir.empty()) {
        std::filesystem::create_directories(options.outDir);
        for (size_t i = 0; i < outputs.size(); ++i) {
            std::string name = executor.graph().value(executor.graph().outputs()[i]).name;
            for (char& c : name) {
                c = (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ||
                     c == '.')
                        ? c
                        : '_';
            }
            QS_TRY(runtime::writeNpy(outputs[i],
                                     std::filesystem::path(options.outDir) / (name + ".npy")));
        }
    }
    if (options.out.empty() && options.outDir.empty()) {
        const runtime::Tensor& first = outputs[0];
        std::cout << "output 0: " << runtime::shapeToString(first.shape()) << '\n';
    }
    return success();
}
} // namespace

Command addRunCommand(CLI::App& parent) {
    auto options = std::make_shared<RunOptions>();
    CLI::App* app = parent.add_subcommand("run", "Run a model on the built-in executor");
    app->add_option("MODEL", options->modelPath, "ONNX model file")->required();
    auto* input = app->add_option("--input", options->inputs,
                                  "Input .npy, samples on axis 0 (one per model input, in order)");
    auto* random =
        app->add_option("--random", options->random, "Run N seeded random-normal samples");
    auto* images = app->add_option("--images", options->images,
                                   "Folder of PNG/JPEG/BMP images, resized to the input's H x W");
    input->excludes(random);
    images->excludes(input);
    images->excludes(random);
    app->add_option("--mean", options->mean, "Per-channel mean for --images (default ImageNet)")
        ->expected(3);
    app->add_option("--std", options->std, "Per-channel std for --images (default ImageNet)")
        ->expected(3);
    app->add_option("--batch", options->batch,
                    "Mini-batch size (default: all of --input, 1 for --random)");
    app->add_option("--seed", options->seed, "Seed for --random");
    app->add_flag("--fp16", options->fp16, "Store weights and activations as float16");
    app->add_option("--threads", options->threads, "Kernel threads (0 = all cores)");
    app->add_option("--input-shape", options->inputShapes,
                    "Fix a dynamic input shape, e.g. input=1,3,224,224 (repeatable)")
        ->type_name("NAME=DIMS");
    app->add_option("--out", options->out, "Write the first output here (.npy)");
    app->add_option("--out-dir", options->outDir, "Write every output as <name>.npy here");
    return {app, [options] {
                auto result = runModel(*options);
                return result.ok() ? kExitOk : reportError(result.error());
            }};
}

} // namespace qs::cli
