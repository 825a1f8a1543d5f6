#include "ui/inspector_panel.h"

#include "core/graph/data_type.h"
#include "core/report/tensor_statistics.h"
#include "ui/graph_document.h"
#include "ui/quantizer_commands.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPainter>
#include <QSignalBlocker>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <variant>

namespace qs::ui {

namespace {
constexpr int kMaxListed = 16; ///< list attributes longer than this are elided

QString qs(const std::string& text) {
    return QString::fromStdString(text);
}

QString qs(std::string_view text) {
    return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
}

template <typename T>
QString listText(const std::vector<T>& values) {
    QStringList parts;
    for (size_t i = 0; i < values.size() && i < kMaxListed; ++i) {
        if constexpr (std::is_same_v<T, std::string>) {
            parts << qs(values[i]);
        } else {
            parts << QString::number(values[i]);
        }
    }
    if (values.size() > kMaxListed) {
        parts << QStringLiteral("… (%1)").arg(values.size());
    }
    return QLatin1Char('[') + parts.join(QStringLiteral(", ")) + QLatin1Char(']');
}

QString attributeText(const graph::AttributeValue& value) {
    return std::visit(
        [](const auto& v) -> QString {
            using V = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<V, float> || std::is_same_v<V, int64_t>) {
                return QString::number(v);
            } else if constexpr (std::is_same_v<V, std::string>) {
                return qs(v);
            } else if constexpr (std::is_same_v<V, graph::TensorPtr>) {
                return v ? QStringLiteral("tensor %1")
                               .arg(qs(graph::TensorShape::ofDims(v->dims()).toString()))
                         : QStringLiteral("tensor");
            } else if constexpr (std::is_same_v<V, std::vector<float>> ||
                                 std::is_same_v<V, std::vector<int64_t>> ||
                                 std::is_same_v<V, std::vector<std::string>>) {
                return listText(v);
            } else if constexpr (std::is_same_v<V, std::vector<graph::TensorPtr>>) {
                return QStringLiteral("%1 tensors").arg(v.size());
            } else {
                return QStringLiteral("(kept verbatim)");
            }
        },
        value);
}

QString tensorText(const graph::Value& value) {
    return QStringLiteral("%1 %2").arg(qs(graph::dataTypeName(value.dtype)),
                                       qs(value.shape.toString()));
}

QString statisticsText(const report::TensorStatistics& stats) {
    const QLocale locale;
    return QStringLiteral("%1 params · min %2 · max %3 · mean %4 · std %5")
        .arg(locale.toString(static_cast<qlonglong>(stats.count)))
        .arg(stats.min, 0, 'g', 4)
        .arg(stats.max, 0, 'g', 4)
        .arg(stats.mean, 0, 'g', 4)
        .arg(stats.stddev, 0, 'g', 4);
}

QString stateText(const quantization::QuantizerMark& mark) {
    switch (mark.status) {
    case quantization::QuantizerStatus::Merged:
        return mark.linkedTo ? QStringLiteral("merged into #%1").arg(*mark.linkedTo)
                             : QStringLiteral("merged");
    case quantization::QuantizerStatus::Requantizer:
        return mark.linkedTo ? QStringLiteral("requantizer of #%1").arg(*mark.linkedTo)
                             : QStringLiteral("requantizer");
    case quantization::QuantizerStatus::Active:
        break;
    }
    return QStringLiteral("active");
}

void addRow(QTreeWidgetItem* section, const QString& key, const QString& value) {
    auto* row = new QTreeWidgetItem(section, {key, value});
    row->setToolTip(1, value);
}

/// A feature's values as small bars (a DocumentState's NodeDetails::bars), scaled to the largest.
class MiniBarChart final : public QWidget {
public:
    MiniBarChart(std::vector<double> values, QWidget* parent)
        : QWidget(parent)
        , m_values(std::move(values)) {
        const double top = *std::max_element(m_values.begin(), m_values.end());
        setToolTip(QObject::tr("%1 values, largest %2").arg(m_values.size()).arg(top, 0, 'g', 3));
    }

