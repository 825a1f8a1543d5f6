#include "ui/quantizer_config_delegate.h"

#include "ui/graph_document.h"
#include "ui/quantizer_table_model.h"

#include <QComboBox>

namespace qs::ui {

QWidget* QuantizerConfigDelegate::createEditor(QWidget* parent, const QStyleOptionViewItem&,
                                               const QModelIndex& index) const {
    auto* combo = new QComboBox(parent);
    combo->addItems(index.data(QuantizerTableModel::CandidatesRole).toStringList());
    return combo;
}

void QuantizerConfigDelegate::setEditorData(QWidget* editor, const QModelIndex& index) const {
    static_cast<QComboBox*>(editor)->setCurrentIndex(
        index.data(QuantizerTableModel::ChosenIndexRole).toInt());
}

void QuantizerConfigDelegate::setModelData(QWidget* editor, QAbstractItemModel* model,
                                           const QModelIndex& index) const {
    model->setData(index, static_cast<QComboBox*>(editor)->currentIndex(), Qt::EditRole);
}

} // namespace qs::ui
