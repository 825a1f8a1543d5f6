// Session: what the GUI has open. It holds the current GraphDocument and opens models through the
// JobRunner, so a big import never freezes the window; a failed open leaves the current document
// untouched and is reported through openFailed. What a `.qscope` session file holds is
// SessionController's business: it opens sessions through open() with its own reader and tells
// the Session its path.
#pragma once

#include "ui/graph_document.h"

#include <QObject>
#include <QString>
#include <QUndoGroup>

#include <functional>
#include <memory>

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

    /// What an open reads: the model and the file it came from.
    struct Opened {
        QString modelPath;
        LoadedModel model;
    };

    using Loader = std::function<Result<Opened>(Progress&)>;

    /// Runs `load` (job `title`) in the background and makes what it read the document, as
    /// openModel() does; `sessionPath` then becomes the session path and `adopted` runs. Errors
    /// name `path`. The newest request of either kind wins.
    void open(const QString& path, const QString& title, Loader load, const QString& sessionPath,
              std::function<void()> adopted = {});

    /// The `.qscope` file the open document was opened from or last saved to (empty if none).
    const QString& sessionPath() const { return m_sessionPath; }

    /// Records that the open document was saved as the session `path` (undo stack clean).
    void markSavedAs(const QString& path);

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
    int m_latestRequest = 0;
    int m_pendingOpens = 0;
};

} // namespace qs::ui
