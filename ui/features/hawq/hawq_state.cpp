#include "ui/features/hawq/hawq_state.h"

#include "core/session/hawq_section.h"

namespace qs::ui {

std::optional<nlohmann::json> HawqState::sessionSection() const {
    if (!outcome) {
        return std::nullopt;
    }
    return session::toJson(session::summarize(*outcome, request, modelHash, selected));
}

Result<bool> restoreHawq(GraphDocument& document) {
    const nlohmann::json* saved = document.savedSection(session::kHawqSection);
    if (saved == nullptr) {
        return false;
    }
    QS_ASSIGN_OR_RETURN(const session::HawqSummary summary,
                        session::hawqSummaryFromJson(*saved).context("session"));
    if (!summary.restorable()) {
        return false;
    }
    QS_ASSIGN_OR_RETURN(
        mixed_precision::HawqOutcome outcome,
        session::restoreHawqOutcome(document.graph(), summary).context("session hawq section"));
    auto state = std::make_unique<HawqState>();
    state->request = session::requestOf(summary);
    state->selected = summary.selected;
    state->modelHash = summary.modelHash;
    state->stale = summary.modelHash != document.modelHash();
    state->outcome = std::make_shared<const mixed_precision::HawqOutcome>(std::move(outcome));
    document.setState(kHawqKey, std::move(state));
    return true;
}

} // namespace qs::ui
