// JobRunner: runs long work (model import, later calibration, Hessians, HAWQ, layout) off the UI
// thread through QtConcurrent. The work gets a core Progress mapped onto a QPromise, so it can
// report and see a cancel; its Result is handed back on the GUI thread, where the caller applies
// it. Destroying the runner cancels every job and waits for it.
#pragma once

#include "core/support/progress.h"
#include "core/support/result.h"

#include <QFutureWatcher>
#include <QObject>
#include <QString>
#include <QThreadPool>

#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace qs::ui {

/// Runs jobs on the global thread pool and applies their results on the GUI thread.
class JobRunner : public QObject {
    Q_OBJECT

public:
    explicit JobRunner(QObject* parent = nullptr);

    ~JobRunner() override;

    /// Runs `work` on a pool thread. `apply` is called on the GUI thread with its result, or with
    /// an Errc::Cancelled error when the job was cancelled; an exception thrown by `work` arrives
    /// as an Errc::Internal error.
    template <typename T>
    void start(const QString& title, std::function<Result<T>(Progress&)> work,
               std::function<void(Result<T>)> apply);

    /// True while at least one job runs.
    bool isBusy() const { return !m_jobs.empty(); }

    /// Asks every running job to stop; each still reports back through its `apply`.
    void cancelAll();

Q_SIGNALS:
    /// A job was started; `title` says what it does ("Opening model.onnx").
    void jobStarted(const QString& title);

    /// The first job started or the last job ended.
    void busyChanged(bool busy);

    /// The newest job reported progress; `permille` in [0, 1000].
    void progressChanged(int permille, const QString& what);

private:
    using Body = std::function<void(Progress&)>;
    using Finish = std::function<void(bool cancelled)>;

    void launch(const QString& title, Body body, Finish finish);

    void onJobFinished(QFutureWatcher<void>* watcher, const Finish& finish);

    std::vector<QFutureWatcher<void>*> m_jobs;
    /// Jobs run here, not on the global pool: Qt's raster painter borrows global-pool threads,
    /// so a long job there could stall painting on the GUI thread.
    QThreadPool m_pool;
};

template <typename T>
void JobRunner::start(const QString& title, std::function<Result<T>(Progress&)> work,
                      std::function<void(Result<T>)> apply) {
    auto slot = std::make_shared<std::optional<Result<T>>>();
    Body body = [work = std::move(work), slot](Progress& progress) {
        try {
            slot->emplace(work(progress));
        } catch (const std::exception& e) {
            slot->emplace(Error(Errc::Internal, e.what()));
        } catch (...) {
            slot->emplace(Error(Errc::Internal, "unknown exception in a background job"));
        }
    };
    Finish finish = [apply = std::move(apply), slot](bool cancelled) {
        if (cancelled || !slot->has_value()) {
            apply(Error(Errc::Cancelled, "cancelled"));
            return;
        }
        apply(std::move(**slot));
    };
    launch(title, std::move(body), std::move(finish));
}

} // namespace qs::ui
