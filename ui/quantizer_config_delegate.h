// QuantizerConfigDelegate: edits the Config column of the Quantizers table with a combo of the
// point's candidate configs (QuantizerTableModel's CandidatesRole / ChosenIndexRole); the model
// turns the chosen index into an undoable ChooseQuantizerConfigCommand.
#pragma once

#include <QStyledItemDelegate>

namespace qs::ui {

/// Edits the Config column with a combo of the candidates.
class QuantizerConfigDelegate : public QStyledItemDelegate {
    Q_OBJECT

public:
    using QStyledItemDelegate::QStyledItemDelegate;

    QWidget* createEditor(QWidget* parent, const QStyleOptionViewItem& option,
                          const QModelIndex& index) const override;

    void setEditorData(QWidget* editor, const QModelIndex& index) const override;

    void setModelData(QWidget* editor, QAbstractItemModel* model,
                      const QModelIndex& index) const override;
};

} // namespace qs::ui
