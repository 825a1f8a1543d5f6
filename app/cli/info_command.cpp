// `quantscope-cli info MODEL [--json] [--input-shape NAME=DIMS]...`

#include "app/cli/command.h"
#include "core/onnx/model_io.h"
#include "core/report/model_info.h"

#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

namespace qs::cli {

namespace {
struct InfoOptions {
    std::string modelPath;
    bool json = false;
    std::vector<std::string> inputShapes;
};

int runInfo(const InfoOptions& options) {
    onnx::ImportOptions importOptions;
    for (const std::string& text : options.inputShapes) {
        auto parsed = onnx::parseInputShapeOverride(text).context("--input-shape");
        if (!parsed.ok()) {
            return reportError(parsed.error());
        }
        importOptions.inputShapes.push_back(std::move(parsed).value());
    }
    onnx::ImportNotes notes;
    auto graph = onnx::importModel(options.modelPath, importOptions, &notes);
    if (!graph.ok()) {
        return reportError(graph.error());
    }
    report::ModelInfo info = report::computeModelInfo(*graph);
    info.path = options.modelPath;
    for (const std::string& warning : notes.warnings) {
        if (warning.find("opaque") == std::string::npos) {
            info.warnings.push_back(warning);
        }
    }
    if (options.json) {
        std::cout << report::modelInfoToJson(info).dump(2) << '\n';
    } else {
        std::cout << report::formatModelInfo(info);
    }
    return kExitOk;
}
} // namespace

Command addInfoCommand(CLI::App& parent) {
    auto options = std::make_shared<InfoOptions>();
    CLI::App* app = parent.add_subcommand(
        "info", "Print opset, inputs/outputs, op counts, parameters, MACs and opaque ops");
    app->add_option("MODEL", options->modelPath, "ONNX model file")->required();
    app->add_flag("--json", options->json, "Print JSON instead of text");
    app->add_option("--input-shape", options->inputShapes,
                    "Fix a dynamic input shape, e.g. input=1,3,224,224 (repeatable)")
        ->type_name("NAME=DIMS");
    return {app, [options] { return runInfo(*options); }};
}

} // namespace qs::cli
