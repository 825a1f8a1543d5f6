// HawqController: the HAWQ feature of the main window — Quantize ▸ HAWQ… (the dialog, then
// mixed_precision::runHawq through the JobRunner with progress and cancel; a re-run with the same
// samples and iterations reuses the document's traces), the Pareto explorer dock, and applying a
// candidate's bits to the document as one undo step (with the HW config switch when the dialog
// chose another one). Merged quantizers and requantizers then show on the graph as the setup
// does, and the Bit Widths dock follows. A hovered candidate's bits are previewed on the graph
// badges without an edit. The result is saved in the session (HawqState) and restored from it
// when the document opens, with no HAWQ job.
#pragma once

#include "core/mixed_precision/hawq_workflow.h"
#include "ui/feature.h"

#include <QPointer>

#include <optional>

class QAction;
class QDockWidget;

namespace qs::ui {

class GraphDocument;
class ParetoExplorer;

class HawqController : public Feature {
    Q_OBJECT

public:
    explicit HawqController(const FeatureContext& context);

    ~HawqController() override;

    QString key() const override;

    void createActions(Actions& actions) override;

    QDockWidget* dock() const override;

    Qt::DockWidgetArea dockArea() const override { return Qt::BottomDockWidgetArea; }

    QAction* hawqAction() const { return m_hawq; }

    ParetoExplorer& explorer() const { return *m_explorer; }

    /// Runs HAWQ on the open document in the background (request.settings.hw chooses the HW
    /// config; preset and rule are the document's); false (with a message) when it cannot.
    bool run(mixed_precision::HawqRequest request);

    bool isRunning() const { return m_running; }

    /// Applies candidate `index` of the document's HAWQ result as one undo step.
    bool applyCandidate(size_t index);

    /// Previews candidate `index`'s bit widths on the graph badges (nullopt: restores them); the
    /// document and its undo stack are not touched.
    void previewCandidate(std::optional<size_t> index);

    /// Runs HAWQ at `ratio` (NPU, random samples, few iterations) on the next opened model.
    void runOnOpen(double ratio);

Q_SIGNALS:
    void hawqFinished(bool ok, const QString& message);

private:
    void showDialog();
    void updateActions();
    void onDocumentChanged(GraphDocument* document);
    void showDocumentResult();

    FeatureContext m_context;
    QAction* m_hawq = nullptr;
    QDockWidget* m_dock;
    ParetoExplorer* m_explorer;
    QPointer<GraphDocument> m_document;
    mixed_precision::HawqRequest m_last;
    double m_runOnOpen = 0.0;
    bool m_running = false;
};

} // namespace qs::ui
