// `quantscope-cli evaluate MODEL [MODEL2...] (--calib-npy X.npy... | --calib-images DIR |
//  --calib-random N) [--labels-npy Y.npy] [--calib-samples N] [--batch B] [--output NAME]
//  [--json]`: runs every model on the executor over the same samples and prints, with labels, each
//  model's top-1 (and top-5 from ten classes) accuracy, and for two or more models each one's top-1
//  agreement and output cosine similarity with the first, as a table or as JSON.

#include "app/cli/command.h"
#include "core/onnx/model_io.h"
#include "core/report/accuracy.h"
#include "core/runtime/batching.h"
#include "core/runtime/dataset_request.h"
#include "core/runtime/npy.h"
#include "core/runtime/probe_runner.h"
#include "core/runtime/processor_support.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ; // NOLINT(readability-identifier-naming): POSIX names it

namespace qs::cli {

namespace {
struct EvaluateOptions {
    std::vector<std::string> modelPaths;
    runtime::DatasetRequest dataset{.names = {.npy = "--calib-npy",
                                              .images = "--calib-images",
                                              .random = "--calib-random",
                                              .samples = "--calib-samples",
                                              .batch = "--calib-batch",
                                              .labels = "--labels-npy"}};
    int64_t batch = 0;
    std::string outputName;
    bool json = false;
    bool ort = false;
    std::string ortDir; ///< holds node_modules/onnxruntime-node; default $QS_ORT_DIR
};

/// The samples every model runs on, and their class ids when the dataset has labels.
struct EvaluationData {
    runtime::Dataset dataset;
    std::optional<std::vector<int64_t>> labels;
    int64_t samples = 0;
};

/// The one place evaluate turns its dataset options into samples and labels: the shared
/// DatasetRequest (.npy files, an image folder or random samples, labels from --labels-npy)
/// through runtime::loadDataset.
Result<EvaluationData> loadEvaluationData(const graph::Graph& model,
                                          const EvaluateOptions& options) {
    if (!options.dataset.labelsNpy.empty() && options.dataset.randomSamples > 0) {
        return Error(Errc::Usage, "--labels-npy needs a real dataset (--calib-npy or "
                                  "--calib-images), not --calib-random");
    }
    runtime::DatasetRequest request = options.dataset;
    EvaluationData data;
    QS_ASSIGN_OR_RETURN(data.dataset, runtime::loadDataset(model, request));
    data.samples = data.dataset.samples();
    if (data.dataset.labels) {
        QS_ASSIGN_OR_RETURN(data.labels,
                            report::labelsFromTensor(*data.dataset.labels)
                                .context("--labels-npy '" + options.dataset.labelsNpy + "'"));
    }
    return data;
}

/// One model's run over the dataset: the chosen output and, with labels, its accuracy.
struct ModelEvaluation {
    std::string path;
    std::string runtime = "quantscope";
    runtime::Tensor output;
    std::optional<report::Accuracy> accuracy;
    std::optional<report::OutputAgreement> agreement; ///< with the first model
};

Result<size_t> outputIndex(const graph::Graph& graph, const std::string& name) {
    const std::vector<graph::ValueId>& outputs = graph.outputs();
    if (outputs.empty()) {
        return Error(Errc::InvalidModel, "the model has no outputs");
    }
    if (name.empty()) {
        return size_t{0};
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
        if (graph.value(outputs[i]).name == name) {
            return i;
        }
    }
    return Error(Errc::Usage, "--output '" + name + "': the model has no such output");
}

/// Accuracy of `evaluation.output` when the dataset has labels.
Result<void> score(ModelEvaluation& evaluation, const EvaluateOptions& options,
                   const EvaluationData& data) {
    if (data.labels) {
        QS_ASSIGN_OR_RETURN(evaluation.accuracy,
                            report::computeAccuracy(evaluation.output, *data.labels)
                                .context("--labels-npy '" + options.dataset.labelsNpy + "'"));
    }
    return success();
}

/// run_model.mjs's exit status when onnxruntime-node cannot be loaded.
constexpr int kOrtMissing = 77;

int64_t batchFor(const EvaluateOptions& options, const graph::Graph& graph, int64_t samples) {
    if (options.batch > 0) {
        return options.batch;
    }
    const std::vector<graph::ValueId> inputs = graph.runtimeInputs();
    const int64_t fixed = inputs.empty() ? 0 : runtime::staticBatchSize(graph.value(inputs[0]));
    constexpr int64_t kDefaultBatch = 64;
    return fixed > 0 ? fixed : std::min<int64_t>(kDefaultBatch, std::max<int64_t>(samples, 1));
}

Result<ModelEvaluation> evaluateModel(const std::string& path, const EvaluateOptions& options,
                                      const EvaluationData& data) {
    QS_ASSIGN_OR_RETURN(graph::Graph graph, onnx::importModel(path));
    QS_ASSIGN_OR_RETURN(const size_t index, outputIndex(graph, options.outputName));
    const int64_t batch = batchFor(options, graph, data.samples);
    QS_ASSIGN_OR_RETURN(
        runtime::Executor executor,
        runtime::Executor::create(std::move(graph), {.releasePackedWeights = true}));
    StderrProgressBar bar;
    NullProgress quiet;
    const bool manyBatches = (data.samples + batch - 1) / batch > 1;
    runtime::Dataset dataset = data.dataset;
    dataset.batchSize = batch;
    QS_ASSIGN_OR_RETURN(std::vector<runtime::Tensor> outputs,
                        runtime::runBatched(executor, dataset,
                                            manyBatches && !options.json
                                                ? static_cast<Progress&>(bar)
                                                : static_cast<Progress&>(quiet)));
    ModelEvaluation evaluation{.path = path, .output = outputs[index]};
    QS_TRY(score(evaluation, options, data));
    return evaluation;
}

/// run_model.mjs: installed with the data files, or in the source tree this binary was built from.
Result<std::filesystem::path> ortScript() {
    for (const std::filesystem::path dir : {QS_ORT_SCRIPT_INSTALLED, QS_ORT_SCRIPT_SOURCE}) {
        if (std::filesystem::exists(dir / "run_model.mjs")) {
            return dir / "run_model.mjs";
        }
    }
    return Error(Errc::Io, std::string("--ort: run_model.mjs is neither in ") +
                               QS_ORT_SCRIPT_INSTALLED + " nor in " + QS_ORT_SCRIPT_SOURCE);
}

/// Runs `argv` (argv[0] looked up on PATH) and returns its exit status.
Result<int> runProcess(std::vector<std::string> argv) {
    std::vector<char*> pointers;
    pointers.reserve(argv.size() + 1);
    for (std::string& arg : argv) {
        pointers.push_back(arg.data());
    }
    pointers.push_back(nullptr);
    pid_t pid = 0;
    const int spawned = posix_spawnp(&pid, pointers[0], nullptr, nullptr, pointers.data(), environ);
    if (spawned != 0) {
        return Error(Errc::Io, "--ort: cannot start '" + argv[0] + "' (is node installed?)");
    }
    int status = 0;
    if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status)) {
        return Error(Errc::Io, "--ort: '" + argv[0] + "' did not exit normally");
    }
    return WEXITSTATUS(status);
}

