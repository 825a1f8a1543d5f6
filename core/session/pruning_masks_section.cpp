#include "core/session/pruning_masks_section.h"

#include "core/pruning/prune_graph.h"
#include "core/support/json_reader.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>

namespace qs::session {

namespace {

Error malformed(const std::string& what) {
    return Error(Errc::InvalidArgument, "malformed pruning section: " + what);
}

/// `json[key]` as a T; a missing key or a wrong type is an error naming `where` and `key`.
template <typename T>
Result<T> field(const nlohmann::json& json, const char* key, const std::string& where) {
    const auto it = json.find(key);
    if (it == json.end()) {
        return malformed(where + "no \"" + key + "\"");
    }
    if constexpr (std::is_same_v<T, nlohmann::json>) {
        return *it;
    } else {
        // Type and range checked before converting (a 1e30 channel count never reaches int64).
        Result<T> value = strict::as<T>(*it, "\"" + std::string(key) + "\"");
        if (!value.ok()) {
            return malformed(where + value.error().message());
        }
        return value;
    }
}

std::string_view constraintName(pruning::EntryConstraint::Kind kind) {
    switch (kind) {
    case pruning::EntryConstraint::Kind::Lock:
        return "lock";
    case pruning::EntryConstraint::Kind::Keep:
        return "keep";
    case pruning::EntryConstraint::Kind::Free:
        break;
    }
    return "free";
}

Result<PruningMasksSection::Section> sectionFromJson(const nlohmann::json& json, size_t index) {
    const std::string where = "sections[" + std::to_string(index) + "]: ";
    if (!json.is_object()) {
        return malformed(where + "not an object");
    }
    PruningMasksSection::Section section;
    QS_ASSIGN_OR_RETURN(section.entry, field<std::string>(json, "entry", where));
    QS_ASSIGN_OR_RETURN(section.exit, field<std::string>(json, "exit", where));
    QS_ASSIGN_OR_RETURN(section.channels, field<int64_t>(json, "channels", where));
    QS_ASSIGN_OR_RETURN(section.kept, field<int64_t>(json, "kept", where));
    QS_ASSIGN_OR_RETURN(const std::string constraint,
                        field<std::string>(json, "constraint", where));
    QS_ASSIGN_OR_RETURN(const std::vector<int> mask, field<std::vector<int>>(json, "mask", where));
    QS_ASSIGN_OR_RETURN(section.scores, field<std::vector<double>>(json, "scores", where));
    QS_ASSIGN_OR_RETURN(section.hessian, field<std::vector<double>>(json, "hessian", where));
    if (section.channels < 1) {
        return malformed(where + "\"channels\" must be positive");
    }
    const auto channels = static_cast<size_t>(section.channels);
    if (mask.size() != channels || section.scores.size() != channels ||
        (!section.hessian.empty() && section.hessian.size() != channels)) {
        return malformed(where +
                         "\"mask\", \"scores\" and \"hessian\" need one value per "
                         "channel (" +
                         std::to_string(channels) + ")");
    }
    for (const int bit : mask) {
        if (bit != 0 && bit != 1) {
            return malformed(where + "\"mask\" holds a value other than 0 and 1");
        }
        section.mask.push_back(static_cast<uint8_t>(bit));
    }
    if (std::count(mask.begin(), mask.end(), 1) != section.kept || section.kept < 1) {
        return malformed(where + "\"kept\" (" + std::to_string(section.kept) +
                         ") is not the number of 1s in \"mask\"");
    }
    if (constraint == "free") {
        section.constraint = {};
    } else if (constraint == "lock") {
        section.constraint = {pruning::EntryConstraint::Kind::Lock, section.channels};
    } else if (constraint == "keep") {
        section.constraint = {pruning::EntryConstraint::Kind::Keep, section.kept};
    } else {
        return malformed(where + "\"constraint\" must be free, lock or keep, got '" + constraint +
                         "'");
    }
    return section;
}

} // namespace

bool PruningMasksSection::operator==(const PruningMasksSection& other) const {
    return modelHash == other.modelHash && target.fraction == other.target.fraction &&
           target.value == other.target.value && hw == other.hw && simd == other.simd &&
           simdPadding == other.simdPadding && importance == other.importance &&
           samples == other.samples && iterations == other.iterations &&
           earlyStop == other.earlyStop && seed == other.seed && dataset == other.dataset &&
           targetBytes == other.targetBytes && denseBytes == other.denseBytes &&
           prunedBytes == other.prunedBytes && minimumBytes == other.minimumBytes &&
           applied == other.applied && sections == other.sections;
}

PruningMasksSection capturePruning(const pruning::PruningRequest& request,
                                   const pruning::PruningAnalysis& analysis,
                                   const pruning::PruningOutcome& outcome,
                                   const std::vector<std::vector<double>>& hessian,
                                   std::string modelHash) {
    PruningMasksSection section;
    section.modelHash = std::move(modelHash);
    section.target = request.target;
    section.hw = request.hw;
    section.simd = request.simd;
    section.simdPadding = request.simdPadding;
    section.importance = request.importance;
    section.samples = request.importance == pruning::ImportanceMetric::Lfh ? analysis.samples : 0;
    section.iterations = request.iterations;
    section.earlyStop = request.earlyStop;
    section.seed = request.seed;
    section.dataset =
        request.importance == pruning::ImportanceMetric::Lfh ? request.dataset.describe() : "";
    section.targetBytes = outcome.targetBytes;
    section.denseBytes = outcome.denseBytes;
    section.prunedBytes = outcome.prunedBytes;
    section.minimumBytes = outcome.minimumBytes;
    for (size_t s = 0; s < analysis.entryNames.size(); ++s) {
        PruningMasksSection::Section saved;
        saved.entry = analysis.entryNames[s];
        saved.exit = analysis.exitNames[s];
        saved.channels = analysis.detection.sections[s].channels;
        saved.kept = outcome.kept[s];
        saved.constraint =
            outcome.constraints.empty() ? pruning::EntryConstraint{} : outcome.constraints[s];
        saved.mask = outcome.info.masks[s];
        saved.scores = outcome.info.scores[s];
        if (s < hessian.size()) {
            saved.hessian = hessian[s];
        }
        section.sections.push_back(std::move(saved));
    }
    return section;
}

pruning::PruningRequest pruningRequestOf(const PruningMasksSection& section) {
    pruning::PruningRequest request;
    request.target = section.target;
    request.hw = section.hw;
    request.simd = section.simd;
    request.simdPadding = section.simdPadding;
    request.importance = section.importance;
    request.samples = section.samples;
    request.iterations = section.iterations;
    request.earlyStop = section.earlyStop;
    request.seed = section.seed;
    for (const PruningMasksSection::Section& saved : section.sections) {
        if (saved.constraint.kind == pruning::EntryConstraint::Kind::Lock) {
            request.lock.push_back(saved.entry);
        } else if (saved.constraint.kind == pruning::EntryConstraint::Kind::Keep) {
            request.keep.emplace_back(saved.entry, saved.constraint.kept);
        }
    }
    if (section.importance == pruning::ImportanceMetric::Lfh) {
        hessian::HessianScores scores;
        scores.mode = hessian::HessianMode::Weights;
        scores.granularity = hessian::HessianScoresGranularity::PerOutputChannel;
        scores.iterations = section.iterations;
        scores.earlyStop = section.earlyStop;
        scores.seed = section.seed;
        scores.sampleIndices.resize(static_cast<size_t>(std::max<int64_t>(section.samples, 0)));
        std::iota(scores.sampleIndices.begin(), scores.sampleIndices.end(), 0);
        for (const PruningMasksSection::Section& saved : section.sections) {
            hessian::HessianTargetScores target;
            target.node = saved.entry;
            target.shape = {saved.channels};
            target.perSample = {saved.hessian};
            scores.targets.push_back(std::move(target));
        }
        request.scores = std::move(scores);
    }
    return request;
}

std::vector<pruning::EntryConstraint> constraintsOf(const PruningMasksSection& section) {
    std::vector<pruning::EntryConstraint> constraints;
    for (const PruningMasksSection::Section& saved : section.sections) {
        constraints.push_back(saved.constraint);
    }
    return constraints;
}

Result<RestoredPruning> restorePruning(const graph::Graph& graph,
                                       const PruningMasksSection& section, Progress& progress) {
    const auto changed = [](const std::string& detail) {
        return Error(Errc::InvalidArgument,
                     "the saved pruning does not match the model (changed since the session was "
                     "saved?): " +
                         detail);
    };
    if (section.importance == pruning::ImportanceMetric::Lfh) {
        for (const PruningMasksSection::Section& saved : section.sections) {
            if (saved.hessian.size() != static_cast<size_t>(saved.channels)) {
                return malformed("LFH section '" + saved.entry + "' has no \"hessian\" scores");
            }
        }
    }
    RestoredPruning restored;
    restored.request = pruningRequestOf(section);
    QS_ASSIGN_OR_RETURN(restored.analysis,
                        pruning::analyzePruning(graph, restored.request, progress));
    const pruning::PruningAnalysis& analysis = restored.analysis;
    if (analysis.entryNames.size() != section.sections.size()) {
        return changed(std::to_string(analysis.entryNames.size()) +
                       " pruning sections, the session has " +
                       std::to_string(section.sections.size()));
    }
    for (size_t s = 0; s < section.sections.size(); ++s) {
        const PruningMasksSection::Section& saved = section.sections[s];
        if (analysis.entryNames[s] != saved.entry || analysis.exitNames[s] != saved.exit ||
            analysis.detection.sections[s].channels != saved.channels) {
            return changed("section " + std::to_string(s) + " is " + analysis.entryNames[s] +
                           " -> " + analysis.exitNames[s] + ", the session has " + saved.entry +
                           " -> " + saved.exit);
        }
    }
    QS_ASSIGN_OR_RETURN(restored.outcome, pruning::computePruningMasks(analysis, section.target,
                                                                       constraintsOf(section)));
    for (size_t s = 0; s < section.sections.size(); ++s) {
        if (restored.outcome.info.masks[s] != section.sections[s].mask) {
            return changed("the greedy keeps other channels of '" + section.sections[s].entry +
                           "' than the session");
        }
    }
    return restored;
}

Result<graph::Graph> prunedGraphOf(const RestoredPruning& restored) {
    return pruning::buildPrunedGraph(restored.analysis.graph, restored.analysis.detection,
                                     restored.outcome.info.masks);
}

Result<graph::Graph> sessionGraph(graph::Graph model, const SessionFile& session,
                                  Progress& progress) {
    QS_ASSIGN_OR_RETURN(const std::optional<PruningMasksSection> section,
                        pruningMasksSection(session));
    if (!section || !section->applied) {
        return model;
    }
    QS_ASSIGN_OR_RETURN(const RestoredPruning restored,
                        restorePruning(model, *section, progress).context("applied pruning"));
    return prunedGraphOf(restored).context("applied pruning");
}

bool sessionHasAppliedPruning(const SessionFile& session) {
    // The raw flag: a section malformed elsewhere still says what the session works on, and
    // sessionGraph then names what is wrong with it.
    const auto it = session.sections.find(kPruningSection);
    if (it == session.sections.end() || !it->second.is_object()) {
        return false;
    }
    const auto applied = it->second.find("applied");
    return applied != it->second.end() && !(applied->is_boolean() && !applied->get<bool>());
}

Result<void> checkSessionGraph(const graph::Graph& graph, const SessionFile& session) {
    QS_ASSIGN_OR_RETURN(const std::optional<PruningMasksSection> section,
                        pruningMasksSection(session).context("sections.pruning"));
    if (!section) {
        return success();
    }
    for (const PruningMasksSection::Section& saved : section->sections) {
        const std::optional<graph::NodeId> entry = graph.findNode(saved.entry);
        const graph::Node* node = entry ? &graph.node(*entry) : nullptr;
        const graph::Value* weight =
            node != nullptr && node->inputs.size() > 1 && node->inputs[1].valid()
                ? &graph.value(node->inputs[1])
                : nullptr;
        if (weight == nullptr || !weight->isInitializer() || weight->initializer->dims().empty()) {
            return Error(Errc::InvalidArgument, "the session's pruning entry '" + saved.entry +
                                                    "' is not a node with a weight in this graph");
        }
        const int64_t expected = section->applied ? saved.kept : saved.channels;
        const int64_t found = weight->initializer->dims().front();
        if (found != expected) {
            return Error(Errc::InvalidArgument, std::string("the session works on the ") +
                                                    (section->applied ? "pruned" : "dense") +
                                                    " model ('" + saved.entry + "' has " +
                                                    std::to_string(expected) +
                                                    " output channels there), this "
                                                    "graph's has " +
                                                    std::to_string(found));
        }
    }
    return success();
}

nlohmann::json toJson(const PruningMasksSection& section) {
    nlohmann::json sections = nlohmann::json::array();
    for (const PruningMasksSection::Section& saved : section.sections) {
        std::vector<int> mask(saved.mask.begin(), saved.mask.end());
        sections.push_back({{"entry", saved.entry},
                            {"exit", saved.exit},
                            {"channels", saved.channels},
                            {"kept", saved.kept},
                            {"constraint", constraintName(saved.constraint.kind)},
                            {"mask", mask},
                            {"scores", saved.scores},
                            {"hessian", saved.hessian}});
    }
    return {{"model_hash", section.modelHash},
            {"target", {{"fraction", section.target.fraction}, {"value", section.target.value}}},
            {"hw", section.hw},
            {"simd", section.simd},
            {"simd_padding", section.simdPadding},
            {"importance", pruning::importanceName(section.importance)},
            {"samples", section.samples},
            {"iterations", section.iterations},
            {"early_stop", section.earlyStop},
            {"seed", section.seed},
            {"dataset", section.dataset},
            {"target_bytes", section.targetBytes},
            {"dense_bytes", section.denseBytes},
            {"pruned_bytes", section.prunedBytes},
            {"minimum_bytes", section.minimumBytes},
            {"applied", section.applied},
            {"sections", sections}};
}

namespace {

/// The target, read from its object.
Result<pruning::TargetMemory> targetFromJson(const nlohmann::json& json) {
    QS_ASSIGN_OR_RETURN(const nlohmann::json target, field<nlohmann::json>(json, "target", ""));
    if (!target.is_object()) {
        return malformed("\"target\" is not an object");
    }
    pruning::TargetMemory out;
    QS_ASSIGN_OR_RETURN(out.fraction, field<bool>(target, "fraction", "target: "));
    QS_ASSIGN_OR_RETURN(out.value, field<double>(target, "value", "target: "));
    if (!std::isfinite(out.value) || out.value <= 0.0 || (out.fraction && out.value > 1.0)) {
        return malformed("\"target\" value out of range");
    }
    return out;
}

/// The request's settings: HW config, SIMD, importance, samples, iterations, seed, dataset.
Result<void> settingsFromJson(const nlohmann::json& json, PruningMasksSection& section) {
    const std::string top;
    QS_ASSIGN_OR_RETURN(section.hw, field<std::string>(json, "hw", top));
    QS_ASSIGN_OR_RETURN(section.simd, field<int64_t>(json, "simd", top));
    QS_ASSIGN_OR_RETURN(section.simdPadding, field<bool>(json, "simd_padding", top));
    QS_ASSIGN_OR_RETURN(const std::string importance, field<std::string>(json, "importance", top));
    QS_ASSIGN_OR_RETURN(section.importance,
                        pruning::parseImportance(importance).context("pruning section"));
    QS_ASSIGN_OR_RETURN(section.samples, field<int64_t>(json, "samples", top));
    QS_ASSIGN_OR_RETURN(section.iterations, field<int>(json, "iterations", top));
    QS_ASSIGN_OR_RETURN(section.earlyStop, field<bool>(json, "early_stop", top));
    QS_ASSIGN_OR_RETURN(section.seed, field<uint64_t>(json, "seed", top));
    QS_ASSIGN_OR_RETURN(section.dataset, field<std::string>(json, "dataset", top));
    if (section.simd < 0 || section.samples < 0 || section.iterations < 0) {
        return malformed("\"simd\", \"samples\" and \"iterations\" must not be negative");
    }
    return success();
}

Result<void> totalsFromJson(const nlohmann::json& json, PruningMasksSection& section) {
    const std::string top;
    QS_ASSIGN_OR_RETURN(section.targetBytes, field<int64_t>(json, "target_bytes", top));
    QS_ASSIGN_OR_RETURN(section.denseBytes, field<int64_t>(json, "dense_bytes", top));
    QS_ASSIGN_OR_RETURN(section.prunedBytes, field<int64_t>(json, "pruned_bytes", top));
    QS_ASSIGN_OR_RETURN(section.minimumBytes, field<int64_t>(json, "minimum_bytes", top));
    return success();
}

} // namespace

Result<PruningMasksSection> pruningMasksSectionFromJson(const nlohmann::json& json) {
    if (!json.is_object()) {
        return malformed("not an object");
    }
    PruningMasksSection section;
    QS_ASSIGN_OR_RETURN(section.modelHash, field<std::string>(json, "model_hash", ""));
    QS_ASSIGN_OR_RETURN(section.target, targetFromJson(json));
    QS_TRY(settingsFromJson(json, section));
    QS_TRY(totalsFromJson(json, section));
    if (json.contains("applied")) {
        QS_ASSIGN_OR_RETURN(section.applied, field<bool>(json, "applied", ""));
    }
    QS_ASSIGN_OR_RETURN(const nlohmann::json sections, field<nlohmann::json>(json, "sections", ""));
    if (!sections.is_array()) {
        return malformed("\"sections\" is not an array");
    }
    for (size_t i = 0; i < sections.size(); ++i) {
        QS_ASSIGN_OR_RETURN(PruningMasksSection::Section saved, sectionFromJson(sections[i], i));
        section.sections.push_back(std::move(saved));
    }
    return section;
}

Result<std::optional<PruningMasksSection>> pruningMasksSection(const SessionFile& session) {
    const auto it = session.sections.find(kPruningSection);
    if (it == session.sections.end()) {
        return std::optional<PruningMasksSection>();
    }
    QS_ASSIGN_OR_RETURN(PruningMasksSection section, pruningMasksSectionFromJson(it->second));
    return std::optional<PruningMasksSection>(std::move(section));
}

void setPruningMasksSection(SessionFile& session, const PruningMasksSection& section) {
    session.sections.insert_or_assign(std::string(kPruningSection), toJson(section));
}

} // namespace qs::session
