#include "core/runtime/parallel.h"

#define EIGEN_USE_THREADS
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <unsupported/Eigen/CXX11/ThreadPool>

namespace qs::runtime {

namespace {
struct PoolState {
    std::mutex mutex;
    int threads = 0;
    std::unique_ptr<Eigen::ThreadPool> pool;
};

PoolState& state() {
    static PoolState instance;
    return instance;
}

/// The chunks of one parallelFor still running on the pool. The caller spins briefly before it
/// sleeps: its own chunk and the others end within microseconds of each other, and falling asleep
/// on a condition variable and being woken again costs more than a small kernel (tens of
/// microseconds on a virtual machine), on every one of the hundreds of calls of a forward pass.
class ChunksLeft {
public:
    explicit ChunksLeft(int64_t chunks)
        : m_left(chunks) {}

    void done() {
        const std::lock_guard lock(m_mutex);
        if (m_left.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            m_allDone.notify_all();
        }
    }

    void wait() {
        for (int spin = 0; spin < kSpins && m_left.load(std::memory_order_acquire) > 0; ++spin) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        }
        // Under the lock even when the spin saw 0: the last done() may still hold it, and this
        // object dies when wait returns.
        std::unique_lock lock(m_mutex);
        m_allDone.wait(lock, [this] { return m_left.load(std::memory_order_acquire) == 0; });
    }

private:
    // 20000 pause instructions: from about 0.1 ms to 1 ms, by processor; a chunk that runs
    // longer than that is long enough to pay for the sleep.
    static constexpr int kSpins = 20000;
    std::atomic<int64_t> m_left;
    std::mutex m_mutex;
    std::condition_variable m_allDone;
};

/// Set while the calling thread runs its own chunk of a parallelFor: a nested call from it runs
/// inline, as one from a pool thread does. Scheduled instead, its chunks would queue behind the
/// pool threads' outer chunks while the caller waited for them.
thread_local bool insideChunk = false;

int defaultThreads() {
    return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}
} // namespace

void setNumThreads(int threads) {
    PoolState& pool = state();
    const std::lock_guard lock(pool.mutex);
    pool.threads = threads <= 0 ? defaultThreads() : threads;
    pool.pool.reset();
    if (pool.threads > 1) {
        // The caller runs one chunk itself, so the pool needs one thread fewer.
        pool.pool = std::make_unique<Eigen::ThreadPool>(pool.threads - 1);
    }
}

int numThreads() {
    PoolState& pool = state();
    {
        const std::lock_guard lock(pool.mutex);
        if (pool.threads > 0) {
            return pool.threads;
        }
    }
    setNumThreads(0);
    return state().threads;
}

int hardwareThreads() {
    return defaultThreads();
}

InlineParallelFor::InlineParallelFor()
    : m_wasInline(insideChunk) {
    insideChunk = true;
}

InlineParallelFor::~InlineParallelFor() {
    insideChunk = m_wasInline;
}

void parallelFor(int64_t count, int64_t minChunk, const std::function<void(int64_t, int64_t)>& fn) {
    if (count <= 0) {
        return;
    }
    const int threads = numThreads();
    const int64_t chunks =
        std::min<int64_t>(threads, std::max<int64_t>(1, count / std::max<int64_t>(1, minChunk)));
    // Nested calls from a pool thread run inline: waiting inside a worker could starve the pool.
    if (chunks <= 1 || insideChunk || state().pool == nullptr ||
        state().pool->CurrentThreadId() != -1) {
        fn(0, count);
        return;
    }
    const int64_t step = (count + chunks - 1) / chunks;
    ChunksLeft left(chunks - 1);
    for (int64_t chunk = 1; chunk < chunks; ++chunk) {
        const int64_t begin = chunk * step;
        const int64_t end = std::min(count, begin + step);
        state().pool->Schedule([&fn, &left, begin, end] {
            if (begin < end) {
                fn(begin, end);
            }
            left.done();
        });
    }

    // Flag cleared and the pool's chunks waited for however fn returns: they refer to fn and left.
    struct CallerChunk {
        ChunksLeft& left;

        explicit CallerChunk(ChunksLeft& chunks)
            : left(chunks) {
            insideChunk = true;
        }

        CallerChunk(const CallerChunk&) = delete;
        CallerChunk& operator=(const CallerChunk&) = delete;

        ~CallerChunk() {
            insideChunk = false;
            left.wait();
        }
    };

    const CallerChunk caller(left);
    fn(0, std::min(count, step));
}

} // namespace qs::runtime
