#include "ui/job_runner.h"

#include <QElapsedTimer>
#include <QPromise>
#include <QThread>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

namespace qs::ui {

namespace {
constexpr int kPermille = 1000;
constexpr qint64 kMinReportIntervalMs = 50;

/// Maps core Progress onto a QPromise: reports become progress values (at most one every
/// kMinReportIntervalMs, except the final one), a cancelled future reads as a cancel.
class PromiseProgress final : public Progress {
public:
    explicit PromiseProgress(QPromise<void>& promise)
        : m_promise(promise) {
        m_promise.setProgressRange(0, kPermille);
    }

    void report(double fraction, std::string_view what) override {
        const bool last = fraction >= 1.0;
        if (m_clock.isValid() && !last && m_clock.elapsed() < kMinReportIntervalMs) {
            return;
        }
        m_clock.start();
        const int permille = static_cast<int>(std::clamp(fraction, 0.0, 1.0) * kPermille);
        m_promise.setProgressValueAndText(
            permille, QString::fromUtf8(what.data(), static_cast<qsizetype>(what.size())));
    }

    bool isCancelled() const override { return m_promise.isCanceled(); }

private:
    QPromise<void>& m_promise;
    QElapsedTimer m_clock;
};
} // namespace

JobRunner::JobRunner(QObject* parent)
    : QObject(parent) {
    m_pool.setMaxThreadCount(std::max(4, QThread::idealThreadCount()));
}

JobRunner::~JobRunner() {
    for (QFutureWatcher<void>* watcher : m_jobs) {
        watcher->disconnect(this);
        watcher->future().cancel();
    }
    for (QFutureWatcher<void>* watcher : m_jobs) {
        watcher->future().waitForFinished();
    }
}

void JobRunner::cancelAll() {
    for (QFutureWatcher<void>* watcher : m_jobs) {
        watcher->future().cancel();
    }
}

void JobRunner::launch(const QString& title, Body body, Finish finish) {
    auto* watcher = new QFutureWatcher<void>(this);
    const auto forwardProgress = [this, watcher] {
        Q_EMIT progressChanged(watcher->progressValue(), watcher->progressText());
    };
    connect(watcher, &QFutureWatcherBase::progressValueChanged, this, forwardProgress);
    connect(watcher, &QFutureWatcherBase::progressTextChanged, this, forwardProgress);
    connect(watcher, &QFutureWatcherBase::finished, this,
            [this, watcher, finish = std::move(finish)] { onJobFinished(watcher, finish); });
    m_jobs.push_back(watcher);
    watcher->setFuture(
        QtConcurrent::run(&m_pool, [body = std::move(body)](QPromise<void>& promise) {
            PromiseProgress progress(promise);
            body(progress);
        }));
    Q_EMIT jobStarted(title);
    if (m_jobs.size() == 1) {
        Q_EMIT busyChanged(true);
    }
}

void JobRunner::onJobFinished(QFutureWatcher<void>* watcher, const Finish& finish) {
    const bool cancelled = watcher->isCanceled();
    std::erase(m_jobs, watcher);
    watcher->deleteLater();
    // Go idle first: applying a result may open a modal dialog (an error) that should not sit
    // next to a busy indicator.
    if (m_jobs.empty()) {
        Q_EMIT busyChanged(false);
    }
    finish(cancelled);
}

} // namespace qs::ui
