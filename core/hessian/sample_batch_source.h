// Where the Hessian service takes its samples from: a stream of batches of the model's runtime
// inputs (samples on axis 0), in the dataset's own batch size. The service re-batches them to the
// Hessian batch (hessian_service.h), so any source fits; TensorBatchSource adapts a dataset that
// is already loaded as tensors (runtime::loadDataset today, a DatasetRequest's probe runner
// later).
#pragma once

#include "core/runtime/tensor.h"
#include "core/support/result.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace qs::hessian {

class SampleBatchSource {
public:
    virtual ~SampleBatchSource() = default;

    /// Samples in total when known before reading; nullopt: read until next() comes back empty.
    virtual std::optional<int64_t> size() const = 0;

    /// Starts again at sample 0.
    virtual Result<void> rewind() = 0;

    /// The next batch, one tensor per runtime input with the same count on axis 0; an empty
    /// vector at the end.
    virtual Result<std::vector<runtime::Tensor>> next() = 0;
};

/// Loaded tensors (one per runtime input, N samples on axis 0) served in batches of `batchSize`.
class TensorBatchSource final : public SampleBatchSource {
public:
    TensorBatchSource(std::vector<runtime::Tensor> inputs, int64_t batchSize);

    std::optional<int64_t> size() const override { return m_samples; }

    Result<void> rewind() override;

    Result<std::vector<runtime::Tensor>> next() override;

    /// Batches handed out since construction (tests check the source is streamed once).
    int64_t batchesRead() const { return m_batchesRead; }

private:
    std::vector<runtime::Tensor> m_inputs;
    int64_t m_batchSize = 1;
    int64_t m_samples = 0;
    int64_t m_next = 0;
    int64_t m_batchesRead = 0;
};

} // namespace qs::hessian
