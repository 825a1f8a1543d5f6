#include "ui/job_runner.h"

#include <QSignalSpy>
#include <QTest>
#include <QThread>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace qs::ui {
namespace {

constexpr int kTimeoutMs = 10000;

TEST(JobRunner, RunsWorkOffThreadAndAppliesResultOnGuiThread) {
    JobRunner runner;
    std::atomic<QThread*> workThread = nullptr;
    QThread* applyThread = nullptr;
    std::optional<int> applied;
    runner.start<int>(
        QStringLiteral("answer"),
        [&](Progress&) -> Result<int> {
            workThread = QThread::currentThread();
            return 42;
        },
        [&](const Result<int>& result) {
            applyThread = QThread::currentThread();
            applied = result.ok() ? *result : -1;
        });
    EXPECT_TRUE(runner.isBusy());
    ASSERT_TRUE(QTest::qWaitFor([&] { return applied.has_value(); }, kTimeoutMs));
    EXPECT_EQ(*applied, 42);
    EXPECT_EQ(applyThread, QThread::currentThread());
    EXPECT_NE(workThread.load(), QThread::currentThread());
    EXPECT_FALSE(runner.isBusy());
}

TEST(JobRunner, CancelReachesTheWorkAndReportsCancelled) {
    JobRunner runner;
    QSignalSpy busy(&runner, &JobRunner::busyChanged);
    std::atomic<bool> running = false;
    std::atomic<bool> sawCancel = false;
    std::optional<Errc> outcome;
    runner.start<int>(
        QStringLiteral("spin"),
        [&](Progress& progress) -> Result<int> {
            running = true;
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
            while (!progress.isCancelled() && std::chrono::steady_clock::now() < deadline) {
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
            sawCancel = progress.isCancelled();
            return 1;
        },
        [&](const Result<int>& result) {
            outcome = result.ok() ? Errc::Count : result.error().code();
        });
    ASSERT_TRUE(QTest::qWaitFor([&] { return running.load(); }, kTimeoutMs));
    runner.cancelAll();
    ASSERT_TRUE(QTest::qWaitFor([&] { return outcome.has_value(); }, kTimeoutMs));
    EXPECT_TRUE(sawCancel);
    EXPECT_EQ(*outcome, Errc::Cancelled);
    ASSERT_EQ(busy.count(), 2);
    EXPECT_TRUE(busy.at(0).at(0).toBool());
    EXPECT_FALSE(busy.at(1).at(0).toBool());
}

TEST(JobRunner, GoesIdleBeforeApplyingTheLastResult) {
    JobRunner runner;
    std::vector<std::string> events;
    QObject::connect(&runner, &JobRunner::busyChanged,
                     [&](bool busy) { events.push_back(busy ? "busy" : "idle"); });
    runner.start<int>(
        QStringLiteral("quick"), [](Progress&) -> Result<int> { return 0; },
        [&](const Result<int>&) { events.push_back("applied"); });
    ASSERT_TRUE(QTest::qWaitFor([&] { return events.size() == 3; }, kTimeoutMs));
    EXPECT_EQ(events, (std::vector<std::string>{"busy", "idle", "applied"}));
}

TEST(JobRunner, ForwardsProgress) {
    JobRunner runner;
    QSignalSpy progress(&runner, &JobRunner::progressChanged);
    bool done = false;
    runner.start<int>(
        QStringLiteral("halfway"),
        [](Progress& p) -> Result<int> {
            p.report(0.5, "half");
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            p.report(1.0, "all");
            return 0;
        },
        [&](const Result<int>&) { done = true; });
    ASSERT_TRUE(QTest::qWaitFor([&] { return done; }, kTimeoutMs));
    ASSERT_FALSE(progress.isEmpty());
    EXPECT_EQ(progress.last().at(0).toInt(), 1000);
    bool sawHalf = false;
    for (const QList<QVariant>& signal : progress) {
        sawHalf = sawHalf || signal.at(0).toInt() == 500;
    }
    EXPECT_TRUE(sawHalf);
}

TEST(JobRunner, ExceptionBecomesInternalError) {
    JobRunner runner;
    std::optional<Error> error;
    runner.start<int>(
        QStringLiteral("throws"),
        [](Progress&) -> Result<int> { throw std::runtime_error("boom"); },
        [&](const Result<int>& result) {
            if (!result.ok()) {
                error = result.error();
            }
        });
    ASSERT_TRUE(QTest::qWaitFor([&] { return error.has_value(); }, kTimeoutMs));
    EXPECT_EQ(error->code(), Errc::Internal);
    EXPECT_EQ(error->message(), "boom");
}

TEST(JobRunner, DestroyingTheRunnerCancelsAndWaits) {
    auto runner = std::make_unique<JobRunner>();
    std::atomic<bool> running = false;
    std::atomic<bool> finished = false;
    bool applied = false;
    runner->start<int>(
        QStringLiteral("long"),
        [&](Progress& progress) -> Result<int> {
            running = true;
            while (!progress.isCancelled()) {
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
            finished = true;
            return 0;
        },
        [&](const Result<int>&) { applied = true; });
    ASSERT_TRUE(QTest::qWaitFor([&] { return running.load(); }, kTimeoutMs));
    runner.reset();
    EXPECT_TRUE(finished);
    QTest::qWait(20);
    EXPECT_FALSE(applied);
}

} // namespace
} // namespace qs::ui
