#include "ui/session_controller.h"

#include "core/quantization/hw_config.h"
#include "core/quantization/setup_import.h"
#include "core/quantization/setup_reader.h"
#include "core/session/pruning_masks_section.h"
#include "ui/actions.h"
#include "ui/autosave.h"
#include "ui/graph_document.h"
#include "ui/graph_page.h"
#include "ui/graph_view.h"
#include "ui/message_reporter.h"
#include "ui/quantizer_commands.h"
#include "ui/session.h"
#include "ui/settings.h"

#include <QAction>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QMainWindow>
#include <QMessageBox>
#include <QStatusBar>
#include <QUndoStack>

#include <filesystem>
#include <memory>

namespace qs::ui {

namespace {
constexpr int kStatusMessageMs = 4000;

std::filesystem::path toPath(const QString& path) {
    return {QFile::encodeName(path).toStdString()};
}

/// What a session file opens: its model read with its settings and its choices restored.
struct ReadSession {
    Session::Opened opened;
    std::optional<session::SessionView> view;
};

/// Reads the session at `path`, checks that its model is the one it was saved for, reads the
/// model with the saved settings and restores the saved choices (job thread).
Result<ReadSession> readSession(const QString& path, Progress& progress) {
    QS_ASSIGN_OR_RETURN(session::SessionFile session, session::readSessionFile(toPath(path)));
    const QString model = QFile::decodeName(session.modelPath.c_str());
    auto inSession = [&path](Error error) {
        return std::move(error).context("session '" + toPath(path).string() + "'");
    };
    if (!QFileInfo::exists(model)) {
        return inSession(Error(Errc::Io, "its model '" + session.modelPath + "' does not exist"));
    }
    if (auto same = session::checkSessionModel(session, toPath(model)); !same.ok()) {
        return inSession(std::move(same).error());
    }
    // A session that works on its pruned model gets it rebuilt from the file and its masks
    // before its quantizers are placed: its choices belong to that graph.
    ModelDerivation derive;
    if (session::sessionHasAppliedPruning(session)) {
        derive = [&session](const graph::Graph& dense, Progress& deriving) {
            return session::sessionGraph(dense, session, deriving);
        };
    }
    Result<LoadedModel> read =
        loadModel(model, progress, session.settings, derive, QObject::tr("pruned"));
    if (!read.ok()) {
        return inSession(std::move(read).error());
    }
    LoadedModel loaded = std::move(read).value();
    if (!session.choices.empty()) {
        if (!loaded.quantization) {
            return inSession(
                Error(Errc::InvalidArgument,
                      "its choices cannot be restored: " + loaded.quantizationError.toStdString()));
        }
        auto choices = session::sessionChoicesFor(session, *loaded.quantization);
        if (!choices.ok()) {
            return inSession(std::move(choices).error());
        }
        if (auto chosen = quantization::chooseConfigs(*loaded.quantization, *choices);
            !chosen.ok()) {
            return inSession(std::move(chosen).error());
        }
    }
    loaded.sessionSections = std::move(session.sections); // features restore their own
    return ReadSession{Session::Opened{model, std::move(loaded)}, session.view};
}
} // namespace

SessionController::SessionController(QMainWindow& window, Session& session, GraphPage& page,
                                     Actions& actions, Settings& settings,
                                     MessageReporter& reporter)
    : QObject(&window)
    , m_window(window)
    , m_session(session)
    , m_page(page)
    , m_settings(settings)
    , m_reporter(reporter)
    , m_autosaver(new Autosaver([this](const QString& path) { return writeSession(path); }, this)) {
    connect(actions.openSession(), &QAction::triggered, this,
            &SessionController::showOpenSessionDialog);
    connect(actions.saveSession(), &QAction::triggered, this, &SessionController::saveSession);
    connect(actions.saveSessionAs(), &QAction::triggered, this,
            &SessionController::showSaveSessionDialog);
    connect(actions.loadHwConfig(), &QAction::triggered, this,
            &SessionController::showLoadHwConfigDialog);
    connect(actions.importSetup(), &QAction::triggered, this,
            &SessionController::showImportSetupDialog);
    connect(&m_page, &GraphPage::layoutFinished, this, [this](bool ok, const QString&) {
        if (ok) {
            applyRestoredView();
        }
    });
    connect(m_autosaver, &Autosaver::autosaveFailed, this,
            [this](const QString& message) { showStatus(tr("Autosave failed: %1").arg(message)); });
    connect(&m_session, &Session::documentChanged, this, [this](GraphDocument* document) {
        connect(&document->undoStack(), &QUndoStack::indexChanged, m_autosaver,
                &Autosaver::noteChange);
        // A document reopened on another graph (Continue with Pruned Model) starts unsaved
        // without an undo step.
        connect(&document->undoStack(), &QUndoStack::cleanChanged, m_autosaver,
                [autosaver = m_autosaver](bool clean) {
                    if (!clean) {
                        autosaver->noteChange();
                    }
                });
    });
}

SessionController::~SessionController() = default;

bool SessionController::isSessionPath(const QString& path) {
    return path.endsWith(QStringLiteral(".qscope"), Qt::CaseInsensitive);
}

void SessionController::showStatus(const QString& message) {
    m_window.statusBar()->showMessage(message, kStatusMessageMs);
}

void SessionController::openSession(const QString& path) {
    const QString absolute = QFileInfo(path).absoluteFilePath();
    // Written by the job, read once the job's result arrives on the GUI thread.
    auto view = std::make_shared<std::optional<session::SessionView>>();
    m_session.open(
        absolute, tr("Opening session %1").arg(QFileInfo(absolute).fileName()),
        [absolute, view](Progress& progress) -> Result<Session::Opened> {
            QS_ASSIGN_OR_RETURN(ReadSession read, readSession(absolute, progress));
            *view = read.view;
            return std::move(read.opened);
        },
        absolute, [this, view] { m_restoredView = *view; });
}

std::optional<session::SessionView> SessionController::viewState() const {
    if (m_page.document() == nullptr || m_page.isLayingOut()) {
        return std::nullopt;
    }
    const GraphView* view = m_page.view();
    const QPointF center = view->mapToScene(view->viewport()->rect().center());
    return session::SessionView{view->zoom(), center.x(), center.y(), m_page.expandedGroupKeys()};
}

void SessionController::applyRestoredView() {
    const std::optional<session::SessionView> restored =
        std::exchange(m_restoredView, std::nullopt);
    if (!restored || restored->zoom <= 0) {
        return;
    }
    // The saved groups open first, so the centre point means the same place in the new layout.
    m_page.showExpandedGroups(restored->expandedGroups, [this, restored = *restored] {
        GraphView* view = m_page.view();
        view->zoomBy(restored.zoom / view->zoom());
        view->centerOn(restored.centerX, restored.centerY);
    });
}

Result<void> SessionController::writeSession(const QString& path) const {
    const GraphDocument* document = m_session.document();
    if (document == nullptr || document->quantization() == nullptr) {
        return Error(Errc::InvalidArgument, "no model with quantizers is open");
    }
    QS_ASSIGN_OR_RETURN(session::SessionFile session,
                        session::captureSession(toPath(document->filePath()), document->modelHash(),
                                                *document->quantization()));
    session.view = viewState();
    for (const auto& [key, state] : document->states()) {
        if (std::optional<nlohmann::json> section = state->sessionSection()) {
            session.sections.insert_or_assign(key.toStdString(), std::move(*section));
        }
    }
    return session::writeSessionFile(toPath(path), session);
}

bool SessionController::saveSessionTo(const QString& path) {
    if (const Result<void> saved = writeSession(path); !saved.ok()) {
        m_reporter.error(tr("Cannot save the session"),
                         QString::fromStdString(saved.error().toString()));
        return false;
    }
    m_session.markSavedAs(path);
    m_settings.addRecentFile(m_session.sessionPath());
    m_autosaver->discard(); // the work is saved; the next change autosaves again
    showStatus(tr("Saved %1").arg(QDir::toNativeSeparators(path)));
    return true;
}

bool SessionController::isAutosavePath(const QString& path) const {
    return !path.isEmpty() &&
           QFileInfo(path).absolutePath() ==
               QFileInfo(m_autosaver->directory() + QStringLiteral("/x")).absolutePath();
}

void SessionController::saveSession() {
    // A recovered session still points into the autosave folder: ask where it belongs.
    if (m_session.sessionPath().isEmpty() || isAutosavePath(m_session.sessionPath())) {
        showSaveSessionDialog();
    } else {
        saveSessionTo(m_session.sessionPath());
    }
}

void SessionController::showSaveSessionDialog() {
    const GraphDocument* document = m_session.document();
    QString suggested = m_session.sessionPath();
    if ((suggested.isEmpty() || isAutosavePath(suggested)) && document != nullptr) {
        const QFileInfo model(document->filePath());
        suggested = model.dir().filePath(model.completeBaseName() + QStringLiteral(".qscope"));
    }
    QString path = QFileDialog::getSaveFileName(&m_window, tr("Save Session"), suggested,
                                                tr("Quantscope sessions (*.qscope)"));
    if (path.isEmpty()) {
        return;
    }
    if (!isSessionPath(path)) {
        path += QStringLiteral(".qscope");
    }
    saveSessionTo(path);
}

void SessionController::showOpenSessionDialog() {
    const QString path = QFileDialog::getOpenFileName(&m_window, tr("Open Session"), {},
                                                      tr("Quantscope sessions (*.qscope)"));
    if (!path.isEmpty()) {
        openSession(path);
    }
}

bool SessionController::loadHwConfigFile(const QString& path) {
    GraphDocument* document = m_session.document();
    if (document == nullptr || document->quantization() == nullptr) {
        m_reporter.error(tr("Cannot load the HW config"),
                         tr("Open a model with quantizers first."));
        return false;
    }
    const std::string file = QFile::encodeName(QFileInfo(path).absoluteFilePath()).toStdString();
    if (auto config = quantization::HWConfig::load(file); !config.ok()) {
        m_reporter.error(tr("Cannot load the HW config"),
                         QString::fromStdString(config.error().toString()));
        return false;
    }
    quantization::QuantizationSettings settings = document->quantization()->settings;
    settings.hw = file;
    const Result<quantization::QuantizationState> state =
        quantization::computeQuantization(document->graph(), settings);
    if (!state.ok()) {
        m_reporter.error(tr("Cannot place quantizers for %1").arg(QFileInfo(path).fileName()),
                         QString::fromStdString(state.error().toString()));
        return false;
    }
    document->undoStack().push(new ChangeQuantizationSettingsCommand(*document, settings));
    return true;
}

void SessionController::showLoadHwConfigDialog() {
    const QString path = QFileDialog::getOpenFileName(&m_window, tr("Load HW Config"), {},
                                                      tr("HW config JSON (*.json);;All files (*)"));
    if (!path.isEmpty()) {
        loadHwConfigFile(path);
    }
}

bool SessionController::importSetupFile(const QString& path) {
    GraphDocument* document = m_session.document();
    if (document == nullptr || document->quantization() == nullptr) {
        m_reporter.error(tr("Cannot import the setup"), tr("Open a model with quantizers first."));
        return false;
    }
    // The CLI's reader (quantize --setup-in), so both refuse a file with the same message.
    const std::string file = QFile::encodeName(QFileInfo(path).absoluteFilePath()).toStdString();
    const Result<quantization::SingleConfigQuantizerSetup> setup =
        quantization::readSetupFile(file, document->graph());
    if (!setup.ok()) {
        m_reporter.error(tr("Cannot import the setup"),
                         QString::fromStdString(setup.error().toString()));
        return false;
    }
    const Result<quantization::QuantizerConfigChoice> choice =
        quantization::choicesForSetup(*document->quantization(), *setup);
    if (!choice.ok()) {
        Error error = choice.error();
        m_reporter.error(tr("Cannot import the setup"),
                         QString::fromStdString(error.context("setup '" + file + "'").toString()));
        return false;
    }
    auto* command = new ChooseQuantizerConfigCommand(*document, *choice);
    command->setText(tr("Import setup %1").arg(QFileInfo(path).fileName()));
    document->undoStack().push(command);
    return true;
}

void SessionController::showImportSetupDialog() {
    const QString path = QFileDialog::getOpenFileName(&m_window, tr("Import Quantizer Setup"), {},
                                                      tr("Setup JSON (*.json);;All files (*)"));
    if (!path.isEmpty()) {
        importSetupFile(path);
    }
}

void SessionController::offerRecovery() {
    const QStringList found = Autosaver::recoverableSessions(m_autosaver->directory());
    if (found.isEmpty()) {
        return;
    }
    const QString newest = found.back();
    const auto answer = QMessageBox::question(
        &m_window, tr("Recover Session"),
        tr("Quantscope did not exit cleanly last time. Restore the autosaved session %1?")
            .arg(QDir::toNativeSeparators(newest)),
        QMessageBox::Yes | QMessageBox::No, QMessageBox::Yes);
    if (answer == QMessageBox::Yes) {
        openSession(newest);
        // The restored session autosaves again under this instance once it changes.
        connect(
            &m_session, &Session::modelOpened, this,
            [found] {
                for (const QString& path : found) {
                    Autosaver::removeAutosave(path);
                }
            },
            Qt::SingleShotConnection);
        return;
    }
    for (const QString& path : found) {
        Autosaver::removeAutosave(path);
    }
}

} // namespace qs::ui
