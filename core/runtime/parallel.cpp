#include "core/runtime/parallel.h"

#define EIGEN_USE_THREADS
#include <algorithm>
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

void parallelFor(int64_t count, int64_t minChunk, const std::function<void(int64_t, int64_t)>& fn) {
    if (count <= 0) {
        return;
    }
    const int threads = numThreads();
    const int64_t chunks =
        std::min<int64_t>(threads, std::max<int64_t>(1, count / std::max<int64_t>(1, minChunk)));
    // Nested calls from a pool thread run inline: waiting inside a worker could starve the pool.
    if (chunks <= 1 || state().pool == nullptr || state().pool->CurrentThreadId() != -1) {
        fn(0, count);
        return;
    }
    const int64_t step = (count + chunks - 1) / chunks;
    Eigen::Barrier barrier(static_cast<unsigned>(chunks - 1));
    for (int64_t chunk = 1; chunk < chunks; ++chunk) {
        const int64_t begin = chunk * step;
        const int64_t end = std::min(count, begin + step);
        state().pool->Schedule([&fn, &barrier, begin, end] {
            if (begin < end) {
                fn(begin, end);
            }
            barrier.Notify();
        });
    }
    fn(0, std::min(count, step));
    barrier.Wait();
}

} // namespace qs::runtime
