// A classifier's first output on a labelled dataset, for the float model and a compressed copy of
// it (quantized, weight-compressed, pruned), kept with the labels so the reports can state the
// top-1/top-5 accuracy of both (core/report/accuracy.h computes them; this layer only keeps what
// it needs). One collector for every flow that runs two models side by side.
#pragma once

#include "core/graph/graph.h"
#include "core/runtime/dataset_request.h"
#include "core/runtime/tensor.h"
#include "core/support/progress.h"
#include "core/support/result.h"

#include <optional>
#include <string>
#include <vector>

namespace qs::runtime {

struct LabelledScores {
    Tensor labels;           ///< the dataset's labels, [N]
    Tensor floatScores;      ///< [N, C]
    Tensor compressedScores; ///< [N, C]
};

/// Keeps the first output of both models batch by batch, when the batch has labels; that output
/// must then be class scores ([N, C] or [N, C, 1, ...]): labels given for a detector's maps are an
/// error from finish(), not silently ignored.
class LabelledScoresCollector {
public:
    void add(const SampleBatch& batch, const Tensor& floatScores, const Tensor& compressedScores);

    /// The stacked scores, nothing when no batch had labels.
    Result<std::optional<LabelledScores>> finish() const;

private:
    std::vector<Tensor> m_labels;
    std::vector<Tensor> m_float;
    std::vector<Tensor> m_compressed;
    std::optional<Shape> m_notScores; ///< the first output's shape when it is not class scores
};

/// Runs `floatModel` and `compressed` (same inputs) over `dataset`; nothing when the dataset has
/// no labels (no model runs then), an error when the first output is not class scores. Progress
/// is per batch under `label`.
Result<std::optional<LabelledScores>> scoreLabelled(const graph::Graph& floatModel,
                                                    const graph::Graph& compressed,
                                                    const Dataset& dataset, Progress& progress,
                                                    const std::string& label = "accuracy");

/// The same on `request` loaded for `floatModel`; a request without labels
/// (DatasetRequest::hasLabels) loads and runs nothing.
Result<std::optional<LabelledScores>> scoreLabelled(const graph::Graph& floatModel,
                                                    const graph::Graph& compressed,
                                                    const DatasetRequest& request,
                                                    Progress& progress,
                                                    const std::string& label = "accuracy");

} // namespace qs::runtime
