#include "core/runtime/parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace qs::runtime {

namespace {

/// Set on pool threads, and on the caller while it runs chunks: a parallelFor from there runs
/// inline. Scheduled instead, its chunks would queue behind the outer ones while their caller
/// waited for them.
thread_local bool insideChunk = false;

int defaultThreads() {
    return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/// The pool threads of parallelFor, and the one job they share.
///
/// A job is a range cut into chunks that the caller and the workers claim one at a time from a
/// counter, so a worker that is slow to start leaves its chunk to whoever is free: a job shorter
/// than a wake-up runs on the caller alone instead of waiting for one.
///
/// Idle workers keep looking for the next job for a while (kIdleSpin) before they sleep. A forward
/// pass calls parallelFor hundreds of times with short serial stretches between the calls, and a
/// worker asleep on a condition variable took 20-25 microseconds to wake on a virtual machine
/// (its virtual CPU halted and rescheduled by the host): more than many small kernels take. A
/// spinning worker starts within a microsecond. ONNX Runtime's pool spins the same way.
///
/// The job's fields are written only while the generation is odd and no worker is inside one;
/// a worker counts itself inside before it checks the generation (both sequentially consistent),
/// so it either sees the generation change and leaves, or the caller sees it inside and waits.
class WorkerPool {
public:
    WorkerPool(int workers, bool spin)
        : m_spin(spin) {
        for (int i = 0; i < workers; ++i) {
            m_threads.emplace_back([this] { workerLoop(); });
        }
    }

    ~WorkerPool() {
        {
            const std::lock_guard lock(m_sleepMutex);
            m_stop.store(true);
        }
        m_wake.notify_all();
        for (std::thread& thread : m_threads) {
            thread.join();
        }
    }

    WorkerPool(const WorkerPool&) = delete;
    WorkerPool& operator=(const WorkerPool&) = delete;

    /// Runs fn over `chunks` chunks of `step` items of [0, count) on the caller and the workers.
    /// False, having run nothing, when another thread's job holds the pool.
    bool run(int64_t count, int64_t step, int64_t chunks,
             const std::function<void(int64_t, int64_t)>& fn) {
        std::unique_lock<std::mutex> owner(m_ownerMutex, std::try_to_lock);
        if (!owner.owns_lock()) {
            return false;
        }
        const uint64_t generation = m_generation.load(std::memory_order_relaxed);
        m_generation.store(generation + 1); // odd: the job is being written
        while (m_inside.load() != 0) {
            cpuRelax();
        }
        m_fn = &fn;
        m_count = count;
        m_step = step;
        m_chunks = chunks;
        m_next.store(0, std::memory_order_relaxed);
        m_done.store(0, std::memory_order_relaxed);
        m_generation.store(generation + 2);
        if (m_sleepers.load() > 0) {
            const std::lock_guard lock(m_sleepMutex);
            m_wake.notify_all();
        }
        {
            // Cleared however fn returns; the workers' chunks are waited for below either way.
            struct CallerChunks {
                CallerChunks() { insideChunk = true; }

                ~CallerChunks() { insideChunk = false; }

                CallerChunks(const CallerChunks&) = delete;
                CallerChunks& operator=(const CallerChunks&) = delete;
            };

            struct WaitForWorkers {
                WorkerPool& pool;

                ~WaitForWorkers() { pool.waitForChunks(); }
            };

            const WaitForWorkers wait{*this};
            const CallerChunks caller;
            runChunks();
        }
        return true;
    }

private:
    // The caller's wait for chunks a worker holds: 20000 pause instructions (about 0.1 to 1 ms,
    // by processor) before it sleeps; a chunk longer than that pays for the sleep.
    static constexpr int kCallerSpins = 20000;
    static constexpr std::chrono::microseconds kIdleSpin{500};

    void runChunks() {
        while (true) {
            const int64_t chunk = m_next.fetch_add(1, std::memory_order_relaxed);
            if (chunk >= m_chunks) {
                return;
            }

            // Counted done however fn returns: the caller waits for every chunk.
            struct Done {
                WorkerPool& pool;

                ~Done() { pool.chunkDone(); }
            };

            const Done done{*this};
            const int64_t begin = chunk * m_step;
            const int64_t end = std::min(m_count, begin + m_step);
            if (begin < end) {
                (*m_fn)(begin, end);
            }
        }
    }

    void chunkDone() {
        if (m_done.fetch_add(1, std::memory_order_acq_rel) + 1 == m_chunks) {
            const std::lock_guard lock(m_doneMutex);
            m_allDone.notify_all();
        }
    }

    void waitForChunks() {
        // After an exception from the caller's chunk, the chunks nobody claimed are dropped.
        while (m_next.fetch_add(1, std::memory_order_relaxed) < m_chunks) {
            chunkDone();
        }
        for (int spin = 0; spin < kCallerSpins && !allDone(); ++spin) {
            cpuRelax();
        }
        std::unique_lock lock(m_doneMutex);
        m_allDone.wait(lock, [this] { return allDone(); });
    }

    bool allDone() const { return m_done.load(std::memory_order_acquire) >= m_chunks; }

    /// An even generation other than `seen` (a new job), or 0 when the pool stops.
    uint64_t nextJob(uint64_t seen) {
        const auto posted = [&](uint64_t g) { return (g & 1U) == 0 && g != seen; };
        if (m_spin) {
            const auto until = std::chrono::steady_clock::now() + kIdleSpin;
            for (int i = 0;; ++i) {
                const uint64_t g = m_generation.load(std::memory_order_acquire);
                if (m_stop.load(std::memory_order_relaxed)) {
                    return 0;
                }
                if (posted(g)) {
                    return g;
                }
                if ((i & 255) == 255) {
                    if (std::chrono::steady_clock::now() > until) {
                        break;
                    }
                    // Another process's thread waiting for this core gets it.
                    std::this_thread::yield();
                }
                cpuRelax();
            }
        }
        std::unique_lock lock(m_sleepMutex);
        m_sleepers.fetch_add(1);
        uint64_t g = 0;
        m_wake.wait(lock, [&] {
            g = m_generation.load();
            return m_stop.load() || posted(g);
        });
        m_sleepers.fetch_sub(1);
        return m_stop.load() ? 0 : g;
    }

    void workerLoop() {
        insideChunk = true;
        uint64_t seen = 0;
        while (true) {
            const uint64_t generation = nextJob(seen);
            if (generation == 0) {
                return;
            }
            seen = generation;
            m_inside.fetch_add(1);
            if (m_generation.load() == generation) {
                runChunks();
            }
            m_inside.fetch_sub(1);
        }
    }

    const bool m_spin;
    std::vector<std::thread> m_threads;
    std::mutex m_ownerMutex; ///< held by the thread whose job the pool runs

    // The job.
    const std::function<void(int64_t, int64_t)>* m_fn = nullptr;
    int64_t m_count = 0;
    int64_t m_step = 0;
    int64_t m_chunks = 0;
    // Each counter on its own cache line: idle workers read the generation while the busy ones
    // claim and finish chunks.
    alignas(64) std::atomic<int64_t> m_next{0}; ///< the next chunk to claim
    alignas(64) std::atomic<int64_t> m_done{0}; ///< chunks finished
    /// Even: a job posted (0: none yet); odd: being written.
    alignas(64) std::atomic<uint64_t> m_generation{0};
    alignas(64) std::atomic<int> m_inside{0}; ///< workers that joined a job and have not left it
    std::atomic<int> m_sleepers{0};
    std::atomic<bool> m_stop{false};
    std::mutex m_sleepMutex;
    std::condition_variable m_wake;
    std::mutex m_doneMutex;
    std::condition_variable m_allDone;
};

struct PoolState {
    std::mutex mutex;
    int threads = 0;
    std::unique_ptr<WorkerPool> pool;
};

PoolState& state() {
    static PoolState instance;
    return instance;
}

} // namespace

void setNumThreads(int threads) {
    PoolState& pool = state();
    const std::lock_guard lock(pool.mutex);
    pool.threads = threads <= 0 ? defaultThreads() : threads;
    pool.pool.reset();
    if (pool.threads > 1) {
        // The caller runs chunks itself, so the pool needs one thread fewer. Idle workers spin
        // only when every thread can have a core: spinning on a shared core would take it from
        // the thread doing the work.
        pool.pool =
            std::make_unique<WorkerPool>(pool.threads - 1, pool.threads <= defaultThreads());
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
    WorkerPool* pool = state().pool.get();
    // Nested calls (from a chunk, on any thread) run inline, and so does a call made while another
    // thread's job holds the pool.
    if (chunks <= 1 || insideChunk || pool == nullptr) {
        fn(0, count);
        return;
    }
    const int64_t step = (count + chunks - 1) / chunks;
    if (!pool->run(count, step, chunks, fn)) {
        fn(0, count);
    }
}

} // namespace qs::runtime
