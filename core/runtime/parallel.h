// Intra-op parallelism for kernels: one process-wide pool of spinning worker threads and a
// parallelFor that splits a range into contiguous chunks. setNumThreads(1) makes every kernel run
// on the calling thread, which benchmarks and reproducibility checks use.
#pragma once

#include <cstdint>
#include <functional>

namespace qs::runtime {

/// Sets the number of threads kernels use (0 = hardware concurrency). Not thread-safe with
/// running kernels; call it before running.
void setNumThreads(int threads);

int numThreads();

/// The cores the machine offers (at least 1).
int hardwareThreads();

/// While one lives, parallelFor calls from the thread that made it run inline: background work
/// beside the kernels (reading the next batch ahead) keeps to its own thread instead of holding
/// the pool, whose one job at a time would then leave the kernels' calls to run on one thread.
class InlineParallelFor {
public:
    InlineParallelFor();
    ~InlineParallelFor();
    InlineParallelFor(const InlineParallelFor&) = delete;
    InlineParallelFor& operator=(const InlineParallelFor&) = delete;

private:
    bool m_wasInline;
};

/// Runs fn(begin, end) over [0, count) split into at most numThreads() chunks; `minChunk` keeps
/// tiny ranges on one thread. Returns when every chunk is done. A call from inside a chunk (on a
/// pool thread or on the caller's) runs inline.
void parallelFor(int64_t count, int64_t minChunk, const std::function<void(int64_t, int64_t)>& fn);

/// Work (multiply-adds, or the like) that a chunk should hold at least, a microsecond or two: a
/// spinning pool thread takes a chunk within a microsecond, and one asleep (which takes tens of
/// microseconds to wake on a virtual machine) leaves its chunk to the caller. It was 16 times
/// larger while the pool's threads slept between calls; `tiny_bert` at two threads and batch 1
/// then ran its MatMuls of 1.6 million multiply-adds on one thread (0.40 ms a forward, 0.35 ms
/// now).
inline constexpr int64_t kMinChunkWork = int64_t{1} << 16;

/// parallelFor's minChunk for items of `workPerItem` each: enough items for kMinChunkWork, and
/// at least `atLeast`.
inline int64_t minChunkForWork(int64_t workPerItem, int64_t atLeast = 1) {
    const int64_t items = kMinChunkWork / (workPerItem > 0 ? workPerItem : 1);
    return items > atLeast ? items : atLeast;
}

} // namespace qs::runtime