    const std::vector<double>& values() const { return m_values; }

protected:
    void paintEvent(QPaintEvent* /*event*/) override {
        QPainter painter(this);
        const double top = *std::max_element(m_values.begin(), m_values.end());
        const QRectF area = QRectF(rect()).adjusted(1, 2, -1, -2);
        const double step = area.width() / static_cast<double>(m_values.size());
        painter.setPen(Qt::NoPen);
        painter.setBrush(palette().color(QPalette::Highlight));
        for (size_t i = 0; i < m_values.size(); ++i) {
            const double h = top > 0 ? area.height() * std::max(0.0, m_values[i]) / top : 0.0;
            painter.drawRect(QRectF(area.left() + step * static_cast<double>(i), area.bottom() - h,
                                    std::max(1.0, step - (step > 3 ? 1 : 0)), h));
        }
    }

private:
    std::vector<double> m_values;
};

constexpr int kBarChartHeight = 48;
} // namespace

InspectorPanel::InspectorPanel(QWidget* parent)
    : QWidget(parent)
    , m_title(new QLabel(this))
    , m_configLabel(new QLabel(tr("Chosen config:"), this))
    , m_configs(new QComboBox(this))
    , m_tree(new QTreeWidget(this)) {
    m_title->setWordWrap(true);
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    QFont bold = m_title->font();
    bold.setBold(true);
    m_title->setFont(bold);
    m_tree->setColumnCount(2);
    m_tree->setHeaderLabels({tr("Property"), tr("Value")});
    m_tree->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_tree->setAlternatingRowColors(true);
    m_configs->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    connect(m_configs, &QComboBox::activated, this, &InspectorPanel::chooseCandidate);
    auto* chooser = new QHBoxLayout;
    chooser->addWidget(m_configLabel);
    chooser->addWidget(m_configs, 1);
    auto* column = new QVBoxLayout(this);
    column->setContentsMargins(4, 4, 4, 4);
    column->addWidget(m_title);
    column->addLayout(chooser);
    column->addWidget(m_tree, 1);
    clear();
}

void InspectorPanel::setDocument(GraphDocument* document) {
    disconnect(m_connection);
    disconnect(m_stateConnection);
    m_document = document;
    if (document != nullptr) {
        m_connection =
            connect(document, &GraphDocument::quantizationChanged, this, &InspectorPanel::refresh);
        m_stateConnection = connect(document, &GraphDocument::stateChanged, this,
                                    [this](const QString&) { refresh(); });
    }
    clear();
}

void InspectorPanel::clear() {
    m_node.clear();
    m_quantizer = -1;
    refresh();
}

void InspectorPanel::showNode(const QString& nodeName) {
    m_node = nodeName;
    m_quantizer = -1;
    refresh();
}

void InspectorPanel::showQuantizer(int id) {
    m_node.clear();
    m_quantizer = id;
    refresh();
}

QString InspectorPanel::title() const {
    return m_title->text();
}

QString InspectorPanel::value(const QString& section, const QString& key) const {
    for (int i = 0; i < m_tree->topLevelItemCount(); ++i) {
        const QTreeWidgetItem* top = m_tree->topLevelItem(i);
        if (top->text(0) != section) {
            continue;
        }
        for (int j = 0; j < top->childCount(); ++j) {
            if (top->child(j)->text(0) == key) {
                return top->child(j)->text(1);
            }
        }
    }
    return {};
}

QStringList InspectorPanel::rows(const QString& section) const {
    QStringList out;
    for (int i = 0; i < m_tree->topLevelItemCount(); ++i) {
        const QTreeWidgetItem* top = m_tree->topLevelItem(i);
        for (int j = 0; top->text(0) == section && j < top->childCount(); ++j) {
            out << top->child(j)->text(0) + QStringLiteral(": ") + top->child(j)->text(1);
        }
    }
    return out;
}

QTreeWidgetItem* InspectorPanel::addSection(const QString& name) {
    auto* section = new QTreeWidgetItem(m_tree, {name});
    QFont font = section->font(0);
    font.setBold(true);
    section->setFont(0, font);
    section->setFirstColumnSpanned(true);
    section->setExpanded(true);
    return section;
}

