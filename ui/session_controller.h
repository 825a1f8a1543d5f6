// SessionController: the `.qscope` side of the main window, and the one place the GUI calls core's
// session file API (read, check the model, restore choices, capture, write). It opens sessions
// (File ▸ Open Session…, a recent or dropped .qscope) through Session::open with its reader, saves
// them (Save Session, Save Session As…) with the graph view's zoom and centre, restores that view
// once the graph is laid out, owns the Autosaver and offers crash recovery, and loads a HW config
// from a JSON file (Quantize ▸ Load HW Config File…) as one undo step.
#pragma once

#include "core/session/session_file.h"
#include "core/support/result.h"

#include <QObject>
#include <QString>

#include <optional>

class QMainWindow;

namespace qs::ui {

class Actions;
class Autosaver;
class GraphDocument;
class GraphPage;
class MessageReporter;
class Session;
class Settings;

/// Session files, autosave and recovery, HW config files.
class SessionController : public QObject {
    Q_OBJECT

public:
    SessionController(QMainWindow& window, Session& session, GraphPage& page, Actions& actions,
                      Settings& settings, MessageReporter& reporter);

    ~SessionController() override;

    /// True for a path that names a session file (`.qscope`).
    static bool isSessionPath(const QString& path);

    Autosaver& autosaver() const { return *m_autosaver; }

    /// Opens the `.qscope` session at `path` in the background: its model with its settings and
    /// choices. A changed model (other hash), a missing model or a malformed file fails with a
    /// message (Session::openFailed) and leaves the current document open.
    void openSession(const QString& path);

    /// The graph view's zoom and centre, for sessions (nullopt while no graph is shown).
    std::optional<session::SessionView> viewState() const;

    /// Saves the open document as a session at `path`; errors go to the reporter.
    bool saveSessionTo(const QString& path);

    /// Places quantizers for the HW config JSON at `path` (one undo step) after checking that it
    /// reads; errors go to the reporter and change nothing.
    bool loadHwConfigFile(const QString& path);

    /// Reads a setup JSON strictly (as `quantize --setup-in` does) and chooses its configs for the
    /// current proposal, one undo step; a bad file or a setup of other settings is an error that
    /// changes nothing.
    bool importSetupFile(const QString& path);

    /// Asks whether to restore autosaves left by an unclean exit (a dialog), and does.
    void offerRecovery();

    /// A path inside the autosave folder (a recovered session): never saved to silently.
    bool isAutosavePath(const QString& path) const;

private:
    /// Writes the open document as a session with the current view to `path` (atomically).
    Result<void> writeSession(const QString& path) const;

    void saveSession();

    void showSaveSessionDialog();

    void showOpenSessionDialog();

    void showLoadHwConfigDialog();
    void showImportSetupDialog();

    /// Applies a restored session's view once the graph is laid out.
    void applyRestoredView();

    void showStatus(const QString& message);

    QMainWindow& m_window;
    Session& m_session;
    GraphPage& m_page;
    Settings& m_settings;
    MessageReporter& m_reporter;
    Autosaver* m_autosaver;
    std::optional<session::SessionView> m_restoredView;
};

} // namespace qs::ui
