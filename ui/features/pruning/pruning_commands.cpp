#include "ui/features/pruning/pruning_commands.h"

namespace qs::ui {

ApplyPruningCommand::ApplyPruningCommand(GraphDocument& document, PruningResult after,
                                         const QString& text)
    : m_document(document)
    , m_after(std::move(after)) {
    if (const PruningResult* current = pruningResult(document)) {
        m_before = *current;
    }
    setText(text);
}

void ApplyPruningCommand::redo() {
    setPruningResult(m_document, m_after);
}

void ApplyPruningCommand::undo() {
    setPruningResult(m_document, m_before);
}

} // namespace qs::ui
