// MainWindow: arranges the window — menus from Actions, the central page (welcome page until a
// model is open, then the graph page), the document docks (Model, Quantizers, Bit Widths,
// Inspector), the dock of every registered feature (ui/features/), the job indicator in the status
// bar — and forwards what the user asks for (open dialog, recent file, dropped file, export image,
// theme) to the Session, the SessionController, the graph page and Settings.
#pragma once

#include "core/support/assert.h"
#include "ui/message_reporter.h"
#include "ui/theme.h"

#include <QList>
#include <QMainWindow>

#include <memory>

class QDockWidget;
class QStackedWidget;

namespace qs::ui {

class Actions;
class BitwidthChartPanel;
class Feature;
class GraphDocument;
class GraphPage;
class InspectorPanel;
class JobRunner;
class ModelInfoPanel;
class QuantizerPanel;
class Session;
class SessionController;
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

    /// Session files, autosave and recovery, HW config files.
    SessionController& sessions() const { return *m_sessions; }

    JobRunner& jobs() const { return *m_jobs; }

    Actions& actions() const { return *m_actions; }

    WelcomePage& welcomePage() const { return *m_welcome; }

    ModelInfoPanel& infoPanel() const { return *m_infoPanel; }

    GraphPage& graphPage() const { return *m_graphPage; }

    QDockWidget& infoDock() const { return *m_infoDock; }

    QuantizerPanel& quantizerPanel() const { return *m_quantizerPanel; }

    QDockWidget& quantizerDock() const { return *m_quantizerDock; }

    BitwidthChartPanel& chartPanel() const { return *m_chartPanel; }

    QDockWidget& chartDock() const { return *m_chartDock; }

    InspectorPanel& inspector() const { return *m_inspector; }

    QDockWidget& inspectorDock() const { return *m_inspectorDock; }

    /// The registered features, in menu order (ui/features/feature_registry.cpp).
    const QList<Feature*>& features() const { return m_features; }

    /// The registered feature of type `T` (calibration, weight compression…).
    template <typename T>
    T& feature() const {
        T* found = nullptr;
        for (Feature* each : m_features) {
            found = found != nullptr ? found : qobject_cast<T*>(each);
        }
        QS_ASSERT(found != nullptr, "the feature is registered in createFeatures()");
        return *found;
    }

    /// Bit widths ("NODE[:PORT]=BITS" or "#ID=BITS", as `quantize --set`) chosen, as one undoable
    /// step, for the next model that opens.
    void setInitialBitwidths(const QStringList& specs) { m_initialBitwidths = specs; }

    /// Applies `choice` to the application and the graph, and remembers it.
    void setTheme(ThemeChoice choice);

    /// Writes the shown graph to `path` (format from the suffix); errors go to the reporter.
    bool exportGraph(const QString& path);

    /// True while the welcome page is the central page.
    bool isShowingWelcome() const;

    /// Opens the model (or `.qscope` session) at `path` in the background.
    void openModel(const QString& path);

    /// Opens a recent file; a file that no longer exists leaves the list, with a notice.
    void openRecentModel(const QString& path);

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;

    void dropEvent(QDropEvent* event) override;

    void closeEvent(QCloseEvent* event) override;

private:
    /// Adds `dock` to `area`, hidden, tabbed with `tabWith` (if any), its toggle in View.
    void placeDock(QDockWidget& dock, Qt::DockWidgetArea area, QDockWidget* tabWith);

    void installFeatures();

    void connectActions();

    void connectSession();

    void showOpenDialog();

    void showAbout();

    void showExportDialog();

    void connectGraphActions();

    void showDocument(GraphDocument* document);

    /// Checks and enables the Quantize entries for the open document's settings.
    void syncQuantizationActions();

    /// Pushes the initial bit widths onto `document`'s stack (errors are reported).
    void applyInitialBitwidths(GraphDocument& document);

    void restoreWindow();

    void updateWindowTitle();

    Settings& m_settings;
    std::unique_ptr<MessageReporter> m_reporter;
    JobRunner* m_jobs;
    Session* m_session;
    Actions* m_actions;
    QStackedWidget* m_pages;
    WelcomePage* m_welcome;
    GraphPage* m_graphPage;
    ModelInfoPanel* m_infoPanel;
    QDockWidget* m_infoDock;
    QuantizerPanel* m_quantizerPanel;
    QDockWidget* m_quantizerDock;
    BitwidthChartPanel* m_chartPanel;
    QDockWidget* m_chartDock;
    InspectorPanel* m_inspector;
    QDockWidget* m_inspectorDock;
    SessionController* m_sessions;
    QList<Feature*> m_features;
    QStringList m_initialBitwidths;
};

} // namespace qs::ui
