#include "ui/quantizer_panel.h"

#include "ui/features/calibration/calibration_state.h"
#include "ui/graph_document.h"
#include "ui/quantizer_commands.h"
#include "ui/quantizer_config_delegate.h"

#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QSignalBlocker>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

namespace qs::ui {

QuantizerPanel::QuantizerPanel(QWidget* parent)
    : QWidget(parent)
    , m_model(new QuantizerTableModel(this))
    , m_proxy(new QSortFilterProxyModel(this))
    , m_filter(new QLineEdit(this))
    , m_calibration(new QLabel(this))
    , m_view(new QTableView(this)) {
    m_proxy->setSourceModel(m_model);
    m_proxy->setFilterKeyColumn(-1);
    m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_filter->setPlaceholderText(tr("Filter quantizers (node, config, state)…"));
    m_filter->setClearButtonEnabled(true);
    connect(m_filter, &QLineEdit::textChanged, m_proxy,
            &QSortFilterProxyModel::setFilterFixedString);
    m_view->setModel(m_proxy);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(QuantizerTableModel::Id, Qt::AscendingOrder);
    m_view->setItemDelegateForColumn(QuantizerTableModel::Config,
                                     new QuantizerConfigDelegate(m_view));
    m_view->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::SelectedClicked |
                            QAbstractItemView::EditKeyPressed);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_view->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_view, &QWidget::customContextMenuRequested, this, &QuantizerPanel::showContextMenu);
    m_view->verticalHeader()->hide();
    m_view->setWordWrap(false);
    m_view->setTextElideMode(Qt::ElideMiddle);
    m_view->verticalHeader()->setDefaultSectionSize(m_view->fontMetrics().height() + 6);
    // Columns fit their contents when the rows are replaced, not through ResizeToContents:
    // that re-measures a thousand rows on every changed cell, i.e. on every edit.
    m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_view->horizontalHeader()->setStretchLastSection(true);
    // SQNR is what one scans for: shown next to the chosen config, ranges at the end.
    m_view->horizontalHeader()->moveSection(QuantizerTableModel::Sqnr,
                                            QuantizerTableModel::Config + 1);
    auto fitColumns = [this] {
        for (int column = 0; column < QuantizerTableModel::ColumnCount; ++column) {
            if (column != QuantizerTableModel::Point) {
                m_view->resizeColumnToContents(column);
            }
        }
    };
    m_view->horizontalHeader()->resizeSection(QuantizerTableModel::Point, 260);
    fitColumns();
    connect(m_proxy, &QAbstractItemModel::modelReset, this, fitColumns);
    connect(m_proxy, &QAbstractItemModel::dataChanged, this, &QuantizerPanel::fitEditedCells);
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                const QModelIndex source = m_proxy->mapToSource(current);
                if (source.isValid()) {
                    const quantization::QuantizerMark& mark = m_model->markAt(source.row());
                    Q_EMIT quantizerActivated(mark.id,
                                              QString::fromStdString(mark.point.targetNodeName));
                }
            });
    auto* column = new QVBoxLayout(this);
    column->setContentsMargins(4, 4, 4, 4);
    column->addWidget(m_filter);
    column->addWidget(m_calibration);
    column->addWidget(m_view, 1);
    m_calibration->setWordWrap(true);
    m_calibration->setTextInteractionFlags(Qt::TextSelectableByMouse);
    connect(m_model, &QAbstractItemModel::modelReset, this,
            &QuantizerPanel::updateCalibrationSummary);
    updateCalibrationSummary();
}

QString QuantizerPanel::calibrationSummary() const {
    return m_calibration->text();
}

