// parallelFor and its pool: every item once, nested and concurrent calls, exceptions.

#include "core/runtime/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace qs::runtime {
namespace {

/// Restores the thread count a test changed.
class ThreadCount {
public:
    explicit ThreadCount(int threads)
        : m_before(numThreads()) {
        setNumThreads(threads);
    }

    ~ThreadCount() { setNumThreads(m_before); }

    ThreadCount(const ThreadCount&) = delete;
    ThreadCount& operator=(const ThreadCount&) = delete;

private:
    int m_before;
};

// Small items are grouped until a chunk holds kMinChunkWork, large ones go one per chunk, and
// the floor holds either way.
TEST(ParallelFor, MinChunkForWorkGroupsSmallItems) {
    EXPECT_EQ(minChunkForWork(1024), kMinChunkWork / 1024);
    EXPECT_EQ(minChunkForWork(kMinChunkWork * 4), 1);
    EXPECT_EQ(minChunkForWork(kMinChunkWork * 4, 64), 64);
    EXPECT_EQ(minChunkForWork(0), kMinChunkWork);
}

// A parallelFor called from inside a chunk runs inline, on that chunk's thread, in one piece:
// scheduled, its chunks would wait behind the outer ones. Either outer chunk may run on the
// caller or on a pool thread (they are claimed), so both make a nested call.
TEST(ParallelFor, ANestedCallFromAChunkRunsInline) {
    const ThreadCount count(2);

    struct Nested {
        std::thread::id outer;
        std::vector<std::pair<int64_t, int64_t>> ranges;
        bool sameThread = true;
    };

    std::vector<Nested> nested(2);
    parallelFor(2, 1, [&](int64_t begin, int64_t) {
        Nested& mine = nested[static_cast<size_t>(begin)]; // one chunk per item: no race
        mine.outer = std::this_thread::get_id();
        parallelFor(1000, 1, [&](int64_t b, int64_t e) {
            mine.ranges.emplace_back(b, e);
            mine.sameThread = mine.sameThread && std::this_thread::get_id() == mine.outer;
        });
    });
    for (const Nested& call : nested) {
        ASSERT_EQ(call.ranges.size(), 1U);
        EXPECT_EQ(call.ranges[0], (std::pair<int64_t, int64_t>{0, 1000}));
        EXPECT_TRUE(call.sameThread);
    }
    // Outside a chunk the same call splits again.
    std::vector<std::pair<int64_t, int64_t>> ranges;
    std::mutex mutex;
    parallelFor(1000, 1, [&](int64_t b, int64_t e) {
        const std::lock_guard lock(mutex);
        ranges.emplace_back(b, e);
    });
    EXPECT_EQ(ranges.size(), 2U);
}

// Thousands of calls back to back and with pauses between them (idle workers spinning, then
// asleep), on as many threads as cores and on more (workers that never spin): every item of every
// call is visited exactly once, and the calls see each other's writes.
TEST(ParallelFor, EveryItemOnceOverManyCallsWithAndWithoutSpinningWorkers) {
    for (const int threads : {2, 3, hardwareThreads() + 2}) {
        const ThreadCount count(threads);
        std::vector<int> visits(4096, 0);
        int64_t total = 0;
        for (int call = 0; call < 3000; ++call) {
            const int64_t items = 1 + (call * 37) % 4096;
            parallelFor(items, 1 + call % 7, [&](int64_t begin, int64_t end) {
                for (int64_t i = begin; i < end; ++i) {
                    ++visits[static_cast<size_t>(i)]; // ranges are disjoint: no race
                }
            });
            total += items;
            if (call % 500 == 0) {
                // Longer than a worker's idle spin: the next call wakes it from sleep.
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
            }
        }
        int64_t sum = 0;
        for (const int v : visits) {
            sum += v;
        }
        EXPECT_EQ(sum, total) << threads << " threads";
    }
}

// Two threads calling at once: one holds the pool, the other runs its range inline; both are
// complete.
TEST(ParallelFor, CallsFromTwoThreadsAtOnceBothComplete) {
    const ThreadCount count(2);
    std::vector<std::atomic<int>> a(10000);
    std::vector<std::atomic<int>> b(10000);
    const auto fill = [](std::vector<std::atomic<int>>& v) {
        for (int round = 0; round < 200; ++round) {
            parallelFor(static_cast<int64_t>(v.size()), 1, [&](int64_t begin, int64_t end) {
                for (int64_t i = begin; i < end; ++i) {
                    v[static_cast<size_t>(i)].fetch_add(1, std::memory_order_relaxed);
                }
            });
        }
    };
    std::thread other([&] { fill(b); });
    fill(a);
    other.join();
    for (size_t i = 0; i < a.size(); ++i) {
        ASSERT_EQ(a[i].load(), 200) << i;
        ASSERT_EQ(b[i].load(), 200) << i;
    }
}

/// Splits two items over the pool; a chunk the calling thread runs throws.
void throwFromTheCallersChunk(std::atomic<int>& ranOnWorkers) {
    const std::thread::id caller = std::this_thread::get_id();
    parallelFor(2, 1, [&](int64_t, int64_t) {
        if (std::this_thread::get_id() == caller) {
            throw std::runtime_error("chunk failed");
        }
        ranOnWorkers.fetch_add(1);
    });
}

// An exception from a chunk the caller runs reaches the caller once the other chunks are done,
// and the pool serves the next call. A pool thread may claim both chunks before the caller takes
// one (then nothing throws), so the call is repeated until the caller has run a chunk.
TEST(ParallelFor, AnExceptionFromTheCallersChunkReachesTheCaller) {
    const ThreadCount count(2);
    std::atomic<int> ranOnWorkers{0};
    int thrown = 0;
    for (int attempt = 0; attempt < 100 && thrown == 0; ++attempt) {
        try {
            throwFromTheCallersChunk(ranOnWorkers);
        } catch (const std::runtime_error&) {
            ++thrown;
        }
    }
    EXPECT_EQ(thrown, 1);
    std::atomic<int64_t> sum{0};
    parallelFor(1000, 1, [&](int64_t begin, int64_t end) { sum.fetch_add(end - begin); });
    EXPECT_EQ(sum.load(), 1000);
}

} // namespace
} // namespace qs::runtime
