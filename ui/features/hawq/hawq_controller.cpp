#include "ui/features/hawq/hawq_controller.h"

#include "ui/actions.h"
#include "ui/features/hawq/hawq_dialog.h"
#include "ui/features/hawq/hawq_state.h"
#include "ui/features/hawq/pareto_explorer.h"
#include "ui/graph_document.h"
#include "ui/graph_page.h"
#include "ui/graph_scene.h"
#include "ui/job_runner.h"
#include "ui/message_reporter.h"
#include "ui/quantizer_commands.h"
#include "ui/session.h"

#include <QAction>
#include <QDockWidget>
#include <QMainWindow>
#include <QStatusBar>

#include <memory>
#include <unordered_map>
#include <utility>

namespace qs::ui {

namespace {
constexpr int kStatusMessageMs = 8000;
} // namespace

HawqController::HawqController(const FeatureContext& context)
    : Feature(&context.window)
    , m_context(context)
    , m_dock(new QDockWidget(tr("Pareto Explorer"), &context.window))
    , m_explorer(new ParetoExplorer) {
    m_dock->setObjectName(QStringLiteral("hawqParetoDock"));
    m_dock->setWidget(m_explorer);
    connect(&m_context.session, &Session::documentChanged, this,
            &HawqController::onDocumentChanged);
    connect(m_explorer, &ParetoExplorer::applyRequested, this,
            [this](size_t index) { applyCandidate(index); });
    connect(m_explorer, &ParetoExplorer::previewRequested, this, &HawqController::previewCandidate);
}

HawqController::~HawqController() = default;

QString HawqController::key() const {
    return kHawqKey;
}

QDockWidget* HawqController::dock() const {
    return m_dock;
}

void HawqController::createActions(Actions& actions) {
    m_hawq = actions.addFeatureAction(
        key(), FeatureMenu::Quantize,
        {QStringLiteral("hawq.run"), tr("&HAWQ…"),
         tr("Choose bit widths per layer from Hessian traces under a BitOps compression ratio, "
            "and explore the Pareto front")});
    connect(m_hawq, &QAction::triggered, this, &HawqController::showDialog);
    updateActions();
}

void HawqController::onDocumentChanged(GraphDocument* document) {
    if (m_document != nullptr) {
        disconnect(m_document, nullptr, this, nullptr);
    }
    m_document = document;
    m_context.page.scene()->clearBitsPreview();
    connect(document, &GraphDocument::quantizationChanged, this, &HawqController::updateActions);
    if (document != nullptr && document->state<HawqState>(kHawqKey) == nullptr) {
        // A session's HAWQ result: the explorer again, traces and candidates as saved.
        if (const Result<bool> restored = restoreHawq(*document); !restored.ok()) {
            m_context.reporter.error(tr("Cannot restore the HAWQ result"),
                                     QString::fromStdString(restored.error().toString()));
        }
    }
    showDocumentResult();
    updateActions();
    if (const double ratio = std::exchange(m_runOnOpen, 0.0); ratio > 0.0) {
        mixed_precision::HawqRequest request;
        request.settings.hw = "npu";
        request.compressionRatio = ratio;
        request.dataset.randomSamples = 8;
        request.samples = 8;
        request.iterations = 10;
        run(request);
    }
}

void HawqController::showDocumentResult() {
    const HawqState* state =
        m_document == nullptr ? nullptr : m_document->state<HawqState>(kHawqKey);
    m_explorer->setOutcome(state == nullptr ? nullptr : state->outcome,
                           state == nullptr ? 0 : state->selected);
    m_explorer->setStale(state != nullptr && state->stale);
}

void HawqController::updateActions() {
    if (m_hawq == nullptr) {
        return;
    }
    m_hawq->setEnabled(!m_running && m_document != nullptr &&
                       m_document->quantization() != nullptr);
}

void HawqController::runOnOpen(double ratio) {
    m_runOnOpen = ratio;
}

void HawqController::showDialog() {
    HawqDialog dialog(&m_context.window);
    if (m_document != nullptr && m_document->quantization() != nullptr && m_last.dataset.empty()) {
        m_last.settings.hw = m_document->quantization()->settings.hw;
    }
    dialog.setRequest(m_last);
    if (dialog.exec() == QDialog::Accepted) {
        if (auto request = dialog.request(); request.ok()) {
            m_last = *request;
            run(*request);
        }
    }
}

bool HawqController::run(mixed_precision::HawqRequest request) {
    GraphDocument* document = m_document.data();
    if (m_running || document == nullptr || document->quantization() == nullptr) {
        m_context.reporter.error(tr("Cannot run HAWQ"),
                                 m_running ? tr("HAWQ is already running.")
                                           : tr("Open a model with quantizers first."));
        return false;
    }
    const quantization::QuantizationSettings& current = document->quantization()->settings;
    request.settings.preset = current.preset;
    request.settings.rule = current.rule;
    // The traces of the last run, when the samples and iterations are the same.
    if (const HawqState* state = document->state<HawqState>(kHawqKey);
        state != nullptr && state->outcome && state->request.samples == request.samples &&
        state->request.iterations == request.iterations &&
        state->request.dataset.describe() == request.dataset.describe()) {
        request.traces = state->outcome->analysis.traceScores;
    }
    auto model = std::make_shared<const graph::Graph>(document->graph());
    m_running = true;
    updateActions();
    m_context.jobs.start<mixed_precision::HawqOutcome>(
        tr("HAWQ on %1").arg(document->fileName()),
        [model, request](Progress& progress) {
            return mixed_precision::runHawq(*model, request, progress);
        },
        [this, request,
         target = QPointer<GraphDocument>(document)](Result<mixed_precision::HawqOutcome> result) {
            m_running = false;
            updateActions();
            if (!result.ok()) {
                const QString message = QString::fromStdString(result.error().toString());
                if (result.error().code() == Errc::Cancelled) {
                    m_context.window.statusBar()->showMessage(tr("HAWQ cancelled"),
                                                              kStatusMessageMs);
                } else {
                    m_context.reporter.error(tr("HAWQ failed"), message);
                }
                Q_EMIT hawqFinished(false, message);
                return;
            }
            if (target.isNull()) {
                Q_EMIT hawqFinished(false, tr("The model was closed"));
                return;
            }
            auto state = std::make_unique<HawqState>();
            state->request = request;
            state->request.traces.reset();
            state->selected = result->chosen;
            state->modelHash = target->modelHash();
            state->outcome =
                std::make_shared<const mixed_precision::HawqOutcome>(std::move(result).value());
            target->setState(kHawqKey, std::move(state));
            if (target == m_document) {
                showDocumentResult();
                m_dock->show();
                m_dock->raise();
                applyCandidate(target->state<HawqState>(kHawqKey)->selected);
            }
            Q_EMIT hawqFinished(true, {});
        });
    return true;
}

void HawqController::previewCandidate(std::optional<size_t> index) {
    GraphScene& scene = *m_context.page.scene();
    GraphDocument* document = m_document.data();
    const HawqState* state = document == nullptr ? nullptr : document->state<HawqState>(kHawqKey);
    if (!index || state == nullptr || !state->outcome ||
        *index >= state->outcome->analysis.candidates.size() ||
        document->quantization() == nullptr ||
        // The candidate's quantizer ids are those of the outcome's proposal: they name the
        // document's badges only while it has the outcome's settings (the HW config).
        !(document->quantization()->settings == state->outcome->state.settings) || state->stale) {
        scene.clearBitsPreview();
        return;
    }
    const mixed_precision::HawqOutcome& outcome = *state->outcome;
    const Result<quantization::QuantizerConfigChoice> changes = mixed_precision::hawqConfigChoice(
        outcome.state, outcome.analysis.problem, outcome.analysis.candidates[*index]);
    if (!changes.ok()) {
        scene.clearBitsPreview();
        return;
    }
    std::unordered_map<int, int> bits;
    for (const auto& [id, config] : *changes) {
        bits[id] = config.numBits;
    }
    scene.previewBits(bits);
}

bool HawqController::applyCandidate(size_t index) {
    m_context.page.scene()->clearBitsPreview(); // badges kept by the edit must not stay previews
    GraphDocument* document = m_document.data();
    HawqState* state = document == nullptr ? nullptr : document->state<HawqState>(kHawqKey);
    if (state == nullptr || !state->outcome ||
        index >= state->outcome->analysis.candidates.size() ||
        document->quantization() == nullptr) {
        return false;
    }
    if (state->stale) {
        m_context.reporter.error(tr("Cannot apply the HAWQ candidate"),
                                 tr("The HAWQ result is stale: it was computed for another version "
                                    "of the model. Re-run Quantize ▸ HAWQ…."));
        return false;
    }
    const mixed_precision::HawqOutcome& outcome = *state->outcome;
    const mixed_precision::HawqCandidate& candidate = outcome.analysis.candidates[index];
    // The candidate's choices refer to the outcome's proposal: the document takes its settings
    // first when they differ (the dialog chose another HW config), in the same undo step.
    const Result<quantization::QuantizerConfigChoice> changes =
        mixed_precision::hawqConfigChoice(outcome.state, outcome.analysis.problem, candidate);
    if (!changes.ok()) {
        m_context.reporter.error(tr("Cannot apply the HAWQ candidate"),
                                 QString::fromStdString(changes.error().toString()));
        return false;
    }
    QUndoStack& undo = document->undoStack();
    undo.beginMacro(tr("HAWQ: ratio %1").arg(candidate.ratio, 0, 'f', 3));
    if (!(document->quantization()->settings == outcome.state.settings)) {
        undo.push(new ChangeQuantizationSettingsCommand(*document, outcome.state.settings));
    }
    undo.push(new ChooseQuantizerConfigCommand(*document, *changes));
    undo.endMacro();
    state->selected = index;
    m_explorer->setOutcome(state->outcome, index);
    const quantization::SingleConfigQuantizerSetup& setup = document->quantization()->setup;
    m_context.window.statusBar()->showMessage(
        tr("HAWQ: ratio %1, metric %2; %3 merged quantizer(s), %4 requantizer(s)")
            .arg(candidate.ratio, 0, 'f', 3)
            .arg(candidate.metric, 0, 'g', 4)
            .arg(mixed_precision::mergedQuantizerCount(setup))
            .arg(mixed_precision::requantizerCount(setup)),
        kStatusMessageMs);
    return true;
}

} // namespace qs::ui
