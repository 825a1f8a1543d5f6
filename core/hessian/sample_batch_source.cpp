#include "core/hessian/sample_batch_source.h"

#include "core/runtime/batching.h"

#include <algorithm>

namespace qs::hessian {

TensorBatchSource::TensorBatchSource(std::vector<runtime::Tensor> inputs, int64_t batchSize)
    : m_inputs(std::move(inputs))
    , m_batchSize(std::max<int64_t>(1, batchSize)) {
    m_samples = m_inputs.empty() || m_inputs[0].rank() == 0 ? 0 : m_inputs[0].dim(0);
    for (const runtime::Tensor& input : m_inputs) {
        m_samples = std::min(m_samples, input.rank() == 0 ? 0 : input.dim(0));
    }
}

Result<void> TensorBatchSource::rewind() {
    m_next = 0;
    return success();
}

Result<std::vector<runtime::Tensor>> TensorBatchSource::next() {
    if (m_next >= m_samples) {
        return std::vector<runtime::Tensor>{};
    }
    const int64_t end = std::min(m_samples, m_next + m_batchSize);
    std::vector<runtime::Tensor> batch;
    for (const runtime::Tensor& input : m_inputs) {
        batch.push_back(runtime::sliceBatch(input, m_next, end));
    }
    m_next = end;
    ++m_batchesRead;
    return batch;
}

} // namespace qs::hessian
