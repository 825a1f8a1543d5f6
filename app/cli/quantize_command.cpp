// `quantscope-cli quantize MODEL --hw cpu|gpu|npu|FILE.json [--preset performance|mixed]
//  [--rule RULE] [--ignore REGEX]... [--quantize-outputs] [--set NODE[:PORT]=BITS]...
//  [--setup-in SETUP.json] [--setup-out SETUP.json] [--proposal-out PROPOSAL.json]
//  [--dot-out FINAL.dot] [(--calib-images DIR | --calib-npy FILE... | --calib-random N)
//  [--calib-samples N] [--calib-batch B] [--range-estimator E] [--report REPORT.json]
//  [--encodings-out ENCODINGS.json] [--out MODEL.qdq.onnx]]`
// Proposes the quantizer setup (or reads one saved by --setup-out or the GUI), applies the preset
// and the user's bit widths, finalises it, and prints NNCF's bitwidth table plus the counts of
// merged quantizers and requantizers. With a calibration dataset it also computes every
// quantizer's scale and zero point, simulates the quantized model against the float one, and
// writes the parameters, the per-quantizer SQNR / output metrics report and the QDQ model.

#include "app/cli/command.h"
#include "core/onnx/model_io.h"
#include "core/quantization/calibration.h"
#include "core/quantization/calibration_data.h"
#include "core/quantization/finalize_setup.h"
#include "core/quantization/qdq_export.h"
#include "core/quantization/quantization_state.h"
#include "core/quantization/quantizer_propagation_solver.h"
#include "core/quantization/quantizer_setup_report.h"
#include "core/support/atomic_file.h"

#include <chrono>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <sstream>

namespace qs::cli {

namespace {
using namespace qs::quantization;

struct QuantizeOptions {
    std::string modelPath;
    std::string hw = "cpu";
    std::string preset = "performance";
    std::string rule = "merge_all_in_one";
    std::vector<std::string> ignore;
    bool quantizeOutputs = false;
    std::vector<std::string> sets;
    std::string setupIn;
    std::string setupOut;
    std::string proposalOut;
    std::string dotOut;
    CalibrationDataSource calibration;
    int64_t calibBatch = 1;
    std::string rangeEstimator = "nncf";
    std::string reportOut;
    std::string encodingsOut;
    std::string modelOut;
    bool noInt4Activations = false;

