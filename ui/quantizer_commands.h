// Undo commands for quantizer edits: choosing one point's config (re-finalizes, merges repeated
// choices of the same point) and switching the HW config, preset or propagation rule (re-runs
// propagation; undo puts the earlier state back exactly, choices included). Both refer to points
// by id and change the document only through its setters.
#pragma once

#include "core/quantization/quantization_state.h"

#include <QUndoCommand>

namespace qs::ui {

class GraphDocument;

/// Chooses configs for one or several quantization points (a selection, an op type).
class ChooseQuantizerConfigCommand : public QUndoCommand {
public:
    /// `config` must be one of point `pointId`'s candidates; otherwise the command is obsolete
    /// after its first redo and the stack drops it.
    ChooseQuantizerConfigCommand(GraphDocument& document, int pointId,
                                 const quantization::QuantizerConfig& config);

    /// Several points at once, one undo step.
    ChooseQuantizerConfigCommand(GraphDocument& document,
                                 quantization::QuantizerConfigChoice changes);

    void redo() override;

    void undo() override;

    int id() const override { return kId; }

    /// Merges a following choice for the same points into this one.
    bool mergeWith(const QUndoCommand* other) override;

private:
    static constexpr int kId = 5001;

    GraphDocument& m_document;
    quantization::QuantizerConfigChoice m_before;
    quantization::QuantizerConfigChoice m_after;
};

/// Switches HW config, preset or rule: re-runs propagation.
class ChangeQuantizationSettingsCommand : public QUndoCommand {
public:
    ChangeQuantizationSettingsCommand(GraphDocument& document,
                                      quantization::QuantizationSettings settings);

    void redo() override;

    void undo() override;

private:
    GraphDocument& m_document;
    quantization::QuantizationSettings m_settings;
    std::optional<quantization::QuantizationState> m_before;
};

} // namespace qs::ui
