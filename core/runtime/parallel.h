// Intra-op parallelism for kernels: one process-wide pool (Eigen's non-blocking ThreadPool) and a
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

/// Runs fn(begin, end) over [0, count) split into at most numThreads() chunks; `minChunk` keeps
/// tiny ranges on one thread. Returns when every chunk is done. A call from inside a chunk (on a
/// pool thread or on the caller's) runs inline.
void parallelFor(int64_t count, int64_t minChunk, const std::function<void(int64_t, int64_t)>& fn);

} // namespace qs::runtime
