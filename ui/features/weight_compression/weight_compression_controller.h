// WeightCompressionController: the weight compression feature, thin over core/compression.
// Quantize ▸ Compress Weights… asks for options (WeightCompressionDialog), loads the dataset and
// plans in the background through the JobRunner, and pushes the plan onto the document's undo
// stack (the plan is the document's CompressionPlanState); the Weight Compression dock (table +
// chart) and the graph badges follow the plan. File ▸ Export ▸ Weight-Compressed ONNX… applies the
// plan to a copy of the graph and writes it (ModelExportJob: atomically, an unwritable path is an
// error).
#pragma once

#include "ui/feature.h"
#include "ui/features/weight_compression/weight_compression_dialog.h"

#include <QPointer>

#include <optional>

class QAction;
class QDockWidget;

namespace qs::ui {

class GraphDocument;
class ModelExportJob;
class WeightCompressionOverlay;
class WeightCompressionPanel;

/// Compress Weights, its dock and badges, and the weight-compressed export.
class WeightCompressionController : public Feature {
    Q_OBJECT

public:
    explicit WeightCompressionController(const FeatureContext& context);

    ~WeightCompressionController() override;

    QString key() const override;

    void createActions(Actions& actions) override;

    QDockWidget* dock() const override { return m_dock; }

    QAction* compressAction() const { return m_compress; }

    QAction* exportCompressedAction() const { return m_exportCompressed; }

    WeightCompressionPanel& panel() const { return *m_panel; }

    WeightCompressionOverlay& overlay() const { return *m_overlay; }

    /// Compresses the next document that opens with `request` (command line), as one undo step.
    void setInitialRequest(const WeightCompressionRequest& request) { m_initial = request; }

    /// Plans `request` for the open document in the background; on success pushes the plan as
    /// one undo step and shows the dock. Emits compressionFinished either way.
    void compress(const WeightCompressionRequest& request);

    /// Writes the open document with its plan applied to `path` in the background.
    void exportCompressed(const QString& path);

    /// Opens the options dialog and compresses when accepted.
    void showCompressDialog();

    void showExportCompressedDialog();

Q_SIGNALS:
    /// A compress() job ended; `ok` when the plan was applied.
    void compressionFinished(bool ok);

    /// An export job ended; `ok` when `path` was written.
    void exportFinished(bool ok, const QString& path);

private:
    void onDocumentChanged(GraphDocument* document);

    void syncActions();

    FeatureContext m_context;
    WeightCompressionPanel* m_panel;
    QDockWidget* m_dock;
    WeightCompressionOverlay* m_overlay;
    ModelExportJob* m_export;
    QAction* m_compress = nullptr;
    QAction* m_exportCompressed = nullptr;
    QPointer<GraphDocument> m_document;
    WeightCompressionRequest m_last;
    std::optional<WeightCompressionRequest> m_initial;
    bool m_busy = false;
};

} // namespace qs::ui