/// A scratch folder removed when it goes out of scope.
class ScratchDir {
public:
    ScratchDir()
        : m_path(std::filesystem::temp_directory_path() /
                 ("quantscope-evaluate-" + std::to_string(getpid()))) {
        std::filesystem::create_directories(m_path);
    }

    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;

    ~ScratchDir() {
        std::error_code ignored;
        std::filesystem::remove_all(m_path, ignored);
    }

    const std::filesystem::path& path() const { return m_path; }

private:
    std::filesystem::path m_path;
};

/// --ort-dir, else $QS_ORT_DIR.
Result<std::string> ortDirectory(const EvaluateOptions& options) {
    if (!options.ortDir.empty()) {
        return options.ortDir;
    }
    const char* fromEnvironment = std::getenv("QS_ORT_DIR");
    if (fromEnvironment != nullptr && *fromEnvironment != '\0') {
        return std::string(fromEnvironment);
    }
    return Error(Errc::Usage,
                 "--ort needs ONNX Runtime for node: give --ort-dir DIR (a folder holding "
                 "node_modules/onnxruntime-node) or set QS_ORT_DIR");
}

/// The samples as float32 .npy files in `dir`, one per input, for run_model.mjs.
Result<std::vector<std::string>> writeOrtInputs(const EvaluationData& data,
                                                const std::filesystem::path& dir) {
    std::vector<std::string> files;
    files.reserve(data.dataset.inputs.size());
    for (size_t i = 0; i < data.dataset.inputs.size(); ++i) {
        if (data.dataset.inputs[i].dtype() != graph::DataType::Float) {
            return Error(Errc::Unsupported, "--ort feeds float32 inputs only");
        }
        files.push_back((dir / ("input" + std::to_string(i) + ".npy")).string());
        QS_TRY(runtime::writeNpy(data.dataset.inputs[i], files.back()));
    }
    return files;
}

/// Where one ONNX Runtime run reads and writes.
struct OrtRun {
    std::filesystem::path script;
    std::string ortDir;
    std::vector<std::string> inputFiles;
    std::string outputFile;
};