void InspectorPanel::refresh() {
    m_tree->clear();
    {
        const QSignalBlocker blocker(m_configs);
        m_configs->clear();
    }
    m_configs->setEnabled(false);
    m_configLabel->setVisible(false);
    m_configs->setVisible(false);
    if (m_document && !m_node.isEmpty()) {
        fillNode(m_node);
    } else if (m_document && m_quantizer >= 0) {
        fillQuantizer(m_quantizer);
    } else {
        m_title->setText(tr("Select an op or a quantizer badge to inspect it."));
    }
    m_tree->expandAll();
}

void InspectorPanel::fillNode(const QString& nodeName) {
    const graph::Graph& graph = m_document->graph();
    const std::optional<graph::NodeId> id = graph.findNode(nodeName.toStdString());
    if (!id) {
        m_title->setText(tr("No op named %1 in this model.").arg(nodeName));
        return;
    }
    const graph::Node& node = graph.node(*id);
    m_title->setText(QStringLiteral("%1 %2").arg(qs(node.opType), qs(node.name)));
    QTreeWidgetItem* general = addSection(tr("Op"));
    addRow(general, tr("Type"),
           node.isDefaultDomain() ? qs(node.opType)
                                  : QStringLiteral("%1.%2").arg(qs(node.domain), qs(node.opType)));
    addRow(general, tr("Name"), qs(node.name));
    if (!node.attributes.empty()) {
        QTreeWidgetItem* attributes = addSection(tr("Attributes"));
        for (const graph::Attribute& attribute : node.attributes) {
            addRow(attributes, qs(attribute.name), attributeText(attribute.value));
        }
    }
    QTreeWidgetItem* inputs = addSection(tr("Inputs"));
    QTreeWidgetItem* weights = nullptr;
    int64_t parameters = 0;
    for (size_t port = 0; port < node.inputs.size(); ++port) {
        if (!node.inputs[port].valid()) {
            continue;
        }
        const graph::Value& value = graph.value(node.inputs[port]);
        addRow(inputs, QStringLiteral("%1 %2").arg(port).arg(qs(value.name)), tensorText(value));
        if (!value.isInitializer()) {
            continue;
        }
        weights = weights != nullptr ? weights : addSection(tr("Weights"));
        const auto stats = report::tensorStatistics(*value.initializer);
        addRow(weights, qs(value.name),
               stats.ok() ? statisticsText(*stats) : qs(stats.error().toString()));
        parameters += value.initializer->numElements();
    }
    QTreeWidgetItem* outputs = addSection(tr("Outputs"));
    for (size_t port = 0; port < node.outputs.size(); ++port) {
        if (node.outputs[port].valid()) {
            const graph::Value& value = graph.value(node.outputs[port]);
            addRow(outputs, QStringLiteral("%1 %2").arg(port).arg(qs(value.name)),
                   tensorText(value));
        }
    }
    if (weights != nullptr) {
        addRow(general, tr("Parameters"), QLocale().toString(static_cast<qlonglong>(parameters)));
    }
    fillFeatureDetails(nodeName);
}

void InspectorPanel::fillFeatureDetails(const QString& nodeName) {
    for (const auto& [key, state] : m_document->states()) {
        std::optional<DocumentState::NodeDetails> details = state->nodeDetails(nodeName);
        if (!details) {
            continue;
        }
        QTreeWidgetItem* section = addSection(details->section);
        for (const auto& [name, value] : details->rows) {
            addRow(section, name, value);
        }
        if (!details->bars.empty()) {
            auto* row = new QTreeWidgetItem(section, {details->barsLabel});
            row->setSizeHint(1, QSize(0, kBarChartHeight));
            m_tree->setItemWidget(row, 1, new MiniBarChart(std::move(details->bars), m_tree));
        }
    }
}

