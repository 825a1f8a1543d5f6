// Feature: one GUI feature (calibration, weight compression, an export, an overlay…) as the main
// window sees it — a folder under ui/features/ registered once in feature_registry.cpp. The window
// creates every registered feature with a FeatureContext, lets it create its actions through
// Actions (which lists them in the Quantize, View or File ▸ Export menu), and places its dock, if
// it has one; everything else (dialogs, jobs, overlays, undo commands, the state it keeps per
// document under key()) stays inside the feature's folder.
#pragma once

#include <QMainWindow>
#include <QObject>
#include <QString>

class QDockWidget;

namespace qs::ui {

class Actions;
class GraphPage;
class JobRunner;
class MessageReporter;
class Session;

/// What a feature may use of the window: the open document, long work, the graph, messages.
struct FeatureContext {
    QMainWindow& window; ///< parent of dialogs and docks; its status bar shows short results
    Session& session;    ///< the open document (Session::documentChanged)
    JobRunner& jobs;     ///< long work, with progress and cancel
    GraphPage& page;     ///< the graph scene and view, for overlays
    MessageReporter& reporter;
};

/// A feature of the main window.
class Feature : public QObject {
    Q_OBJECT

public:
    explicit Feature(QObject* parent = nullptr);

    ~Feature() override;

    /// Names the feature: the key of its DocumentState in GraphDocument, the prefix of its action
    /// names and (with the versioned session) its section of a `.qscope` file.
    virtual QString key() const = 0;

    /// Creates the feature's actions through `actions` (once, after the menus exist).
    virtual void createActions(Actions& actions) = 0;

    /// The feature's dock, or nullptr; the window places it in dockArea() (tabbed with the dock
    /// already there), hidden, with its toggle in the View menu.
    virtual QDockWidget* dock() const { return nullptr; }

    virtual Qt::DockWidgetArea dockArea() const { return Qt::BottomDockWidgetArea; }
};

} // namespace qs::ui
