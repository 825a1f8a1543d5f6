// Undo command of the pruning feature: a Prune… result, a lock, a kept count or a new target is
// one undo step that replaces the document's PruningResult (the run's analysis is shared, so a
// step costs only its masks); undo puts the earlier result (or none) back. The graph is not
// touched.
#pragma once

#include "ui/features/pruning/pruning_state.h"

#include <QUndoCommand>

#include <optional>

namespace qs::ui {

class GraphDocument;

/// Sets `after` as the document's pruning.
class ApplyPruningCommand : public QUndoCommand {
public:
    ApplyPruningCommand(GraphDocument& document, PruningResult after, const QString& text);

    void redo() override;

    void undo() override;

private:
    GraphDocument& m_document;
    std::optional<PruningResult> m_before;
    PruningResult m_after;
};

} // namespace qs::ui
