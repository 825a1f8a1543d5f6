// The "Quantizers" dock: QuantizerTableModel adapts the open document's quantizers (core
// QuantizerMark list) to a table — id, insertion point, kind, candidates, chosen config, state
// (active / merged / requant), unified-scale group — and turns an edit of the chosen-config cell
// (a combo of the point's candidates) into a ChooseQuantizerConfigCommand. QuantizerPanel shows
// it sortable and filterable (text over every column, so "Conv" picks an op type) and sets one
// bit width for all selected rows from the context menu, as one undo step.
#pragma once

#include "core/quantization/quantization_state.h"

#include <QAbstractTableModel>
#include <QPointer>
#include <QStyledItemDelegate>
#include <QWidget>

#include <vector>

class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;

namespace qs::ui {

class GraphDocument;

/// Table adapter over the document's quantizers; rebuilt when the quantization changes.
class QuantizerTableModel : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column {
        Id,
        Point,
        OpType,
        Kind,
        Candidates,
        Config,
        State,
        Group,
        Low,       ///< calibrated range (lowest channel's low), when calibrated and not stale
        High,      ///<
        Scale,     ///< per-tensor value, or "a … b (N ch)"
        ZeroPoint, ///<
        Sqnr,      ///< float model vs quantized model at this quantizer, dB
        ColumnCount
    };

    /// Role of the Config column: the candidate configs as strings (QStringList).
    static constexpr int CandidatesRole = Qt::UserRole + 1;
    /// Role of the Config column: index of the chosen candidate (int).
    static constexpr int ChosenIndexRole = Qt::UserRole + 2;

    explicit QuantizerTableModel(QObject* parent = nullptr);

    /// Shows `document`'s quantizers (nullptr: none) and follows its changes.
    void setDocument(GraphDocument* document);

    int rowCount(const QModelIndex& parent = {}) const override;

    int columnCount(const QModelIndex& parent = {}) const override;

    QVariant data(const QModelIndex& index, int role) const override;

    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

    Qt::ItemFlags flags(const QModelIndex& index) const override;

    /// Config column, EditRole, candidate index: pushes a ChooseQuantizerConfigCommand.
    bool setData(const QModelIndex& index, const QVariant& value, int role) override;

    /// The quantizer on `row`.
    const quantization::QuantizerMark& markAt(int row) const {
        return m_marks.at(static_cast<size_t>(row));
    }

    /// The document shown, or nullptr.
    GraphDocument* document() const { return m_document.data(); }

    /// The row of quantizer `id`, or -1.
    int rowOf(int id) const;

private:
    void reload();

    /// Takes `marks` row by row when they are the rows shown (same quantizers at the same
    /// points), signalling only the changed rows; false (nothing touched) otherwise.
    bool updateChangedRows(const std::vector<quantization::QuantizerMark>& marks);

    const quantization::QuantizerConfigList* candidates(int id) const;

    /// CandidatesRole / ChosenIndexRole of the Config column.
    QVariant candidatesData(const quantization::QuantizerMark& mark, int role) const;

    /// DisplayRole of the setup columns.
    QVariant displayData(int row, int column) const;

    /// The calibration columns' display value of `mark` (a number where one sorts well).
    QVariant calibrationData(const quantization::QuantizerMark& mark, int column) const;

    QPointer<GraphDocument> m_document;
    QMetaObject::Connection m_connection;
    QMetaObject::Connection m_calibrationConnection;
    std::vector<quantization::QuantizerMark> m_marks;
    std::vector<QString> m_opTypes; ///< by row
};

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

/// Filter field over the sortable quantizer table.
class QuantizerPanel : public QWidget {
    Q_OBJECT

public:
    explicit QuantizerPanel(QWidget* parent = nullptr);

    QuantizerTableModel& model() const { return *m_model; }

    QTableView& view() const { return *m_view; }

    void setDocument(GraphDocument* document) { m_model->setDocument(document); }

    /// Shows only rows containing `text` (any column, case-insensitive).
    void setFilterText(const QString& text);

    /// The filter field's text.
    QString filterText() const;

    /// The line over the table: dataset and output metrics of the calibration, or that it is
    /// stale or missing.
    QString calibrationSummary() const;

    /// Rows shown after filtering.
    int visibleRows() const;

    /// Selects exactly the rows of quantizers `ids` (clearing the filter so they show) and
    /// scrolls to the first.
    void selectQuantizers(const QList<int>& ids);

    /// Ids of the selected rows' quantizers that can be chosen (not merged away).
    std::vector<int> selectedQuantizers() const;

    /// Chooses `bits` for every selected quantizer that has such a candidate (one undo step);
    /// returns how many changed.
    int setBitwidthForSelection(int bits);

Q_SIGNALS:
    /// The current row moved to quantizer `id`, which sits at op `nodeName`.
    void quantizerActivated(int id, const QString& nodeName);

private:
    void showContextMenu(const QPoint& at);

    /// Widens the columns an edit can change (config, state, group) when `top`..`bottom` (proxy
    /// rows) need more room; measures those cells only.
    void fitEditedCells(const QModelIndex& top, const QModelIndex& bottom);

    QuantizerTableModel* m_model;
    QSortFilterProxyModel* m_proxy;
    void updateCalibrationSummary();

    QLineEdit* m_filter;
    QLabel* m_calibration;
    QTableView* m_view;
};

} // namespace qs::ui
