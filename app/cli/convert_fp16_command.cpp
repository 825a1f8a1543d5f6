// `quantscope-cli convert-fp16 MODEL --out M16.onnx [--keep-io-types] [--block-op OP]...
//   [--no-default-block-list] [--report REPORT.json]`
// Prints what was converted, the casts inserted, clamped values and the size before and after.

#include "app/cli/command.h"
#include "core/compression/fp16_conversion.h"
#include "core/onnx/model_io.h"
#include "core/support/atomic_file.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>

namespace qs::cli {

namespace {
/// Clamped tensors named on the console; the JSON report lists all.
constexpr size_t kListedClampedTensors = 5;

struct Fp16CliOptions {
    std::string modelPath;
    std::string outPath;
    bool keepIoTypes = false;
    std::vector<std::string> blockedOps;
    bool noDefaultBlockList = false;
    std::string reportPath;
};

double mebibytes(int64_t bytes) {
    return static_cast<double>(bytes) / (1024.0 * 1024.0);
}

Result<void> runConvert(const Fp16CliOptions& options) {
    QS_ASSIGN_OR_RETURN(graph::Graph graph, onnx::importModel(options.modelPath));
    compression::Fp16Options coreOptions;
    coreOptions.keepIoTypes = options.keepIoTypes;
    coreOptions.blockedOps = options.blockedOps;
    coreOptions.useDefaultBlockList = !options.noDefaultBlockList;
    QS_ASSIGN_OR_RETURN(const compression::Fp16Report report,
                        compression::convertToFloat16(graph, coreOptions));
    QS_TRY(onnx::exportModel(graph, options.outPath));
    const auto before = static_cast<int64_t>(std::filesystem::file_size(options.modelPath));
    const auto after = static_cast<int64_t>(std::filesystem::file_size(options.outPath));
    std::cout << std::fixed << std::setprecision(2)
              << "Converted to float16: " << report.convertedInitializers << " initializers, "
              << report.convertedValues << " values; " << report.blockedNodes
              << " nodes kept in float32; " << report.castsInserted << " Cast nodes inserted\n"
              << "Weights: " << mebibytes(report.bytesBefore) << " MiB -> "
              << mebibytes(report.bytesAfter) << " MiB; model size: " << mebibytes(before)
              << " MiB -> " << mebibytes(after) << " MiB\n"
              << "Clamped to +-65504: " << report.clampedElements << " values";
    for (size_t i = 0; i < report.clampedTensors.size() && i < kListedClampedTensors; ++i) {
        std::cout << (i == 0 ? " in " : ", ") << report.clampedTensors[i];
    }
    if (report.clampedTensors.size() > kListedClampedTensors) {
        std::cout << ", ...";
    }
    std::cout << "\nFlushed to zero: " << report.flushedElements << " values\n";
    if (report.untypedValues > 0) {
        std::cout << "Warning: " << report.untypedValues
                  << " values have no inferred element type and were left unchanged\n";
    }
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
        const nlohmann::json json = {{"model", options.modelPath},
                                     {"output", options.outPath},
                                     {"keep_io_types", options.keepIoTypes},
                                     {"blocked_ops", options.blockedOps},
                                     {"converted_initializers", report.convertedInitializers},
                                     {"converted_values", report.convertedValues},
                                     {"casts_inserted", report.castsInserted},
                                     {"blocked_nodes", report.blockedNodes},
                                     {"clamped_elements", report.clampedElements},
                                     {"clamped_tensors", report.clampedTensors},
                                     {"flushed_elements", report.flushedElements},
                                     {"untyped_values", report.untypedValues},
                                     {"weight_bytes_before", report.bytesBefore},
                                     {"weight_bytes_after", report.bytesAfter},
                                     {"file_bytes_before", before},
                                     {"file_bytes_after", after}};
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
    return {app, [options] {
                const auto result = runConvert(*options);
                return result.ok() ? kExitOk : reportError(result.error());
            }};
}

} // namespace qs::cli
