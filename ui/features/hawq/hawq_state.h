// What the HAWQ feature keeps per document: the last run's outcome (analysis, candidates, front)
// shared with the Pareto explorer, the candidate shown as chosen, and the request it came from (so
// a re-run with the same samples and iterations takes the traces from here instead of the Hessian
// service).
#pragma once

#include "core/mixed_precision/hawq_workflow.h"
#include "ui/graph_document.h"

#include <QString>

#include <memory>

namespace qs::ui {

inline const QString kHawqKey = QStringLiteral("hawq");

class HawqState : public DocumentState {
public:
    std::shared_ptr<const mixed_precision::HawqOutcome> outcome;
    mixed_precision::HawqRequest request;
    size_t selected = 0;
};

} // namespace qs::ui