    bool calibrates() const {
        return !calibration.imagesDir.empty() || !calibration.npyFiles.empty() ||
               calibration.randomSamples > 0;
    }
};

Result<void> writeJson(const std::string& path, const nlohmann::json& json) {
    return writeFileAtomically(path, json.dump(2) + "\n");
}

Result<PropagationOptions> propagationOptions(const QuantizeOptions& options, int64_t opset) {
    static const std::map<std::string, QuantizerPropagationRule> kRules = {
        {"do_not_merge_branches", QuantizerPropagationRule::DoNotMergeBranches},
        {"merge_if_all_branches_same", QuantizerPropagationRule::MergeIfAllBranchesSame},
        {"merge_with_potential_requantization",
         QuantizerPropagationRule::MergeWithPotentialRequantization},
        {"merge_all_in_one", QuantizerPropagationRule::MergeAllInOne}};
    auto rule = kRules.find(options.rule);
    if (rule == kRules.end()) {
        return Error(Errc::InvalidArgument, "unknown --rule '" + options.rule + "'");
    }
    const QuantizationPreset preset =
        options.preset == "mixed" ? QuantizationPreset::Mixed : QuantizationPreset::Performance;
    PropagationOptions propagation = presetOptions(preset, opset);
    propagation.rule = rule->second;
    propagation.quantizeOutputs = options.quantizeOutputs;
    propagation.ignoredScope.patterns = options.ignore;
    return propagation;
}

Result<void> writeOutputs(const QuantizeOptions& options, const QuantizationProposal& proposal,
                          const SingleConfigQuantizerSetup& setup) {
    if (!options.setupOut.empty()) {
        QS_TRY(writeJson(options.setupOut, setup.toJson()));
    }
    if (!options.proposalOut.empty()) {
        QS_TRY(writeJson(options.proposalOut, proposalToJson(proposal.setup)));
    }
    if (!options.dotOut.empty()) {
        QS_TRY(writeFileAtomically(options.dotOut, quantizerSetupToDot(proposal, &setup)));
    }
    return {};
}

Result<SingleConfigQuantizerSetup> proposeAndFinalize(const QuantizeOptions& options,
                                                      const graph::Graph& model) {
    QS_ASSIGN_OR_RETURN(HWConfig hw, HWConfig::fromArgument(options.hw));
    QS_ASSIGN_OR_RETURN(PropagationOptions propagation,
                        propagationOptions(options, model.opsetVersion()));
    QS_ASSIGN_OR_RETURN(QuantizationProposal proposal,
                        proposeQuantizerSetup(model, hw, propagation));
    QuantizerConfigChoice choice = selectFirstConfigs(proposal.setup);
    for (const std::string& spec : options.sets) {
        QS_TRY(applyBitwidthChoice(proposal.setup, spec, choice));
    }
    QS_ASSIGN_OR_RETURN(SingleConfigQuantizerSetup setup, finalizeSetup(proposal, choice));
    QS_TRY(writeOutputs(options, proposal, setup));
    return setup;
}

Result<SingleConfigQuantizerSetup> readSetup(const QuantizeOptions& options) {
    if (!options.sets.empty() || !options.proposalOut.empty() || !options.dotOut.empty()) {
        return Error(Errc::InvalidArgument,
                     "--setup-in takes the setup as saved; --set, --proposal-out and --dot-out "
                     "need propagation");
    }
    std::ifstream in(options.setupIn);
    if (!in) {
        return Error(Errc::Io, "cannot read --setup-in '" + options.setupIn + "'");
    }
    nlohmann::json json = nlohmann::json::parse(in, nullptr, false);
    if (json.is_discarded()) {
        return Error(Errc::InvalidArgument, "--setup-in '" + options.setupIn + "' is not JSON");
    }
    QS_ASSIGN_OR_RETURN(SingleConfigQuantizerSetup setup,
                        setupFromJson(json).context("--setup-in '" + options.setupIn + "'"));
    if (!options.setupOut.empty()) {
        QS_TRY(writeJson(options.setupOut, setup.toJson()));
    }
    return setup;
}

/// The report: dataset, per-quantizer parameters and SQNR, output metrics, bitwidth table.
nlohmann::json calibrationReport(const QuantizeOptions& options,
                                 const SingleConfigQuantizerSetup& setup,
                                 const QuantizerParametersMap& parameters,
                                 const SimulationReport& simulation, double calibrationSeconds,
                                 int64_t samples) {
    nlohmann::json report;
    report["model"] = options.modelPath;
    report["setup"] = options.setupIn.empty()
                          ? "propagation (--hw " + options.hw + " --preset " + options.preset + ")"
                          : "file " + options.setupIn;
    report["calibration"] = {{"dataset", options.calibration.describe()},
                             {"samples", samples},
                             {"batch_size", options.calibBatch},
                             {"range_estimator", options.rangeEstimator},
                             {"seconds", calibrationSeconds}};
    nlohmann::json quantizers = toJson(setup, parameters).at("quantizers");
    for (const auto& [id, error] : simulation.quantizers) {
        quantizers[std::to_string(id)].update(toJson(error));
    }
    report["quantizers"] = quantizers;
    report["simulation"] = toJson(simulation);
    report["bitwidth_table"] = bitwidthSummaryTable(setup);
    return report;
}

void printSimulation(const SimulationReport& simulation) {
    double worst = std::numeric_limits<double>::infinity();
    int worstId = -1;
    for (const auto& [id, error] : simulation.quantizers) {
        if (error.localSqnrDb < worst) {
            worst = error.localSqnrDb;
            worstId = id;
        }
    }
    std::cout << std::fixed << std::setprecision(6);
    for (const OutputMetrics& m : simulation.outputs) {
        std::cout << "Output '" << m.name << "': cosine similarity " << m.meanCosine << " (min "
                  << m.minCosine << "), max abs error " << m.maxAbsError;
        if (m.top1Agreement) {
            std::cout << ", top-1 agreement " << *m.top1Agreement;
        }
        std::cout << "\n";
    }
    if (worstId >= 0) {
        std::cout << std::setprecision(2) << "Lowest quantizer SQNR: #" << worstId << " " << worst
                  << " dB\n";
    }
    std::cout << std::defaultfloat;
}

Result<void> writeQdqModel(const QuantizeOptions& options, const graph::Graph& model,
                           const SingleConfigQuantizerSetup& setup,
                           const QuantizerParametersMap& parameters) {
    QS_ASSIGN_OR_RETURN(const QdqExportSummary exported,
                        exportQdqModel(model, setup, parameters, options.modelOut,
                                       {.int4Activations = !options.noInt4Activations})
                            .context("--out '" + options.modelOut + "'"));
    std::cout << "QDQ model: " << options.modelOut << " (" << exported.activationPairs
              << " activation Q/DQ pairs, " << exported.weightDequantizers
              << " weight DequantizeLinear, " << exported.clippedGrids << " clipped grids; opset "
              << exported.opset << ", IR version " << exported.irVersion << "; onnx::checker: "
              << (exported.checked ? "passed" : "skipped (int4 or opset > 17)") << ")\n";
    if (exported.upgrade.upgraded()) {
        std::cout << "Upgraded: " << exported.upgrade.describe() << "\n";
    }
    return {};
}

Result<void> calibrateAndReport(const QuantizeOptions& options, const graph::Graph& model,
                                const SingleConfigQuantizerSetup& setup) {
    QS_ASSIGN_OR_RETURN(const RangeEstimator estimator,
                        parseRangeEstimator(options.rangeEstimator));
    QS_ASSIGN_OR_RETURN(const std::vector<runtime::Tensor> data,
                        loadCalibrationData(model, options.calibration));
    QS_ASSIGN_OR_RETURN(const int64_t samples, datasetSize(data));
    StderrProgressBar bar;
    const auto start = std::chrono::steady_clock::now();
    QS_ASSIGN_OR_RETURN(const QuantizerParametersMap parameters,
                        calibrate(model, setup, data,
                                  {.batchSize = options.calibBatch, .estimator = estimator}, &bar));
    const double calibrationSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    QS_ASSIGN_OR_RETURN(
        const SimulationReport simulation,
        simulateQuantization(model, setup, parameters, data, options.calibBatch, &bar));
    std::cout << "Calibrated " << parameters.size() << " quantizers on " << samples
              << " samples in " << calibrationSeconds << " s; simulation " << simulation.seconds
              << " s\n";
    printSimulation(simulation);
    if (!options.encodingsOut.empty()) {
        QS_TRY(writeJson(options.encodingsOut, toJson(setup, parameters)));
    }
    if (!options.modelOut.empty()) {
        QS_TRY(writeQdqModel(options, model, setup, parameters));
    }
    if (!options.reportOut.empty()) {
        QS_TRY(
            writeJson(options.reportOut, calibrationReport(options, setup, parameters, simulation,
                                                           calibrationSeconds, samples)));
    }
    return {};
}

Result<void> runQuantizeImpl(const QuantizeOptions& options) {
    if (!options.calibrates() && (!options.reportOut.empty() || !options.encodingsOut.empty() ||
                                  !options.modelOut.empty())) {
        return Error(Errc::InvalidArgument,
                     "--out, --report and --encodings-out need a calibration "
                     "dataset (--calib-images, --calib-npy or "
                     "--calib-random)");
    }
    QS_ASSIGN_OR_RETURN(
        graph::Graph model,
        onnx::importModel(options.modelPath).context("model '" + options.modelPath + "'"));
    QS_ASSIGN_OR_RETURN(SingleConfigQuantizerSetup setup, options.setupIn.empty()
                                                              ? proposeAndFinalize(options, model)
                                                              : readSetup(options));
    std::cout << "Statistics of the bitwidth distribution:\n" << bitwidthSummaryTable(setup);
    std::cout << "Merged quantizers: " << setup.mergedInto.size() << "\n";
    std::cout << "Requantizers: " << setup.requantizationParents.size() << "\n";
    std::cout << "Unified-scale groups: " << setup.unifiedScaleGroups.size() << "\n";
    if (options.calibrates()) {
        QS_TRY(calibrateAndReport(options, model, setup));
    }
    return {};
}

int runQuantize(const QuantizeOptions& options) {
    auto result = runQuantizeImpl(options);
    return result.ok() ? kExitOk : reportError(result.error());
}
} // namespace

Command addQuantizeCommand(CLI::App& parent) {
    auto options = std::make_shared<QuantizeOptions>();
    CLI::App* app = parent.add_subcommand(
        "quantize",
        "Propose, choose and finalise the quantizer setup (NNCF propagation); calibrate it");
    app->add_option("MODEL", options->modelPath, "ONNX model file")->required();
    app->add_option("--hw", options->hw, "HW config: cpu, gpu, npu or a JSON file in NNCF's schema")
        ->capture_default_str();
    app->add_option("--preset", options->preset,
                    "performance (symmetric activations) or mixed (asymmetric)")
        ->check(CLI::IsMember({"performance", "mixed"}))
        ->capture_default_str();
    app->add_option("--rule", options->rule, "Quantizer propagation rule at branches")
        ->check(CLI::IsMember({"do_not_merge_branches", "merge_if_all_branches_same",
                               "merge_with_potential_requantization", "merge_all_in_one"}))
        ->capture_default_str();
    app->add_option("--ignore", options->ignore,
                    "Keep nodes whose name matches REGEX in float (repeatable)")
        ->type_name("REGEX");
    app->add_flag("--quantize-outputs", options->quantizeOutputs, "Quantize the model outputs too");
    app->add_option("--set", options->sets,
                    "Choose a bit width for the quantizer at NODE (or input PORT of NODE, or #ID) "
                    "(repeatable)")
        ->type_name("NODE[:PORT]=BITS");
    app->add_option(
        "--setup-in", options->setupIn,
        "Use this final setup (saved by --setup-out or the GUI) instead of propagation");
    app->add_option("--setup-out", options->setupOut,
                    "Final setup JSON (NNCF SingleConfigQuantizerSetup state)");
    app->add_option("--proposal-out", options->proposalOut,
                    "Proposal JSON with all candidate configs");
    app->add_option("--dot-out", options->dotOut, "DOT debug view of the final setup");
    addDatasetOptions(*app, options->calibration,
                      {.npy = "Calibrate on .npy samples (axis 0), one file per model input",
                       .images = "Calibrate on a folder of PNG/JPEG/BMP images (resized to the "
                                 "NCHW input, ImageNet mean/std)",
                       .random = "Calibrate on N seeded standard-normal samples"});
    app->add_option("--calib-samples", options->calibration.maxSamples,
                    "Use at most N samples of --calib-images / --calib-npy")
        ->capture_default_str();
    app->add_option("--calib-batch", options->calibBatch,
                    "Mini-batch size of the calibration runs (needs a dynamic batch axis if > 1)")
        ->capture_default_str();
    app->add_option("--calib-seed", options->calibration.seed, "Seed for --calib-random")
        ->capture_default_str();
    app->add_option("--range-estimator", options->rangeEstimator,
                    "nncf (NNCF's PTQ default: mean of per-sample min/max per-tensor, min/max "
                    "per-channel), minmax, mean_minmax, percentile (99.99th, per-tensor)")
        ->check(CLI::IsMember({"nncf", "minmax", "mean_minmax", "percentile"}))
        ->capture_default_str();
    app->add_option("--report", options->reportOut,
                    "Calibration report JSON: per-quantizer parameters and SQNR, output cosine "
                    "similarity / max abs error / top-1 agreement, bitwidth table");
    app->add_option("--encodings-out", options->encodingsOut,
                    "Scales, zero points and ranges of every quantizer (JSON)");
    app->add_option("--out", options->modelOut,
                    "Write the quantized model as QDQ ONNX (QuantizeLinear/DequantizeLinear at the "
                    "insertion points; 4-bit as int4, other narrow grids behind a Clip)");
    app->add_flag("--no-int4-activations", options->noInt4Activations,
                  "--out: 4-bit activations as int8/uint8 behind a Clip (opset 13) instead of "
                  "int4/uint4 (opset 21), for runtimes whose int4 QuantizeLinear fails");
    return {app, [options] { return runQuantize(*options); }};
}

} // namespace qs::cli
