#include "ui/features/weight_compression/weight_compression_commands.h"

#include "ui/features/weight_compression/compression_plan_state.h"

#include <QCoreApplication>

#include <string>

namespace qs::ui {

ApplyCompressionPlanCommand::ApplyCompressionPlanCommand(GraphDocument& document,
                                                         compression::CompressionPlan plan)
    : m_document(document)
    , m_after(std::move(plan)) {
    if (const compression::CompressionPlan* current = compressionPlan(document)) {
        m_before = *current;
    }
    setText(
        QCoreApplication::translate("ApplyCompressionPlanCommand", "Compress Weights (%1)")
            .arg(QString::fromStdString(std::string(compression::modeName(m_after.options.mode)))));
}

void ApplyCompressionPlanCommand::redo() {
    setCompressionPlan(m_document, m_after);
}

void ApplyCompressionPlanCommand::undo() {
    setCompressionPlan(m_document, m_before);
}

} // namespace qs::ui
