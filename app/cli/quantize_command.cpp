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
#include "core/quantization/calibration_workflow.h"
#include "core/quantization/finalize_setup.h"
#include "core/quantization/qdq_export.h"
#include "core/quantization/quantization_state.h"
#include "core/quantization/quantizer_propagation_solver.h"
#include "core/quantization/quantizer_setup_report.h"
#include "core/quantization/setup_reader.h"
#include "core/report/calibration_report.h"
#include "core/session/sections.h"
#include "core/session/session_file.h"
#include "core/support/atomic_file.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

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
    runtime::DatasetRequest calibration = cliDatasetRequest(true);
    std::string rangeEstimator = "nncf";
    std::string reportOut;
    std::string encodingsOut;
    std::string modelOut;
    bool noInt4Activations = false;
    std::string sessionPath;

    bool calibrates() const { return !calibration.empty(); }
};

Result<void> writeJson(const std::string& path, const nlohmann::json& json) {
    return writeFileAtomically(path, json.dump(2) + "\n");
}

QuantizationPreset presetOf(const QuantizeOptions& options) {
    return options.preset == "mixed" ? QuantizationPreset::Mixed : QuantizationPreset::Performance;
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
        return Error(Errc::Usage, "unknown --rule '" + options.rule + "'");
    }
    PropagationOptions propagation = presetOptions(presetOf(options), opset);
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

