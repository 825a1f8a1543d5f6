// The "Quantizers" dock: QuantizerPanel shows the QuantizerTableModel sortable and filterable
// (text over every column, so "Conv" picks an op type), with the calibration summary over it, and
// sets one bit width for all selected rows from the context menu, as one undo step.
#pragma once

#include "ui/quantizer_table_model.h"

#include <QWidget>

#include <vector>

class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;

namespace qs::ui {

class GraphDocument;

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
