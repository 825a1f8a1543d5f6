// PruningController: the pruning feature of the main window (issue 21), thin over core/pruning.
// Compress ▸ Prune… asks for the request (PruningDialog) and runs the CLI's workflow through the
// JobRunner with progress and cancel: sections first, then — for LFH — the entries' weights-mode
// per-channel Hessian scores from the document's shared HessianCache (so a Hessian or HAWQ run on
// the same dataset is reused), then pruning::analyzePruning with those scores and the greedy; the
// result is one undo step. The Pruning dock edits locks, kept counts and the target (each edit
// re-runs only the greedy, one undo step); View ▸ Pruning Overlay shows the sections on the graph;
// File ▸ Export ▸ Pruned ONNX… builds the pruned graph and writes it atomically. Compress ▸
// Continue with Pruned Model opens the pruned graph as the document (same model file, same
// session: its quantizers are placed anew on it, and calibration, HAWQ and the exports then work
// on it, as `prune --session` does for the CLI); Compress ▸ Back to Dense Model returns to the
// file's graph with the pruning editable again. A document opened from a session gets its saved
// pruning back (applied or not).
#pragma once

#include "core/pruning/pruning_workflow.h"
#include "ui/feature.h"

#include <QPointer>

#include <optional>

class QAction;
class QDockWidget;

namespace qs::ui {

class GraphDocument;
class ModelExportJob;
class PruningOverlay;
class PruningPanel;

class PruningController : public Feature {
    Q_OBJECT

public:
    explicit PruningController(const FeatureContext& context);

    ~PruningController() override;

    QString key() const override;

    void createActions(Actions& actions) override;

    QDockWidget* dock() const override { return m_dock; }

    /// Compress ▸ Prune… (enabled while a model is open and no pruning job runs).
    QAction* pruneAction() const { return m_prune; }

    /// File ▸ Export ▸ Pruned ONNX… (enabled once the document is pruned).
    QAction* exportAction() const { return m_export; }

    /// Compress ▸ Continue with Pruned Model (enabled once pruned, not yet applied).
    QAction* applyAction() const { return m_apply; }

    /// Compress ▸ Back to Dense Model (enabled while the document is the pruned model).
    QAction* revertAction() const { return m_revert; }

    /// View ▸ Pruning Overlay (checkable, on).
    QAction* overlayAction() const { return m_overlayToggle; }

    PruningPanel& panel() const { return *m_panel; }

    PruningOverlay& overlay() const { return *m_overlay; }

    /// Prunes the open document with `request` in the background; false (with a message) when
    /// no model is open or a pruning job runs. Emits pruneFinished either way it ends.
    bool prune(const pruning::PruningRequest& request);

    bool isRunning() const { return m_running; }

    /// Section `section` gets `constraint`; the greedy re-runs (one undo step). False (with a
    /// message) when the greedy cannot meet the target with it.
    bool setConstraint(int section, const pruning::EntryConstraint& constraint);

    /// A new target; the greedy re-runs with the current constraints (one undo step).
    bool setTarget(const pruning::TargetMemory& target);

    /// Opens the pruned graph of the document's pruning as the document, in the background, with
    /// the same quantization settings; false (with a message) when there is nothing to apply.
    bool continueWithPruned();

    /// Opens the dense graph again (the pruning kept, editable); false (with a message) when the
    /// document is not the pruned model.
    bool backToDense();

    /// Writes the open document's pruned model to `path` in the background.
    void exportPruned(const QString& path);

    /// Prunes the next opened model with `request` and shows the dock (the GUI's --prune-target).
    void pruneOnOpen(const pruning::PruningRequest& request) { m_pruneOnOpen = request; }

    /// Selects op `nodeName` in the graph (opening its groups) and centres it.
    void selectNode(const QString& nodeName);

    /// Selects section `section` in the dock and its entry in the graph (after the running
    /// layout, if any).
    void revealEntry(int section);

Q_SIGNALS:
    /// A prune() job ended: applied (`ok`) or failed / cancelled (`message` says why).
    void pruneFinished(bool ok, const QString& message);

    /// An export ended; `ok` when `path` was written.
    void exportFinished(bool ok, const QString& path);

private:
    void showDialog();

    void showExportDialog();

    void updateActions();

    void onDocumentChanged(GraphDocument* document);

    /// Opens the document's pruned graph (`applied`) or its source graph as the document, with
    /// the pruning saved as applied or not; `title` names the job.
    void reopenAs(const QString& title, bool applied);

    void followSelection();

    FeatureContext m_context;
    PruningPanel* m_panel;
    QDockWidget* m_dock;
    PruningOverlay* m_overlay;
    ModelExportJob* m_exportJob;
    QAction* m_prune = nullptr;
    QAction* m_export = nullptr;
    QAction* m_apply = nullptr;
    QAction* m_revert = nullptr;
    QAction* m_overlayToggle = nullptr;
    QPointer<GraphDocument> m_document;
    pruning::PruningRequest m_last;
    std::optional<pruning::PruningRequest> m_pruneOnOpen;
    bool m_running = false;
};

} // namespace qs::ui
