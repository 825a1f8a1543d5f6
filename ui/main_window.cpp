#include "ui/main_window.h"

#include "ui/actions.h"
#include "ui/graph_document.h"
#include "ui/job_runner.h"
#include "ui/job_status_indicator.h"
#include "ui/message_reporter.h"
#include "ui/model_info_panel.h"
#include "ui/session.h"
#include "ui/settings.h"
#include "ui/welcome_page.h"

#include <QAction>
#include <QCloseEvent>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QStackedWidget>
#include <QStatusBar>

namespace qs::ui {

namespace {
constexpr int kDefaultWidth = 1280;
constexpr int kDefaultHeight = 820;
constexpr int kStatusMessageMs = 4000;

/// The first local .onnx file among the dragged URLs, or an empty string.
QString droppedModelPath(const QMimeData* mime) {
    if (mime == nullptr || !mime->hasUrls()) {
        return {};
    }
    for (const QUrl& url : mime->urls()) {
        QString path = url.toLocalFile();
        if (!path.isEmpty() && path.endsWith(QStringLiteral(".onnx"), Qt::CaseInsensitive)) {
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
    , m_infoPanel(new ModelInfoPanel(m_pages)) {
    setWindowTitle(QStringLiteral("Quantscope"));
    setAcceptDrops(true);
    m_pages->addWidget(m_welcome);
    m_pages->addWidget(m_infoPanel);
    setCentralWidget(m_pages);
    m_actions->populate(*menuBar());
    statusBar()->addPermanentWidget(new JobStatusIndicator(*m_jobs, this));
    m_welcome->setRecentFiles(m_settings.recentFiles());
    connect(&m_settings, &Settings::recentFilesChanged, this,
            [this] { m_welcome->setRecentFiles(m_settings.recentFiles()); });
    connect(m_welcome, &WelcomePage::openRequested, this, &MainWindow::showOpenDialog);
    connect(m_welcome, &WelcomePage::recentFileActivated, this, &MainWindow::openRecentModel);
    connectActions();
    connectSession();
    restoreWindow();
}

MainWindow::~MainWindow() = default;

bool MainWindow::isShowingWelcome() const {
    return m_pages->currentWidget() == m_welcome;
}

void MainWindow::openModel(const QString& path) {
    m_session->openModel(path);
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
    QMainWindow::closeEvent(event);
}

void MainWindow::connectActions() {
    connect(m_actions->open(), &QAction::triggered, this, &MainWindow::showOpenDialog);
    connect(m_actions->reload(), &QAction::triggered, m_session, &Session::reload);
    connect(m_actions->quit(), &QAction::triggered, this, &MainWindow::close);
    connect(m_actions->about(), &QAction::triggered, this, &MainWindow::showAbout);
    connect(m_actions, &Actions::recentFileTriggered, this, &MainWindow::openRecentModel);
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
    const QString path = QFileDialog::getOpenFileName(this, tr("Open Model"), {},
                                                      tr("ONNX models (*.onnx);;All files (*)"));
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
    m_pages->setCurrentWidget(m_infoPanel);
    m_actions->reload()->setEnabled(true);
    setWindowTitle(tr("%1 — Quantscope").arg(document->fileName()));
}

void MainWindow::restoreWindow() {
    if (!restoreGeometry(m_settings.windowGeometry())) {
        resize(kDefaultWidth, kDefaultHeight);
    }
    restoreState(m_settings.windowState());
}

} // namespace qs::ui
