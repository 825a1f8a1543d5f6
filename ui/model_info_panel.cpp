#include "ui/model_info_panel.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QEvent>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHeaderView>
#include <QHorizontalBarSeries>
#include <QLabel>
#include <QLocale>
#include <QScrollArea>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <array>
#include <memory>

namespace qs::ui {

namespace {
using Field = ModelInfoPanel::Field;

constexpr int kThousand = 1000;
constexpr int kMaxTensorRows = 12;
constexpr int kMaxOpaqueRows = 12;
constexpr size_t kMaxChartBars = 15;
constexpr qsizetype kMaxChartLabel = 9;
constexpr int kChartRowHeight = 22; ///< per bar, so every op type keeps its label
constexpr int kChartFrameHeight = 70;
constexpr int kMinChartHeight = 260;
constexpr qreal kChartHeadroom = 1.15;

QString toQString(const std::string& text) {
    return QString::fromStdString(text);
}

/// "12.3 G" for 12 345 678 901: a quick sense of scale; empty below a thousand.
QString compactCount(int64_t count) {
    static const std::array<QLatin1String, 5> kUnits = {QLatin1String(""), QLatin1String(" K"),
                                                        QLatin1String(" M"), QLatin1String(" G"),
                                                        QLatin1String(" T")};
    double scaled = static_cast<double>(count);
    size_t unit = 0;
    while (scaled >= kThousand && unit + 1 < kUnits.size()) {
        scaled /= kThousand;
        ++unit;
    }
    return unit == 0 ? QString() : QString::number(scaled, 'f', 1) + kUnits[unit];
}

/// "1,234,567 (1.2 M)", or just "108" when the short form adds nothing.
QString countWithScale(int64_t count) {
    const QString exact = QLocale().toString(static_cast<qlonglong>(count));
    const QString compact = compactCount(count);
    return compact.isEmpty() ? exact : QStringLiteral("%1 (%2)").arg(exact, compact);
}

/// Makes `table` as tall as its header and rows, up to `maxRows`; more rows scroll.
void fitTableHeight(QTreeWidget* table, int maxRows) {
    const int rows = std::min(table->topLevelItemCount(), maxRows);
    int height = 2 * table->frameWidth();
    if (!table->isHeaderHidden()) {
        height += table->header()->sizeHint().height();
    }
    for (int row = 0; row < rows; ++row) {
        height += table->sizeHintForRow(row);
    }
    table->setFixedHeight(height);
}

QTreeWidget* makeTable(const QStringList& headers, QWidget* parent) {
    auto* table = new QTreeWidget(parent);
    table->setColumnCount(static_cast<int>(headers.size()));
    table->setHeaderLabels(headers);
    table->setRootIsDecorated(false);
    table->setAlternatingRowColors(true);
    table->setUniformRowHeights(true);
    table->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    table->header()->setStretchLastSection(true);
    return table;
}

/// A titled box holding `table`; an empty table shows `emptyText` instead.
QGroupBox* makeTableBox(QTreeWidget* table, const QString& emptyText, QWidget* parent) {
    auto* box = new QGroupBox(parent);
    auto* layout = new QVBoxLayout(box);
    layout->addWidget(table);
    auto* empty = new QLabel(emptyText, box);
    empty->setObjectName(QStringLiteral("emptyText"));
    empty->setEnabled(false);
    layout->addWidget(empty);
    return box;
}

/// Titles `box` with the row count of `table` and shows the table or its empty text.
void setTableBoxTitle(QGroupBox* box, QTreeWidget* table, const QString& title) {
    const int rows = table->topLevelItemCount();
    box->setTitle(rows == 0 ? title : QStringLiteral("%1 (%2)").arg(title).arg(rows));
    table->setVisible(rows > 0);
    box->findChild<QLabel*>(QStringLiteral("emptyText"))->setVisible(rows == 0);
}

void fillTensors(QTreeWidget* table, const std::vector<report::TensorSummary>& tensors) {
    table->clear();
    for (const report::TensorSummary& tensor : tensors) {
        auto* item = new QTreeWidgetItem(
            table, {toQString(tensor.name), toQString(tensor.dtype), toQString(tensor.shape)});
        item->setToolTip(0, toQString(tensor.name));
    }
    table->resizeColumnToContents(0);
    table->resizeColumnToContents(1);
}

QString opsetsText(const report::ModelInfo& info) {
    QStringList parts;
    for (const graph::OpsetImport& opset : info.opsets) {
        const QString domain =
            opset.domain.empty() ? QStringLiteral("ai.onnx") : toQString(opset.domain);
        parts.push_back(QStringLiteral("%1 %2").arg(domain).arg(opset.version));
    }
    return parts.join(QStringLiteral(", "));
}

QString macsText(const report::ModelInfo& info) {
    if (info.macs == 0 && info.macsUnknownNodes > 0) {
        return ModelInfoPanel::tr("unknown: %n Conv/Gemm/MatMul node(s) of unknown rank", nullptr,
                                  static_cast<int>(info.macsUnknownNodes));
    }
    QString text = countWithScale(info.macs);
    if (info.macsDynamicDimsAsOne) {
        text += ModelInfoPanel::tr(" (dynamic dims counted as 1)");
    }
    if (info.macsUnknownNodes > 0) {
        text += ModelInfoPanel::tr("; %n Conv/Gemm/MatMul node(s) of unknown rank not counted",
                                   nullptr, static_cast<int>(info.macsUnknownNodes));
    }
    return text;
}

QString parametersText(const report::ModelInfo& info) {
    return QStringLiteral("%1, %2").arg(
        countWithScale(info.parameterCount),
        QLocale().formattedDataSize(info.parameterBytes, 2, QLocale::DataSizeSIFormat));
}
} // namespace

ModelInfoPanel::ModelInfoPanel(QWidget* parent)
    : QWidget(parent)
    , m_inputs(makeTable({tr("Name"), tr("Type"), tr("Shape")}, this))
    , m_outputs(makeTable({tr("Name"), tr("Type"), tr("Shape")}, this))
    , m_opTypes(makeTable({tr("Op type"), tr("Count")}, this))
    , m_opaqueOps(makeTable({tr("Node"), tr("Op type"), tr("Reason")}, this))
    , m_warnings(makeTable({tr("Warning")}, this))
    , m_opTypeChart(new QChartView(this)) {
    m_opTypeChart->setRenderHint(QPainter::Antialiasing);
    m_opTypeChart->setMinimumHeight(kMinChartHeight);
    m_opTypes->setSortingEnabled(true);
    m_opTypes->header()->setStretchLastSection(false);
    m_opTypes->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_opTypes->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    m_warnings->setHeaderHidden(true);
    m_warnings->setWordWrap(true);
    m_warnings->setUniformRowHeights(false);
    arrangePage();
    setInfo({});
}

void ModelInfoPanel::setInfo(const report::ModelInfo& info) {
    fillSummary(info);
    fillTensors(m_inputs, info.inputs);
    fillTensors(m_outputs, info.outputs);
    setTableBoxTitle(m_inputsBox, m_inputs, tr("Inputs"));
    setTableBoxTitle(m_outputsBox, m_outputs, tr("Outputs"));
    fillOpTypes(info);
    fillOpTypeChart(info);
    fillOpaqueOps(info);
    fillWarnings(info);
    fitTableHeight(m_inputs, kMaxTensorRows);
    fitTableHeight(m_outputs, kMaxTensorRows);
    fitTableHeight(m_opaqueOps, kMaxOpaqueRows);
    fitTableHeight(m_warnings, kMaxOpaqueRows);
}

QString ModelInfoPanel::summaryValue(Field field) const {
    const auto it = m_summary.find(field);
    return it == m_summary.end() ? QString() : it->second->text();
}

QGroupBox* ModelInfoPanel::makeSummaryBox() {
    const std::array<std::pair<Field, QString>, 8> rows = {{
        {Field::File, tr("File")},
        {Field::Producer, tr("Producer")},
        {Field::IrVersion, tr("IR version")},
        {Field::Opsets, tr("Opsets")},
        {Field::Nodes, tr("Nodes")},
        {Field::Initializers, tr("Initializers")},
        {Field::Parameters, tr("Parameters")},
        {Field::Macs, tr("MACs")},
    }};
    auto* box = new QGroupBox(tr("Model"), this);
    auto* form = new QFormLayout(box);
    for (const auto& [field, name] : rows) {
        auto* value = new QLabel(box);
        value->setTextInteractionFlags(Qt::TextSelectableByMouse);
        value->setWordWrap(true);
        form->addRow(name + QLatin1Char(':'), value);
        m_summary.emplace(field, value);
    }
    return box;
}

QWidget* ModelInfoPanel::makeDetailsColumn() {
    auto* column = new QWidget(this);
    auto* layout = new QVBoxLayout(column);
    layout->setContentsMargins(0, 0, 0, 0);
    m_inputsBox = makeTableBox(m_inputs, tr("The model has no runtime inputs."), column);
    m_outputsBox = makeTableBox(m_outputs, tr("The model has no outputs."), column);
    m_opaqueBox = makeTableBox(m_opaqueOps, tr("None: every op is known."), column);
    m_warningsBox = makeTableBox(m_warnings, tr("None."), column);
    for (QGroupBox* box : {m_inputsBox, m_outputsBox, m_opaqueBox, m_warningsBox}) {
        layout->addWidget(box);
    }
    layout->addStretch(1);
    return column;
}

/// Top row: the summary form beside inputs, outputs, opaque ops and warnings. Bottom row, taking
/// the remaining height: the op-type table beside its bar chart.
void ModelInfoPanel::arrangePage() {
    auto* page = new QWidget(this);
    auto* grid = new QGridLayout(page);
    m_opTypesBox = makeTableBox(m_opTypes, tr("The model has no nodes."), page);
    grid->addWidget(makeSummaryBox(), 0, 0);
    grid->addWidget(makeDetailsColumn(), 0, 1);
    grid->addWidget(m_opTypesBox, 1, 0);
    m_opTypeChartBox = new QGroupBox(page);
    auto* chartLayout = new QVBoxLayout(m_opTypeChartBox);
    chartLayout->setContentsMargins(0, 0, 0, 0);
    chartLayout->addWidget(m_opTypeChart);
    grid->addWidget(m_opTypeChartBox, 1, 1);
    grid->setColumnStretch(0, 1);
    grid->setColumnStretch(1, 1);
    grid->setRowStretch(1, 1);
    auto* scroll = new QScrollArea(this);
    scroll->setWidget(page);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(scroll);
}

void ModelInfoPanel::fillSummary(const report::ModelInfo& info) {
    const QLocale locale;
    const auto set = [this](Field field, const QString& text) {
        m_summary.at(field)->setText(text);
    };
    set(Field::File, toQString(info.path));
    set(Field::Producer, info.producer.empty() ? tr("unknown") : toQString(info.producer));
    set(Field::IrVersion, QString::number(info.irVersion));
    set(Field::Opsets, opsetsText(info));
    set(Field::Nodes, locale.toString(static_cast<qulonglong>(info.nodeCount)));
    set(Field::Initializers, locale.toString(static_cast<qulonglong>(info.initializerCount)));
    set(Field::Parameters, parametersText(info));
    set(Field::Macs, macsText(info));
}

void ModelInfoPanel::fillOpTypes(const report::ModelInfo& info) {
    m_opTypes->setSortingEnabled(false);
    m_opTypes->clear();
    for (const auto& [opType, count] : info.opTypeCounts) {
        auto* item = new QTreeWidgetItem(m_opTypes, {toQString(opType)});
        item->setData(1, Qt::DisplayRole, static_cast<qulonglong>(count));
        item->setTextAlignment(1, Qt::AlignRight | Qt::AlignVCenter);
    }
    m_opTypes->setSortingEnabled(true);
    m_opTypes->sortByColumn(1, Qt::DescendingOrder);
    setTableBoxTitle(m_opTypesBox, m_opTypes, tr("Op types"));
}

void ModelInfoPanel::fillOpaqueOps(const report::ModelInfo& info) {
    m_opaqueOps->clear();
    for (const report::OpaqueNode& node : info.opaqueNodes) {
        new QTreeWidgetItem(m_opaqueOps,
                            {toQString(node.name), toQString(node.opType), toQString(node.reason)});
    }
    setTableBoxTitle(m_opaqueBox, m_opaqueOps, tr("Opaque ops"));
}

void ModelInfoPanel::fillWarnings(const report::ModelInfo& info) {
    m_warnings->clear();
    for (const std::string& warning : info.warnings) {
        auto* item = new QTreeWidgetItem(m_warnings, {toQString(warning)});
        item->setToolTip(0, toQString(warning));
    }
    setTableBoxTitle(m_warningsBox, m_warnings, tr("Warnings"));
}

void ModelInfoPanel::fillOpTypeChart(const report::ModelInfo& info) {
    const size_t bars = std::min(info.opTypeCounts.size(), kMaxChartBars);
    auto* counts = new QBarSet(tr("Nodes"));
    QStringList opTypes;
    size_t largest = 0;
    for (size_t i = bars; i-- > 0;) {
        const auto& [opType, count] = info.opTypeCounts[i];
        // Long names ("GlobalAveragePool") would be clipped at the chart's edge: elide them.
        QString label = toQString(opType);
        if (label.size() > kMaxChartLabel) {
            label = label.left(kMaxChartLabel - 1) + QChar(0x2026);
        }
        opTypes.push_back(label);
        counts->append(static_cast<qreal>(count));
        largest = std::max(largest, count);
    }
    m_opTypeChart->setMinimumHeight(
        std::max(kMinChartHeight, kChartFrameHeight + kChartRowHeight * static_cast<int>(bars)));
    auto* series = new QHorizontalBarSeries;
    series->append(counts);
    series->setLabelsVisible(true);
    series->setLabelsPosition(QAbstractBarSeries::LabelsOutsideEnd);
    counts->setLabelColor(palette().color(QPalette::Text));
    auto* chart = new QChart;
    chart->addSeries(series);
    chart->legend()->hide();
    chart->setBackgroundVisible(false);
    m_opTypeChartBox->setTitle(info.opTypeCounts.size() > bars
                                   ? tr("Nodes per op type (top %1)").arg(bars)
                                   : tr("Nodes per op type"));
    auto* opAxis = new QBarCategoryAxis;
    opAxis->append(opTypes);
    opAxis->setTruncateLabels(false); // a narrow dock otherwise shows "..." for every op type
    chart->addAxis(opAxis, Qt::AlignLeft);
    series->attachAxis(opAxis);
    auto* countAxis = new QValueAxis;
    countAxis->setLabelFormat(QStringLiteral("%d"));
    countAxis->setRange(0, static_cast<qreal>(std::max<size_t>(largest, 1)) * kChartHeadroom);
    countAxis->applyNiceNumbers();
    chart->addAxis(countAxis, Qt::AlignBottom);
    series->attachAxis(countAxis);
    const std::unique_ptr<QChart> previous(m_opTypeChart->chart());
    m_opTypeChart->setChart(chart);
    applyChartColors();
}

void ModelInfoPanel::applyChartColors() {
    const QColor text = palette().color(QPalette::Text);
    const QColor grid = palette().color(QPalette::Mid);
    for (QAbstractAxis* axis : m_opTypeChart->chart()->axes()) {
        axis->setLabelsColor(text);
        axis->setGridLineColor(grid);
        axis->setLinePenColor(grid);
    }
    for (QAbstractSeries* series : m_opTypeChart->chart()->series()) {
        for (QBarSet* set : static_cast<QAbstractBarSeries*>(series)->barSets()) {
            set->setLabelColor(text);
        }
    }
}

void ModelInfoPanel::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        applyChartColors(); // follow a light/dark theme switch
    }
}

} // namespace qs::ui
