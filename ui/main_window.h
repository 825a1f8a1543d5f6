// MainWindow: arranges the window — menus from Actions, the central page (welcome page until a
// model is open, then the graph page), the model info panel in a dock, the job indicator in the
// status bar — and forwards what the user asks for (open dialog, recent file, dropped file,
// export, theme) to the Session, the graph page and Settings.
#pragma once

#include "core/session/session_file.h"
#include "ui/message_reporter.h"
#include "ui/theme.h"

#include <QMainWindow>

#include <memory>
#include <optional>

class QDockWidget;
class QStackedWidget;

namespace qs::ui {

class Actions;
class Autosaver;
class GraphDocument;
class GraphPage;
class InspectorPanel;
class JobRunner;
class BitwidthChartPanel;
class CalibrationCommands;
class ModelInfoPanel;
class QuantizerPanel;
class Session;
class Settings;
class WelcomePage;
class WeightCompressionController;

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

    GraphPage& graphPage() const { return *m_graphPage; }

    QDockWidget& infoDock() const { return *m_infoDock; }

    /// Bit widths ("NODE[:PORT]=BITS" or "#ID=BITS", as `quantize --set`) chosen, as one undoable
    /// step, for the next model that opens.
    void setInitialBitwidths(const QStringList& specs) { m_initialBitwidths = specs; }

    QuantizerPanel& quantizerPanel() const { return *m_quantizerPanel; }

    QDockWidget& quantizerDock() const { return *m_quantizerDock; }

    BitwidthChartPanel& chartPanel() const { return *m_chartPanel; }

    QDockWidget& chartDock() const { return *m_chartDock; }

    InspectorPanel& inspector() const { return *m_inspector; }

    QDockWidget& inspectorDock() const { return *m_inspectorDock; }

    /// Compress Weights, the Weight Compression dock and the ONNX exports.
    WeightCompressionController& compression() const { return *m_compression; }

    /// Quantize ▸ Calibrate… and View ▸ SQNR Overlay.
    CalibrationCommands& calibration() const { return *m_calibration; }

    /// Applies `choice` to the application and the graph, and remembers it.
    void setTheme(ThemeChoice choice);

    /// Writes the shown graph to `path` (format from the suffix); errors go to the reporter.
    bool exportGraph(const QString& path);

    /// True while the welcome page is the central page.
    bool isShowingWelcome() const;

    /// Opens the model at `path` in the background.
    void openModel(const QString& path);

    /// Opens a recent file; a file that no longer exists leaves the list, with a notice.
    void openRecentModel(const QString& path);

    // --- Sessions (.qscope), autosave and recovery, HW config files ---

    Autosaver& autosaver() const { return *m_autosaver; }

    /// The graph view's zoom and centre, for sessions (nullopt while no graph is shown).
    std::optional<session::SessionView> viewState() const;

    /// Saves the open document as a session at `path`; errors go to the reporter.
    bool saveSessionTo(const QString& path);

    /// Places quantizers for the HW config JSON at `path` (one undo step) after checking that it
    /// reads; errors go to the reporter and change nothing.
    bool loadHwConfigFile(const QString& path);

    /// Asks whether to restore autosaves left by an unclean exit (a dialog), and does.
    void offerRecovery();

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;

    void dropEvent(QDropEvent* event) override;

    void closeEvent(QCloseEvent* event) override;

private:
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

    void connectSessionFiles();

    void saveSession();

    void showSaveSessionDialog();

    void showOpenSessionDialog();

    void showLoadHwConfigDialog();

    /// Applies a restored session's view once the graph is laid out.
    void applyRestoredView();

    void updateWindowTitle();

    /// The inspector, the Bit Widths chart and the graph selection kept in step.
    void connectInspection();

    /// Shows the single selected op or badge in the inspector.
    void inspectSelection();

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
    QStringList m_initialBitwidths;
    Autosaver* m_autosaver;
    InspectorPanel* m_inspector;
    QDockWidget* m_inspectorDock;
    WeightCompressionController* m_compression;
    CalibrationCommands* m_calibration = nullptr;

    /// Creates the calibration entries and adds them to the menus.
    void setupCalibration();
};

} // namespace qs::ui
