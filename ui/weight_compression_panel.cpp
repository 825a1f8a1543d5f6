#include "ui/weight_compression_panel.h"

#include "core/compression/weight_compression.h"
#include "ui/graph_document.h"
#include "ui/graph_theme.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QValueAxis>

#include <map>
#include <string>

namespace qs::ui {

namespace {
constexpr int kChartMinimumWidth = 260;

QString qstr(const std::string& text) {
    return QString::fromStdString(text);
}

QString shapeText(const std::vector<int64_t>& dims) {
    QStringList parts;
    for (const int64_t dim : dims) {
        parts.push_back(QString::number(dim));
    }
    return QLatin1Char('[') + parts.join(QStringLiteral(", ")) + QLatin1Char(']');
}

/// A read-only cell; numbers sort by value.
QTableWidgetItem* cell(const QString& text, const QVariant& sortValue = {}) {
    auto* item = new QTableWidgetItem;
    item->setData(Qt::DisplayRole, sortValue.isValid() ? sortValue : QVariant(text));
    if (sortValue.isValid() && sortValue.typeId() != QMetaType::QString) {
        item->setData(Qt::ToolTipRole, text);
    }
    item->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
    return item;
}

int bitsOf(compression::CompressionMode mode) {
    return mode == compression::CompressionMode::None ? 0 : compression::modeBits(mode);
}
} // namespace

WeightCompressionPanel::WeightCompressionPanel(QWidget* parent)
    : QWidget(parent)
    , m_summary(new QLabel(this))
    , m_table(new QTableWidget(0, ColumnCount, this))
    , m_chart(new QChart()) {
    m_table->setHorizontalHeaderLabels({tr("Node"), tr("Op type"), tr("Weight"), tr("Shape"),
                                        tr("Parameters"), tr("Ratio-defining"), tr("Mode"),
                                        tr("Group"), tr("Sensitivity"), tr("Activation stat."),
                                        tr("Note")});
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setSortingEnabled(true);
    m_chart->setTitle(tr("Parameters per mode"));
    m_chart->legend()->hide();
    m_chart->setAnimationOptions(QChart::NoAnimation);
    m_chart->setMargins(QMargins(4, 4, 4, 4));
    m_chart->setBackgroundRoundness(0);
    auto* chartView = new QChartView(m_chart, this);
    chartView->setRenderHint(QPainter::Antialiasing);
    chartView->setMinimumWidth(kChartMinimumWidth);
    auto* splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(m_table);
    splitter->addWidget(chartView);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 1);
    auto* column = new QVBoxLayout(this);
    column->setContentsMargins(0, 0, 0, 0);
    column->addWidget(m_summary);
    column->addWidget(splitter);
    connect(m_table, &QTableWidget::cellActivated, this, [this](int row, int) {
        if (QTableWidgetItem* item = m_table->item(row, NodeColumn)) {
            Q_EMIT weightActivated(item->text());
        }
    });
    reload();
}

void WeightCompressionPanel::setDocument(GraphDocument* document) {
    disconnect(m_connection);
    m_document = document;
    if (document != nullptr) {
        m_connection = connect(document, &GraphDocument::compressionPlanChanged, this,
                               &WeightCompressionPanel::reload);
    }
    reload();
}

void WeightCompressionPanel::reload() {
    const compression::CompressionPlan* plan =
        m_document.isNull() ? nullptr : m_document->compressionPlan();
    m_table->setSortingEnabled(false);
    m_table->setRowCount(0);
    if (plan == nullptr) {
        m_summary->setText(tr("No compression plan: Quantize ▸ Compress Weights…"));
        reloadChart();
        return;
    }
    const GraphTheme theme = GraphTheme::light();
    m_table->setRowCount(static_cast<int>(plan->weights.size()));
    int row = 0;
    for (const compression::WeightDecision& decision : plan->weights) {
        m_table->setItem(row, NodeColumn, cell(qstr(decision.nodeName)));
        m_table->setItem(row, OpTypeColumn, cell(qstr(decision.opType)));
        m_table->setItem(row, WeightColumn, cell(qstr(decision.valueName)));
        m_table->setItem(row, ShapeColumn, cell(shapeText(decision.dims)));
        m_table->setItem(row, ParametersColumn,
                         cell(QString::number(decision.numElements),
                              QVariant::fromValue<qlonglong>(decision.numElements)));
        m_table->setItem(row, RatioDefiningColumn,
                         cell(decision.ratioDefining ? tr("yes") : tr("no")));
        QTableWidgetItem* mode = cell(QString::fromLatin1(compression::modeName(decision.mode)));
        mode->setForeground(theme.bitwidthColor(bitsOf(decision.mode)));
        m_table->setItem(row, ModeColumn, mode);
        m_table->setItem(
            row, GroupSizeColumn,
            cell(decision.groupSize > 0 ? QString::number(decision.groupSize) : tr("per channel")));
        m_table->setItem(row, SensitivityColumn,
                         cell(QString::number(decision.sensitivity, 'g', 4), decision.sensitivity));
        m_table->setItem(row, ActivationColumn,
                         cell(QString::number(decision.activationStatistic, 'g', 4),
                              decision.activationStatistic));
        m_table->setItem(row, NoteColumn, cell(qstr(decision.note)));
        ++row;
    }
    m_table->setSortingEnabled(true);
    m_table->resizeColumnsToContents();
    m_summary->setText(tr("%1, group size %2, ratio %3, sensitivity %4")
                           .arg(QString::fromLatin1(compression::modeName(plan->options.mode)))
                           .arg(plan->options.groupSize == 0
                                    ? tr("default")
                                    : QString::number(plan->options.groupSize))
                           .arg(plan->options.ratio)
                           .arg(QString::fromLatin1(
                               compression::sensitivityMetricName(plan->options.sensitivity))));
    reloadChart();
}

void WeightCompressionPanel::reloadChart() {
    m_chart->removeAllSeries();
    for (QAbstractAxis* axis : m_chart->axes()) {
        m_chart->removeAxis(axis);
        delete axis;
    }
    const compression::CompressionPlan* plan =
        m_document.isNull() ? nullptr : m_document->compressionPlan();
    if (plan == nullptr) {
        return;
    }
    // Same labels as NNCF's table ("int4_asym, group size 128"), widest precision first.
    std::map<std::pair<int, std::string>, int64_t> parameters;
    for (const compression::WeightDecision& decision : plan->weights) {
        const int bits = decision.mode == compression::CompressionMode::None
                             ? 32
                             : compression::modeBits(decision.mode);
        parameters[{-bits, compression::decisionModeLabel(decision.mode, decision.groupSize)}] +=
            decision.numElements;
    }
    auto* series = new QBarSeries(m_chart);
    auto* set = new QBarSet(tr("Parameters"), series);
    QStringList categories;
    double maximum = 1;
    for (const auto& [key, count] : parameters) {
        categories.push_back(qstr(key.second));
        set->append(static_cast<double>(count));
        maximum = std::max(maximum, static_cast<double>(count));
    }
    series->append(set);
    m_chart->addSeries(series);
    auto* x = new QBarCategoryAxis(m_chart);
    x->append(categories);
    auto* y = new QValueAxis(m_chart);
    y->setRange(0, maximum * 1.1);
    y->setLabelFormat(QStringLiteral("%.0f"));
    y->applyNiceNumbers();
    m_chart->addAxis(x, Qt::AlignBottom);
    m_chart->addAxis(y, Qt::AlignLeft);
    series->attachAxis(x);
    series->attachAxis(y);
}

} // namespace qs::ui
