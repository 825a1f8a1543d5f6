// Session: what the GUI has open. It holds the current GraphDocument and opens models through the
// JobRunner, so a big import never freezes the window; a failed open leaves the current document
// untouched and is reported through openFailed. It also saves the open document as a `.qscope`
// session (core's SessionFile: model path and hash, settings, choices, view) and opens one again:
// the model is read with the saved settings, its hash checked and the saved choices restored.
#pragma once

#include "core/session/session_file.h"
#include "ui/graph_document.h"

#include <QObject>
#include <QString>
#include <QUndoGroup>

#include <memory>
#include <optional>

namespace qs::ui {

class JobRunner;

/// The open model and the operations that replace it.
class Session : public QObject {
    Q_OBJECT

public:
    explicit Session(JobRunner& jobs, QObject* parent = nullptr);

    ~Session() override;

    /// The open document, or nullptr before the first successful open.
    GraphDocument* document() const { return m_document.get(); }

    /// Holds the open document's undo stack as its active stack; Edit ▸ Undo/Redo follow it.
    QUndoGroup& undoGroup() { return m_undoGroup; }

    /// True while an open or reload runs.
    bool isOpening() const { return m_pendingOpens > 0; }

    /// HW config, preset and rule that newly opened models start with.
    void setInitialQuantizationSettings(const quantization::QuantizationSettings& settings) {
        m_initialSettings = settings;
    }

    /// Imports `path` in the background; the newest request wins over older ones still running.
    void openModel(const QString& path);

    /// Opens the `.qscope` session at `path` in the background: its model with its settings and
    /// choices. A changed model (other hash), a missing model or a malformed file fails with a
    /// message through openFailed and leaves the current document open.
    void openSession(const QString& path);

    /// Writes the open document as a session to `path` (atomically) with `view`; it becomes the
    /// session path and the undo stack is marked clean.
    Result<void> saveSession(const QString& path, const std::optional<session::SessionView>& view);

    /// The open document as a session, with `view` (no document: an error).
    Result<session::SessionFile>
    captureSession(const std::optional<session::SessionView>& view) const;

    /// The `.qscope` file the open document was opened from or last saved to (empty if none).
    const QString& sessionPath() const { return m_sessionPath; }

    /// The view state of the session opened last (taken once: the second call gives nothing).
    std::optional<session::SessionView> takeRestoredView() {
        return std::exchange(m_restoredView, std::nullopt);
    }

    /// Imports the open document's file again.
    void reload();

Q_SIGNALS:
    /// The open document was replaced (never by nullptr).
    void documentChanged(qs::ui::GraphDocument* document);

    /// `path` (a model, or a session) was opened and is now the document.
    void modelOpened(const QString& path);

    /// Opening `path` failed; `message` is the one-line error.
    void openFailed(const QString& path, const QString& message);

    /// The session path changed (opened or saved as).
    void sessionPathChanged(const QString& path);

private:
    /// A model read for a session: the model and the session it was read for.
    struct LoadedSession {
        LoadedModel model;
        session::SessionFile session;
    };

    static Result<LoadedSession> loadSession(const QString& path, Progress& progress);

    int beginOpen();

    /// False when `request` is stale or failed (reported).
    bool acceptLoaded(int request, const QString& path, const Error* error);

    void adopt(const QString& path, LoadedModel loaded);

    void setSessionPath(const QString& path);

    JobRunner& m_jobs;
    QUndoGroup m_undoGroup;
    std::unique_ptr<GraphDocument> m_document;
    quantization::QuantizationSettings m_initialSettings;
    QString m_sessionPath;
    std::optional<session::SessionView> m_restoredView;
    int m_latestRequest = 0;
    int m_pendingOpens = 0;
};

} // namespace qs::ui
