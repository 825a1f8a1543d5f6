#include "ui/features/weight_compression/weight_compression_panel.h"

#include "core/compression/weight_compression.h"
#include "ui/features/weight_compression/compression_plan_state.h"
#include "ui/graph_document.h"
#include "ui/graph_theme.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QCoreApplication>
#include <QHeaderView>
#include <QHorizontalStackedBarSeries>
#include <QLabel>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QValueAxis>

#include <map>
#include <string>

namespace qs::ui {

namespace {
constexpr int kChartMinimumWidth = 300;

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

QString groupText(int64_t groupSize) {
    return groupSize > 0 ? QString::number(groupSize)
                         : QCoreApplication::translate("WeightCompressionPanel", "per channel");
}

/// "int4_asym g128", "int8_asym": short enough for the chart's axis.
QString shortModeLabel(compression::CompressionMode mode, int64_t groupSize) {
    if (mode == compression::CompressionMode::None) {
        return QStringLiteral("float");
    }
    QString label = QString::fromLatin1(compression::modeName(mode));
    if (groupSize > 0) {
        label += QStringLiteral(" g%1").arg(groupSize);
    }
    return label;
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
    m_table->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder); // plan (graph) order
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
        m_connection =
            connect(document, &GraphDocument::stateChanged, this, [this](const QString& key) {
                if (key == kWeightCompressionKey) {
                    reload();
                }
            });
    }
    reload();
}

void WeightCompressionPanel::reload() {
    const compression::CompressionPlan* plan =
        m_document.isNull() ? nullptr : compressionPlan(*m_document);
    m_table->setSortingEnabled(false);
    m_table->setRowCount(0);
    if (plan == nullptr) {
        m_summary->setText(tr("No compression plan: Quantize ▸ Compress Weights…"));
        reloadChart();
        return;
    }
    const GraphTheme theme = GraphTheme::light();
    const compression::WeightCompressionOptions& options = plan->options;
    const bool mixing = options.ratio < 1.0 && compression::modeBits(options.mode) == 4;
    const bool dataAware = compression::isDataAware(options.sensitivity);
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
        // Only ranked weights have a sensitivity; only data-aware metrics an activation factor.
        const bool ranked = mixing && decision.ratioDefining;
        m_table->setItem(
            row, SensitivityColumn,
            ranked ? cell(QString::number(decision.sensitivity, 'g', 4), decision.sensitivity)
                   : cell(QString()));
        m_table->setItem(row, ActivationColumn,
                         ranked && dataAware
                             ? cell(QString::number(decision.activationStatistic, 'g', 4),
                                    decision.activationStatistic)
                             : cell(QString()));
        m_table->setItem(row, NoteColumn, cell(qstr(decision.note)));
        ++row;
    }
    m_table->setSortingEnabled(true);
    m_table->resizeColumnsToContents();
    m_summary->setText(tr("%1, group size %2, ratio %3, sensitivity %4")
                           .arg(QString::fromLatin1(compression::modeName(plan->options.mode)))
                           .arg(groupText(plan->options.groupSize == 0
                                              ? compression::defaultGroupSize(plan->options.mode)
                                              : plan->options.groupSize))
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
        m_document.isNull() ? nullptr : compressionPlan(*m_document);
    if (plan == nullptr) {
        return;
    }
    // Same labels as NNCF's table ("int4_asym, group size 128"), widest precision first.
    std::map<std::pair<int, std::string>, std::pair<QString, int64_t>> parameters;
    for (const compression::WeightDecision& decision : plan->weights) {
        const int bits = decision.mode == compression::CompressionMode::None
                             ? 32
                             : compression::modeBits(decision.mode);
        auto& [label, count] =
            parameters[{-bits, compression::decisionModeLabel(decision.mode, decision.groupSize)}];
        label = shortModeLabel(decision.mode, decision.groupSize);
        count += decision.numElements;
    }
    // One bar per mode, coloured by its bit width: a stacked series whose set i is non-zero only
    // in category i. Horizontal, so the long mode labels fit on the left.
    auto* series = new QHorizontalStackedBarSeries(m_chart);
    const GraphTheme theme = GraphTheme::light();
    QStringList categories;
    double maximum = 1;
    size_t index = 0;
    for (const auto& [key, entry] : parameters) {
        const int64_t count = entry.second;
        categories.push_back(entry.first);
        auto* set = new QBarSet(qstr(key.second), series);
        for (size_t i = 0; i < parameters.size(); ++i) {
            set->append(i == index ? static_cast<double>(count) : 0.0);
        }
        set->setColor(theme.bitwidthColor(key.first == -32 ? 0 : -key.first));
        series->append(set);
        maximum = std::max(maximum, static_cast<double>(count));
        ++index;
    }
    m_chart->addSeries(series);
    auto* x = new QBarCategoryAxis(m_chart);
    x->append(categories);
    auto* y = new QValueAxis(m_chart);
    y->setRange(0, maximum * 1.1);
    y->setLabelFormat(QStringLiteral("%.0f"));
    y->applyNiceNumbers();
    m_chart->addAxis(x, Qt::AlignLeft);
    m_chart->addAxis(y, Qt::AlignBottom);
    series->attachAxis(x);
    series->attachAxis(y);
}

} // namespace qs::ui
