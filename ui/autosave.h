// Autosaver: writes the open document as a `.qscope` session to the application's data folder a
// few seconds after each change (atomically, through core's writeSessionFile), so a crash loses
// little. Each running instance owns one autosave file and holds a QLockFile next to it; a clean
// exit removes both. An autosave whose lock is not held by a live process is left over from an
// unclean exit: recoverableSessions() lists those, and the next start offers to restore them.
#pragma once

#include "core/session/session_file.h"

#include <QLockFile>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QTimer>

#include <functional>
#include <memory>
#include <optional>

namespace qs::ui {

class Session;

/// Saves the session in the background of editing.
class Autosaver : public QObject {
    Q_OBJECT

public:
    /// Gives the graph view's state to store with the session.
    using ViewProvider = std::function<std::optional<session::SessionView>()>;

    static constexpr int kDefaultIntervalMs = 30000;

    Autosaver(Session& session, ViewProvider view, QObject* parent = nullptr);

    ~Autosaver() override;

    /// The folder of autosaves: `<app data>/autosave` by default.
    static QString defaultDirectory();

    /// Autosaves in `directory` left by instances that did not exit cleanly, oldest first.
    static QStringList recoverableSessions(const QString& directory);

    /// Deletes the autosave `path` and its lock (after it was restored or declined).
    static void removeAutosave(const QString& path);

    const QString& directory() const { return m_directory; }

    /// Moves autosaving to `directory` (tests); drops this instance's earlier autosave.
    void setDirectory(const QString& directory);

    /// Delay between a change and its autosave.
    void setInterval(int ms) { m_timer.setInterval(ms); }

    /// This instance's autosave file (it exists only after the first autosave).
    QString filePath() const;

    /// Schedules an autosave (the open document changed).
    void noteChange();

    /// True while a change waits for its autosave.
    bool isPending() const { return m_timer.isActive(); }

    /// Writes the autosave now; errors are returned (and reported by autosaveFailed).
    Result<void> saveNow();

    /// Removes this instance's autosave and lock (clean exit, or the work was saved).
    void discard();

Q_SIGNALS:
    /// An autosave could not be written; `message` says why.
    void autosaveFailed(const QString& message);

private:
    Session& m_session;
    ViewProvider m_view;
    QString m_directory;
    QString m_baseName;
    QTimer m_timer;
    std::unique_ptr<QLockFile> m_lock;
};

} // namespace qs::ui
