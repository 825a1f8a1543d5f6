// HessianController: the Hessian feature of the main window — Quantize ▸ Compute Hessian Scores…
// (the dataset dialog, then the document's shared HessianCache fetches per-channel activation
// scores of every Conv/ConvTranspose/Gemm/MatMul through the JobRunner with progress and cancel;
// the result is stored in the document as its HessianState on the GUI thread), View ▸ Sensitivity
// Overlay (the op frames and legend), and the Sensitivity dock (sorted traces; a click selects the
// op). A document opened from a session gets its saved scores back.
#pragma once

#include "ui/feature.h"
#include "ui/features/hessian/hessian_dialog.h"

#include <QPointer>

class QAction;

namespace qs::ui {

class GraphDocument;
class SensitivityOverlay;
class SensitivityPanel;

class HessianController : public Feature {
    Q_OBJECT

public:
    explicit HessianController(const FeatureContext& context);

    ~HessianController() override;

    QString key() const override;

    void createActions(Actions& actions) override;

    QDockWidget* dock() const override { return m_dock; }

    /// Quantize ▸ Compute Hessian Scores… (enabled while a model is open and no job of ours runs).
    QAction* computeAction() const { return m_compute; }

    /// View ▸ Sensitivity Overlay (checkable).
    QAction* overlayAction() const { return m_overlayToggle; }

    SensitivityOverlay& overlay() const { return *m_overlay; }

    SensitivityPanel& panel() const { return *m_panel; }

    /// Computes the open document's scores with `request` in the background; false (with a
    /// message) when no model is open or a computation already runs.
    bool compute(const HessianJobRequest& request);

    bool isComputing() const { return m_running; }

    /// Computes the next opened model's scores on `randomSamples` random samples with
    /// `iterations` iterations, then shows the overlay and the dock (the GUI's --hessian-random).
    void computeOnOpen(int64_t randomSamples, int iterations);

    /// Selects op `nodeName` in the graph (opening its groups) and centres it.
    void selectNode(const QString& nodeName);

Q_SIGNALS:
    /// A computation ended: stored (`ok`) or failed / cancelled (`message` says why).
    void computeFinished(bool ok, const QString& message);

private:
    void showDialog();

    void updateActions();

    void onDocumentChanged(GraphDocument* document);

    void followSelection();

    FeatureContext m_context;
    SensitivityOverlay* m_overlay;
    SensitivityPanel* m_panel;
    QDockWidget* m_dock;
    QAction* m_compute = nullptr;
    QAction* m_overlayToggle = nullptr;
    QPointer<GraphDocument> m_document;
    HessianJobRequest m_last;
    std::optional<HessianJobRequest> m_computeOnOpen;
    bool m_running = false;
};

} // namespace qs::ui
