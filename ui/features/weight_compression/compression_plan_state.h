// CompressionPlanState: the weight-compression plan a GraphDocument keeps under the weight
// compression feature's key. The graph itself stays float: export applies the plan to a copy. The
// plan changes only through ApplyCompressionPlanCommand (one undo step).
#pragma once

#include "core/compression/weight_compression.h"
#include "ui/graph_document.h"

#include <QLatin1String>

#include <optional>

namespace qs::ui {

/// The weight compression feature's key: its document state (and its session section).
inline constexpr QLatin1String kWeightCompressionKey("weight_compression");

/// A document's compression plan.
class CompressionPlanState final : public DocumentState {
public:
    explicit CompressionPlanState(compression::CompressionPlan plan)
        : m_plan(std::move(plan)) {}

    const compression::CompressionPlan& plan() const { return m_plan; }

private:
    compression::CompressionPlan m_plan;
};

/// The plan shown and exported, or nullptr before Compress Weights.
const compression::CompressionPlan* compressionPlan(const GraphDocument& document);

/// Replaces (nullopt: removes) the plan; the document emits stateChanged(kWeightCompressionKey).
void setCompressionPlan(GraphDocument& document, std::optional<compression::CompressionPlan> plan);

} // namespace qs::ui
