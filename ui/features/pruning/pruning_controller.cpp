#include "ui/features/pruning/pruning_controller.h"

#include "core/pruning/memory_calculator.h"
#include "core/pruning/prepare_graph.h"
#include "core/pruning/prune_graph.h"
#include "core/pruning/pruning_section.h"
#include "core/report/accuracy.h"
#include "core/runtime/dataset_request.h"
#include "core/runtime/labelled_scores.h"
#include "ui/accuracy_text.h"
#include "ui/actions.h"
#include "ui/features/hessian/hessian_cache.h"
#include "ui/features/hessian/hessian_state.h"
#include "ui/features/pruning/pruning_commands.h"
#include "ui/features/pruning/pruning_dialog.h"
#include "ui/features/pruning/pruning_overlay.h"
#include "ui/features/pruning/pruning_panel.h"
#include "ui/features/pruning/pruning_state.h"
#include "ui/graph_document.h"
#include "ui/graph_items.h"
#include "ui/graph_page.h"
#include "ui/graph_scene.h"
#include "ui/graph_view.h"
#include "ui/job_runner.h"
#include "ui/message_reporter.h"
#include "ui/model_export_job.h"
#include "ui/session.h"

#include <QAction>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QMainWindow>
#include <QPushButton>
#include <QStatusBar>
#include <QStringList>

#include <memory>
#include <set>
#include <utility>

