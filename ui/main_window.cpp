#include "ui/main_window.h"

#include "ui/actions.h"
#include "ui/autosave.h"
#include "ui/bitwidth_chart.h"
#include "ui/feature.h"
#include "ui/features/feature_registry.h"
#include "ui/graph_document.h"
#include "ui/graph_export.h"
#include "ui/graph_legend.h"
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
#include "ui/quantizer_panel.h"
#include "ui/selection_sync.h"
#include "ui/session.h"
#include "ui/session_controller.h"
#include "ui/settings.h"
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

/// The first local .onnx or .qscope file among the dragged URLs, or an empty string.
QString droppedModelPath(const QMimeData* mime) {
    if (mime == nullptr || !mime->hasUrls()) {
        return {};
    }
    for (const QUrl& url : mime->urls()) {
        QString path = url.toLocalFile();
        if (!path.isEmpty() && (path.endsWith(QStringLiteral(".onnx"), Qt::CaseInsensitive) ||
                                SessionController::isSessionPath(path))) {
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
    , m_inspector(new InspectorPanel(this))
    , m_inspectorDock(new QDockWidget(tr("Inspector"), this))
    , m_sessions(new SessionController(*this, *m_session, *m_graphPage, *m_actions, settings,
                                       *m_reporter)) {
    setWindowTitle(QStringLiteral("Quantscope"));
    setAcceptDrops(true);
    m_pages->addWidget(m_welcome);
    m_pages->addWidget(m_graphPage);
    setCentralWidget(m_pages);
    m_actions->populate(*menuBar());
    m_infoDock->setObjectName(QStringLiteral("modelInfoDock"));
    m_infoDock->setWidget(m_infoPanel);
    m_quantizerDock->setObjectName(QStringLiteral("quantizerDock"));
    m_quantizerDock->setWidget(m_quantizerPanel);
    m_chartDock->setObjectName(QStringLiteral("bitwidthChartDock"));
    m_chartDock->setWidget(m_chartPanel);
    m_inspectorDock->setObjectName(QStringLiteral("inspectorDock"));
    m_inspectorDock->setWidget(m_inspector);
    placeDock(*m_infoDock, Qt::RightDockWidgetArea, nullptr);
    placeDock(*m_quantizerDock, Qt::BottomDockWidgetArea, nullptr);
    placeDock(*m_chartDock, Qt::RightDockWidgetArea, m_infoDock);
    placeDock(*m_inspectorDock, Qt::RightDockWidgetArea, m_infoDock);
    new SelectionSync(
        *m_graphPage,
        {*m_inspector, *m_inspectorDock, *m_quantizerPanel, *m_quantizerDock, *m_chartPanel}, this);
    connectSession(); // first: features see a new document with its initial bit widths applied
    installFeatures();
    setTheme(m_settings.theme());
    statusBar()->addPermanentWidget(new JobStatusIndicator(*m_jobs, this));
    m_welcome->setRecentFiles(m_settings.recentFiles());
    connect(&m_settings, &Settings::recentFilesChanged, this,
            [this] { m_welcome->setRecentFiles(m_settings.recentFiles()); });
    connect(m_welcome, &WelcomePage::openRequested, this, &MainWindow::showOpenDialog);
    connect(m_welcome, &WelcomePage::recentFileActivated, this, &MainWindow::openRecentModel);
    connectActions();
    restoreWindow();
}

MainWindow::~MainWindow() = default;

void MainWindow::placeDock(QDockWidget& dock, Qt::DockWidgetArea area, QDockWidget* tabWith) {
    addDockWidget(area, &dock);
    if (tabWith != nullptr) {
        tabifyDockWidget(tabWith, &dock);
    }
    dock.hide();
    m_actions->viewMenu()->addAction(dock.toggleViewAction());
}

void MainWindow::installFeatures() {
    m_features = createFeatures({*this, *m_session, *m_jobs, *m_graphPage, *m_reporter});
    // Docks first, so their toggles follow the document docks' in View; then each feature's
    // section of the menus.
    for (Feature* feature : m_features) {
        if (QDockWidget* dock = feature->dock()) {
            const Qt::DockWidgetArea area = feature->dockArea();
            placeDock(*dock, area, area == Qt::BottomDockWidgetArea ? m_quantizerDock : m_infoDock);
        }
    }
    for (Feature* feature : m_features) {
        feature->createActions(*m_actions);
    }
}

bool MainWindow::isShowingWelcome() const {
    return m_pages->currentWidget() == m_welcome;
}

void MainWindow::openModel(const QString& path) {
    if (SessionController::isSessionPath(path)) {
        m_sessions->openSession(path);
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
    m_sessions->autosaver().discard(); // a clean exit leaves nothing to recover
    QMainWindow::closeEvent(event);
}

void MainWindow::connectActions() {
    connect(m_actions->open(), &QAction::triggered, this, &MainWindow::showOpenDialog);
    connect(m_actions->reload(), &QAction::triggered, m_session, &Session::reload);
    connect(m_actions->quit(), &QAction::triggered, this, &MainWindow::close);
    connect(m_actions->about(), &QAction::triggered, this, &MainWindow::showAbout);
    connect(m_actions, &Actions::recentFileTriggered, this, &MainWindow::openRecentModel);
    connect(m_actions, &Actions::themeTriggered, this, &MainWindow::setTheme);
    m_graphPage->view()->legend()->setVisible(m_settings.showLegend());
    connect(m_actions->showLegend(), &QAction::toggled, this, [this](bool on) {
        m_settings.setShowLegend(on);
        m_graphPage->view()->legend()->setVisible(on);
    });
    connect(m_actions->colorBlindPalette(), &QAction::toggled, this, [this](bool on) {
        m_settings.setColorBlindPalette(on);
        setTheme(m_settings.theme());
    });
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
    m_chartPanel->setTheme(theme);
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
    // Next to the model, named after it: "resnet50.svg".
    QString suggested;
    if (const GraphDocument* document = m_graphPage->document()) {
        const QFileInfo model(document->filePath());
        suggested = model.dir().filePath(model.completeBaseName() + QStringLiteral(".svg"));
    }
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export Graph Image"), suggested,
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
    connect(m_session, &Session::sessionPathChanged, this, &MainWindow::updateWindowTitle);
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
    if (m_inspectorDock->isHidden()) {
        m_inspectorDock->show(); // a tab next to the model info, which stays in front
        m_infoDock->raise();
    }
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
    updateWindowTitle();
}

void MainWindow::restoreWindow() {
    if (!restoreGeometry(m_settings.windowGeometry())) {
        resize(kDefaultWidth, kDefaultHeight);
    }
    restoreState(m_settings.windowState());
}

void MainWindow::updateWindowTitle() {
    GraphDocument* document = m_session->document();
    if (document == nullptr) {
        setWindowTitle(QStringLiteral("Quantscope"));
        return;
    }
    const QString& sessionPath = m_session->sessionPath();
    // A recovered session lives in the autosave folder until saved: name the model, not that file.
    QString shown;
    if (sessionPath.isEmpty()) {
        shown = document->displayName();
    } else if (m_sessions->isAutosavePath(sessionPath)) {
        shown = tr("%1 (recovered, not saved)").arg(document->displayName());
    } else {
        shown = tr("%1 (%2)").arg(QFileInfo(sessionPath).fileName(), document->displayName());
    }
    setWindowTitle(tr("%1[*] — Quantscope").arg(shown)); // the title first: it holds the [*]
    setWindowModified(!document->undoStack().isClean());
}

} // namespace qs::ui
