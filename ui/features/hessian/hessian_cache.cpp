#include "ui/features/hessian/hessian_cache.h"

#include "core/session/hessian_section.h"

namespace qs::ui {

HessianCache::HessianCache() = default;

HessianCache::~HessianCache() = default;

Result<hessian::HessianScores> HessianCache::fetch(const graph::Graph& graph,
                                                   const runtime::DatasetRequest& dataset,
                                                   const hessian::HessianScoresRequest& request,
                                                   Progress& progress) {
    const std::lock_guard lock(m_mutex);
    if (!m_executor) {
        progress.report(0.0, "Preparing the executor");
        QS_ASSIGN_OR_RETURN(runtime::Executor executor, runtime::Executor::create(graph));
        m_executor = std::make_unique<runtime::Executor>(std::move(executor));
    }
    const std::string key = session::datasetFingerprint(dataset);
    if (!m_service || key != m_datasetKey) {
        progress.report(0.0, "Loading " + dataset.describe());
        QS_ASSIGN_OR_RETURN(runtime::Dataset data,
                            runtime::loadDataset(graph, dataset).context("dataset"));
        // The service re-batches to the Hessian batch; the source's own batch does not matter.
        m_service.reset();
        m_source = std::make_unique<hessian::TensorBatchSource>(
            std::move(data.inputs), std::max<int64_t>(1, request.batch));
        m_service = std::make_unique<hessian::HessianService>(*m_executor, *m_source);
        m_datasetKey = key;
    }
    QS_ASSIGN_OR_RETURN(hessian::HessianScores scores, m_service->fetch(request, progress));
    ++m_fetches;
    return scores;
}

hessian::HessianServiceStats HessianCache::stats() const {
    const std::lock_guard lock(m_mutex);
    return m_service ? m_service->stats() : hessian::HessianServiceStats{};
}

int64_t HessianCache::fetches() const {
    const std::lock_guard lock(m_mutex);
    return m_fetches;
}

} // namespace qs::ui
