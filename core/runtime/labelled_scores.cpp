#include "core/runtime/labelled_scores.h"

#include "core/runtime/batching.h"
#include "core/runtime/probe_runner.h"

namespace qs::runtime {

namespace {
/// [N, C] or [N, C, 1, ...]: what report::computeAccuracy reads as class scores.
bool areClassScores(const Tensor& scores) {
    if (scores.rank() < 2) {
        return false;
    }
    for (size_t axis = 2; axis < scores.shape().size(); ++axis) {
        if (scores.shape()[axis] != 1) {
            return false;
        }
    }
    return true;
}
} // namespace

void LabelledScoresCollector::add(const SampleBatch& batch, const Tensor& floatScores,
                                  const Tensor& compressedScores) {
    if (!batch.labels) {
        return;
    }
    if (!areClassScores(floatScores) || !areClassScores(compressedScores)) {
        if (!m_notScores) {
            m_notScores = floatScores.shape();
        }
        return;
    }
    m_labels.push_back(*batch.labels);
    m_float.push_back(floatScores);
    m_compressed.push_back(compressedScores);
}

Result<std::optional<LabelledScores>> LabelledScoresCollector::finish() const {
    if (m_notScores) { // labels were given for a model that does not output class scores
        return Error(Errc::InvalidArgument,
                     "labels need class scores, but the model's first output is " +
                         shapeToString(*m_notScores) + ", not [N, C] (or [N, C, 1, ...])");
    }
    if (m_labels.empty()) {
        return std::optional<LabelledScores>();
    }
    LabelledScores scores;
    QS_ASSIGN_OR_RETURN(scores.labels, concatBatches(m_labels));
    QS_ASSIGN_OR_RETURN(scores.floatScores, concatBatches(m_float));
    QS_ASSIGN_OR_RETURN(scores.compressedScores, concatBatches(m_compressed));
    return std::optional<LabelledScores>(std::move(scores));
}

Result<std::optional<LabelledScores>> scoreLabelled(const graph::Graph& floatModel,
                                                    const graph::Graph& compressed,
                                                    const Dataset& dataset, Progress& progress,
                                                    const std::string& label) {
    if (!dataset.labels || floatModel.outputs().empty()) {
        return std::optional<LabelledScores>();
    }
    QS_ASSIGN_OR_RETURN(const Executor other, Executor::create(compressed));
    LabelledScoresCollector collector;
    QS_TRY(runObserving(floatModel, {}, dataset, progress,
                        [&](ObservedBatch& observed) -> Result<void> {
                            QS_ASSIGN_OR_RETURN(const std::vector<Tensor> outputs,
                                                other.run(observed.batch.inputs));
                            if (outputs.empty()) {
                                return Error(Errc::InvalidModel,
                                             "the compressed model has no outputs");
                            }
                            collector.add(observed.batch, observed.outputs[0], outputs[0]);
                            return success();
                        },
                        {.label = label}));
    return collector.finish();
}

Result<std::optional<LabelledScores>> scoreLabelled(const graph::Graph& floatModel,
                                                    const graph::Graph& compressed,
                                                    const DatasetRequest& request,
                                                    Progress& progress, const std::string& label) {
    if (!request.hasLabels()) {
        return std::optional<LabelledScores>();
    }
    QS_ASSIGN_OR_RETURN(const Dataset dataset, loadDataset(floatModel, request));
    return scoreLabelled(floatModel, compressed, dataset, progress, label);
}

} // namespace qs::runtime
