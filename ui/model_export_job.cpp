#include "ui/model_export_job.h"

#include "core/onnx/model_io.h"
#include "ui/job_runner.h"
#include "ui/message_reporter.h"

#include <QDir>
#include <QFileInfo>
#include <QMainWindow>
#include <QStatusBar>

namespace qs::ui {

namespace {
constexpr int kStatusMessageMs = 4000;
} // namespace

ModelExportJob::ModelExportJob(QMainWindow& window, JobRunner& jobs, MessageReporter& reporter,
                               QObject* parent)
    : QObject(parent)
    , m_window(window)
    , m_jobs(jobs)
    , m_reporter(reporter) {}

void ModelExportJob::start(const graph::Graph& graph, const QString& path, GraphRewrite rewrite) {
    m_running = true;
    Q_EMIT runningChanged(true);
    m_jobs.start<QString>(
        tr("Writing %1").arg(QFileInfo(path).fileName()),
        [graph = graph::Graph(graph), rewrite = std::move(rewrite),
         target = path.toStdString()](Progress& progress) mutable -> Result<QString> {
            QS_ASSIGN_OR_RETURN(const QString done, rewrite(graph, progress));
            QS_TRY(onnx::exportModel(graph, target));
            return QObject::tr("Saved %1: %2").arg(QString::fromStdString(target), done);
        },
        [this, path](const Result<QString>& written) { finish(path, written); });
}

void ModelExportJob::finish(const QString& path, const Result<QString>& written) {
    m_running = false;
    Q_EMIT runningChanged(false);
    if (!written.ok()) {
        if (written.error().code() != Errc::Cancelled) {
            m_reporter.error(tr("Cannot export %1").arg(QDir::toNativeSeparators(path)),
                             QString::fromStdString(written.error().toString()));
        }
        Q_EMIT finished(false, path);
        return;
    }
    m_window.statusBar()->showMessage(written.value(), kStatusMessageMs);
    Q_EMIT finished(true, path);
}

} // namespace qs::ui