Result<SingleConfigQuantizerSetup> readSetup(const QuantizeOptions& options,
                                             const graph::Graph& model) {
    if (!options.sets.empty() || !options.proposalOut.empty() || !options.dotOut.empty()) {
        return Error(Errc::Usage,
                     "--setup-in takes the setup as saved; --set, --proposal-out and --dot-out "
                     "need propagation");
    }
    QS_ASSIGN_OR_RETURN(SingleConfigQuantizerSetup setup,
                        readSetupFile(options.setupIn, model).context("--setup-in"));
    if (!options.setupOut.empty()) {
        QS_TRY(writeJson(options.setupOut, setup.toJson()));
    }
    return setup;
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

Result<CalibrationOutcome> calibrateAndReport(const QuantizeOptions& options,
                                              const graph::Graph& model,
                                              const SingleConfigQuantizerSetup& setup) {
    CalibrationRequest request{.dataset = options.calibration};
    QS_ASSIGN_OR_RETURN(request.estimator, parseRangeEstimator(options.rangeEstimator));
    StderrProgressBar bar;
    QS_ASSIGN_OR_RETURN(const CalibrationOutcome outcome,
                        runCalibration(model, setup, request, bar));
    // Labels that do not fit the output (an id out of its class range) stop here, named.
    if (auto accuracy = report::calibrationAccuracy(outcome); !accuracy.ok()) {
        return std::move(accuracy).error().context("--labels-npy");
    }
    std::cout << report::calibrationText(outcome);
    if (!options.encodingsOut.empty()) {
        QS_TRY(writeJson(options.encodingsOut, toJson(setup, outcome.parameters)));
    }
    if (!options.modelOut.empty()) {
        QS_TRY(writeQdqModel(options, model, setup, outcome.parameters));
    }
    if (!options.reportOut.empty()) {
        nlohmann::json json = report::toJson(outcome);
        json["model"] = options.modelPath;
        json["setup"] = options.setupIn.empty() ? "propagation (--hw " + options.hw + " --preset " +
                                                      options.preset + ")"
                                                : "file " + options.setupIn;
        QS_TRY(writeJson(options.reportOut, json));
    }
    return outcome;
}

/// --hw, --preset and --rule as settings.
Result<QuantizationSettings> flagSettings(const QuantizeOptions& options) {
    const std::optional<QuantizerPropagationRule> rule = ruleFromArgument(options.rule);
    if (!rule) {
        return Error(Errc::Usage, "unknown --rule '" + options.rule + "'");
    }
    return QuantizationSettings{.hw = options.hw, .preset = presetOf(options), .rule = *rule};
}

/// The proposal's default choices with those the session saved on top (none without a session).
Result<QuantizerConfigChoice> restoredChoices(const QuantizationState& state,
                                              const std::optional<session::SessionFile>& saved,
                                              const std::string& sessionPath) {
    QuantizerConfigChoice choice = state.choice;
    if (!saved) {
        return choice;
    }
    QS_ASSIGN_OR_RETURN(
        const QuantizerConfigChoice restored,
        session::sessionChoicesFor(*saved, state).context("--session '" + sessionPath + "'"));
    for (const auto& [id, config] : restored) {
        choice[id] = config;
    }
    return choice;
}

/// The session file of --session, saved for this model, whose HW config reads.
Result<session::SessionFile> readSavedSession(const QuantizeOptions& options) {
    QS_ASSIGN_OR_RETURN(session::SessionFile saved, session::readSessionFile(options.sessionPath));
    QS_TRY(session::checkSessionModel(saved, options.modelPath)
               .context("--session '" + options.sessionPath + "'"));
    // The session names its HW config; a bad one is the session's fault, said so.
    QS_TRY(HWConfig::fromArgument(saved.settings.hw)
               .context("sections.quantization.hw_config")
               .context("session '" + options.sessionPath + "'"));
    return saved;
}

/// --session: the settings and choices of the session file when it exists (else of --hw, --preset
/// and --rule), then --set on top; the session holds what propagation options it can restore, so
/// --ignore, --quantize-outputs and --setup-in do not combine with it.
Result<QuantizationState> sessionState(const QuantizeOptions& options, const graph::Graph& model,
                                       std::optional<session::SessionFile>& saved) {
    if (!options.ignore.empty() || options.quantizeOutputs || !options.setupIn.empty()) {
        return Error(Errc::Usage,
                     "--session keeps HW config, preset, rule and choices; it does not combine "
                     "with --ignore, --quantize-outputs or --setup-in");
    }
    QS_ASSIGN_OR_RETURN(QuantizationSettings settings, flagSettings(options));
    if (std::filesystem::exists(options.sessionPath)) {
        QS_ASSIGN_OR_RETURN(saved, readSavedSession(options));
        settings = saved->settings;
    }
    QS_ASSIGN_OR_RETURN(QuantizationState state, computeQuantization(model, settings));
    QS_ASSIGN_OR_RETURN(QuantizerConfigChoice choice,
                        restoredChoices(state, saved, options.sessionPath));
    for (const std::string& spec : options.sets) {
        QS_TRY(applyBitwidthChoice(state.proposal.setup, spec, choice));
    }
    QS_TRY(chooseConfigs(state, choice));
    return state;
}

/// Writes the session: the quantization section of `state`, the calibration summary when there
/// is one, and every other section the file already had.
Result<void> writeSession(const QuantizeOptions& options, const QuantizationState& state,
                          std::optional<session::SessionFile> saved,
                          const std::optional<CalibrationOutcome>& calibration) {
    QS_ASSIGN_OR_RETURN(const std::string hash, session::hashModelFile(options.modelPath));
    QS_ASSIGN_OR_RETURN(session::SessionFile file,
                        session::captureSession(options.modelPath, hash, state));
    if (saved) {
        file.view = saved->view;
        file.sections = std::move(saved->sections);
    }
    if (calibration) {
        session::setSection(file, session::kCalibrationSection,
                            session::toJson(session::summarize(*calibration)));
    }
    QS_TRY(session::writeSessionFile(options.sessionPath, file));
    std::cout << "Session: " << options.sessionPath << "\n";
    return {};
}

Result<void> runQuantizeImpl(const QuantizeOptions& options) {
    if (!options.calibrates() && (!options.reportOut.empty() || !options.encodingsOut.empty() ||
                                  !options.modelOut.empty())) {
        return Error(Errc::Usage, "--out, --report and --encodings-out need a calibration "
                                  "dataset (--calib-images, --calib-npy or "
                                  "--calib-random)");
    }
    QS_ASSIGN_OR_RETURN(
        graph::Graph model,
        importSessionModel(options.modelPath, options.calibration, options.sessionPath));
    std::optional<session::SessionFile> saved;
    std::optional<QuantizationState> state;
    if (!options.sessionPath.empty()) {
        QS_ASSIGN_OR_RETURN(state, sessionState(options, model, saved));
        QS_TRY(writeOutputs(options, state->proposal, state->setup));
    }
    QS_ASSIGN_OR_RETURN(const SingleConfigQuantizerSetup setup,
                        state                     ? Result<SingleConfigQuantizerSetup>(state->setup)
                        : options.setupIn.empty() ? proposeAndFinalize(options, model)
                                                  : readSetup(options, model));
    std::cout << "Statistics of the bitwidth distribution:\n" << bitwidthSummaryTable(setup);
    std::cout << "Merged quantizers: " << setup.mergedInto.size() << "\n";
    std::cout << "Requantizers: " << setup.requantizationParents.size() << "\n";
    std::cout << "Unified-scale groups: " << setup.unifiedScaleGroups.size() << "\n";
    std::optional<CalibrationOutcome> calibration;
    if (options.calibrates()) {
        QS_ASSIGN_OR_RETURN(calibration, calibrateAndReport(options, model, setup));
    }
    if (state) {
        QS_TRY(writeSession(options, *state, std::move(saved), calibration));
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
                       .random = "Calibrate on N seeded standard-normal samples",
                       .samples = "Use at most N samples of --calib-images / --calib-npy"});
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
    app->add_option("--session", options->sessionPath,
                    "Read the HW config, preset, rule and choices from this .qscope session (the "
                    "GUI's) if it exists, and write them back with the calibration summary")
        ->type_name("FILE.qscope");
    app->add_flag("--no-int4-activations", options->noInt4Activations,
                  "--out: 4-bit activations as int8/uint8 behind a Clip (opset 13) instead of "
                  "int4/uint4 (opset 21), for runtimes whose int4 QuantizeLinear fails");
    return {app, [options] { return runQuantize(*options); }};
}

} // namespace qs::cli
