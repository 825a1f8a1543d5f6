#include "ui/main_window.h"

#include "core/quantization/hw_config.h"
#include "ui/actions.h"
#include "ui/autosave.h"
#include "ui/bitwidth_chart.h"
#include "ui/calibration_commands.h"
#include "ui/graph_document.h"
#include "ui/graph_export.h"
#include "ui/graph_page.h"
#include "ui/graph_scene.h"
#include "ui/graph_search_bar.h"
#include "ui/graph_view.h"
#include "ui/inspector_panel.h"
#include "ui/job_runner.h"
#include "ui/job_status_indicator.h"
#include "ui/message_reporter.h"
#include "ui/model_info_panel.h"
#include "ui/quantizer_commands.h"
#include "ui/quantizer_table.h"
#include "ui/session.h"
#include "ui/settings.h"
#include "ui/weight_compression_controller.h"
#include "ui/welcome_page.h"

#include <QAction>
#include <QCloseEvent>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QStackedWidget>
#include <QStatusBar>
#include <QUndoStack>

#include <utility>

namespace qs::ui {

namespace {
constexpr int kDefaultWidth = 1280;
constexpr int kDefaultHeight = 820;
constexpr int kStatusMessageMs = 4000;
constexpr double kZoomStep = 1.25;

bool isSessionPath(const QString& path) {
    return path.endsWith(QStringLiteral(".qscope"), Qt::CaseInsensitive);
}

/// The first local .onnx or .qscope file among the dragged URLs, or an empty string.
QString droppedModelPath(const QMimeData* mime) {
    if (mime == nullptr || !mime->hasUrls()) {
        return {};
    }
    for (const QUrl& url : mime->urls()) {
        QString path = url.toLocalFile();
        if (!path.isEmpty() &&
            (path.endsWith(QStringLiteral(".onnx"), Qt::CaseInsensitive) || isSessionPath(path))) {
            return path;
        }
    }
    return {};
}
} // namespace

MainWindow::MainWindow(Settings& settings, std::unique_ptr<MessageReporter> reporter,
                       QWidget* parent)
    : QMainWindow(parent)
    , m_settings(settings)
    , m_reporter(reporter ? std::move(reporter) : std::make_unique<MessageBoxReporter>(this))
    , m_jobs(new JobRunner(this))
    , m_session(new Session(*m_jobs, this))
    , m_actions(new Actions(settings, m_session->undoGroup(), this))
    , m_pages(new QStackedWidget(this))
    , m_welcome(new WelcomePage(m_pages))
    , m_graphPage(new GraphPage(*m_jobs, m_pages))
    , m_infoPanel(new ModelInfoPanel(this))
    , m_infoDock(new QDockWidget(tr("Model"), this))
    , m_quantizerPanel(new QuantizerPanel(this))
    , m_quantizerDock(new QDockWidget(tr("Quantizers"), this))
    , m_chartPanel(new BitwidthChartPanel(this))
    , m_chartDock(new QDockWidget(tr("Bit Widths"), this))
    , m_autosaver(new Autosaver(
          *m_session, [this] { return viewState(); }, this))
    , m_inspector(new InspectorPanel(this))
    , m_inspectorDock(new QDockWidget(tr("Inspector"), this)) {
    setWindowTitle(QStringLiteral("Quantscope"));
    setAcceptDrops(true);
    m_pages->addWidget(m_welcome);
    m_pages->addWidget(m_graphPage);
    setCentralWidget(m_pages);
    m_infoDock->setObjectName(QStringLiteral("modelInfoDock"));
    m_infoDock->setWidget(m_infoPanel);
    addDockWidget(Qt::RightDockWidgetArea, m_infoDock);
    m_infoDock->hide();
    m_quantizerDock->setObjectName(QStringLiteral("quantizerDock"));
    m_quantizerDock->setWidget(m_quantizerPanel);
    addDockWidget(Qt::BottomDockWidgetArea, m_quantizerDock);
    m_quantizerDock->hide();
    m_chartDock->setObjectName(QStringLiteral("bitwidthChartDock"));
    m_chartDock->setWidget(m_chartPanel);
    addDockWidget(Qt::RightDockWidgetArea, m_chartDock);
    tabifyDockWidget(m_infoDock, m_chartDock);
    m_chartDock->hide();
    m_actions->populate(*menuBar());
    m_actions->viewMenu()->addAction(m_infoDock->toggleViewAction());
    m_actions->viewMenu()->addAction(m_quantizerDock->toggleViewAction());
    m_actions->viewMenu()->addAction(m_chartDock->toggleViewAction());
    // Weight compression: its own dock (tabbed with the Quantizers), menu entries and badges.
    m_compression =
        new WeightCompressionController(*this, *m_session, *m_jobs, *m_graphPage, *m_reporter);
    tabifyDockWidget(m_quantizerDock, &m_compression->dock());
    m_compression->installMenus(*m_actions->fileMenu(), m_actions->exportImage(),
                                *m_actions->quantizeMenu());
    m_actions->viewMenu()->addAction(m_compression->dock().toggleViewAction());
    setTheme(m_settings.theme());
    statusBar()->addPermanentWidget(new JobStatusIndicator(*m_jobs, this));
    m_welcome->setRecentFiles(m_settings.recentFiles());
    connect(&m_settings, &Settings::recentFilesChanged, this,
            [this] { m_welcome->setRecentFiles(m_settings.recentFiles()); });
    connect(m_welcome, &WelcomePage::openRequested, this, &MainWindow::showOpenDialog);
    connect(m_welcome, &WelcomePage::recentFileActivated, this, &MainWindow::openRecentModel);
    connectActions();
    connectSession();
    connectSessionFiles();
    connectInspection();
    setupCalibration();
    restoreWindow();
}

void MainWindow::setupCalibration() {
    m_calibration =
        new CalibrationCommands(*m_session, *m_jobs, *m_graphPage, *m_reporter, *statusBar(), this);
    m_actions->quantizeMenu()->addSeparator();
    m_actions->quantizeMenu()->addAction(m_calibration->calibrateAction());
    m_actions->viewMenu()->addAction(m_calibration->overlayAction());
    // File ▸ Export gathers the model exports; whoever comes first creates it.
    QMenu* file = m_actions->fileMenu();
    auto* exports =
        file->findChild<QMenu*>(QStringLiteral("exportMenu"), Qt::FindDirectChildrenOnly);
    if (exports == nullptr) {
        exports = new QMenu(tr("E&xport"), file);
        exports->setObjectName(QStringLiteral("exportMenu"));
        const QList<QAction*> entries = file->actions(); // right after Export Image…
        file->insertMenu(entries.value(entries.indexOf(m_actions->exportImage()) + 1), exports);
    }
    exports->addAction(m_calibration->exportQuantizedAction());
}

MainWindow::~MainWindow() = default;

bool MainWindow::isShowingWelcome() const {
    return m_pages->currentWidget() == m_welcome;
}

void MainWindow::openModel(const QString& path) {
    if (isSessionPath(path)) {
        m_session->openSession(path);
    } else {
        m_session->openModel(path);
    }
}

void MainWindow::openRecentModel(const QString& path) {
    if (!QFileInfo::exists(path)) {
        m_settings.removeRecentFile(path);
        m_reporter->notice(tr("Model not found"),
                           tr("%1 no longer exists; it was removed from the recent files.")
                               .arg(QDir::toNativeSeparators(path)));
        return;
    }
    openModel(path);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (!droppedModelPath(event->mimeData()).isEmpty()) {
        event->acceptProposedAction();
    }
}

void MainWindow::dropEvent(QDropEvent* event) {
    const QString path = droppedModelPath(event->mimeData());
    if (path.isEmpty()) {
        return;
    }
    event->acceptProposedAction();
    openModel(path);
}

void MainWindow::closeEvent(QCloseEvent* event) {
    m_settings.setWindowGeometry(saveGeometry());
    m_settings.setWindowState(saveState());
    m_autosaver->discard(); // a clean exit leaves nothing to recover
    QMainWindow::closeEvent(event);
}

void MainWindow::connectActions() {
    connect(m_actions->open(), &QAction::triggered, this, &MainWindow::showOpenDialog);
    connect(m_actions->reload(), &QAction::triggered, m_session, &Session::reload);
    connect(m_actions->quit(), &QAction::triggered, this, &MainWindow::close);
    connect(m_actions->about(), &QAction::triggered, this, &MainWindow::showAbout);
    connect(m_actions, &Actions::recentFileTriggered, this, &MainWindow::openRecentModel);
    connect(m_actions, &Actions::themeTriggered, this, &MainWindow::setTheme);
    connect(m_actions->colorBlindPalette(), &QAction::toggled, this, [this](bool on) {
        m_settings.setColorBlindPalette(on);
        setTheme(m_settings.theme());
    });
    connect(m_quantizerPanel, &QuantizerPanel::quantizerActivated, m_graphPage,
            &GraphPage::revealQuantizer);
    connect(m_actions, &Actions::quantizationSettingsTriggered, this,
            [this](const quantization::QuantizationSettings& settings) {
                GraphDocument* document = m_session->document();
                if (document != nullptr && document->quantization() != nullptr &&
                    !(document->quantization()->settings == settings)) {
                    document->undoStack().push(
                        new ChangeQuantizationSettingsCommand(*document, settings));
                }
            });
    connectGraphActions();
}

void MainWindow::applyInitialBitwidths(GraphDocument& document) {
    const QStringList specs = std::exchange(m_initialBitwidths, {});
    const quantization::QuantizationState* state = document.quantization();
    if (specs.isEmpty() || state == nullptr) {
        return;
    }
    quantization::QuantizerConfigChoice choice = state->choice;
    for (const QString& spec : specs) {
        auto applied =
            quantization::applyBitwidthChoice(state->proposal.setup, spec.toStdString(), choice);
        if (!applied.ok()) {
            m_reporter->error(tr("Cannot choose %1").arg(spec),
                              QString::fromStdString(applied.error().toString()));
            return;
        }
    }
    quantization::QuantizerConfigChoice changes;
    for (const auto& [id, config] : choice) {
        if (!(state->choice.at(id) == config)) {
            changes[id] = config;
        }
    }
    document.undoStack().push(new ChooseQuantizerConfigCommand(document, std::move(changes)));
}

void MainWindow::syncQuantizationActions() {
    const GraphDocument* document = m_session->document();
    const quantization::QuantizationState* state =
        document != nullptr ? document->quantization() : nullptr;
    m_actions->setQuantizationActionsEnabled(state != nullptr);
    if (state != nullptr) {
        m_actions->showQuantizationSettings(state->settings);
    }
}

void MainWindow::connectGraphActions() {
    GraphView* view = m_graphPage->view();
    GraphSearchBar* search = m_graphPage->searchBar();
    connect(m_actions->exportImage(), &QAction::triggered, this, &MainWindow::showExportDialog);
    connect(m_actions->zoomIn(), &QAction::triggered, view, [view] { view->zoomBy(kZoomStep); });
    connect(m_actions->zoomOut(), &QAction::triggered, view,
            [view] { view->zoomBy(1 / kZoomStep); });
    connect(m_actions->fitView(), &QAction::triggered, view, &GraphView::fitGraph);
    connect(m_actions->find(), &QAction::triggered, search, &GraphSearchBar::activate);
    connect(m_actions->findNext(), &QAction::triggered, search, &GraphSearchBar::findNext);
    connect(m_actions->findPrevious(), &QAction::triggered, search, &GraphSearchBar::findPrevious);
    connect(m_graphPage, &GraphPage::layoutFinished, this, [this](bool ok, const QString& why) {
        m_actions->setGraphActionsEnabled(ok);
        if (!ok) {
            statusBar()->showMessage(tr("Graph not laid out: %1").arg(why), kStatusMessageMs);
        }
    });
}

void MainWindow::setTheme(ThemeChoice choice) {
    const bool dark = applyTheme(choice);
    GraphTheme theme = graphThemeFor(dark);
    theme.colorBlindSafe = m_settings.colorBlindPalette();
    m_graphPage->scene()->setTheme(theme);
    m_graphPage->view()->sceneChanged();
    if (QAction* action = m_actions->themeAction(choice)) {
        action->setChecked(true);
    }
    m_settings.setTheme(choice);
}

bool MainWindow::exportGraph(const QString& path) {
    const std::optional<ImageFormat> format = imageFormatForPath(path);
    GraphDocument* document = m_graphPage->document();
    if (!format || document == nullptr) {
        m_reporter->error(tr("Cannot export"),
                          tr("Choose a file ending in .svg, .png, .pdf or .dot."));
        return false;
    }
    const Result<void> written = *format == ImageFormat::Dot
                                     ? writeDot(document->graph(), m_graphPage->layoutModel(), path)
                                     : writeSceneImage(*m_graphPage->scene(), path, *format);
    if (!written.ok()) {
        m_reporter->error(tr("Cannot export"), QString::fromStdString(written.error().toString()));
        return false;
    }
    statusBar()->showMessage(tr("Saved %1").arg(QDir::toNativeSeparators(path)), kStatusMessageMs);
    return true;
}

void MainWindow::showExportDialog() {
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export Graph Image"), {},
        tr("SVG image (*.svg);;PNG image (*.png);;PDF document (*.pdf);;Graphviz DOT (*.dot)"));
    if (!path.isEmpty()) {
        exportGraph(path);
    }
}

