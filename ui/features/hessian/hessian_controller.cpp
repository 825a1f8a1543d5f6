#include "ui/features/hessian/hessian_controller.h"

#include "core/runtime/dataset_request.h"
#include "ui/actions.h"
#include "ui/features/hessian/hessian_cache.h"
#include "ui/features/hessian/hessian_state.h"
#include "ui/features/hessian/sensitivity_overlay.h"
#include "ui/features/hessian/sensitivity_panel.h"
#include "ui/graph_document.h"
#include "ui/graph_items.h"
#include "ui/graph_page.h"
#include "ui/graph_scene.h"
#include "ui/graph_view.h"
#include "ui/job_runner.h"
#include "ui/message_reporter.h"
#include "ui/session.h"

#include <QAction>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QMainWindow>
#include <QPushButton>
#include <QStatusBar>

#include <memory>
#include <utility>

namespace qs::ui {

namespace {
constexpr int kStatusMessageMs = 8000;
} // namespace

HessianController::HessianController(const FeatureContext& context)
    : Feature(&context.window)
    , m_context(context)
    , m_overlay(new SensitivityOverlay(context.page, this))
    , m_panel(new SensitivityPanel)
    , m_dock(new QDockWidget(tr("Sensitivity"), &context.window)) {
    m_dock->setObjectName(QStringLiteral("sensitivityDock"));
    m_dock->setWidget(m_panel);
    m_last.dataset.randomSamples = m_last.samples;
    connect(&m_context.session, &Session::documentChanged, this,
            &HessianController::onDocumentChanged);
    connect(m_panel, &SensitivityPanel::computeRequested, this, &HessianController::showDialog);
    connect(&m_panel->chart(), &SensitivityChart::barClicked, this, &HessianController::selectNode);
    connect(m_context.page.scene(), &QGraphicsScene::selectionChanged, this,
            &HessianController::followSelection);
}

HessianController::~HessianController() = default;

QString HessianController::key() const {
    return kHessianKey;
}

void HessianController::createActions(Actions& actions) {
    m_compute = actions.addFeatureAction(
        key(), FeatureMenu::Quantize,
        {QStringLiteral("hessian.compute"), tr("Compute &Hessian Scores…"),
         tr("Estimate each Conv/Gemm/MatMul output's Hessian trace (label-free, Hutchinson) "
            "over a dataset: how sensitive the model is to noise there")});
    m_overlayToggle = actions.addFeatureAction(
        key(), FeatureMenu::View,
        {QStringLiteral("hessian.overlay"),
         tr("S&ensitivity Overlay"),
         tr("Frame every scored op in the colour of its log10 Hessian trace"),
         {},
         true});
    m_overlayToggle->setEnabled(true); // the legend says what is missing
    connect(m_compute, &QAction::triggered, this, &HessianController::showDialog);
    connect(m_overlayToggle, &QAction::toggled, m_overlay, &SensitivityOverlay::setEnabled);
    updateActions();
}

void HessianController::updateActions() {
    if (m_compute != nullptr) {
        m_compute->setEnabled(!m_running && m_document != nullptr);
    }
    m_panel->computeButton().setEnabled(!m_running && m_document != nullptr);
}

void HessianController::onDocumentChanged(GraphDocument* document) {
    m_document = document;
    m_overlay->setDocument(document);
    m_panel->setDocument(document);
    if (document != nullptr) {
        if (const Result<void> restored = restoreSensitivity(*document); !restored.ok()) {
            m_context.reporter.error(tr("Cannot restore the Hessian scores"),
                                     QString::fromStdString(restored.error().toString()));
        }
    }
    updateActions();
    if (std::optional<HessianJobRequest> request = std::exchange(m_computeOnOpen, std::nullopt)) {
        if (m_overlayToggle != nullptr) {
            m_overlayToggle->setChecked(true);
        }
        m_dock->show();
        m_dock->raise();
        compute(*request);
    }
}

void HessianController::computeOnOpen(int64_t randomSamples, int iterations) {
    HessianJobRequest request;
    request.dataset.randomSamples = randomSamples;
    request.samples = randomSamples;
    request.batch = std::min<int64_t>(hessian::kDefaultHessianBatch, randomSamples);
    request.iterations = iterations;
    m_computeOnOpen = request;
}

void HessianController::showDialog() {
    HessianDialog dialog(&m_context.window);
    dialog.setRequest(m_last);
    if (dialog.exec() == QDialog::Accepted) {
        if (auto request = dialog.request(); request.ok()) {
            m_last = *request;
            compute(*request);
        }
    }
}

bool HessianController::compute(const HessianJobRequest& request) {
    GraphDocument* document = m_document.data();
    if (m_running || document == nullptr) {
        m_context.reporter.error(tr("Cannot compute Hessian scores"),
                                 m_running ? tr("A Hessian computation is already running.")
                                           : tr("Open a model first."));
        return false;
    }
    // The job works on a copy of the graph and the document's shared cache; the result goes to
    // the document it was made for, if it is still open.
    auto model = std::make_shared<const graph::Graph>(document->graph());
    std::shared_ptr<HessianCache> cache = hessianCache(*document);
    const std::string modelHash = document->modelHash();
    m_running = true;
    updateActions();
    m_context.jobs.start<SensitivityResult>(
        tr("Computing Hessian scores of %1").arg(document->fileName()),
        [model, cache, request, modelHash](Progress& progress) -> Result<SensitivityResult> {
            QElapsedTimer timer;
            timer.start();
            hessian::HessianScoresRequest scoresRequest = request.scoresRequest();
            // A model with a static batch runs only that batch (the CLI asks for --batch).
            const std::vector<graph::ValueId> inputs = model->runtimeInputs();
            const int64_t fixed =
                inputs.empty() ? 0 : runtime::staticBatchSize(model->value(inputs[0]));
            if (fixed > 0) {
                scoresRequest.batch = fixed;
            }
            QS_ASSIGN_OR_RETURN(hessian::HessianScores scores,
                                cache->fetch(*model, request.dataset, scoresRequest, progress));
            if (fixed > 0 && fixed != request.scoresRequest().batch) {
                scores.notes.push_back("the model's input has a static batch of " +
                                       std::to_string(fixed) + ": Hessian batch " +
                                       std::to_string(fixed));
            }
            SensitivityResult result;
            result.dataset = request.dataset.describe();
            result.datasetFingerprint = session::datasetFingerprint(request.dataset);
            result.modelHash = modelHash;
            result.datasetRequest = request.dataset;
            result.seconds = static_cast<double>(timer.elapsed()) / 1000.0;
            result.scores = std::move(scores);
            return result;
        },
        [this, target = QPointer<GraphDocument>(document)](Result<SensitivityResult> result) {
            m_running = false;
            updateActions();
            if (!result.ok()) {
                const QString message = QString::fromStdString(result.error().toString());
                if (result.error().code() == Errc::Cancelled) {
                    m_context.window.statusBar()->showMessage(tr("Hessian scores cancelled"),
                                                              kStatusMessageMs);
                } else {
                    m_context.reporter.error(tr("Hessian scores failed"), message);
                }
                Q_EMIT computeFinished(false, message);
                return;
            }
            if (target.isNull()) {
                Q_EMIT computeFinished(false, tr("The model was closed"));
                return;
            }
            const size_t targets = result->scores.targets.size();
            const double seconds = result->seconds;
            storeSensitivity(*target, std::move(result).value());
            m_context.window.statusBar()->showMessage(
                tr("Hessian scores of %1 ops in %2 s").arg(targets).arg(seconds, 0, 'f', 1),
                kStatusMessageMs);
            Q_EMIT computeFinished(true, {});
        });
    return true;
}

void HessianController::selectNode(const QString& nodeName) {
    m_context.page.selectNode(nodeName);
}

void HessianController::followSelection() {
    const QList<QGraphicsItem*> selected = m_context.page.scene()->selectedItems();
    if (selected.size() == 1 && selected.front()->type() == NodeItem::Type) {
        m_panel->chart().setHighlighted(
            static_cast<const NodeItem*>(selected.front())->content().fullName);
    }
}

} // namespace qs::ui
