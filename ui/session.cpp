#include "ui/session.h"

#include "ui/job_runner.h"

#include <QFileInfo>
#include <QPointer>

#include <utility>

namespace qs::ui {

Session::Session(JobRunner& jobs, QObject* parent)
    : QObject(parent)
    , m_jobs(jobs) {}

Session::~Session() = default;

void Session::openModel(const QString& path) {
    const QString absolute = QFileInfo(path).absoluteFilePath();
    const int request = ++m_latestRequest;
    ++m_pendingOpens;
    m_jobs.start<LoadedModel>(
        tr("Opening %1").arg(QFileInfo(absolute).fileName()),
        [absolute, settings = m_initialSettings](Progress& progress) {
            return loadModel(absolute, progress, settings);
        },
        [self = QPointer<Session>(this), request, absolute](Result<LoadedModel> loaded) {
            if (self) {
                self->applyLoaded(request, absolute, std::move(loaded));
            }
        });
}

void Session::reload() {
    if (m_document) {
        openModel(m_document->filePath());
    }
}

void Session::applyLoaded(int request, const QString& path, Result<LoadedModel> loaded) {
    --m_pendingOpens;
    if (request != m_latestRequest) {
        return;
    }
    if (!loaded.ok()) {
        if (loaded.error().code() != Errc::Cancelled) {
            Q_EMIT openFailed(path, QString::fromStdString(loaded.error().toString()));
        }
        return;
    }
    const std::unique_ptr<GraphDocument> previous =
        std::exchange(m_document, std::make_unique<GraphDocument>(path, std::move(loaded).value()));
    m_undoGroup.addStack(&m_document->undoStack());
    m_undoGroup.setActiveStack(&m_document->undoStack());
    Q_EMIT documentChanged(m_document.get());
    Q_EMIT modelOpened(path);
}

} // namespace qs::ui