/// One model through ONNX Runtime, scored like ours.
Result<ModelEvaluation> evaluateWithOrt(const std::string& path, const OrtRun& run,
                                        const EvaluateOptions& options,
                                        const EvaluationData& data) {
    QS_ASSIGN_OR_RETURN(graph::Graph graph, onnx::importModel(path));
    QS_ASSIGN_OR_RETURN(const size_t index, outputIndex(graph, options.outputName));
    std::vector<std::string> argv = {"node",
                                     run.script.string(),
                                     "--ort-dir",
                                     run.ortDir,
                                     "--out",
                                     run.outputFile,
                                     "--output-index",
                                     std::to_string(index),
                                     "--batch",
                                     std::to_string(batchFor(options, graph, data.samples)),
                                     path};
    argv.insert(argv.end(), run.inputFiles.begin(), run.inputFiles.end());
    QS_ASSIGN_OR_RETURN(const int status, runProcess(std::move(argv)));
    if (status == kOrtMissing) {
        return Error(Errc::Io,
                     "--ort: onnxruntime-node cannot be loaded from '" + run.ortDir + "'");
    }
    if (status != 0) {
        return Error(Errc::Io, "--ort: ONNX Runtime failed on '" + path + "' (exit " +
                                   std::to_string(status) + ")");
    }
    ModelEvaluation evaluation{.path = path, .runtime = "onnxruntime"};
    QS_ASSIGN_OR_RETURN(evaluation.output, runtime::readNpy(run.outputFile));
    QS_TRY(score(evaluation, options, data));
    return evaluation;
}

/// Every model through ONNX Runtime on the same samples.
Result<std::vector<ModelEvaluation>> evaluateWithOrt(const EvaluateOptions& options,
                                                     const EvaluationData& data) {
    OrtRun run;
    QS_ASSIGN_OR_RETURN(run.ortDir, ortDirectory(options));
    QS_ASSIGN_OR_RETURN(run.script, ortScript());
    const ScratchDir scratch;
    QS_ASSIGN_OR_RETURN(run.inputFiles, writeOrtInputs(data, scratch.path()));
    run.outputFile = (scratch.path() / "output.npy").string();
    std::vector<ModelEvaluation> evaluations;
    evaluations.reserve(options.modelPaths.size());
    for (const std::string& path : options.modelPaths) {
        QS_ASSIGN_OR_RETURN(ModelEvaluation evaluation, evaluateWithOrt(path, run, options, data));
        evaluations.push_back(std::move(evaluation));
    }
    return evaluations;
}

std::string percent(double fraction) {
    std::ostringstream out;
    out << std::fixed << std::setprecision(2) << 100.0 * fraction << '%';
    return out.str();
}

std::string top1Cell(const report::Accuracy& accuracy) {
    return percent(accuracy.top1()) + " (" + std::to_string(accuracy.top1Correct) + "/" +
           std::to_string(accuracy.samples) + ")";
}

void printTable(const std::vector<ModelEvaluation>& models, const EvaluateOptions& options,
                const EvaluationData& data) {
    std::cout << "dataset: " << options.dataset.describe() << ", " << data.samples << " sample(s)";
    if (data.labels) {
        std::cout << ", labels " << options.dataset.labelsNpy;
    }
    std::cout << '\n';
    size_t width = 5;
    bool ort = false;
    for (const ModelEvaluation& model : models) {
        width = std::max(width, model.path.size());
        ort = ort || model.runtime != "quantscope";
    }
    const bool top5 = !models.empty() && models[0].accuracy && models[0].accuracy->top5Correct;
    const bool compare = models.size() > 1;
    std::cout << std::left << std::setw(static_cast<int>(width) + 2) << "model";
    if (ort) {
        std::cout << std::setw(13) << "runtime";
    }
    if (data.labels) {
        std::cout << std::setw(20) << "top-1" << (top5 ? "top-5     " : "");
    }
    if (compare) {
        std::cout << std::setw(18) << "top-1 agreement"
                  << "output cosine (min)";
    }
    std::cout << '\n';
    for (const ModelEvaluation& model : models) {
        std::cout << std::setw(static_cast<int>(width) + 2) << model.path;
        if (ort) {
            std::cout << std::setw(13) << model.runtime;
        }
        if (model.accuracy) {
            std::cout << std::setw(20) << top1Cell(*model.accuracy) << std::setw(top5 ? 10 : 0)
                      << (top5 ? percent(model.accuracy->top5().value_or(0.0)) : "");
        }
        if (compare && model.agreement) {
            std::ostringstream cosine;
            cosine << std::fixed << std::setprecision(6) << model.agreement->meanCosine << " ("
                   << model.agreement->minCosine << ")";
            std::cout << std::setw(18) << percent(model.agreement->top1Agreement) << cosine.str();
        } else if (compare) {
            std::cout << std::setw(18) << "(reference)";
        }
        std::cout << '\n';
    }
    std::cout << std::right;
}

