// What the HAWQ feature keeps per document: the last run's outcome (analysis, candidates, front)
// shared with the Pareto explorer, the candidate shown as chosen, the request it came from (so a
// re-run with the same samples and iterations takes the traces from here instead of the Hessian
// service) and the hash of the model it ran on. It is saved as the session's "hawq" section
// (core's session::HawqSummary, with the analysis) and restored from it without recomputing
// traces; a section saved for another model (its hash differs) is restored as stale.
#pragma once

#include "core/mixed_precision/hawq_workflow.h"
#include "ui/graph_document.h"

#include <QString>

#include <memory>
#include <optional>
#include <string>

namespace qs::ui {

inline const QString kHawqKey = QStringLiteral("hawq");

class HawqState : public DocumentState {
public:
    std::shared_ptr<const mixed_precision::HawqOutcome> outcome;
    mixed_precision::HawqRequest request;
    size_t selected = 0;
    std::string modelHash; ///< GraphDocument::modelHash() of the model HAWQ ran on
    bool stale = false;    ///< restored from a session whose model differs from the document's

    std::optional<nlohmann::json> sessionSection() const override;
};

/// Restores the HAWQ result saved in the session `document` was opened from (nothing to do when
/// it has none, or it is a summary without the analysis: `restored` false); a malformed or
/// mismatched section is an error naming the problem.
Result<bool> restoreHawq(GraphDocument& document);

} // namespace qs::ui
