#include "ui/autosave.h"

#include "ui/session.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>

#include <algorithm>

namespace qs::ui {

namespace {
const QString kSuffix = QStringLiteral(".qscope");
const QString kLockSuffix = QStringLiteral(".lock");

QString lockPathFor(const QString& sessionPath) {
    return sessionPath + kLockSuffix;
}
} // namespace

Autosaver::Autosaver(Session& session, ViewProvider view, QObject* parent)
    : QObject(parent)
    , m_session(session)
    , m_view(std::move(view))
    , m_directory(defaultDirectory())
    , m_baseName(QStringLiteral("autosave-%1-%2")
                     .arg(QCoreApplication::applicationPid())
                     .arg(QDateTime::currentMSecsSinceEpoch())) {
    m_timer.setSingleShot(true);
    m_timer.setInterval(kDefaultIntervalMs);
    connect(&m_timer, &QTimer::timeout, this, [this] {
        if (auto saved = saveNow(); !saved.ok()) {
            Q_EMIT autosaveFailed(QString::fromStdString(saved.error().toString()));
        }
    });
}

Autosaver::~Autosaver() = default;

QString Autosaver::defaultDirectory() {
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) +
           QStringLiteral("/autosave");
}

QStringList Autosaver::recoverableSessions(const QString& directory) {
    const QDir dir(directory);
    QFileInfoList candidates = dir.entryInfoList({QStringLiteral("autosave-*") + kSuffix},
                                                 QDir::Files, QDir::Time | QDir::Reversed);
    QStringList out;
    for (const QFileInfo& file : candidates) {
        // A live instance holds the lock; QLockFile takes over a lock whose process is gone.
        QLockFile lock(lockPathFor(file.absoluteFilePath()));
        lock.setStaleLockTime(0);
        if (lock.tryLock(0)) {
            lock.unlock();
            out.push_back(file.absoluteFilePath());
        }
    }
    return out;
}

void Autosaver::removeAutosave(const QString& path) {
    QFile::remove(path);
    QFile::remove(lockPathFor(path));
}

void Autosaver::setDirectory(const QString& directory) {
    discard();
    m_directory = directory;
}

QString Autosaver::filePath() const {
    return QDir(m_directory).filePath(m_baseName + kSuffix);
}

void Autosaver::noteChange() {
    if (!m_timer.isActive()) {
        m_timer.start();
    }
}

Result<void> Autosaver::saveNow() {
    m_timer.stop();
    if (!QDir().mkpath(m_directory)) {
        return Error(Errc::Io, "cannot create the autosave folder '" +
                                   QDir::toNativeSeparators(m_directory).toStdString() + "'");
    }
    if (!m_lock) {
        m_lock = std::make_unique<QLockFile>(lockPathFor(filePath()));
        m_lock->setStaleLockTime(0);
        if (!m_lock->tryLock(0)) {
            m_lock.reset();
            return Error(Errc::Io, "cannot lock the autosave '" + filePath().toStdString() + "'");
        }
    }
    QS_ASSIGN_OR_RETURN(const session::SessionFile session,
                        m_session.captureSession(m_view ? m_view() : std::nullopt));
    return session::writeSessionFile(QFile::encodeName(filePath()).toStdString(), session);
}

void Autosaver::discard() {
    m_timer.stop();
    QFile::remove(filePath());
    m_lock.reset(); // unlocks and deletes the lock file
}

} // namespace qs::ui