nlohmann::json toJson(const std::vector<ModelEvaluation>& models, const EvaluateOptions& options,
                      const EvaluationData& data) {
    nlohmann::json list = nlohmann::json::array();
    for (const ModelEvaluation& model : models) {
        nlohmann::json entry = {{"path", model.path}, {"runtime", model.runtime}};
        if (model.accuracy) {
            entry["accuracy"] = report::toJson(*model.accuracy);
        }
        if (model.agreement) {
            entry["agreement_with_first"] = report::toJson(*model.agreement);
        }
        list.push_back(std::move(entry));
    }
    nlohmann::json json = {{"dataset", options.dataset.describe()},
                           {"samples", data.samples},
                           {"models", std::move(list)}};
    if (data.labels) {
        json["labels"] = options.dataset.labelsNpy;
    }
    return json;
}

/// Every model on our executor (and in ONNX Runtime with --ort), each later one compared with
/// the first.
Result<std::vector<ModelEvaluation>> evaluateAll(const EvaluateOptions& options,
                                                 const EvaluationData& data) {
    std::vector<ModelEvaluation> models;
    for (const std::string& path : options.modelPaths) {
        QS_ASSIGN_OR_RETURN(ModelEvaluation model,
                            evaluateModel(path, options, data).context("model '" + path + "'"));
        if (!models.empty()) {
            QS_ASSIGN_OR_RETURN(
                model.agreement,
                report::compareOutputs(models[0].output, model.output)
                    .context("model '" + path + "' against '" + models[0].path + "'"));
        }
        models.push_back(std::move(model));
    }
    if (!options.ort) {
        return models;
    }
    QS_ASSIGN_OR_RETURN(std::vector<ModelEvaluation> ortModels, evaluateWithOrt(options, data));
    for (ModelEvaluation& model : ortModels) {
        QS_ASSIGN_OR_RETURN(model.agreement, report::compareOutputs(models[0].output, model.output)
                                                 .context("ONNX Runtime's '" + model.path +
                                                          "' against '" + models[0].path + "'"));
        models.push_back(std::move(model));
    }
    return models;
}

Result<void> evaluate(const EvaluateOptions& options) {
    QS_TRY(runtime::checkProcessorSupport());
    const Error nothing(Errc::Usage,
                        "nothing to evaluate: give --labels-npy (or class folders) for accuracy, "
                        "or a second model to compare with");
    // Image folders may hold class subfolders, whose labels are known once they are read.
    const bool mayHaveLabels = !options.dataset.labelsNpy.empty() ||
                               !options.dataset.imagesDir.empty() ||
                               !options.dataset.classesDir.empty();
    if (!mayHaveLabels && options.modelPaths.size() < 2) {
        return nothing;
    }
    QS_ASSIGN_OR_RETURN(
        graph::Graph first,
        onnx::importModel(options.modelPaths[0]).context("model '" + options.modelPaths[0] + "'"));
    QS_ASSIGN_OR_RETURN(EvaluationData data, loadEvaluationData(first, options));
    if (!data.labels && options.modelPaths.size() < 2) {
        return nothing;
    }
    QS_ASSIGN_OR_RETURN(const std::vector<ModelEvaluation> models, evaluateAll(options, data));
    if (options.json) {
        std::cout << toJson(models, options, data).dump(2) << '\n';
    } else {
        printTable(models, options, data);
    }
    return success();
}
} // namespace

Command addEvaluateCommand(CLI::App& parent) {
    auto options = std::make_shared<EvaluateOptions>();
    CLI::App* app = parent.add_subcommand(
        "evaluate", "Top-1/top-5 accuracy of models on labelled data, and how closely they agree");
    app->add_option("MODEL", options->modelPaths,
                    "ONNX models; the second and later are compared with the first")
        ->required();
    addDatasetOptions(*app, options->dataset,
                      {.npy = "Samples as .npy (axis 0), one file per model input",
                       .images = "Folder of PNG/JPEG/BMP images (sorted by name), resized to the "
                                 "NCHW input, ImageNet mean/std",
                       .random = "N seeded standard-normal samples (agreement only)"});
    app->add_option("--batch", options->batch,
                    "Mini-batch size (default: the input's static batch, else 64)");
    app->add_option("--output", options->outputName,
                    "The output holding the class scores (default: the first)");
    app->add_flag("--json", options->json, "Print the results as JSON");
    app->add_flag("--ort", options->ort,
                  "Also run every model in ONNX Runtime (needs node and npm onnxruntime-node)");
    app->add_option("--ort-dir", options->ortDir,
                    "Folder holding node_modules/onnxruntime-node (default: $QS_ORT_DIR)");
    return {app, [options] {
                auto result = evaluate(*options);
                return result.ok() ? kExitOk : reportError(result.error());
            }};
}

} // namespace qs::cli