void MainWindow::connectSession() {
    connect(m_session, &Session::documentChanged, this, &MainWindow::showDocument);
    connect(m_session, &Session::modelOpened, this, [this](const QString& path) {
        m_settings.addRecentFile(path);
        statusBar()->showMessage(tr("Opened %1").arg(QDir::toNativeSeparators(path)),
                                 kStatusMessageMs);
    });
    connect(m_session, &Session::openFailed, this, [this](const QString&, const QString& message) {
        m_reporter->error(tr("Cannot open model"), message);
    });
}

void MainWindow::showOpenDialog() {
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open Model"), {},
        tr("ONNX models (*.onnx);;Quantscope sessions (*.qscope);;All files (*)"));
    if (!path.isEmpty()) {
        openModel(path);
    }
}

void MainWindow::showAbout() {
    QMessageBox::about(this, tr("About Quantscope"),
                       tr("<h3>Quantscope %1</h3>"
                          "<p>A workbench for compressing neural networks: see where quantizers "
                          "go, choose bitwidths, and export compressed ONNX models.</p>")
                           .arg(QString::fromLatin1(QS_VERSION)));
}

void MainWindow::showDocument(GraphDocument* document) {
    m_infoPanel->setInfo(document->info());
    if (m_infoDock->isHidden()) {
        m_infoDock->show();
        resizeDocks({m_infoDock}, {width() / 3}, Qt::Horizontal); // the graph gets the most room
    }
    m_quantizerPanel->setDocument(document);
    m_inspector->setDocument(document);
    connect(document, &GraphDocument::quantizationChanged, this,
            &MainWindow::syncQuantizationActions, Qt::UniqueConnection);
    syncQuantizationActions();
    applyInitialBitwidths(*document);
    m_chartPanel->setDocument(document);
    if (m_quantizerDock->isHidden() && document->quantization() != nullptr) {
        m_quantizerDock->show();
        m_chartDock->show();
        m_infoDock->raise(); // the charts wait in their tab next to the model info
        resizeDocks({m_quantizerDock}, {height() / 4}, Qt::Vertical);
    }
    m_actions->setGraphActionsEnabled(false);
    m_graphPage->showGraph(*document);
    m_pages->setCurrentWidget(m_graphPage);
    m_actions->reload()->setEnabled(true);
    connect(&document->undoStack(), &QUndoStack::cleanChanged, this,
            &MainWindow::updateWindowTitle);
    connect(&document->undoStack(), &QUndoStack::indexChanged, m_autosaver, &Autosaver::noteChange);
    updateWindowTitle();
}

