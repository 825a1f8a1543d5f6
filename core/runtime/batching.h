// Batched inference over a dataset: samples stacked along axis 0 run through the executor in
// mini-batches of size B (the last one smaller), and each output is concatenated back along
// axis 0. Also the seeded random-normal inputs of `quantscope-cli run --random N`.
#pragma once

#include "core/runtime/executor.h"

namespace qs::runtime {

/// Rows [begin, end) of axis 0 (a copy).
Tensor sliceBatch(const Tensor& tensor, int64_t begin, int64_t end);

/// Stacks tensors that agree except in axis 0.
Result<Tensor> concatBatches(const std::vector<Tensor>& parts);

/// Runs every input (N samples on axis 0) in batches of `batchSize`; the outputs hold N samples.
/// Reports progress per batch and stops on cancel.
Result<std::vector<Tensor>> runBatched(const Executor& executor, const std::vector<Tensor>& inputs,
                                       int64_t batchSize, Progress* progress = nullptr,
                                       RunStats* stats = nullptr);

/// Standard-normal float tensor from a seeded generator (std::mt19937_64, Box-Muller by the
/// standard library's normal_distribution).
Tensor randomNormal(Shape shape, uint64_t seed);

/// The shape of `input` with dynamic dims filled: the first one by `batch`, others by 1.
Result<Shape> concreteInputShape(const graph::Value& input, int64_t batch);

} // namespace qs::runtime
