// Samples stacked along axis 0: slicing a batch out and stacking batches back (the batched run
// itself is runObserving / runBatched in probe_runner.h), and the seeded random-normal samples of
// random datasets.
#pragma once

#include "core/runtime/executor.h"

namespace qs::runtime {

/// Rows [begin, end) of axis 0 (a copy).
Tensor sliceBatch(const Tensor& tensor, int64_t begin, int64_t end);

/// Stacks tensors that agree except in axis 0.
Result<Tensor> concatBatches(const std::vector<Tensor>& parts);

/// The shape concatBatches(parts) gives, from the parts' shapes and dtypes alone (they may hold
/// no data), or its error.
Result<Shape> stackedShape(const std::vector<Tensor>& parts);

/// Stacks batches along axis 0 as they come (runBatched): the first batch's rows per sample size
/// one tensor for every sample, and each batch is copied into it, so the batch's own buffer goes
/// back to the pool for the next one and the stacked output's pages are touched once (holding
/// every batch and then concatenating touched them twice). Batches that break the first one's
/// rows per sample or shape fall back to concatBatches, its rules and its errors.
class BatchStacker {
public:
    /// `samples`: how many samples all batches hold together.
    explicit BatchStacker(int64_t samples);

    /// A batch's output computed from `samples` samples.
    void add(Tensor part, int64_t samples);

    /// The stacked tensor; once, after the last add().
    Result<Tensor> take();

private:
    int64_t m_samples;
    int64_t m_rowsPerSample = 0;
    int64_t m_rows = 0; ///< of m_whole filled so far
    Tensor m_whole;
    std::vector<Tensor> m_parts;
};

/// Standard-normal float tensor, seeded: Box-Muller on uniforms hashed from (seed, element
/// index) by splitmix64, so each element depends on the seed and its index alone and any thread
/// count gives the same tensor; vectorised and split over the threads (`run --random` spent more
/// time here than in the forward with a sequential std::normal_distribution). With
/// `firstElement`, the elements from that index on: rows [b, e) of a tensor of N rows are
/// randomNormal of those rows' shape from element b x row size (a batch drawn on its own).
Tensor randomNormal(Shape shape, uint64_t seed, int64_t firstElement = 0);

/// The shape of `input` with dynamic dims filled: the first one by `batch`, others by 1.
Result<Shape> concreteInputShape(const graph::Value& input, int64_t batch);

} // namespace qs::runtime
