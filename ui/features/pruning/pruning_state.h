// PruningState: what a GraphDocument keeps under the pruning feature's key — the last pruning
// run (the workflow's analysis: sections, SIMD sizes, channel importance; shared by every undo
// step that edits it) with the target, the user's constraints and the greedy's masks. The
// document's graph stays dense: the overlay and the dock show the masks, File ▸ Export ▸ Pruned
// ONNX… builds the pruned graph from the run — until Compress ▸ Continue with Pruned Model opens
// the pruned graph as the document (the result then says "applied" and is read-only). Saved as the
// session's "pruning" section (core/session/pruning_masks_section.h) and restored from it.
#pragma once

#include "core/pruning/pruning_workflow.h"
#include "ui/graph_document.h"

#include <QLatin1String>
#include <QString>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace qs::ui {

/// The pruning feature's key: its document state and its session section.
inline constexpr QLatin1String kPruningKey("pruning");

/// The slow part of one pruning run, as the workflow produced it.
struct PruningRun {
    pruning::PruningRequest request; ///< as run (without the precomputed scores)
    pruning::PruningAnalysis analysis;
    std::string modelHash;
    double seconds = 0.0;

    /// Node name -> section, by role (a shared node is the exit of one and the entry of the next).
    std::map<std::string, int, std::less<>> entryOf;
    std::map<std::string, int, std::less<>> intermediateOf;
    std::map<std::string, int, std::less<>> exitOf;
    /// Node name -> why it is in no section.
    std::map<std::string, std::string, std::less<>> notPrunable;

    /// Fills the lookups from the analysis.
    void index();

    /// The section `node` belongs to as entry or intermediate, else as exit; -1 when none.
    int sectionOf(std::string_view node) const;

    int sections() const { return static_cast<int>(analysis.entryNames.size()); }
};

/// What the document shows: a run, the target and constraints, and the greedy's masks.
struct PruningResult {
    std::shared_ptr<const PruningRun> run;
    pruning::TargetMemory target;
    /// The greedy's outcome for `target` and its constraints (no pruned graph: export builds it).
    std::shared_ptr<const pruning::PruningOutcome> outcome;
    /// The document works on the pruned model (Compress ▸ Continue with Pruned Model): its graph
    /// is these masks applied to its source graph, so the run is shown but no longer edited.
    bool applied = false;

    const pruning::EntryConstraint& constraint(int section) const;
};

class PruningState final : public DocumentState {
public:
    explicit PruningState(PruningResult result)
        : m_result(std::move(result)) {}

    const PruningResult& result() const { return m_result; }

    std::optional<nlohmann::json> sessionSection() const override;

    std::optional<NodeDetails> nodeDetails(const QString& nodeName) const override;

private:
    PruningResult m_result;
};

/// The document's pruning, or nullptr before Prune….
const PruningResult* pruningResult(const GraphDocument& document);

/// Replaces (nullopt: removes) the document's pruning; emits stateChanged(kPruningKey).
void setPruningResult(GraphDocument& document, std::optional<PruningResult> result);

/// `current`'s run with another target or other constraints: the greedy only (no scores, no
/// graph). A target below the minimum is an error naming the minimum.
Result<PruningResult> rerunGreedy(const PruningResult& current, const pruning::TargetMemory& target,
                                  const std::vector<pruning::EntryConstraint>& constraints);

/// Restores the pruning saved in the session `document` was opened from (nothing to do without
/// one): the analysis is re-run on the document's source graph from the saved scores and checked
/// against the saved masks. An applied pruning needs a document derived from it, and the other
/// way round.
Result<void> restorePruning(GraphDocument& document);

/// "12.3 MiB", "456 KiB", "789 B".
QString formatBytes(int64_t bytes);

} // namespace qs::ui
