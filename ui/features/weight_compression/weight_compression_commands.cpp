#include "ui/features/weight_compression/weight_compression_commands.h"

#include "ui/graph_document.h"

#include <QCoreApplication>

#include <string>

namespace qs::ui {

ApplyCompressionPlanCommand::ApplyCompressionPlanCommand(GraphDocument& document,
                                                         compression::CompressionPlan plan)
    : m_document(document)
    , m_after(std::move(plan)) {
    if (const compression::CompressionPlan* current = document.compressionPlan()) {
        m_before = *current;
    }
    setText(
        QCoreApplication::translate("ApplyCompressionPlanCommand", "Compress Weights (%1)")
            .arg(QString::fromStdString(std::string(compression::modeName(m_after.options.mode)))));
}

void ApplyCompressionPlanCommand::redo() {
    m_document.setCompressionPlan(m_after);
}

void ApplyCompressionPlanCommand::undo() {
    m_document.setCompressionPlan(m_before);
}

} // namespace qs::ui
