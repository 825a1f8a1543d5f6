#include "ui/quantizer_commands.h"

#include "ui/graph_document.h"

#include <QCoreApplication>

#include <algorithm>

namespace qs::ui {

namespace {
QString tr(const char* text, int n = -1) {
    return QCoreApplication::translate("qs::ui::QuantizerCommands", text, nullptr, n);
}

quantization::QuantizerConfig currentConfig(const GraphDocument& document, int pointId) {
    const quantization::QuantizationState* state = document.quantization();
    if (state == nullptr) {
        return {};
    }
    auto found = state->choice.find(pointId);
    return found == state->choice.end() ? quantization::QuantizerConfig{} : found->second;
}
} // namespace

ChooseQuantizerConfigCommand::ChooseQuantizerConfigCommand(
    GraphDocument& document, int pointId, const quantization::QuantizerConfig& config)
    : ChooseQuantizerConfigCommand(document,
                                   quantization::QuantizerConfigChoice{{pointId, config}}) {
    setText(tr("Choose %1 bits for quantizer #%2").arg(config.numBits).arg(pointId));
}

ChooseQuantizerConfigCommand::ChooseQuantizerConfigCommand(
    GraphDocument& document, quantization::QuantizerConfigChoice changes)
    : m_document(document)
    , m_after(std::move(changes)) {
    for (const auto& [id, config] : m_after) {
        m_before[id] = currentConfig(document, id);
    }
    setText(tr("Choose configs for %n quantizer(s)", static_cast<int>(m_after.size())));
}

void ChooseQuantizerConfigCommand::redo() {
    if (m_after.empty() || !m_document.chooseQuantizerConfigs(m_after).ok()) {
        setObsolete(true);
    }
}

void ChooseQuantizerConfigCommand::undo() {
    (void)m_document.chooseQuantizerConfigs(m_before);
}

bool ChooseQuantizerConfigCommand::mergeWith(const QUndoCommand* other) {
    const auto* next = static_cast<const ChooseQuantizerConfigCommand*>(other);
    if (next->m_after.size() != m_after.size() ||
        !std::equal(m_after.begin(), m_after.end(), next->m_after.begin(),
                    [](const auto& a, const auto& b) { return a.first == b.first; })) {
        return false;
    }
    m_after = next->m_after;
    setText(next->text());
    return true;
}

ChangeQuantizationSettingsCommand::ChangeQuantizationSettingsCommand(
    GraphDocument& document, quantization::QuantizationSettings settings)
    : m_document(document)
    , m_settings(std::move(settings)) {
    if (const quantization::QuantizationState* state = document.quantization()) {
        m_before = *state;
    }
    setText(
        tr("Quantize for %1, %2, %3")
            .arg(QString::fromStdString(m_settings.hw),
                 m_settings.preset == quantization::QuantizationPreset::Performance
                     ? QStringLiteral("performance")
                     : QStringLiteral("mixed"),
                 QString::fromStdString(std::string(quantization::ruleArgument(m_settings.rule)))));
}

void ChangeQuantizationSettingsCommand::redo() {
    if (!m_document.setQuantizationSettings(m_settings).ok()) {
        setObsolete(true);
    }
}

void ChangeQuantizationSettingsCommand::undo() {
    if (m_before) {
        m_document.restoreQuantization(*m_before);
    }
}

} // namespace qs::ui
