#include "core/quantization/setup_import.h"

#include <map>
#include <string>

namespace qs::quantization {

namespace {

std::string settingsText(const QuantizationSettings& settings) {
    return "HW config '" + settings.hw + "', preset " +
           (settings.preset == QuantizationPreset::Mixed ? "mixed" : "performance") + ", rule " +
           std::string(ruleArgument(settings.rule));
}

Error notFromThisProposal(const QuantizationState& state, const std::string& problem) {
    return Error(Errc::InvalidArgument, problem + " (propagation with " +
                                            settingsText(state.settings) +
                                            "; was the setup made with other settings?)");
}

std::string candidatesText(const QuantizerConfigList& configs) {
    std::string text;
    for (const QuantizerConfig& config : configs) {
        text += (text.empty() ? "" : ", ") + config.toString();
    }
    return text;
}

/// The candidate of `point` equal to `wanted`, or else the first compatible one.
const QuantizerConfig* matchingCandidate(const MultiConfigQuantizationPoint& point,
                                         const QuantizerConfig& wanted) {
    for (const QuantizerConfig& config : point.possibleConfigs) {
        if (config == wanted) {
            return &config;
        }
    }
    for (const QuantizerConfig& config : point.possibleConfigs) {
        if (config.isCompatibleWith(wanted)) {
            return &config;
        }
    }
    return nullptr;
}

/// Active quantizers as (insertion point text -> config), the form two setups are compared in
/// (the text names node, port and weight-or-activation, so it identifies the point).
std::map<std::string, QuantizerConfig> byInsertionPoint(const SingleConfigQuantizerSetup& setup) {
    std::map<std::string, QuantizerConfig> out;
    for (const auto& [id, point] : setup.quantizationPoints) {
        out.emplace(point.insertionPoint.toString(), point.qconfig);
    }
    return out;
}

Result<void> checkSameQuantizers(const QuantizationState& state,
                                 const SingleConfigQuantizerSetup& finalized,
                                 const SingleConfigQuantizerSetup& setup) {
    const auto got = byInsertionPoint(finalized);
    const auto wanted = byInsertionPoint(setup);
    for (const auto& [point, config] : wanted) {
        const auto it = got.find(point);
        if (it == got.end()) {
            return notFromThisProposal(state, "the quantizer at " + point +
                                                  " is merged away by these choices");
        }
        if (!it->second.isCompatibleWith(config)) {
            return notFromThisProposal(state, "the quantizer at " + point + " gets " +
                                                  it->second.toString() + ", the setup has " +
                                                  config.toString());
        }
    }
    for (const auto& [point, config] : got) {
        if (!wanted.contains(point)) {
            return notFromThisProposal(state, "these choices keep a quantizer at " + point +
                                                  " that the setup has not");
        }
    }
    return {};
}

} // namespace

Result<QuantizerConfigChoice> choicesForSetup(const QuantizationState& state,
                                              const SingleConfigQuantizerSetup& setup) {
    std::map<std::string, int> proposalIds;
    for (const auto& [id, point] : state.proposal.setup.quantizationPoints) {
        proposalIds.emplace(point.insertionPoint.toString(), id);
    }
    // Points the setup does not list (merged away there) keep their current choice.
    QuantizerConfigChoice choice = state.choice;
    for (const auto& [setupId, point] : setup.quantizationPoints) {
        const auto found = proposalIds.find(point.insertionPoint.toString());
        if (found == proposalIds.end()) {
            return notFromThisProposal(state, "quantization point " + std::to_string(setupId) +
                                                  " at " + point.insertionPoint.toString() +
                                                  " is no point of the proposal");
        }
        const MultiConfigQuantizationPoint& candidate =
            state.proposal.setup.quantizationPoints.at(found->second);
        const QuantizerConfig* config = matchingCandidate(candidate, point.qconfig);
        if (config == nullptr) {
            return notFromThisProposal(state, "quantization point " + std::to_string(setupId) +
                                                  " at " + point.insertionPoint.toString() +
                                                  " has " + point.qconfig.toString() +
                                                  ", none of its candidates (" +
                                                  candidatesText(candidate.possibleConfigs) + ")");
        }
        choice[found->second] = *config;
    }
    QuantizationState trial = state;
    QS_TRY(chooseConfigs(trial, choice));
    QS_TRY(checkSameQuantizers(state, trial.setup, setup));
    return choice;
}

} // namespace qs::quantization
