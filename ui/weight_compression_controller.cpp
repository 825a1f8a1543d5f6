#include "ui/weight_compression_controller.h"

#include "core/onnx/model_io.h"
#include "ui/graph_document.h"
#include "ui/graph_page.h"
#include "ui/job_runner.h"
#include "ui/message_reporter.h"
#include "ui/session.h"
#include "ui/weight_compression_badges.h"
#include "ui/weight_compression_commands.h"
#include "ui/weight_compression_panel.h"

#include <QAction>
#include <QCheckBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMainWindow>
#include <QMenu>
#include <QRegularExpression>
#include <QStatusBar>
#include <QVBoxLayout>

namespace qs::ui {

namespace {
constexpr int kStatusMessageMs = 4000;

QString errorText(const Error& error) {
    return QString::fromStdString(error.toString());
}
} // namespace

Fp16ExportDialog::Fp16ExportDialog(QWidget* parent)
    : QDialog(parent)
    , m_keepIoTypes(new QCheckBox(tr("Keep float32 model inputs and outputs"), this))
    , m_blockOps(new QLineEdit(this)) {
    setWindowTitle(tr("Export FP16 ONNX"));
    m_keepIoTypes->setChecked(true);
    m_blockOps->setPlaceholderText(tr("e.g. Softmax, LayerNormalization"));
    QStringList defaults;
    for (const std::string& op : compression::defaultFp16BlockList()) {
        defaults.push_back(QString::fromStdString(op));
    }
    auto* note = new QLabel(
        tr("Always kept in float32: %1.").arg(defaults.join(QStringLiteral(", "))), this);
    note->setWordWrap(true);
    auto* form = new QFormLayout;
    form->addRow(QString(), m_keepIoTypes);
    form->addRow(tr("&Block ops:"), m_blockOps);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    auto* column = new QVBoxLayout(this);
    column->addLayout(form);
    column->addWidget(note);
    column->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
}

compression::Fp16Options Fp16ExportDialog::options() const {
    compression::Fp16Options options;
    options.keepIoTypes = m_keepIoTypes->isChecked();
    static const QRegularExpression separators(QStringLiteral("[,\\s]+"));
    for (const QString& op : m_blockOps->text().split(separators, Qt::SkipEmptyParts)) {
        options.blockedOps.push_back(op.toStdString());
    }
    return options;
}

WeightCompressionController::WeightCompressionController(QMainWindow& window, Session& session,
                                                         JobRunner& jobs, GraphPage& page,
                                                         MessageReporter& reporter)
    : QObject(&window)
    , m_window(window)
    , m_session(session)
    , m_jobs(jobs)
    , m_reporter(reporter)
    , m_panel(new WeightCompressionPanel(&window))
    , m_dock(new QDockWidget(tr("Weight Compression"), &window))
    , m_overlay(new WeightCompressionOverlay(page, this))
    , m_compress(new QAction(tr("Compress &Weights…"), this))
    , m_exportCompressed(new QAction(tr("&Weight-Compressed ONNX…"), this))
    , m_exportFp16(new QAction(tr("&FP16 ONNX…"), this)) {
    m_compress->setStatusTip(tr("Plan int4/int8 weight compression of MatMul/Gemm/Conv weights"));
    m_exportCompressed->setStatusTip(
        tr("Write the model with its weights compressed (DequantizeLinear)"));
    m_exportFp16->setStatusTip(tr("Write the model with float16 weights and computation"));
    m_dock->setObjectName(QStringLiteral("weightCompressionDock"));
    m_dock->setWidget(m_panel);
    window.addDockWidget(Qt::BottomDockWidgetArea, m_dock);
    m_dock->hide();
    connect(m_compress, &QAction::triggered, this,
            &WeightCompressionController::showCompressDialog);
    connect(m_exportCompressed, &QAction::triggered, this,
            &WeightCompressionController::showExportCompressedDialog);
    connect(m_exportFp16, &QAction::triggered, this,
            &WeightCompressionController::showExportFp16Dialog);
    connect(&session, &Session::documentChanged, this,
            &WeightCompressionController::onDocumentChanged);
    connect(m_panel, &WeightCompressionPanel::weightActivated, &page,
            [&page](const QString& node) { page.revealQuantizer(-1, node); });
    m_last.options.mode = compression::CompressionMode::Int4Asym;
    syncActions();
}

WeightCompressionController::~WeightCompressionController() = default;

void WeightCompressionController::installMenus(QMenu& file, QAction* beforeInFile,
                                               QMenu& quantize) {
    // File ▸ Export gathers the model exports (calibration adds Quantized ONNX); whoever comes
    // first creates it.
    auto* exportMenu =
        file.findChild<QMenu*>(QStringLiteral("exportMenu"), Qt::FindDirectChildrenOnly);
    if (exportMenu == nullptr) {
        exportMenu = new QMenu(tr("E&xport"), &file);
        exportMenu->setObjectName(QStringLiteral("exportMenu"));
        file.insertMenu(beforeInFile, exportMenu);
    }
    exportMenu->addAction(m_exportCompressed);
    exportMenu->addAction(m_exportFp16);
    quantize.addSeparator();
    quantize.addAction(m_compress);
}

void WeightCompressionController::onDocumentChanged(GraphDocument* document) {
    if (!m_document.isNull()) {
        disconnect(m_document, nullptr, this, nullptr);
    }
    m_document = document;
    m_panel->setDocument(document);
    m_overlay->setDocument(document);
    if (document != nullptr) {
        connect(document, &GraphDocument::compressionPlanChanged, this,
                &WeightCompressionController::syncActions);
    }
    syncActions();
    if (m_initial && document != nullptr) {
        const WeightCompressionRequest request = *m_initial;
        m_initial.reset();
        compress(request);
    }
}

void WeightCompressionController::syncActions() {
    const bool open = !m_document.isNull();
    m_compress->setEnabled(open && !m_busy);
    m_exportFp16->setEnabled(open && !m_busy);
    m_exportCompressed->setEnabled(open && !m_busy && m_document->compressionPlan() != nullptr);
}

void WeightCompressionController::compress(const WeightCompressionRequest& request) {
    if (m_document.isNull()) {
        m_reporter.error(tr("Cannot compress weights"), tr("No model is open."));
        Q_EMIT compressionFinished(false);
        return;
    }
    m_last = request;
    m_busy = true;
    syncActions();
    QPointer<GraphDocument> document = m_document;
    // The job works on a copy: the document may close while it runs (weights are shared).
    graph::Graph graph = document->graph();
    m_jobs.start<compression::CompressionPlan>(
        tr("Compressing weights of %1").arg(document->fileName()),
        [graph = std::move(graph),
         request](Progress& progress) -> Result<compression::CompressionPlan> {
            QS_ASSIGN_OR_RETURN(compression::WeightCompressionOutcome outcome,
                                compression::planCompression(graph, request, progress));
            return std::move(outcome.plan);
        },
        [this, document](Result<compression::CompressionPlan> plan) {
            m_busy = false;
            if (document.isNull() || document != m_document) {
                syncActions();
                Q_EMIT compressionFinished(false);
                return;
            }
            if (!plan.ok()) {
                syncActions();
                if (plan.error().code() != Errc::Cancelled) {
                    m_reporter.error(tr("Cannot compress weights"), errorText(plan.error()));
                }
                Q_EMIT compressionFinished(false);
                return;
            }
            document->undoStack().push(
                new ApplyCompressionPlanCommand(*document, std::move(plan).value()));
            m_dock->show();
            m_dock->raise();
            syncActions();
            Q_EMIT compressionFinished(true);
        });
}

void WeightCompressionController::finishExport(const QString& path,
                                               const Result<QString>& written) {
    m_busy = false;
    syncActions();
    if (!written.ok()) {
        if (written.error().code() != Errc::Cancelled) {
            m_reporter.error(tr("Cannot export %1").arg(QDir::toNativeSeparators(path)),
                             errorText(written.error()));
        }
        Q_EMIT exportFinished(false, path);
        return;
    }
    m_window.statusBar()->showMessage(written.value(), kStatusMessageMs);
    Q_EMIT exportFinished(true, path);
}

void WeightCompressionController::startExport(const QString& path, GraphRewrite rewrite) {
    m_busy = true;
    syncActions();
    graph::Graph graph = m_document->graph();
    m_jobs.start<QString>(
        tr("Writing %1").arg(QFileInfo(path).fileName()),
        [graph = std::move(graph), rewrite = std::move(rewrite),
         target = path.toStdString()](Progress& progress) mutable -> Result<QString> {
            QS_ASSIGN_OR_RETURN(const QString done, rewrite(graph, progress));
            QS_TRY(onnx::exportModel(graph, target));
            return QObject::tr("Saved %1: %2").arg(QString::fromStdString(target), done);
        },
        [this, path](const Result<QString>& written) { finishExport(path, written); });
}

void WeightCompressionController::exportCompressed(const QString& path) {
    const compression::CompressionPlan* plan =
        m_document.isNull() ? nullptr : m_document->compressionPlan();
    if (plan == nullptr) {
        m_reporter.error(tr("Cannot export"), tr("Compress the weights first (Quantize ▸ "
                                                 "Compress Weights…)."));
        Q_EMIT exportFinished(false, path);
        return;
    }
    startExport(path, [plan = *plan](graph::Graph& graph, Progress& progress) -> Result<QString> {
        compression::WeightCompressionOutcome outcome{.plan = plan};
        QS_TRY(compression::applyCompression(graph, outcome, progress));
        const compression::CompressionSummary& summary = *outcome.summary;
        return QObject::tr("%1 weights, %2 KiB -> %3 KiB (opset %4)")
            .arg(summary.compressedWeights)
            .arg(summary.floatBytesBefore / 1024)
            .arg(summary.bytesAfter / 1024)
            .arg(summary.opset);
    });
}

void WeightCompressionController::exportFp16(const QString& path,
                                             const compression::Fp16Options& options) {
    if (m_document.isNull()) {
        m_reporter.error(tr("Cannot export"), tr("No model is open."));
        Q_EMIT exportFinished(false, path);
        return;
    }
    startExport(path, [options](graph::Graph& graph, Progress&) -> Result<QString> {
        QS_ASSIGN_OR_RETURN(const compression::Fp16Report report,
                            compression::convertToFloat16(graph, options));
        return QObject::tr("%1 initializers in float16, %2 Casts, %3 clamped")
            .arg(report.convertedInitializers)
            .arg(report.castsInserted)
            .arg(report.clampedElements);
    });
}

void WeightCompressionController::showCompressDialog() {
    WeightCompressionDialog dialog(&m_window);
    dialog.setRequest(m_last);
    if (dialog.exec() == QDialog::Accepted) {
        compress(dialog.request());
    }
}

void WeightCompressionController::showExportCompressedDialog() {
    const QString path = QFileDialog::getSaveFileName(
        &m_window, tr("Export Weight-Compressed ONNX"), {}, tr("ONNX models (*.onnx)"));
    if (!path.isEmpty()) {
        exportCompressed(path);
    }
}

void WeightCompressionController::showExportFp16Dialog() {
    Fp16ExportDialog options(&m_window);
    if (options.exec() != QDialog::Accepted) {
        return;
    }
    const QString path = QFileDialog::getSaveFileName(&m_window, tr("Export FP16 ONNX"), {},
                                                      tr("ONNX models (*.onnx)"));
    if (!path.isEmpty()) {
        exportFp16(path, options.options());
    }
}

} // namespace qs::ui
