// The "pruning" section of a session (issue 21): what a pruning run in the GUI chose, enough to
// show it again without recomputing the scores — the request's settings (target, HW config, SIMD,
// padding, importance, samples, iterations, seed, the dataset's description), the totals, and
// per section its entry and exit, the user's constraint, the 0/1 mask, PruningInfo's per-channel
// scores and, for LFH, the entry's per-channel Hessian scores H_c. Reopening re-runs the cheap
// part of the workflow (sections, importance from the saved H_c, the greedy) and checks that it
// gives the saved masks, so the dock can be edited again as before. "applied": true says the
// session works on the pruned model (GUI: Compress ▸ Continue with Pruned Model; CLI: prune
// --session): sessionGraph() rebuilds it from the model file and the masks, and the session's
// quantization section (settings, choices, calibration) belongs to that pruned graph.
//   {"model_hash", "target": {"fraction": true, "value": 0.5}, "hw", "simd", "simd_padding",
//    "importance", "samples", "iterations", "early_stop", "seed", "dataset",
//    "target_bytes", "dense_bytes", "pruned_bytes", "minimum_bytes", "applied",
//    "sections": [{"entry", "exit", "channels", "kept", "constraint": "free"|"lock"|"keep",
//                  "mask": [1, 0, ...], "scores": [...], "hessian": [...] (lfh)}]}
#pragma once

#include "core/pruning/pruning_workflow.h"
#include "core/session/session_file.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qs::session {

inline constexpr std::string_view kPruningSection = "pruning";

struct PruningMasksSection {
    std::string modelHash; ///< hashModelFile() of the model pruned
    pruning::TargetMemory target;
    std::string hw = "cpu";
    int64_t simd = 0; ///< the request's override (0: the HW config's sizes)
    bool simdPadding = true;
    pruning::ImportanceMetric importance = pruning::ImportanceMetric::Lfh;
    int64_t samples = 0;
    int iterations = 0;
    bool earlyStop = true;
    uint64_t seed = 0;
    std::string dataset; ///< DatasetRequest::describe() of the LFH samples ("" for l2 / random)
    int64_t targetBytes = 0;
    int64_t denseBytes = 0;
    int64_t prunedBytes = 0;
    int64_t minimumBytes = 0;
    /// The session's model is the pruned graph, not the file's (absent in older files: false).
    bool applied = false;

    struct Section {
        std::string entry;
        std::string exit;
        int64_t channels = 0;
        int64_t kept = 0;
        pruning::EntryConstraint constraint;
        std::vector<uint8_t> mask;
        std::vector<double> scores;  ///< PruningInfo's unrolled group scores
        std::vector<double> hessian; ///< H_c per channel (lfh), else empty

        bool operator==(const Section&) const = default;
    };

    std::vector<Section> sections;

    bool operator==(const PruningMasksSection&) const;
};

/// The section of a run: `request` as the workflow ran it, its analysis and outcome, and the H_c
/// per section the LFH scores used (empty lists otherwise).
PruningMasksSection capturePruning(const pruning::PruningRequest& request,
                                   const pruning::PruningAnalysis& analysis,
                                   const pruning::PruningOutcome& outcome,
                                   const std::vector<std::vector<double>>& hessian,
                                   std::string modelHash);

/// The request that re-creates the section's analysis without a dataset: its settings, its
/// constraints (as lock / keep names) and, for LFH, its H_c as precomputed scores.
pruning::PruningRequest pruningRequestOf(const PruningMasksSection& section);

/// The constraint per section, in the section's order.
std::vector<pruning::EntryConstraint> constraintsOf(const PruningMasksSection& section);

/// A saved run brought back: the analysis re-run on `graph` and the greedy's outcome (without
/// the pruned graph), checked against the saved masks.
struct RestoredPruning {
    pruning::PruningRequest request;
    pruning::PruningAnalysis analysis;
    pruning::PruningOutcome outcome;
};

/// Re-runs the section on `graph`; an error names what no longer matches (an entry, a channel
/// count, a mask: the model changed since the session was saved).
Result<RestoredPruning> restorePruning(const graph::Graph& graph,
                                       const PruningMasksSection& section, Progress& progress);

/// The pruned graph of a restored run (its masks applied to its prepared graph).
Result<graph::Graph> prunedGraphOf(const RestoredPruning& restored);

/// The graph a session works on: `model` as read from the session's model file, or — when its
/// pruning section is applied — the pruned graph rebuilt from it and the saved masks. An error
/// names what no longer matches.
Result<graph::Graph> sessionGraph(graph::Graph model, const SessionFile& session,
                                  Progress& progress);

/// True when the session's pruning section is applied: it has an "applied" key that is not
/// false (a malformed value or section included: sessionGraph then names the problem, never a
/// silent fallback to the dense graph).
bool sessionHasAppliedPruning(const SessionFile& session);

/// Checks that `graph` is the graph the session works on, as far as its pruning section tells:
/// every section's entry has the kept output channels when the pruning is applied, all of them
/// when not. A session without the section passes. An error names the entry and both counts.
Result<void> checkSessionGraph(const graph::Graph& graph, const SessionFile& session);

nlohmann::json toJson(const PruningMasksSection& section);

/// Reads what toJson writes; a malformed section is an error naming the field.
Result<PruningMasksSection> pruningMasksSectionFromJson(const nlohmann::json& json);

/// The session's pruning section, if it has one.
Result<std::optional<PruningMasksSection>> pruningMasksSection(const SessionFile& session);

void setPruningMasksSection(SessionFile& session, const PruningMasksSection& section);

} // namespace qs::session
