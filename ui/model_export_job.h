// ModelExportJob: the model exports that rewrite a copy of the open graph (weight compression
// applied, FP16 conversion) and write it as ONNX, off the GUI thread through the JobRunner. The
// write is atomic (core's exporter); an error (an unwritable path) goes to the reporter, success to
// the status bar with what the rewrite did. One job at a time per exporter.
#pragma once

#include "core/graph/graph.h"
#include "core/support/progress.h"
#include "core/support/result.h"

#include <QObject>
#include <QString>

#include <functional>

class QMainWindow;

namespace qs::ui {

class JobRunner;
class MessageReporter;

/// Rewrites a copy of a graph and writes it, in the background.
class ModelExportJob : public QObject {
    Q_OBJECT

public:
    /// Rewrites the copy in place and says what it did ("12 weights, 40 KiB -> 12 KiB").
    using GraphRewrite = std::function<Result<QString>(graph::Graph&, Progress&)>;

    ModelExportJob(QMainWindow& window, JobRunner& jobs, MessageReporter& reporter,
                   QObject* parent = nullptr);

    bool isRunning() const { return m_running; }

    /// Copies `graph` (weights are shared), rewrites the copy with `rewrite` and writes it to
    /// `path`; emits finished either way.
    void start(const graph::Graph& graph, const QString& path, GraphRewrite rewrite);

Q_SIGNALS:
    /// The job started or ended (actions follow it).
    void runningChanged(bool running);

    /// The job ended; `ok` when `path` was written.
    void finished(bool ok, const QString& path);

private:
    void finish(const QString& path, const Result<QString>& written);

    QMainWindow& m_window;
    JobRunner& m_jobs;
    MessageReporter& m_reporter;
    bool m_running = false;
};

} // namespace qs::ui
