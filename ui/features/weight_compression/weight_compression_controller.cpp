#include "ui/features/weight_compression/weight_compression_controller.h"

#include "core/runtime/labelled_scores.h"
#include "ui/accuracy_text.h"
#include "ui/actions.h"
#include "ui/features/weight_compression/compression_plan_state.h"
#include "ui/features/weight_compression/weight_compression_badges.h"
#include "ui/features/weight_compression/weight_compression_commands.h"
#include "ui/features/weight_compression/weight_compression_panel.h"
#include "ui/graph_document.h"
#include "ui/graph_page.h"
#include "ui/job_runner.h"
#include "ui/message_reporter.h"
#include "ui/model_export_job.h"
#include "ui/session.h"

#include <QAction>
#include <QDockWidget>
#include <QFileDialog>
#include <QMainWindow>

#include <optional>

namespace qs::ui {

namespace {
QString errorText(const Error& error) {
    return QString::fromStdString(error.toString());
}
} // namespace

WeightCompressionController::WeightCompressionController(const FeatureContext& context)
    : Feature(&context.window)
    , m_context(context)
    , m_panel(new WeightCompressionPanel(&context.window))
    , m_dock(new QDockWidget(tr("Weight Compression"), &context.window))
    , m_overlay(new WeightCompressionOverlay(context.page, this))
    , m_export(new ModelExportJob(context.window, context.jobs, context.reporter, this)) {
    m_dock->setObjectName(QStringLiteral("weightCompressionDock"));
    m_dock->setWidget(m_panel);
    connect(&context.session, &Session::documentChanged, this,
            &WeightCompressionController::onDocumentChanged);
    connect(m_panel, &WeightCompressionPanel::weightActivated, &context.page,
            [&page = context.page](const QString& node) { page.revealQuantizer(-1, node); });
    connect(m_export, &ModelExportJob::runningChanged, this,
            &WeightCompressionController::syncActions);
    connect(m_export, &ModelExportJob::finished, this,
            &WeightCompressionController::exportFinished);
    m_last.options.mode = compression::CompressionMode::Int4Asym;
}

WeightCompressionController::~WeightCompressionController() = default;

QString WeightCompressionController::key() const {
    return kWeightCompressionKey;
}

void WeightCompressionController::createActions(Actions& actions) {
    m_compress = actions.addFeatureAction(
        key(), FeatureMenu::Quantize,
        {QStringLiteral("weight_compression.compress"), tr("Compress &Weights…"),
         tr("Plan int4/int8 weight compression of MatMul/Gemm/Conv weights")});
    m_exportCompressed = actions.addFeatureAction(
        key(), FeatureMenu::Export,
        {QStringLiteral("weight_compression.export"), tr("&Weight-Compressed ONNX…"),
         tr("Write the model with its weights compressed (DequantizeLinear)")});
    connect(m_compress, &QAction::triggered, this,
            &WeightCompressionController::showCompressDialog);
    connect(m_exportCompressed, &QAction::triggered, this,
            &WeightCompressionController::showExportCompressedDialog);
    syncActions();
}

void WeightCompressionController::onDocumentChanged(GraphDocument* document) {
    if (!m_document.isNull()) {
        disconnect(m_document, nullptr, this, nullptr);
    }
    m_document = document;
    m_panel->setDocument(document);
    m_overlay->setDocument(document);
    if (document != nullptr) {
        connect(document, &GraphDocument::stateChanged, this, [this](const QString& key) {
            if (key == kWeightCompressionKey) {
                syncActions();
            }
        });
    }
    syncActions();
    if (m_initial && document != nullptr) {
        const WeightCompressionRequest request = *m_initial;
        m_initial.reset();
        compress(request);
    }
}

void WeightCompressionController::syncActions() {
    if (m_compress == nullptr) {
        return; // before createActions()
    }
    const bool idle = !m_document.isNull() && !m_busy && !m_export->isRunning();
    m_compress->setEnabled(idle);
    m_exportCompressed->setEnabled(idle && compressionPlan(*m_document) != nullptr);
}

void WeightCompressionController::compress(const WeightCompressionRequest& request) {
    if (m_document.isNull()) {
        m_context.reporter.error(tr("Cannot compress weights"), tr("No model is open."));
        Q_EMIT compressionFinished(false);
        return;
    }
    m_last = request;
    m_busy = true;
    syncActions();
    QPointer<GraphDocument> document = m_document;
    // The job works on a copy: the document may close while it runs (weights are shared).
    graph::Graph graph = document->graph();
    m_context.jobs.start<compression::CompressionPlan>(
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
                    m_context.reporter.error(tr("Cannot compress weights"),
                                             errorText(plan.error()));
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

void WeightCompressionController::exportCompressed(const QString& path) {
    const compression::CompressionPlan* plan =
        m_document.isNull() ? nullptr : compressionPlan(*m_document);
    if (plan == nullptr) {
        m_context.reporter.error(tr("Cannot export"), tr("Compress the weights first (Quantize ▸ "
                                                         "Compress Weights…)."));
        Q_EMIT exportFinished(false, path);
        return;
    }
    // With a labelled dataset the float model and the compressed copy are scored on it, so the
    // message states the accuracy of what was written.
    m_export->start(
        m_document->graph(), path,
        [plan = *plan, dataset = m_last.dataset](graph::Graph& graph,
                                                 Progress& progress) -> Result<QString> {
            std::optional<graph::Graph> floatModel;
            if (dataset.hasLabels()) {
                floatModel = graph;
            }
            QS_ASSIGN_OR_RETURN(const compression::CompressionSummary summary,
                                compression::applyWeightCompression(graph, plan, progress));
            QString text = QObject::tr("%1 weights, %2 KiB -> %3 KiB (opset %4)")
                               .arg(summary.compressedWeights)
                               .arg(summary.floatBytesBefore / 1024)
                               .arg(summary.bytesAfter / 1024)
                               .arg(summary.opset);
            if (floatModel) {
                QS_ASSIGN_OR_RETURN(const std::optional<runtime::LabelledScores> scores,
                                    runtime::scoreLabelled(*floatModel, graph, dataset, progress));
                QS_ASSIGN_OR_RETURN(const std::optional<report::AccuracyComparison> accuracy,
                                    report::compareAccuracy(scores).context("labels"));
                if (accuracy) {
                    text += QStringLiteral("; ") +
                            accuracySummary(*accuracy, QObject::tr("compressed"));
                }
            }
            return text;
        });
}

void WeightCompressionController::showCompressDialog() {
    WeightCompressionDialog dialog(&m_context.window);
    dialog.setRequest(m_last);
    if (dialog.exec() == QDialog::Accepted) {
        if (auto request = dialog.request(); request.ok()) {
            compress(*request);
        }
    }
}

void WeightCompressionController::showExportCompressedDialog() {
    const QString path = QFileDialog::getSaveFileName(
        &m_context.window, tr("Export Weight-Compressed ONNX"), {}, tr("ONNX models (*.onnx)"));
    if (!path.isEmpty()) {
        exportCompressed(path);
    }
}

} // namespace qs::ui
