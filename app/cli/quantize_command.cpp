// `quantscope-cli quantize MODEL --hw cpu|gpu|npu|FILE.json [--preset performance|mixed]
//  [--rule RULE] [--ignore REGEX]... [--quantize-outputs] [--set NODE[:PORT]=BITS]...
//  --setup-out SETUP.json [--proposal-out PROPOSAL.json] [--dot-out FINAL.dot]`
// Proposes the quantizer setup, applies the preset and the user's bit widths, finalises it, and
// prints NNCF's bitwidth table plus the counts of merged quantizers and requantizers.

#include "app/cli/command.h"
#include "core/onnx/model_io.h"
#include "core/quantization/finalize_setup.h"
#include "core/quantization/quantizer_propagation_solver.h"
#include "core/quantization/quantizer_setup_report.h"
#include "core/support/atomic_file.h"

#include <iostream>
#include <map>
#include <memory>

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
    std::string setupOut;
    std::string proposalOut;
    std::string dotOut;
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
    QS_TRY(writeJson(options.setupOut, setup.toJson()));
    if (!options.proposalOut.empty()) {
        QS_TRY(writeJson(options.proposalOut, proposalToJson(proposal.setup)));
    }
    if (!options.dotOut.empty()) {
        QS_TRY(writeFileAtomically(options.dotOut, quantizerSetupToDot(proposal, &setup)));
    }
    return {};
}

Result<void> runQuantizeImpl(const QuantizeOptions& options) {
    QS_ASSIGN_OR_RETURN(HWConfig hw, HWConfig::fromArgument(options.hw));
    QS_ASSIGN_OR_RETURN(graph::Graph model, onnx::importModel(options.modelPath));
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
    std::cout << "Statistics of the bitwidth distribution:\n" << bitwidthSummaryTable(setup);
    std::cout << "Merged quantizers: " << setup.mergedInto.size() << "\n";
    std::cout << "Requantizers: " << setup.requantizationParents.size() << "\n";
    std::cout << "Unified-scale groups: " << setup.unifiedScaleGroups.size() << "\n";
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
        "quantize", "Propose, choose and finalise the quantizer setup (NNCF propagation)");
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
    app->add_option("--setup-out", options->setupOut,
                    "Final setup JSON (NNCF SingleConfigQuantizerSetup state)")
        ->required();
    app->add_option("--proposal-out", options->proposalOut,
                    "Proposal JSON with all candidate configs");
    app->add_option("--dot-out", options->dotOut, "DOT debug view of the final setup");
    return {app, [options] { return runQuantize(*options); }};
}

} // namespace qs::cli
