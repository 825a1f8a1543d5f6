// MainWindow: arranges the window — menus from Actions, the central page (welcome page until a
// model is open, then the model info panel), the job indicator in the status bar — and forwards
// what the user asks for (open dialog, recent file, dropped file) to the Session.
#pragma once

#include "ui/message_reporter.h"

#include <QMainWindow>

#include <memory>

class QStackedWidget;

namespace qs::ui {

class Actions;
class GraphDocument;
class JobRunner;
class ModelInfoPanel;
class Session;
class Settings;
class WelcomePage;

/// The Quantscope main window.
class MainWindow : public QMainWindow {
    Q_OBJECT

public:
    /// `reporter` shows errors and notices; null means message boxes.
    explicit MainWindow(Settings& settings, std::unique_ptr<MessageReporter> reporter = {},
                        QWidget* parent = nullptr);

    ~MainWindow() override;

    Session& session() const { return *m_session; }

    JobRunner& jobs() const { return *m_jobs; }

    Actions& actions() const { return *m_actions; }

    WelcomePage& welcomePage() const { return *m_welcome; }

    ModelInfoPanel& infoPanel() const { return *m_infoPanel; }

    /// True while the welcome page is the central page.
    bool isShowingWelcome() const;

    /// Opens the model at `path` in the background.
    void openModel(const QString& path);

    /// Opens a recent file; a file that no longer exists leaves the list, with a notice.
    void openRecentModel(const QString& path);

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;

    void dropEvent(QDropEvent* event) override;

    void closeEvent(QCloseEvent* event) override;

private:
    void connectActions();

    void connectSession();

    void showOpenDialog();

    void showAbout();

    void showDocument(GraphDocument* document);

    void restoreWindow();

    Settings& m_settings;
    std::unique_ptr<MessageReporter> m_reporter;
    JobRunner* m_jobs;
    Session* m_session;
    Actions* m_actions;
    QStackedWidget* m_pages;
    WelcomePage* m_welcome;
    ModelInfoPanel* m_infoPanel;
};

} // namespace qs::ui