void MainWindow::restoreWindow() {
    if (!restoreGeometry(m_settings.windowGeometry())) {
        resize(kDefaultWidth, kDefaultHeight);
    }
    restoreState(m_settings.windowState());
}

} // namespace qs::ui

namespace qs::ui {

// --- Sessions (.qscope), autosave and recovery, HW config files ---

void MainWindow::connectSessionFiles() {
    connect(m_actions->openSession(), &QAction::triggered, this,
            &MainWindow::showOpenSessionDialog);
    connect(m_actions->saveSession(), &QAction::triggered, this, &MainWindow::saveSession);
    connect(m_actions->saveSessionAs(), &QAction::triggered, this,
            &MainWindow::showSaveSessionDialog);
    connect(m_actions->loadHwConfig(), &QAction::triggered, this,
            &MainWindow::showLoadHwConfigDialog);
    connect(m_session, &Session::sessionPathChanged, this, &MainWindow::updateWindowTitle);
    connect(m_graphPage, &GraphPage::layoutFinished, this, [this](bool ok, const QString&) {
        if (ok) {
            applyRestoredView();
        }
    });
    connect(m_autosaver, &Autosaver::autosaveFailed, this, [this](const QString& message) {
        statusBar()->showMessage(tr("Autosave failed: %1").arg(message), kStatusMessageMs);
    });
}

std::optional<session::SessionView> MainWindow::viewState() const {
    if (m_graphPage->document() == nullptr || m_graphPage->isLayingOut()) {
        return std::nullopt;
    }
    const GraphView* view = m_graphPage->view();
    const QPointF center = view->mapToScene(view->viewport()->rect().center());
    return session::SessionView{view->zoom(), center.x(), center.y()};
}

void MainWindow::applyRestoredView() {
    const std::optional<session::SessionView> restored = m_session->takeRestoredView();
    if (!restored || restored->zoom <= 0) {
        return;
    }
    GraphView* view = m_graphPage->view();
    view->zoomBy(restored->zoom / view->zoom());
    view->centerOn(restored->centerX, restored->centerY);
}

bool MainWindow::saveSessionTo(const QString& path) {
    const Result<void> saved = m_session->saveSession(path, viewState());
    if (!saved.ok()) {
        m_reporter->error(tr("Cannot save the session"),
                          QString::fromStdString(saved.error().toString()));
        return false;
    }
    m_settings.addRecentFile(m_session->sessionPath());
    m_autosaver->discard(); // the work is saved; the next change autosaves again
    statusBar()->showMessage(tr("Saved %1").arg(QDir::toNativeSeparators(path)), kStatusMessageMs);
    return true;
}

void MainWindow::saveSession() {
    if (m_session->sessionPath().isEmpty()) {
        showSaveSessionDialog();
    } else {
        saveSessionTo(m_session->sessionPath());
    }
}

void MainWindow::showSaveSessionDialog() {
    const GraphDocument* document = m_session->document();
    QString suggested = m_session->sessionPath();
    if (suggested.isEmpty() && document != nullptr) {
        const QFileInfo model(document->filePath());
        suggested = model.dir().filePath(model.completeBaseName() + QStringLiteral(".qscope"));
    }
    QString path = QFileDialog::getSaveFileName(this, tr("Save Session"), suggested,
                                                tr("Quantscope sessions (*.qscope)"));
    if (path.isEmpty()) {
        return;
    }
    if (!isSessionPath(path)) {
        path += QStringLiteral(".qscope");
    }
    saveSessionTo(path);
}

void MainWindow::showOpenSessionDialog() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open Session"), {},
                                                      tr("Quantscope sessions (*.qscope)"));
    if (!path.isEmpty()) {
        m_session->openSession(path);
    }
}

