// WeightCompressionController: the GUI side of weight compression and FP16 conversion, thin over
// core/compression. Quantize ▸ Compress Weights… asks for options (WeightCompressionDialog),
// loads the dataset and plans in the background through the JobRunner, and pushes the plan onto
// the document's undo stack; the Weight Compression dock (table + chart) and the graph badges
// follow the plan. File ▸ Export ▸ Weight-Compressed ONNX… applies the plan to a copy of the graph
// and writes it; File ▸ Export ▸ FP16 ONNX… asks for the FP16 options and writes the converted
// copy. Both write atomically (core's exporter) and report an unwritable path as an error.
#pragma once

#include "core/compression/fp16_conversion.h"
#include "ui/features/weight_compression/weight_compression_dialog.h"

#include <QDialog>
#include <QObject>
#include <QPointer>

#include <functional>
#include <optional>

class QAction;
class QCheckBox;
class QDockWidget;
class QLineEdit;
class QMainWindow;
class QMenu;

namespace qs::ui {

class GraphDocument;
class GraphPage;
class JobRunner;
class MessageReporter;
class Session;
class WeightCompressionOverlay;
class WeightCompressionPanel;

/// FP16 export options: keep the model's float32 inputs/outputs, op types to block.
class Fp16ExportDialog : public QDialog {
    Q_OBJECT

public:
    explicit Fp16ExportDialog(QWidget* parent = nullptr);

    /// Options from the controls; block ops are comma- or space-separated op types.
    compression::Fp16Options options() const;

    QCheckBox& keepIoTypesBox() const { return *m_keepIoTypes; }

    QLineEdit& blockOpsEdit() const { return *m_blockOps; }

private:
    QCheckBox* m_keepIoTypes;
    QLineEdit* m_blockOps;
};

/// Compress Weights, its dock and badges, and the two ONNX exports.
class WeightCompressionController : public QObject {
    Q_OBJECT

public:
    WeightCompressionController(QMainWindow& window, Session& session, JobRunner& jobs,
                                GraphPage& page, MessageReporter& reporter);

    ~WeightCompressionController() override;

    /// Adds File ▸ Export (before `beforeInFile`) and Quantize ▸ Compress Weights….
    void installMenus(QMenu& file, QAction* beforeInFile, QMenu& quantize);

    QAction* compressAction() const { return m_compress; }

    QAction* exportCompressedAction() const { return m_exportCompressed; }

    QAction* exportFp16Action() const { return m_exportFp16; }

    WeightCompressionPanel& panel() const { return *m_panel; }

    QDockWidget& dock() const { return *m_dock; }

    WeightCompressionOverlay& overlay() const { return *m_overlay; }

    /// Compresses the next document that opens with `request` (command line), as one undo step.
    void setInitialRequest(const WeightCompressionRequest& request) { m_initial = request; }

    /// Plans `request` for the open document in the background; on success pushes the plan as
    /// one undo step and shows the dock. Emits compressionFinished either way.
    void compress(const WeightCompressionRequest& request);

    /// Writes the open document with its plan applied to `path` in the background.
    void exportCompressed(const QString& path);

    /// Writes the open document converted to float16 to `path` in the background.
    void exportFp16(const QString& path, const compression::Fp16Options& options);

    /// Opens the options dialog and compresses when accepted.
    void showCompressDialog();

    void showExportCompressedDialog();

    void showExportFp16Dialog();

Q_SIGNALS:
    /// A compress() job ended; `ok` when the plan was applied.
    void compressionFinished(bool ok);

    /// An export job ended; `ok` when `path` was written.
    void exportFinished(bool ok, const QString& path);

private:
    void onDocumentChanged(GraphDocument* document);

    void syncActions();

    /// Rewrites a copy of the document's graph with `rewrite` (which says what it did) off the
    /// GUI thread, then writes it to `path`.
    using GraphRewrite = std::function<Result<QString>(graph::Graph&, Progress&)>;
    void startExport(const QString& path, GraphRewrite rewrite);

    void finishExport(const QString& path, const Result<QString>& written);

    QMainWindow& m_window;
    Session& m_session;
    JobRunner& m_jobs;
    MessageReporter& m_reporter;
    WeightCompressionPanel* m_panel;
    QDockWidget* m_dock;
    WeightCompressionOverlay* m_overlay;
    QAction* m_compress;
    QAction* m_exportCompressed;
    QAction* m_exportFp16;
    QPointer<GraphDocument> m_document;
    WeightCompressionRequest m_last;
    std::optional<WeightCompressionRequest> m_initial;
    bool m_busy = false;
};

} // namespace qs::ui
