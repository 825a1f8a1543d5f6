#include "core/session/review_source.h"

#include "core/onnx/model_io.h"
#include "core/pruning/channel_importance.h"
#include "core/quantization/calibration_workflow.h"
#include "core/quantization/hw_config.h"
#include "core/quantization/quantization_state.h"
#include "core/quantization/setup_reader.h"
#include "core/session/sections.h"
#include "core/session/session_file.h"

#include <filesystem>
#include <optional>
#include <utility>

namespace qs::session {

namespace {
std::string constraintText(const pruning::EntryConstraint& constraint) {
    switch (constraint.kind) {
    case pruning::EntryConstraint::Kind::Lock:
        return "lock";
    case pruning::EntryConstraint::Kind::Keep:
        return "keep " + std::to_string(constraint.kept);
    case pruning::EntryConstraint::Kind::Free:
        break;
    }
    return "free";
}

/// The setup to review, the proposal its candidates come from, and the session if there is one.
struct LoadedSetup {
    std::string source;
    quantization::QuantizationSettings settings;
    quantization::SingleConfigQuantizerSetup setup;
    quantization::QuantizationState state; ///< its proposal gives the candidates
    bool finalizedFromProposal = false;
    std::optional<SessionFile> session;
};

Result<LoadedSetup> loadSession(const graph::Graph& model, const ReviewRequest& request) {
    const std::string where = "session '" + request.sessionPath + "'";
    LoadedSetup loaded;
    QS_ASSIGN_OR_RETURN(SessionFile saved, readSessionFile(request.sessionPath));
    QS_TRY(checkSessionModel(saved, request.modelPath).context(where));
    // Choices are matched by insertion point, which pruning keeps: a session of the pruned
    // model must not be laid over the dense graph, nor the other way round.
    QS_TRY(checkSessionGraph(model, saved).context(where));
    QS_TRY(quantization::HWConfig::fromArgument(saved.settings.hw)
               .context("sections.quantization.hw_config")
               .context(where));
    loaded.settings = saved.settings;
    QS_ASSIGN_OR_RETURN(loaded.state, quantization::computeQuantization(model, saved.settings));
    QS_ASSIGN_OR_RETURN(const quantization::QuantizerConfigChoice choice,
                        sessionChoicesFor(saved, loaded.state).context(where));
    QS_TRY(quantization::chooseConfigs(loaded.state, choice));
    loaded.setup = loaded.state.setup;
    loaded.finalizedFromProposal = true;
    loaded.source = "session " + request.sessionPath;
    loaded.session = std::move(saved);
    return loaded;
}

Result<LoadedSetup> loadSetup(const graph::Graph& model, const ReviewRequest& request) {
    if (!request.setupPath.empty() && !request.sessionPath.empty()) {
        return Error(Errc::Usage, "give --setup or --session, not both");
    }
    if (!request.sessionPath.empty()) {
        return loadSession(model, request);
    }
    LoadedSetup loaded;
    loaded.settings.hw = request.hw;
    QS_ASSIGN_OR_RETURN(loaded.state, quantization::computeQuantization(model, loaded.settings));
    if (request.setupPath.empty()) {
        loaded.setup = loaded.state.setup;
        loaded.finalizedFromProposal = true;
        loaded.source = "propagation (--hw " + request.hw + ")";
        return loaded;
    }
    QS_ASSIGN_OR_RETURN(loaded.setup, quantization::readSetupFile(request.setupPath, model));
    loaded.source = "setup " + request.setupPath;
    return loaded;
}
} // namespace

report::ReviewHawq reviewHawqOf(const HawqSummary& summary) {
    report::ReviewHawq out{.target = summary.target,
                           .mode = summary.mode,
                           .search = summary.search,
                           .bits = summary.bits,
                           .samples = summary.samples,
                           .iterations = summary.iterations,
                           .ratio = summary.ratio,
                           .metric = summary.metric,
                           .layers = {},
                           .candidates = summary.candidates,
                           .pareto = summary.pareto,
                           .chosen = summary.chosen};
    for (const HawqSummary::Layer& layer : summary.layers) {
        out.layers.push_back({.node = layer.node,
                              .avgTrace = layer.avgTrace,
                              .weightBits = layer.weightBits,
                              .macs = layer.macs,
                              .perturbation = layer.perturbation});
    }
    return out;
}

report::ReviewPruning reviewPruningOf(const PruningMasksSection& section) {
    report::ReviewPruning out{.hw = section.hw,
                              .simd = section.simd,
                              .simdPadding = section.simdPadding,
                              .importance =
                                  std::string(pruning::importanceName(section.importance)),
                              .targetBytes = section.targetBytes,
                              .denseBytes = section.denseBytes,
                              .prunedBytes = section.prunedBytes,
                              .minimumBytes = section.minimumBytes,
                              .sections = {}};
    for (const PruningMasksSection::Section& s : section.sections) {
        out.sections.push_back({.entry = s.entry,
                                .exit = s.exit,
                                .channels = s.channels,
                                .kept = s.kept,
                                .constraint = constraintText(s.constraint)});
    }
    return out;
}

Result<void> addReviewSections(report::ReviewInputs& inputs,
                               const std::map<std::string, nlohmann::json, std::less<>>& sections) {
    if (const auto hawq = sections.find(kHawqSection); hawq != sections.end()) {
        QS_ASSIGN_OR_RETURN(const HawqSummary summary,
                            hawqSummaryFromJson(hawq->second).context("sections.hawq"));
        inputs.hawq = reviewHawqOf(summary);
    }
    if (const auto pruning = sections.find(kPruningSection); pruning != sections.end()) {
        QS_ASSIGN_OR_RETURN(
            const PruningMasksSection section,
            pruningMasksSectionFromJson(pruning->second).context("sections.pruning"));
        inputs.pruning = reviewPruningOf(section);
    }
    if (const auto plan = sections.find(kCompressionSection); plan != sections.end()) {
        inputs.compressionPlan = plan->second;
    }
    return {};
}

Result<report::ReviewReport> gatherReviewReport(const graph::Graph& model,
                                                const ReviewRequest& request, Progress& progress) {
    QS_ASSIGN_OR_RETURN(LoadedSetup loaded, loadSetup(model, request));
    report::ReviewInputs inputs;
    inputs.modelPath = request.modelPath;
    inputs.source = loaded.source;
    inputs.settings = loaded.settings;
    inputs.setup = loaded.setup;
    inputs.proposal = &loaded.state.proposal.setup;
    inputs.finalizedFromProposal = loaded.finalizedFromProposal;
    inputs.date = request.date;
    std::optional<quantization::CalibrationOutcome> calibration;
    if (!request.dataset.empty()) {
        const quantization::CalibrationRequest calibrate{.dataset = request.dataset};
        QS_ASSIGN_OR_RETURN(calibration,
                            quantization::runCalibration(model, inputs.setup, calibrate, progress));
        inputs.calibration = &*calibration;
    }
    if (loaded.session) {
        QS_TRY(addReviewSections(inputs, loaded.session->sections)
                   .context("session '" + request.sessionPath + "'"));
        if (loaded.session->view) {
            inputs.expandedGroups = loaded.session->view->expandedGroups;
        }
    }
    return report::buildReviewReport(model, inputs);
}

Result<ExportDiffOutcome> gatherExportDiff(const graph::Graph& model, const graph::Graph& exported,
                                           const ExportDiffRequest& request, Progress& progress) {
    ExportDiffOutcome out;
    QS_ASSIGN_OR_RETURN(out.structure, report::recoverExportStructure(model, exported));
    const std::string exportName = std::filesystem::path(request.exportPath).filename().string();
    report::ReviewInputs inputsA;
    inputsA.modelPath = request.modelPath;
    inputsA.source = "float model " + std::filesystem::path(request.modelPath).filename().string();
    inputsA.date = request.date;
    inputsA.settings.hw = "none (float)";
    report::ReviewInputs inputsB = inputsA;
    inputsB.source = "export " + exportName;
    inputsB.settings.hw = "as exported";
    inputsB.setup = out.structure.setup;
    QS_ASSIGN_OR_RETURN(const report::ReviewReport reportA,
                        report::buildReviewReport(model, inputsA));
    QS_ASSIGN_OR_RETURN(const report::ReviewReport reportB,
                        report::buildReviewReport(model, inputsB));
    if (!request.dataset.empty()) {
        QS_ASSIGN_OR_RETURN(const runtime::Dataset dataset,
                            runtime::loadDataset(model, request.dataset));
        QS_ASSIGN_OR_RETURN(out.comparison,
                            report::compareExport(model, exported, out.structure, dataset,
                                                  request.divergenceDb, progress));
    }
    out.diff = report::exportDiff(reportA, reportB, out.structure,
                                  out.comparison ? &*out.comparison : nullptr);
    out.marks = reportB.marks;
    return out;
}

Result<std::vector<quantization::QuantizerMark>> comparisonMarks(const graph::Graph& model,
                                                                 const std::string& modelPath,
                                                                 const std::string& otherPath,
                                                                 const std::string& hw) {
    const std::filesystem::path other(otherPath);
    if (other.extension() == ".onnx") {
        QS_ASSIGN_OR_RETURN(const graph::Graph exported,
                            onnx::importModel(other).context("'" + otherPath + "'"));
        QS_ASSIGN_OR_RETURN(
            const report::ExportStructure structure,
            report::recoverExportStructure(model, exported).context("'" + otherPath + "'"));
        return quantization::quantizerMarks(structure.setup, nullptr);
    }
    ReviewRequest request;
    request.modelPath = modelPath;
    request.hw = hw;
    (other.extension() == ".qscope" ? request.sessionPath : request.setupPath) = otherPath;
    NullProgress progress;
    QS_ASSIGN_OR_RETURN(const report::ReviewReport review,
                        gatherReviewReport(model, request, progress));
    return review.marks;
}

} // namespace qs::session
