#include "ui/session.h"

#include "ui/job_runner.h"

#include <QFile>
#include <QFileInfo>
#include <QPointer>

#include <utility>

namespace qs::ui {

Session::Session(JobRunner& jobs, QObject* parent)
    : QObject(parent)
    , m_jobs(jobs) {}

Session::~Session() = default;

int Session::beginOpen() {
    ++m_pendingOpens;
    return ++m_latestRequest;
}

void Session::openModel(const QString& path) {
    const QString absolute = QFileInfo(path).absoluteFilePath();
    open(absolute, tr("Opening %1").arg(QFileInfo(absolute).fileName()),
         [absolute, settings = m_initialSettings](Progress& progress) -> Result<Opened> {
             QS_ASSIGN_OR_RETURN(LoadedModel loaded, loadModel(absolute, progress, settings));
             return Opened{absolute, std::move(loaded)};
         },
         {});
}

void Session::open(const QString& path, const QString& title, Loader load,
                   const QString& sessionPath, std::function<void()> adopted) {
    const int request = beginOpen();
    m_jobs.start<Opened>(
        title, std::move(load),
        [self = QPointer<Session>(this), request, path, sessionPath,
         adopted = std::move(adopted)](Result<Opened> loaded) {
            if (!self ||
                !self->acceptLoaded(request, path, loaded.ok() ? nullptr : &loaded.error())) {
                return;
            }
            Opened opened = std::move(loaded).value();
            self->adopt(opened.modelPath, std::move(opened.model));
            self->setSessionPath(sessionPath);
            if (adopted) {
                adopted();
            }
            Q_EMIT self->modelOpened(path);
        });
}

void Session::reload() {
    if (m_document) {
        openModel(m_document->filePath());
    }
}

void Session::markSavedAs(const QString& path) {
    if (m_document) {
        m_document->undoStack().setClean();
    }
    setSessionPath(QFileInfo(path).absoluteFilePath());
}

bool Session::acceptLoaded(int request, const QString& path, const Error* error) {
    --m_pendingOpens;
    if (request != m_latestRequest) {
        return false;
    }
    if (error != nullptr) {
        if (error->code() != Errc::Cancelled) {
            Q_EMIT openFailed(path, QString::fromStdString(error->toString()));
        }
        return false;
    }
    return true;
}

void Session::adopt(const QString& path, LoadedModel loaded) {
    const std::unique_ptr<GraphDocument> previous =
        std::exchange(m_document, std::make_unique<GraphDocument>(path, std::move(loaded)));
    m_undoGroup.addStack(&m_document->undoStack());
    m_undoGroup.setActiveStack(&m_document->undoStack());
    Q_EMIT documentChanged(m_document.get());
}

void Session::setSessionPath(const QString& path) {
    if (m_sessionPath != path) {
        m_sessionPath = path;
        Q_EMIT sessionPathChanged(path);
    }
}

} // namespace qs::ui
