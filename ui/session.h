// Session: what the GUI has open. It holds the current GraphDocument and opens models through the
// JobRunner, so a big import never freezes the window; a failed open leaves the current document
// untouched and is reported through openFailed.
#pragma once

#include "ui/graph_document.h"

#include <QObject>
#include <QString>
#include <QUndoGroup>

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

    /// Imports the open document's file again.
    void reload();

Q_SIGNALS:
    /// The open document was replaced (never by nullptr).
    void documentChanged(qs::ui::GraphDocument* document);

    /// `path` was opened and is now the document.
    void modelOpened(const QString& path);

    /// Opening `path` failed; `message` is the one-line error.
    void openFailed(const QString& path, const QString& message);

private:
    void applyLoaded(int request, const QString& path, Result<LoadedModel> loaded);

    JobRunner& m_jobs;
    QUndoGroup m_undoGroup;
    std::unique_ptr<GraphDocument> m_document;
    quantization::QuantizationSettings m_initialSettings;
    int m_latestRequest = 0;
    int m_pendingOpens = 0;
};

} // namespace qs::ui
