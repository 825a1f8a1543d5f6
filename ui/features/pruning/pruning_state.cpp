#include "ui/features/pruning/pruning_state.h"

#include "core/session/pruning_masks_section.h"

#include <QObject>

#include <algorithm>
#include <functional>

namespace qs::ui {

namespace {
QString qs(const std::string& text) {
    return QString::fromStdString(text);
}

QString constraintText(const pruning::EntryConstraint& constraint) {
    switch (constraint.kind) {
    case pruning::EntryConstraint::Kind::Lock:
        return QObject::tr("locked (never pruned)");
    case pruning::EntryConstraint::Kind::Keep:
        return QObject::tr("keep %1 channels").arg(constraint.kept);
    case pruning::EntryConstraint::Kind::Free:
        break;
    }
    return QObject::tr("free (the greedy chooses)");
}
} // namespace

void PruningRun::index() {
    entryOf.clear();
    intermediateOf.clear();
    exitOf.clear();
    notPrunable.clear();
    const graph::Graph& graph = analysis.graph;
    const pruning::SectionDetection& detection = analysis.detection;
    for (size_t s = 0; s < detection.sections.size(); ++s) {
        const pruning::PruningSection& section = detection.sections[s];
        const int si = static_cast<int>(s);
        entryOf.emplace(graph.node(section.entry).name, si);
        exitOf.emplace(graph.node(section.exit).name, si);
        for (const graph::NodeId node : section.intermediates) {
            intermediateOf.emplace(graph.node(node).name, si);
        }
    }
    for (const graph::NodeId id : graph.nodeIds()) {
        const std::string& reason = id.index() < detection.notPrunableReason.size()
                                        ? detection.notPrunableReason[id.index()]
                                        : std::string();
        const std::string& name = graph.node(id).name;
        if (!reason.empty() && !entryOf.contains(name) && !exitOf.contains(name) &&
            !intermediateOf.contains(name)) {
            notPrunable.emplace(name, reason);
        }
    }
}

int PruningRun::sectionOf(std::string_view node) const {
    for (const auto* lookup : {&entryOf, &intermediateOf, &exitOf}) {
        if (const auto it = lookup->find(node); it != lookup->end()) {
            return it->second;
        }
    }
    return -1;
}

const pruning::EntryConstraint& PruningResult::constraint(int section) const {
    static const pruning::EntryConstraint kFree;
    const auto s = static_cast<size_t>(section);
    return s < outcome->constraints.size() ? outcome->constraints[s] : kFree;
}

std::optional<nlohmann::json> PruningState::sessionSection() const {
    const PruningRun& run = *m_result.run;
    pruning::PruningRequest request = run.request;
    request.target = m_result.target;
    session::PruningMasksSection section = session::capturePruning(
        request, run.analysis, *m_result.outcome, run.analysis.hessian, run.modelHash);
    section.applied = m_result.applied;
    return session::toJson(section);
}

std::optional<DocumentState::NodeDetails> PruningState::nodeDetails(const QString& nodeName) const {
    const PruningRun& run = *m_result.run;
    const pruning::PruningOutcome& outcome = *m_result.outcome;
    const std::string name = nodeName.toStdString();
    NodeDetails details;
    details.section = QObject::tr("Pruning");
    if (const auto reason = run.notPrunable.find(name); reason != run.notPrunable.end()) {
        details.rows.push_back({QObject::tr("Not prunable"), qs(reason->second)});
        return details;
    }
    const auto sectionName = [&](int s) {
        return QStringLiteral("%1 → %2").arg(qs(run.analysis.entryNames[static_cast<size_t>(s)]),
                                             qs(run.analysis.exitNames[static_cast<size_t>(s)]));
    };
    bool member = false;
    if (const auto exit = run.exitOf.find(name); exit != run.exitOf.end()) {
        const auto s = static_cast<size_t>(exit->second);
        details.rows.push_back({QObject::tr("Exit of"), sectionName(exit->second)});
        details.rows.push_back(
            {QObject::tr("Input channels"), QStringLiteral("%1 → %2")
                                                .arg(run.analysis.detection.sections[s].channels)
                                                .arg(outcome.kept[s])});
        member = true;
    }
    if (const auto mid = run.intermediateOf.find(name); mid != run.intermediateOf.end()) {
        const auto s = static_cast<size_t>(mid->second);
        details.rows.push_back({QObject::tr("Intermediate of"), sectionName(mid->second)});
        details.rows.push_back(
            {QObject::tr("Channels"), QStringLiteral("%1 → %2")
                                          .arg(run.analysis.detection.sections[s].channels)
                                          .arg(outcome.kept[s])});
        member = true;
    }
    if (const auto entry = run.entryOf.find(name); entry != run.entryOf.end()) {
        const int si = entry->second;
        const auto s = static_cast<size_t>(si);
        details.rows.push_back({QObject::tr("Entry of"), sectionName(si)});
        details.rows.push_back(
            {QObject::tr("Output channels"), QStringLiteral("%1 → %2")
                                                 .arg(run.analysis.detection.sections[s].channels)
                                                 .arg(outcome.kept[s])});
        details.rows.push_back(
            {QObject::tr("SIMD"), QString::number(run.analysis.importance[s].simd)});
        details.rows.push_back(
            {QObject::tr("Constraint"), constraintText(m_result.constraint(si))});
        details.rows.push_back(
            {QObject::tr("Section memory"),
             QStringLiteral("%1 → %2").arg(formatBytes(outcome.sectionBytesBefore[s]),
                                           formatBytes(outcome.sectionBytesAfter[s]))});
        std::vector<double> scores = run.analysis.importance[s].channelScores;
        std::sort(scores.begin(), scores.end(), std::greater<>());
        details.barsLabel = QObject::tr("Channel scores (%1)")
                                .arg(qs(std::string(pruning::importanceName(run.analysis.metric))));
        details.bars = std::move(scores);
        member = true;
    }
    if (!member) {
        return std::nullopt;
    }
    return details;
}

const PruningResult* pruningResult(const GraphDocument& document) {
    const auto* state = document.state<PruningState>(kPruningKey);
    return state == nullptr ? nullptr : &state->result();
}

void setPruningResult(GraphDocument& document, std::optional<PruningResult> result) {
    document.setState(kPruningKey,
                      result ? std::make_unique<PruningState>(std::move(*result)) : nullptr);
}

Result<PruningResult> rerunGreedy(const PruningResult& current, const pruning::TargetMemory& target,
                                  const std::vector<pruning::EntryConstraint>& constraints) {
    QS_ASSIGN_OR_RETURN(pruning::PruningOutcome outcome,
                        pruning::computePruningMasks(current.run->analysis, target, constraints));
    PruningResult result;
    result.run = current.run;
    result.target = target;
    result.outcome = std::make_shared<const pruning::PruningOutcome>(std::move(outcome));
    return result;
}

Result<void> restorePruning(GraphDocument& document) {
    const nlohmann::json* saved = document.savedSection(
        std::string_view(kPruningKey.data(), static_cast<size_t>(kPruningKey.size())));
    if (saved == nullptr) {
        return success();
    }
    QS_ASSIGN_OR_RETURN(const session::PruningMasksSection section,
                        session::pruningMasksSectionFromJson(*saved).context("session"));
    if (section.applied != document.isDerived()) {
        return Error(Errc::InvalidArgument,
                     section.applied
                         ? "session pruning section: applied, but the document is the model file"
                         : "session pruning section: not applied, but the document is derived");
    }
    NullProgress progress;
    QS_ASSIGN_OR_RETURN(session::RestoredPruning restored,
                        session::restorePruning(document.sourceGraph(), section, progress)
                            .context("session pruning section"));
    auto run = std::make_shared<PruningRun>();
    run->request = std::move(restored.request);
    run->request.scores.reset();
    run->analysis = std::move(restored.analysis);
    run->modelHash = section.modelHash;
    run->index();
    PruningResult result;
    result.run = std::move(run);
    result.target = section.target;
    result.outcome = std::make_shared<const pruning::PruningOutcome>(std::move(restored.outcome));
    result.applied = section.applied;
    setPruningResult(document, std::move(result));
    return success();
}

QString formatBytes(int64_t bytes) {
    constexpr int64_t kKiBytes = 1024;
    constexpr double kKiB = 1024.0;
    const auto value = static_cast<double>(bytes);
    if (bytes >= kKiBytes * kKiBytes) {
        return QStringLiteral("%1 MiB").arg(value / (kKiB * kKiB), 0, 'f', 1);
    }
    if (bytes >= kKiBytes) {
        return QStringLiteral("%1 KiB").arg(value / kKiB, 0, 'f', 1);
    }
    return QStringLiteral("%1 B").arg(bytes);
}

} // namespace qs::ui
