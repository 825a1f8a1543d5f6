#include "app/cli/command.h"
#include "core/onnx/model_io.h"
#include "core/session/pruning_masks_section.h"

#include <filesystem>

namespace qs::cli {

namespace {
/// "--input,--calib-npy" when the command names the option its own way, else the canonical name.
/// `canonical`, and `name` as its alias when that is another flag: a request's default names are
/// words for messages ("the batch size"), which CLI11 would take for a positional argument.
std::string flags(const std::string& name, const std::string& canonical) {
    return name == canonical || !name.starts_with("--") ? canonical : name + "," + canonical;
}
} // namespace

runtime::DatasetRequest cliDatasetRequest(bool calibration) {
    runtime::DatasetRequest request =
        calibration ? runtime::calibrationRequest() : runtime::DatasetRequest{};
    request.names = {.npy = "--calib-npy",
                     .images = "--calib-images",
                     .classes = "--calib-classes",
                     .random = "--calib-random",
                     .samples = "--calib-samples",
                     .batch = "--calib-batch",
                     .labels = "--labels-npy",
                     .inputShape = "--input-shape"};
    return request;
}

void addDatasetOptions(CLI::App& app, runtime::DatasetRequest& request,
                       const DatasetOptionHelp& help) {
    const runtime::DatasetOptionNames& names = request.names;
    auto* npy = app.add_option(flags(names.npy, "--calib-npy"), request.npyFiles, help.npy)
                    ->type_name("FILE");
    auto* images =
        app.add_option(flags(names.images, "--calib-images"), request.imagesDir, help.images)
            ->type_name("DIR");
    auto* classes = app.add_option("--calib-classes", request.classesDir,
                                   "Folder of class subfolders of images; labels are the class "
                                   "indices in sorted name order")
                        ->type_name("DIR");
    auto* random =
        app.add_option(flags(names.random, "--calib-random"), request.randomSamples, help.random)
            ->type_name("N");
    npy->excludes(random);
    images->excludes(npy);
    images->excludes(random);
    classes->excludes(npy);
    classes->excludes(images);
    classes->excludes(random);
    auto* samples = app.add_option("--calib-samples", request.maxSamples, help.samples);
    if (request.maxSamples != std::numeric_limits<int64_t>::max()) {
        samples->capture_default_str();
    }
    app.add_option_function<int64_t>(
           flags(names.batch, "--calib-batch"),
           [&request](const int64_t& batch) { request.batchSize = batch; }, help.batch)
        ->type_name("B");
    app.add_option(help.seedAlias.empty() ? "--calib-seed" : "--calib-seed," + help.seedAlias,
                   request.seed, "Seed of the random samples")
        ->capture_default_str();
    app.add_option("--labels-npy", request.labelsNpy,
                   "int64 .npy of one label per sample (for accuracy metrics)")
        ->type_name("FILE");
    app.add_flag("--labels-from-folders", request.labelsFromFolders,
                 "The image folder holds one subfolder per class (ImageNet's layout; assumed "
                 "when it holds subfolders and no images): labels are the class indices in "
                 "sorted name order")
        ->needs(images);
    addInputShapeOption(app, request);
}

void addInputShapeOption(CLI::App& app, runtime::DatasetRequest& request) {
    app.add_option("--input-shape", request.inputShapes,
                   "Fix a dynamic input shape, e.g. input=1,3,224,224 (repeatable); without it "
                   "the dims a .npy or image dataset fixes come from the data")
        ->type_name("NAME=DIMS");
}

Result<graph::Graph> importModelFor(const std::string& path,
                                    const runtime::DatasetRequest& request) {
    QS_ASSIGN_OR_RETURN(const onnx::ImportOptions options, runtime::importOptions(request));
    return onnx::importModel(path, options).context("model '" + path + "'");
}

Result<std::optional<session::SessionFile>> readSessionFor(const std::string& sessionPath,
                                                           const std::string& modelPath) {
    if (!std::filesystem::exists(sessionPath)) {
        return std::optional<session::SessionFile>();
    }
    QS_ASSIGN_OR_RETURN(session::SessionFile saved, session::readSessionFile(sessionPath));
    QS_TRY(session::checkSessionModel(saved, modelPath).context("--session '" + sessionPath + "'"));
    return std::optional<session::SessionFile>(std::move(saved));
}

Result<graph::Graph> importSessionModel(const std::string& path,
                                        const runtime::DatasetRequest& request,
                                        const std::string& sessionPath) {
    QS_ASSIGN_OR_RETURN(graph::Graph model, importModelFor(path, request));
    if (sessionPath.empty() || !std::filesystem::exists(sessionPath)) {
        return model;
    }
    const auto inSession = [&sessionPath](Error error) {
        return std::move(error).context("--session '" + sessionPath + "'");
    };
    // Its read errors name the session file already.
    QS_ASSIGN_OR_RETURN(const session::SessionFile saved, session::readSessionFile(sessionPath));
    if (!session::sessionHasAppliedPruning(saved)) {
        return model;
    }
    if (auto same = session::checkSessionModel(saved, path); !same.ok()) {
        return inSession(std::move(same).error());
    }
    NullProgress progress;
    Result<graph::Graph> pruned = session::sessionGraph(std::move(model), saved, progress);
    if (!pruned.ok()) {
        return inSession(std::move(pruned).error());
    }
    return pruned;
}

} // namespace qs::cli