void QuantizerPanel::updateCalibrationSummary() {
    const GraphDocument* document = m_model->document();
    const CalibrationResult* calibration =
        document == nullptr ? nullptr : qs::ui::calibration(*document);
    if (calibration == nullptr) {
        m_calibration->setText(document == nullptr || document->quantization() == nullptr
                                   ? QString()
                                   : tr("Not calibrated — Quantize ▸ Calibrate… fills the "
                                        "range and SQNR columns."));
        return;
    }
    if (isCalibrationStale(*document)) {
        m_calibration->setText(tr("Calibration stale: the setup changed since (%1) — "
                                  "recalibrate.")
                                   .arg(calibration->dataset));
        return;
    }
    m_calibration->setText(tr("Calibrated on %1 — %n sample(s), simulated in %2 s — %3", nullptr,
                              static_cast<int>(calibration->report.samples))
                               .arg(calibration->dataset,
                                    QString::number(calibration->report.seconds, 'f', 2),
                                    outputMetricsText(calibration->report)));
}

void QuantizerPanel::fitEditedCells(const QModelIndex& top, const QModelIndex& bottom) {
    for (const int column :
         {QuantizerTableModel::Config, QuantizerTableModel::State, QuantizerTableModel::Group}) {
        int width = m_view->columnWidth(column);
        for (int row = top.row(); row <= bottom.row(); ++row) {
            width = std::max(width, m_view->sizeHintForIndex(m_proxy->index(row, column)).width());
        }
        if (width > m_view->columnWidth(column)) {
            m_view->setColumnWidth(column, width);
        }
    }
}

void QuantizerPanel::setFilterText(const QString& text) {
    m_filter->setText(text);
}

QString QuantizerPanel::filterText() const {
    return m_filter->text();
}

int QuantizerPanel::visibleRows() const {
    return m_proxy->rowCount();
}

void QuantizerPanel::selectQuantizers(const QList<int>& ids) {
    setFilterText({});
    QItemSelection selection;
    for (int id : ids) {
        const int row = m_model->rowOf(id);
        if (row >= 0) {
            const QModelIndex index = m_proxy->mapFromSource(m_model->index(row, 0));
            selection.select(index, index);
        }
    }
    // Selecting must not move the current row: that would re-centre the graph on one quantizer.
    const QSignalBlocker blocker(m_view->selectionModel());
    m_view->selectionModel()->select(selection, QItemSelectionModel::ClearAndSelect |
                                                    QItemSelectionModel::Rows);
    if (!selection.isEmpty()) {
        m_view->scrollTo(selection.indexes().front());
    }
    m_view->viewport()->update();
}

std::vector<int> QuantizerPanel::selectedQuantizers() const {
    std::vector<int> ids;
    for (const QModelIndex& index : m_view->selectionModel()->selectedRows()) {
        const quantization::QuantizerMark& mark =
            m_model->markAt(m_proxy->mapToSource(index).row());
        if (mark.status != quantization::QuantizerStatus::Merged) {
            ids.push_back(mark.id);
        }
    }
    return ids;
}

int QuantizerPanel::setBitwidthForSelection(int bits) {
    GraphDocument* document = m_model->document();
    if (document == nullptr || document->quantization() == nullptr) {
        return 0;
    }
    quantization::QuantizerConfigChoice changes =
        quantization::configsWithBitwidth(*document->quantization(), selectedQuantizers(), bits);
    const int count = static_cast<int>(changes.size());
    if (count > 0) {
        document->undoStack().push(new ChooseQuantizerConfigCommand(*document, std::move(changes)));
    }
    return count;
}

void QuantizerPanel::showContextMenu(const QPoint& at) {
    const std::vector<int> ids = selectedQuantizers();
    GraphDocument* document = m_model->document();
    if (ids.empty() || document == nullptr || document->quantization() == nullptr) {
        return;
    }
    QMenu menu(this);
    for (int bits : {16, 8, 6, 4, 2}) {
        const auto changes =
            quantization::configsWithBitwidth(*document->quantization(), ids, bits);
        if (changes.empty()) {
            continue;
        }
        QAction* action = menu.addAction(
            tr("Set %1 bits for %n quantizer(s)", nullptr, static_cast<int>(changes.size()))
                .arg(bits));
        connect(action, &QAction::triggered, this, [this, bits] { setBitwidthForSelection(bits); });
    }
    if (!menu.isEmpty()) {
        menu.exec(m_view->viewport()->mapToGlobal(at));
    }
}

} // namespace qs::ui
