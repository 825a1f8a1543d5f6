#include "ui/features/weight_compression/compression_plan_state.h"

#include <memory>

namespace qs::ui {

const compression::CompressionPlan* compressionPlan(const GraphDocument& document) {
    const auto* state = document.state<CompressionPlanState>(kWeightCompressionKey);
    return state == nullptr ? nullptr : &state->plan();
}

void setCompressionPlan(GraphDocument& document, std::optional<compression::CompressionPlan> plan) {
    document.setState(kWeightCompressionKey,
                      plan ? std::make_unique<CompressionPlanState>(std::move(*plan)) : nullptr);
}

} // namespace qs::ui