bool MainWindow::loadHwConfigFile(const QString& path) {
    GraphDocument* document = m_session->document();
    if (document == nullptr || document->quantization() == nullptr) {
        m_reporter->error(tr("Cannot load the HW config"),
                          tr("Open a model with quantizers first."));
        return false;
    }
    const std::string file = QFile::encodeName(QFileInfo(path).absoluteFilePath()).toStdString();
    if (auto config = quantization::HWConfig::load(file); !config.ok()) {
        m_reporter->error(tr("Cannot load the HW config"),
                          QString::fromStdString(config.error().toString()));
        return false;
    }
    quantization::QuantizationSettings settings = document->quantization()->settings;
    settings.hw = file;
    const Result<quantization::QuantizationState> state =
        quantization::computeQuantization(document->graph(), settings);
    if (!state.ok()) {
        m_reporter->error(tr("Cannot place quantizers for %1").arg(QFileInfo(path).fileName()),
                          QString::fromStdString(state.error().toString()));
        return false;
    }
    document->undoStack().push(new ChangeQuantizationSettingsCommand(*document, settings));
    return true;
}

void MainWindow::showLoadHwConfigDialog() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Load HW Config"), {},
                                                      tr("HW config JSON (*.json);;All files (*)"));
    if (!path.isEmpty()) {
        loadHwConfigFile(path);
    }
}

