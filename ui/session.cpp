#include "ui/session.h"

#include "ui/job_runner.h"

#include <QFile>
#include <QFileInfo>
#include <QPointer>

#include <filesystem>
#include <utility>

namespace qs::ui {

namespace {
std::filesystem::path toPath(const QString& path) {
    return {QFile::encodeName(path).toStdString()};
}
} // namespace

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
    const int request = beginOpen();
    m_jobs.start<LoadedModel>(
        tr("Opening %1").arg(QFileInfo(absolute).fileName()),
        [absolute, settings = m_initialSettings](Progress& progress) {
            return loadModel(absolute, progress, settings);
        },
        [self = QPointer<Session>(this), request, absolute](Result<LoadedModel> loaded) {
            if (self &&
                self->acceptLoaded(request, absolute, loaded.ok() ? nullptr : &loaded.error())) {
                self->adopt(absolute, std::move(loaded).value());
                self->setSessionPath({});
                Q_EMIT self->modelOpened(absolute);
            }
        });
}

Result<Session::LoadedSession> Session::loadSession(const QString& path, Progress& progress) {
    QS_ASSIGN_OR_RETURN(session::SessionFile session, session::readSessionFile(toPath(path)));
    const QString model = QFile::decodeName(session.modelPath.c_str());
    auto inSession = [&path](Error error) {
        return std::move(error).context("session '" + toPath(path).string() + "'");
    };
    if (!QFileInfo::exists(model)) {
        return inSession(Error(Errc::Io, "its model '" + session.modelPath + "' does not exist"));
    }
    if (auto same = session::checkSessionModel(session, toPath(model)); !same.ok()) {
        return inSession(std::move(same).error());
    }
    QS_ASSIGN_OR_RETURN(LoadedModel loaded, loadModel(model, progress, session.settings));
    if (!session.choices.empty()) {
        if (!loaded.quantization) {
            return inSession(
                Error(Errc::InvalidArgument,
                      "its choices cannot be restored: " + loaded.quantizationError.toStdString()));
        }
        auto choices = session::sessionChoicesFor(session, *loaded.quantization);
        if (!choices.ok()) {
            return inSession(std::move(choices).error());
        }
        if (auto chosen = quantization::chooseConfigs(*loaded.quantization, *choices);
            !chosen.ok()) {
            return inSession(std::move(chosen).error());
        }
    }
    return LoadedSession{std::move(loaded), std::move(session)};
}

void Session::openSession(const QString& path) {
    const QString absolute = QFileInfo(path).absoluteFilePath();
    const int request = beginOpen();
    m_jobs.start<LoadedSession>(
        tr("Opening session %1").arg(QFileInfo(absolute).fileName()),
        [absolute](Progress& progress) { return loadSession(absolute, progress); },
        [self = QPointer<Session>(this), request, absolute](Result<LoadedSession> loaded) {
            if (!self ||
                !self->acceptLoaded(request, absolute, loaded.ok() ? nullptr : &loaded.error())) {
                return;
            }
            LoadedSession opened = std::move(loaded).value();
            const QString model = QFile::decodeName(opened.session.modelPath.c_str());
            self->m_restoredView = opened.session.view;
            self->adopt(model, std::move(opened.model));
            self->setSessionPath(absolute);
            Q_EMIT self->modelOpened(absolute);
        });
}

void Session::reload() {
    if (m_document) {
        openModel(m_document->filePath());
    }
}

Result<session::SessionFile>
Session::captureSession(const std::optional<session::SessionView>& view) const {
    if (!m_document || m_document->quantization() == nullptr) {
        return Error(Errc::InvalidArgument, "no model with quantizers is open");
    }
    QS_ASSIGN_OR_RETURN(session::SessionFile session,
                        session::captureSession(toPath(m_document->filePath()),
                                                m_document->modelHash(),
                                                *m_document->quantization()));
    session.view = view;
    return session;
}

Result<void> Session::saveSession(const QString& path,
                                  const std::optional<session::SessionView>& view) {
    QS_ASSIGN_OR_RETURN(const session::SessionFile session, captureSession(view));
    QS_TRY(session::writeSessionFile(toPath(path), session));
    m_document->undoStack().setClean();
    setSessionPath(QFileInfo(path).absoluteFilePath());
    return {};
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
