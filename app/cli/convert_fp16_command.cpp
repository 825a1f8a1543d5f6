// `quantscope-cli convert-fp16 MODEL --out M16.onnx [--keep-io-types] [--block-op OP]...
//   [--no-default-block-list] [--report REPORT.json]`
// Prints what was converted, the casts inserted, clamped values and the size before and after.

#include "app/cli/command.h"
#include "core/compression/fp16_conversion.h"
#include "core/onnx/model_io.h"
#include "core/report/compression_report.h"
#include "core/support/atomic_file.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>

namespace qs::cli {

namespace {
struct Fp16CliOptions {
    std::string modelPath;
    std::string outPath;
    bool keepIoTypes = false;
    std::vector<std::string> blockedOps;
    bool noDefaultBlockList = false;
    std::string reportPath;
    runtime::DatasetRequest shapes = cliDatasetRequest(false); ///< --input-shape only
};

Result<void> runConvert(const Fp16CliOptions& options) {
    QS_ASSIGN_OR_RETURN(graph::Graph graph, importModelFor(options.modelPath, options.shapes));
    compression::Fp16Options coreOptions;
    coreOptions.keepIoTypes = options.keepIoTypes;
    coreOptions.blockedOps = options.blockedOps;
    coreOptions.useDefaultBlockList = !options.noDefaultBlockList;
    QS_ASSIGN_OR_RETURN(const compression::Fp16Report report,
                        compression::convertToFloat16(graph, coreOptions));
    QS_TRY(onnx::exportModel(graph, options.outPath));
    const report::FileSizes files{
        .before = static_cast<int64_t>(std::filesystem::file_size(options.modelPath)),
        .after = static_cast<int64_t>(std::filesystem::file_size(options.outPath))};
    std::cout << report::fp16Text(report, files);
    if (graph.opsetVersion() <= onnx::kCheckerMaxOpset) {
        const auto checked = onnx::checkModel(graph);
        std::cout << "onnx::checker: " << (checked.ok() ? "passed" : checked.error().toString())
                  << '\n';
    } else {
        std::cout << "onnx::checker: skipped (ONNX 1.12 does not know opset "
                  << graph.opsetVersion() << ")\n";
    }
    std::cout << "Output error vs float32: run both models in ONNX Runtime "
                 "(tests/e2e/ort/run_compare.mjs); the executor is not in this build\n";
    if (!options.reportPath.empty()) {
        nlohmann::json json = {{"model", options.modelPath},
                               {"output", options.outPath},
                               {"keep_io_types", options.keepIoTypes},
                               {"blocked_ops", options.blockedOps}};
        json.update(report::toJson(report, files));
        QS_TRY(writeFileAtomically(options.reportPath, json.dump(2) + "\n"));
    }
    return success();
}
} // namespace

Command addConvertFp16Command(CLI::App& parent) {
    auto options = std::make_shared<Fp16CliOptions>();
    CLI::App* app = parent.add_subcommand(
        "convert-fp16", "Convert weights and computation to float16, with Cast nodes at the "
                        "boundaries kept in float32");
    app->add_option("MODEL", options->modelPath, "ONNX model file")->required();
    app->add_option("--out", options->outPath, "Float16 ONNX file to write")->required();
    app->add_flag("--keep-io-types", options->keepIoTypes,
                  "Keep graph inputs and outputs in float32");
    app->add_option("--block-op", options->blockedOps, "Op type to keep in float32 (repeatable)")
        ->type_name("OP");
    app->add_flag("--no-default-block-list", options->noDefaultBlockList,
                  "Convert ops that are kept in float32 by default (Range, ConstantOfShape, "
                  "random generators, Q/DQ, ...)");
    app->add_option("--report", options->reportPath, "Write the conversion report as JSON");
    addInputShapeOption(*app, options->shapes);
    return {app, [options] {
                const auto result = runConvert(*options);
                return result.ok() ? kExitOk : reportError(result.error());
            }};
}

} // namespace qs::cli
