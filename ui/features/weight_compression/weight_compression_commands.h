// Undo command for weight compression: setting (or replacing) the document's compression plan is
// one undo step; undo puts the earlier plan (or none) back. The graph is not touched.
#pragma once

#include "core/compression/weight_compression.h"

#include <QUndoCommand>

#include <optional>

namespace qs::ui {

class GraphDocument;

/// Sets `plan` as the document's weight-compression plan.
class ApplyCompressionPlanCommand : public QUndoCommand {
public:
    ApplyCompressionPlanCommand(GraphDocument& document, compression::CompressionPlan plan);

    void redo() override;

    void undo() override;

private:
    GraphDocument& m_document;
    std::optional<compression::CompressionPlan> m_before;
    compression::CompressionPlan m_after;
};

} // namespace qs::ui