void MainWindow::offerRecovery() {
    const QStringList found = Autosaver::recoverableSessions(m_autosaver->directory());
    if (found.isEmpty()) {
        return;
    }
    const QString newest = found.back();
    const auto answer = QMessageBox::question(
        this, tr("Recover Session"),
        tr("Quantscope did not exit cleanly last time. Restore the autosaved session %1?")
            .arg(QDir::toNativeSeparators(newest)),
        QMessageBox::Yes | QMessageBox::No, QMessageBox::Yes);
    if (answer == QMessageBox::Yes) {
        m_session->openSession(newest);
        // The restored session autosaves again under this instance once it changes.
        connect(
            m_session, &Session::modelOpened, this,
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

void MainWindow::updateWindowTitle() {
    GraphDocument* document = m_session->document();
    if (document == nullptr) {
        setWindowTitle(QStringLiteral("Quantscope"));
        return;
    }
    const QString& sessionPath = m_session->sessionPath();
    const QString shown =
        sessionPath.isEmpty()
            ? document->fileName()
            : tr("%1 (%2)").arg(QFileInfo(sessionPath).fileName(), document->fileName());
    setWindowTitle(tr("%1[*] — Quantscope").arg(shown)); // the title first: it holds the [*]
    setWindowModified(!document->undoStack().isClean());
}

} // namespace qs::ui

namespace qs::ui {

// --- Inspector and selection ---

void MainWindow::connectInspection() {
    m_inspectorDock->setObjectName(QStringLiteral("inspectorDock"));
    m_inspectorDock->setWidget(m_inspector);
    addDockWidget(Qt::RightDockWidgetArea, m_inspectorDock);
    tabifyDockWidget(m_infoDock, m_inspectorDock);
    m_inspectorDock->hide();
    m_actions->viewMenu()->addAction(m_inspectorDock->toggleViewAction());
    connect(m_graphPage->scene(), &QGraphicsScene::selectionChanged, this,
            &MainWindow::inspectSelection);
    connect(m_session, &Session::documentChanged, this, [this] {
        if (m_inspectorDock->isHidden()) {
            m_inspectorDock->show(); // a tab next to the model info, which stays in front
            m_infoDock->raise();
        }
    });
    connect(m_quantizerPanel, &QuantizerPanel::quantizerActivated, m_inspector,
            &InspectorPanel::showQuantizer);
    connect(m_chartPanel, &BitwidthChartPanel::quantizersClicked, this,
            [this](const QList<int>& ids) {
                m_graphPage->scene()->selectQuantizers(std::vector<int>(ids.begin(), ids.end()));
                m_quantizerPanel->selectQuantizers(ids);
                m_quantizerDock->show();
            });
}

void MainWindow::inspectSelection() {
    const QList<QGraphicsItem*> selected = m_graphPage->scene()->selectedItems();
    if (selected.size() != 1) {
        return; // a multi-selection (a chart bar) keeps what the inspector shows
    }
    const QGraphicsItem* item = selected.front();
    if (item->type() == QuantizerBadgeItem::Type) {
        m_inspector->showQuantizer(static_cast<const QuantizerBadgeItem*>(item)->quantizerId());
    } else if (item->type() == NodeItem::Type) {
        const auto* node = static_cast<const NodeItem*>(item);
        if (!node->node().valid()) {
            return; // graph inputs and outputs have nothing to inspect
        }
        m_inspector->showNode(node->content().fullName);
    } else {
        return;
    }
    if (m_inspectorDock->isHidden()) {
        m_inspectorDock->show();
    }
    m_inspectorDock->raise();
}

} // namespace qs::ui
