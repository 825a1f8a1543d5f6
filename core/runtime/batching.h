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

/// Standard-normal float tensor, seeded: Box-Muller on uniforms hashed from (seed, element
/// index) by splitmix64, so each element depends on the seed and its index alone and any thread
/// count gives the same tensor; vectorised and split over the threads (`run --random` spent more
/// time here than in the forward with a sequential std::normal_distribution).
Tensor randomNormal(Shape shape, uint64_t seed);

/// The shape of `input` with dynamic dims filled: the first one by `batch`, others by 1.
Result<Shape> concreteInputShape(const graph::Value& input, int64_t batch);

} // namespace qs::runtime