void InspectorPanel::fillQuantizer(int id) {
    const quantization::QuantizationState* state = m_document->quantization();
    const std::vector<quantization::QuantizerMark>& marks = m_document->quantizerMarks();
    const auto mark =
        std::find_if(marks.begin(), marks.end(),
                     [id](const quantization::QuantizerMark& m) { return m.id == id; });
    if (state == nullptr || mark == marks.end()) {
        m_title->setText(tr("Quantizer #%1 is not placed with the current settings.").arg(id));
        return;
    }
    m_title->setText(tr("Quantizer #%1 at %2").arg(id).arg(qs(mark->point.toString())));
    QTreeWidgetItem* general = addSection(tr("Quantizer"));
    addRow(general, tr("Insertion point"), qs(mark->point.toString()));
    addRow(general, tr("Kind"),
           mark->point.isWeight ? tr("weights")
           : mark->point.inputPortId
               ? tr("activation, input port %1 (pre-hook)").arg(*mark->point.inputPortId)
               : tr("activation, output (post-hook)"));
    addRow(general, tr("State"), stateText(*mark));
    // The row, the combo and the "(chosen)" candidate all name this point's own choice; a
    // merged quantizer runs with the config of the one that absorbed it, said on its own row.
    const auto own = state->choice.find(id);
    addRow(general, tr("Chosen config"),
           qs(own != state->choice.end() ? own->second.toString() : mark->config.toString()));
    if (mark->status == quantization::QuantizerStatus::Merged && mark->linkedTo &&
        (own == state->choice.end() || !(own->second == mark->config))) {
        addRow(general, tr("Effective config"),
               tr("%1 (of #%2, which absorbed this one)")
                   .arg(qs(mark->config.toString()))
                   .arg(*mark->linkedTo));
    }
    QStringList dependants;
    for (const quantization::QuantizerMark& other : marks) {
        if (other.linkedTo == id) {
            dependants
                << QStringLiteral("#%1 (%2)").arg(other.id).arg(qs(statusName(other.status)));
        }
    }
    if (!dependants.isEmpty()) {
        addRow(general, tr("Linked here"), dependants.join(QStringLiteral(", ")));
    }
    if (mark->unifiedGroup) {
        QStringList members;
        for (int member : state->setup.unifiedScaleGroups.at(*mark->unifiedGroup)) {
            members << QStringLiteral("#%1").arg(member);
        }
        addRow(general, tr("Unified-scale group"),
               QStringLiteral("%1: %2")
                   .arg(*mark->unifiedGroup)
                   .arg(members.join(QStringLiteral(", "))));
    }
    QTreeWidgetItem* ops = addSection(tr("Directly quantized ops"));
    for (const std::string& op : mark->directlyQuantized) {
        addRow(ops, qs(op), {});
    }
    const auto point = state->proposal.setup.quantizationPoints.find(id);
    if (point == state->proposal.setup.quantizationPoints.end()) {
        return;
    }
    QTreeWidgetItem* candidates = addSection(tr("Candidates"));
    const QSignalBlocker blocker(m_configs);
    const quantization::QuantizerConfig& chosen = state->choice.at(id);
    for (size_t i = 0; i < point->second.possibleConfigs.size(); ++i) {
        const quantization::QuantizerConfig& config = point->second.possibleConfigs[i];
        const QString text = qs(config.toString());
        addRow(candidates, QString::number(i + 1),
               config == chosen ? text + tr("  (chosen)") : text);
        m_configs->addItem(text);
        if (config == chosen) {
            m_configs->setCurrentIndex(static_cast<int>(i));
        }
    }
    const bool editable = mark->status != quantization::QuantizerStatus::Merged &&
                          point->second.possibleConfigs.size() > 1;
    m_configLabel->setVisible(true);
    m_configs->setVisible(true);
    m_configs->setEnabled(editable);
}

void InspectorPanel::chooseCandidate(int index) {
    const quantization::QuantizationState* state =
        m_document ? m_document->quantization() : nullptr;
    if (state == nullptr || m_quantizer < 0 || index < 0) {
        return;
    }
    const auto point = state->proposal.setup.quantizationPoints.find(m_quantizer);
    if (point == state->proposal.setup.quantizationPoints.end() ||
        static_cast<size_t>(index) >= point->second.possibleConfigs.size()) {
        return;
    }
    const quantization::QuantizerConfig& config =
        point->second.possibleConfigs[static_cast<size_t>(index)];
    if (!(state->choice.at(m_quantizer) == config)) {
        m_document->undoStack().push(
            new ChooseQuantizerConfigCommand(*m_document, m_quantizer, config));
    }
}

} // namespace qs::ui