namespace qs::ui {

namespace {
constexpr int kStatusMessageMs = 8000;

QString qs(const std::string& text) {
    return QString::fromStdString(text);
}

/// What the job hands back: the run and the greedy's outcome for its target.
struct PruneJobResult {
    std::shared_ptr<PruningRun> run;
    pruning::PruningOutcome outcome;
};

/// The weights-mode request of the entries' per-channel LFH scores, batched as the CLI does.
hessian::HessianScoresRequest lfhScoresRequest(const graph::Graph& model,
                                               const pruning::PruningRequest& request,
                                               std::vector<std::string> entries) {
    hessian::HessianScoresRequest scores;
    scores.mode = hessian::HessianMode::Weights;
    scores.granularity = hessian::HessianScoresGranularity::PerOutputChannel;
    scores.targetNodes = std::move(entries);
    scores.samples = request.samples;
    scores.iterations = request.iterations;
    scores.earlyStop = request.earlyStop;
    const std::vector<graph::ValueId> inputs = model.runtimeInputs();
    const int64_t fixed = inputs.empty() ? 0 : runtime::staticBatchSize(model.value(inputs[0]));
    scores.batch = fixed > 0 ? fixed
                   : request.hessianBatch > 0
                       ? request.hessianBatch
                       : std::min(hessian::kDefaultHessianBatch, request.samples);
    return scores;
}

/// The entries' LFH scores from the document's shared Hessian service into request.scores (none
/// when the model has no pruning section).
Result<void> fetchLfhScores(const graph::Graph& model, HessianCache& cache,
                            pruning::PruningRequest& request, Progress& progress) {
    progress.report(0.0, "pruning sections");
    QS_ASSIGN_OR_RETURN(const graph::Graph prepared, pruning::preparePruningGraph(model));
    QS_ASSIGN_OR_RETURN(const pruning::SectionDetection detection,
                        pruning::detectPruningSections(prepared));
    std::vector<std::string> entries;
    for (const pruning::PruningSection& section : detection.sections) {
        entries.push_back(prepared.node(section.entry).name);
    }
    if (entries.empty()) {
        return success();
    }
    if (request.samples <= 0) {
        return Error(Errc::InvalidArgument, "LFH needs at least one sample");
    }
    QS_ASSIGN_OR_RETURN(request.scores,
                        cache
                            .fetch(model, request.dataset,
                                   lfhScoresRequest(model, request, std::move(entries)), progress)
                            .context("LFH scores"));
    return success();
}

/// The CLI's workflow, with the LFH scores from the document's shared Hessian service.
Result<PruneJobResult> runPruneJob(const graph::Graph& model, HessianCache& cache,
                                   pruning::PruningRequest request, const std::string& modelHash,
                                   Progress& progress) {
    QElapsedTimer timer;
    timer.start();
    if (request.importance == pruning::ImportanceMetric::Lfh) {
        SubProgress scoring(progress, 0.0, 0.97);
        QS_TRY(fetchLfhScores(model, cache, request, scoring));
    }
    SubProgress rest(progress, 0.97, 1.0);
    auto run = std::make_shared<PruningRun>();
    QS_ASSIGN_OR_RETURN(run->analysis, pruning::analyzePruning(model, request, rest));
    QS_ASSIGN_OR_RETURN(const std::vector<pruning::EntryConstraint> constraints,
                        pruning::constraintsFor(run->analysis, request));
    QS_ASSIGN_OR_RETURN(pruning::PruningOutcome outcome,
                        pruning::computePruningMasks(run->analysis, request.target, constraints));
    request.scores.reset(); // kept as H_c per section; the per-sample lists are not needed
    run->request = std::move(request);
    run->modelHash = modelHash;
    run->seconds = static_cast<double>(timer.elapsed()) / 1000.0;
    run->index();
    return PruneJobResult{std::move(run), std::move(outcome)};
}

/// FP32 bytes of the float initializers the graph's nodes read (each once): the dense size the
/// dialog shows before a run (the run counts the prepared graph, which can differ slightly).
int64_t denseWeightBytes(const graph::Graph& graph) {
    int64_t total = 0;
    std::set<size_t> seen;
    for (const graph::NodeId id : graph.nodeIds()) {
        for (const graph::ValueId in : graph.node(id).inputs) {
            if (in.valid() && graph.value(in).isInitializer() &&
                graph.value(in).initializer->dtype() == graph::DataType::Float &&
                seen.insert(in.index()).second) {
                total +=
                    graph.value(in).initializer->numElements() * pruning::kFp32BytesPerParameter;
            }
        }
    }
    return total;
}

QString constraintCommandText(const std::string& entry, const pruning::EntryConstraint& c) {
    switch (c.kind) {
    case pruning::EntryConstraint::Kind::Lock:
        return QObject::tr("Prune: lock %1").arg(qs(entry));
    case pruning::EntryConstraint::Kind::Keep:
        return QObject::tr("Prune: keep %1 channels of %2").arg(c.kept).arg(qs(entry));
    case pruning::EntryConstraint::Kind::Free:
        break;
    }
    return QObject::tr("Prune: free %1").arg(qs(entry));
}
} // namespace

PruningController::PruningController(const FeatureContext& context)
    : Feature(&context.window)
    , m_context(context)
    , m_panel(new PruningPanel)
    , m_dock(new QDockWidget(tr("Pruning"), &context.window))
    , m_overlay(new PruningOverlay(context.page, this))
    , m_exportJob(new ModelExportJob(context.window, context.jobs, context.reporter, this)) {
    m_dock->setObjectName(QStringLiteral("pruningDock"));
    m_dock->setWidget(m_panel);
    m_last.importance = pruning::ImportanceMetric::Lfh;
    m_last.dataset.randomSamples = m_last.samples;
    connect(&m_context.session, &Session::documentChanged, this,
            &PruningController::onDocumentChanged);
    connect(&m_context.session, &Session::openFailed, this, &PruningController::updateActions);
    connect(m_panel, &PruningPanel::pruneRequested, this, &PruningController::showDialog);
    connect(m_panel, &PruningPanel::constraintEdited, this,
            [this](int section, pruning::EntryConstraint constraint) {
                setConstraint(section, constraint);
            });
    connect(m_panel, &PruningPanel::targetEdited, this,
            [this](pruning::TargetMemory target) { setTarget(target); });
    connect(m_panel, &PruningPanel::sectionActivated, this, [this](int section) {
        const PruningResult* result = m_document.isNull() ? nullptr : pruningResult(*m_document);
        if (result != nullptr && section < result->run->sections()) {
            selectNode(qs(result->run->analysis.entryNames[static_cast<size_t>(section)]));
        }
    });
    connect(m_context.page.scene(), &QGraphicsScene::selectionChanged, this,
            &PruningController::followSelection);
    connect(m_exportJob, &ModelExportJob::runningChanged, this, &PruningController::updateActions);
    connect(m_exportJob, &ModelExportJob::finished, this, &PruningController::exportFinished);
}

PruningController::~PruningController() = default;

QString PruningController::key() const {
    return kPruningKey;
}

void PruningController::createActions(Actions& actions) {
    m_prune = actions.addFeatureAction(
        key(), FeatureMenu::Compress,
        {QStringLiteral("pruning.prune"), tr("&Prune…"),
         tr("SIMD structured pruning under a weight-memory target: pruning sections, label-free "
            "Hessian channel importance, greedy SIMD groups")});
    m_export = actions.addFeatureAction(key(), FeatureMenu::Export,
                                        {QStringLiteral("pruning.export"), tr("&Pruned ONNX…"),
                                         tr("Write the model with the pruned channels removed")});
    m_overlayToggle = actions.addFeatureAction(
        key(), FeatureMenu::View,
        {QStringLiteral("pruning.overlay"),
         tr("&Pruning Overlay"),
         tr("Tint pruning sections, show kept channels on their entries and mark the ops that "
            "cannot be pruned"),
         {},
         true});
    m_overlayToggle->setEnabled(true);
    m_overlayToggle->setChecked(true);
    m_apply = actions.addFeatureAction(
        key(), FeatureMenu::Compress,
        {QStringLiteral("pruning.apply"), tr("&Continue with Pruned Model"),
         tr("Make the pruned model the document: quantize, calibrate and export it in this "
            "session")});
    m_revert = actions.addFeatureAction(
        key(), FeatureMenu::Compress,
        {QStringLiteral("pruning.revert"), tr("&Back to Dense Model"),
         tr("Make the model file's graph the document again, with the pruning editable")});
    connect(m_apply, &QAction::triggered, this, &PruningController::continueWithPruned);
    connect(m_revert, &QAction::triggered, this, &PruningController::backToDense);
    connect(m_prune, &QAction::triggered, this, &PruningController::showDialog);
    connect(m_export, &QAction::triggered, this, &PruningController::showExportDialog);
    connect(m_overlayToggle, &QAction::toggled, m_overlay, &PruningOverlay::setEnabled);
    updateActions();
}

void PruningController::updateActions() {
    const bool open = !m_document.isNull();
    const PruningResult* result = open ? pruningResult(*m_document) : nullptr;
    const bool applied = result != nullptr && result->applied;
    if (m_prune != nullptr) {
        m_prune->setEnabled(open && !m_running && !applied);
        m_export->setEnabled(open && !m_exportJob->isRunning() && result != nullptr);
        // One reopen at a time: edits made while it runs would be lost with the old document.
        const bool opening = m_context.session.isOpening();
        m_apply->setEnabled(result != nullptr && !applied && !m_running && !opening);
        m_revert->setEnabled(applied && !m_running && !opening);
    }
    m_panel->pruneButton().setEnabled(open && !m_running && !applied);
}

void PruningController::onDocumentChanged(GraphDocument* document) {
    if (!m_document.isNull()) {
        disconnect(m_document, nullptr, this, nullptr);
    }
    m_document = document;
    if (document != nullptr) {
        if (const Result<void> restored = restorePruning(*document); !restored.ok()) {
            m_context.reporter.error(tr("Cannot restore the pruning"),
                                     qs(restored.error().toString()));
        } else if (const PruningResult* result = pruningResult(*document);
                   result != nullptr && result->applied) {
            m_dock->show(); // the document is the pruned model: say which pruning it is
            m_dock->raise();
        }
        connect(document, &GraphDocument::stateChanged, this, [this](const QString& key) {
            if (key == kPruningKey) {
                updateActions();
            }
        });
    }
    m_overlay->setDocument(document);
    m_panel->setDocument(document);
    updateActions();
    if (document != nullptr) {
        if (std::optional<pruning::PruningRequest> request =
                std::exchange(m_pruneOnOpen, std::nullopt)) {
            // Shows the first section's entry once pruned (and laid out), readable.
            connect(
                this, &PruningController::pruneFinished, this,
                [this](bool ok) {
                    if (ok) {
                        revealEntry(0);
                    }
                },
                Qt::SingleShotConnection);
            prune(*request);
        }
    }
}

void PruningController::showDialog() {
    PruningDialog dialog(&m_context.window);
    dialog.setRequest(m_last);
    if (!m_document.isNull()) {
        const PruningResult* result = pruningResult(*m_document);
        dialog.setDenseBytes(result != nullptr ? result->outcome->denseBytes
                                               : denseWeightBytes(m_document->graph()));
    }
    if (dialog.exec() == QDialog::Accepted) {
        if (auto request = dialog.request(); request.ok()) {
            m_last = *request;
            prune(*request);
        }
    }
}

bool PruningController::prune(const pruning::PruningRequest& request) {
    GraphDocument* document = m_document.data();
    const PruningResult* current = document == nullptr ? nullptr : pruningResult(*document);
    if (m_running || document == nullptr || document->isDerived() ||
        (current != nullptr && current->applied)) {
        m_context.reporter.error(tr("Cannot prune"), m_running ? tr("Pruning is already running.")
                                                     : document == nullptr
                                                         ? tr("Open a model first.")
                                                         : tr("The document is the pruned model: "
                                                              "Compress ▸ Back to Dense Model "
                                                              "first."));
        return false;
    }
    // The job works on a copy of the graph (weights are shared) and the document's shared
    // Hessian service; the result goes to the document it was made for, if it is still open.
    auto model = std::make_shared<const graph::Graph>(document->graph());
    std::shared_ptr<HessianCache> cache = hessianCache(*document);
    const std::string modelHash = document->modelHash();
    m_running = true;
    updateActions();
    m_context.jobs.start<PruneJobResult>(
        tr("Pruning %1 to %2").arg(document->fileName(), qs(request.target.describe())),
        [model, cache, request, modelHash](Progress& progress) {
            return runPruneJob(*model, *cache, request, modelHash, progress);
        },
        [this, target = QPointer<GraphDocument>(document)](Result<PruneJobResult> result) {
            m_running = false;
            updateActions();
            if (!result.ok()) {
                const QString message = qs(result.error().toString());
                if (result.error().code() == Errc::Cancelled) {
                    m_context.window.statusBar()->showMessage(tr("Pruning cancelled"),
                                                              kStatusMessageMs);
                } else {
                    m_context.reporter.error(tr("Pruning failed"), message);
                }
                Q_EMIT pruneFinished(false, message);
                return;
            }
            if (target.isNull()) {
                Q_EMIT pruneFinished(false, tr("The model was closed"));
                return;
            }
            PruningResult applied;
            applied.target = result->run->request.target;
            applied.run = std::move(result->run);
            applied.outcome =
                std::make_shared<const pruning::PruningOutcome>(std::move(result->outcome));
            const pruning::PruningOutcome& outcome = *applied.outcome;
            const int sections = applied.run->sections();
            const double seconds = applied.run->seconds;
            const QString summary =
                tr("Pruned to %1: %2 sections, %3 -> %4 (target %5) in %6 s")
                    .arg(qs(applied.target.describe()))
                    .arg(sections)
                    .arg(formatBytes(outcome.denseBytes), formatBytes(outcome.prunedBytes),
                         formatBytes(outcome.targetBytes))
                    .arg(seconds, 0, 'f', 1);
            const QString text = tr("Prune to %1").arg(qs(applied.target.describe()));
            target->undoStack().push(new ApplyPruningCommand(*target, std::move(applied), text));
            if (target == m_document) {
                m_dock->show();
                m_dock->raise();
            }
            m_context.window.statusBar()->showMessage(summary, kStatusMessageMs);
            Q_EMIT pruneFinished(true, {});
        });
    return true;
}

bool PruningController::setConstraint(int section, const pruning::EntryConstraint& constraint) {
    GraphDocument* document = m_document.data();
    const PruningResult* current = document == nullptr ? nullptr : pruningResult(*document);
    if (current == nullptr || current->applied || section < 0 ||
        section >= current->run->sections()) {
        return false;
    }
    std::vector<pruning::EntryConstraint> constraints = current->outcome->constraints;
    constraints.resize(static_cast<size_t>(current->run->sections()));
    const pruning::EntryConstraint& before = constraints[static_cast<size_t>(section)];
    if (before.kind == constraint.kind &&
        (constraint.kind != pruning::EntryConstraint::Kind::Keep ||
         before.kept == constraint.kept)) {
        return true; // nothing changes (a widget echoing the current state)
    }
    constraints[static_cast<size_t>(section)] = constraint;
    Result<PruningResult> next = rerunGreedy(*current, current->target, constraints);
    const std::string& entry = current->run->analysis.entryNames[static_cast<size_t>(section)];
    if (!next.ok()) {
        m_context.reporter.error(tr("Cannot change %1").arg(qs(entry)),
                                 qs(next.error().toString()));
        m_panel->refresh(); // the editors show the document's constraints again
        return false;
    }
    document->undoStack().push(new ApplyPruningCommand(*document, std::move(next).value(),
                                                       constraintCommandText(entry, constraint)));
    return true;
}

bool PruningController::setTarget(const pruning::TargetMemory& target) {
    GraphDocument* document = m_document.data();
    const PruningResult* current = document == nullptr ? nullptr : pruningResult(*document);
    if (current == nullptr || current->applied) {
        return false;
    }
    if (target.bytes(current->outcome->denseBytes) == current->outcome->targetBytes) {
        return true;
    }
    Result<PruningResult> next = rerunGreedy(*current, target, current->outcome->constraints);
    if (!next.ok()) {
        m_context.reporter.error(tr("Cannot prune to %1").arg(qs(target.describe())),
                                 qs(next.error().toString()));
        m_panel->refresh();
        return false;
    }
    document->undoStack().push(new ApplyPruningCommand(
        *document, std::move(next).value(), tr("Prune to %1").arg(qs(target.describe()))));
    return true;
}

void PruningController::exportPruned(const QString& path) {
    const PruningResult* result = m_document.isNull() ? nullptr : pruningResult(*m_document);
    if (result == nullptr) {
        m_context.reporter.error(tr("Cannot export"), tr("Prune the model first (Compress ▸ "
                                                         "Prune…)."));
        Q_EMIT exportFinished(false, path);
        return;
    }
    if (result->applied) {
        // The document's graph is the pruned model already.
        m_exportJob->start(m_document->graph(), path,
                           [](graph::Graph&, Progress&) -> Result<QString> {
                               return QObject::tr("the document's pruned model");
                           });
        return;
    }
    m_exportJob->start(
        m_document->graph(), path,
        [run = result->run, outcome = result->outcome](graph::Graph& graph,
                                                       Progress& progress) -> Result<QString> {
            progress.report(0.0, "Slicing the pruned channels");
            // With a labelled dataset the dense and the pruned model are scored on it, so the
            // message states the accuracy of what was written.
            std::optional<graph::Graph> dense;
            if (run->request.dataset.hasLabels()) {
                dense = graph;
            }
            QS_ASSIGN_OR_RETURN(graph, pruning::buildPrunedGraph(run->analysis.graph,
                                                                 run->analysis.detection,
                                                                 outcome->info.masks));
            int64_t removed = 0;
            for (size_t s = 0; s < outcome->kept.size(); ++s) {
                removed += run->analysis.detection.sections[s].channels - outcome->kept[s];
            }
            QString text =
                QObject::tr("%1 sections, %2 channels removed, %3 -> %4 of weights")
                    .arg(run->sections())
                    .arg(removed)
                    .arg(formatBytes(outcome->denseBytes), formatBytes(outcome->prunedBytes));
            if (dense) {
                QS_ASSIGN_OR_RETURN(
                    const std::optional<runtime::LabelledScores> scores,
                    runtime::scoreLabelled(*dense, graph, run->request.dataset, progress));
                QS_ASSIGN_OR_RETURN(const std::optional<report::AccuracyComparison> accuracy,
                                    report::compareAccuracy(scores).context("labels"));
                if (accuracy) {
                    text +=
                        QStringLiteral("; ") + accuracySummary(*accuracy, QObject::tr("pruned"));
                }
            }
            return text;
        });
}

bool PruningController::continueWithPruned() {
    const PruningResult* result = m_document.isNull() ? nullptr : pruningResult(*m_document);
    if (result == nullptr || result->applied || m_running || m_context.session.isOpening()) {
        m_context.reporter.error(tr("Cannot continue with the pruned model"),
                                 result == nullptr ? tr("Prune the model first (Compress ▸ "
                                                        "Prune…).")
                                 : result->applied ? tr("The document is the pruned model.")
                                                   : tr("Pruning or an open is running."));
        return false;
    }
    reopenAs(tr("Continuing with the pruned %1").arg(m_document->fileName()), true);
    return true;
}

bool PruningController::backToDense() {
    const PruningResult* result = m_document.isNull() ? nullptr : pruningResult(*m_document);
    if (result == nullptr || !result->applied || m_running || m_context.session.isOpening()) {
        m_context.reporter.error(tr("Cannot go back to the dense model"),
                                 result == nullptr || !result->applied
                                     ? tr("The document is the model file's graph.")
                                     : tr("Pruning or an open is running."));
        return false;
    }
    reopenAs(tr("Back to the dense %1").arg(m_document->fileName()), false);
    return true;
}

void PruningController::reopenAs(const QString& title, bool applied) {
    GraphDocument& document = *m_document;
    PruningResult next = *pruningResult(document);
    next.applied = applied;
    std::optional<nlohmann::json> section = PruningState(next).sessionSection();
    // The job reads copies: the graphs share their weights with the open document.
    auto source = std::make_shared<const graph::Graph>(document.sourceGraph());
    const quantization::QuantizationSettings settings = document.quantization() != nullptr
                                                            ? document.quantization()->settings
                                                            : quantization::QuantizationSettings{};
    const QString path = document.filePath();
    const int64_t before = document.info().parameterCount;
    // What the other features kept belongs to the graph being replaced: named in the message.
    QStringList dropped;
    for (const auto& [key, state] : document.states()) {
        if (key != kPruningKey && state != nullptr) {
            dropped.push_back(key);
        }
    }
    if (document.undoStack().count() > 0) {
        dropped.push_back(tr("the undo history"));
    }
    m_context.session.open(
        path, title,
        [source, run = next.run, outcome = next.outcome, applied, path, hash = document.modelHash(),
         settings, section = std::move(*section)](Progress& progress) -> Result<Session::Opened> {
            graph::Graph graph = *source;
            std::shared_ptr<const graph::Graph> derivedFrom;
            if (applied) {
                progress.report(0.0, "Slicing the pruned channels");
                QS_ASSIGN_OR_RETURN(graph, pruning::buildPrunedGraph(run->analysis.graph,
                                                                     run->analysis.detection,
                                                                     outcome->info.masks));
                derivedFrom = source;
            }
            QS_ASSIGN_OR_RETURN(LoadedModel model,
                                modelInMemory(std::move(graph), std::move(derivedFrom),
                                              applied ? QObject::tr("pruned") : QString(), path,
                                              hash, settings, progress));
            model.sessionSections.emplace(std::string(kPruningKey.data(), kPruningKey.size()),
                                          section);
            return Session::Opened{path, std::move(model)};
        },
        m_context.session.sessionPath(),
        [this, applied, before, dropped] {
            GraphDocument* opened = m_context.session.document();
            // The session on disk still holds the earlier graph: the window shows it unsaved.
            opened->undoStack().resetClean();
            QString message =
                applied ? tr("The pruned model is the document: %1 -> %2 parameters; its "
                             "quantizers were placed anew")
                              .arg(before)
                              .arg(opened->info().parameterCount)
                        : tr("The dense model is the document again; the pruning can be edited");
            if (!dropped.isEmpty()) {
                message += tr(" (not carried over: %1)").arg(dropped.join(QStringLiteral(", ")));
            }
            m_context.window.statusBar()->showMessage(message, kStatusMessageMs);
            updateActions();
        });
    updateActions();
}

void PruningController::showExportDialog() {
    const QString path = QFileDialog::getSaveFileName(&m_context.window, tr("Export Pruned ONNX"),
                                                      {}, tr("ONNX models (*.onnx)"));
    if (!path.isEmpty()) {
        exportPruned(path);
    }
}

void PruningController::selectNode(const QString& nodeName) {
    m_context.page.selectNode(nodeName);
}

void PruningController::revealEntry(int section) {
    const PruningResult* result = m_document.isNull() ? nullptr : pruningResult(*m_document);
    if (result == nullptr || section < 0 || section >= result->run->sections()) {
        return;
    }
    if (m_context.page.isLayingOut()) {
        connect(
            &m_context.page, &GraphPage::layoutFinished, this,
            [this, section](bool ok) {
                if (ok) {
                    revealEntry(section);
                }
            },
            Qt::SingleShotConnection);
        return;
    }
    m_panel->selectSection(section);
    selectNode(qs(result->run->analysis.entryNames[static_cast<size_t>(section)]));
}

void PruningController::followSelection() {
    const PruningResult* result = m_document.isNull() ? nullptr : pruningResult(*m_document);
    const QList<QGraphicsItem*> selected = m_context.page.scene()->selectedItems();
    if (result == nullptr || selected.size() != 1 || selected.front()->type() != NodeItem::Type) {
        return;
    }
    const int section = result->run->sectionOf(
        static_cast<const NodeItem*>(selected.front())->content().fullName.toStdString());
    if (section >= 0 && section != m_panel->selectedSection()) {
        m_panel->selectSection(section);
    }
}

} // namespace qs::ui
