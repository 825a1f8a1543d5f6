#include "ui/bitwidth_chart.h"

#include "core/quantization/quantization_state.h"
#include "ui/graph_document.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QVBoxLayout>
#include <QValueAxis>

#include <set>

namespace qs::ui {

namespace {
QString bitsLabel(int bits) {
    return bits > 0 ? QStringLiteral("%1-bit").arg(bits) : QStringLiteral("float");
}

QChartView* makeView(QChart* chart, QWidget* parent) {
    chart->legend()->setAlignment(Qt::AlignBottom);
    chart->setAnimationOptions(QChart::NoAnimation);
    chart->setMargins(QMargins(4, 4, 4, 4));
    chart->setBackgroundRoundness(0);
    auto* view = new QChartView(chart, parent);
    view->setRenderHint(QPainter::Antialiasing);
    view->setMinimumHeight(180);
    return view;
}

/// Replaces `chart`'s series with one bar set per entry of `sets` over the `bits` categories.
template <typename Count>
QBarSeries* fill(QChart& chart, const std::set<int>& bits,
                 const std::vector<std::pair<QString, const std::map<int, Count>*>>& sets) {
    chart.removeAllSeries();
    for (QAbstractAxis* axis : chart.axes()) {
        chart.removeAxis(axis);
        delete axis;
    }
    auto* series = new QBarSeries(&chart);
    QStringList categories;
    for (int b : bits) {
        categories.push_back(bitsLabel(b));
    }
    double maximum = 1;
    for (const auto& [name, counts] : sets) {
        auto* set = new QBarSet(name, series);
        for (int b : bits) {
            auto found = counts->find(b);
            const double value = found == counts->end() ? 0.0 : static_cast<double>(found->second);
            set->append(value);
            maximum = std::max(maximum, value);
        }
        series->append(set);
    }
    chart.addSeries(series);
    auto* x = new QBarCategoryAxis(&chart);
    x->append(categories);
    auto* y = new QValueAxis(&chart);
    y->setRange(0, maximum * 1.1);
    y->setLabelFormat(QStringLiteral("%.0f"));
    y->applyNiceNumbers();
    chart.addAxis(x, Qt::AlignBottom);
    chart.addAxis(y, Qt::AlignLeft);
    series->attachAxis(x);
    series->attachAxis(y);
    return series;
}
} // namespace

BitwidthChartPanel::BitwidthChartPanel(QWidget* parent)
    : QWidget(parent)
    , m_quantizers(new QChart())
    , m_parameters(new QChart()) {
    m_quantizers->setTitle(tr("Quantizers per bit width"));
    m_parameters->setTitle(tr("Weight parameters per bit width"));
    auto* row = new QVBoxLayout(this);
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(makeView(m_quantizers, this));
    row->addWidget(makeView(m_parameters, this));
}

void BitwidthChartPanel::setDocument(GraphDocument* document) {
    disconnect(m_connection);
    m_document = document;
    if (document != nullptr) {
        m_connection = connect(document, &GraphDocument::quantizationChanged, this,
                               &BitwidthChartPanel::reload);
    }
    reload();
}

void BitwidthChartPanel::reload() {
    const quantization::QuantizationState* state =
        m_document.isNull() ? nullptr : m_document->quantization();
    quantization::BitwidthDistribution distribution;
    if (state != nullptr) {
        distribution = quantization::bitwidthDistribution(state->setup, m_document->graph());
    }
    std::set<int> bits;
    for (const auto* counts :
         {&distribution.activationQuantizers, &distribution.weightQuantizers}) {
        for (const auto& [b, count] : *counts) {
            bits.insert(b);
        }
    }
    std::vector<int> order(bits.begin(), bits.end());
    QBarSeries* counts = fill<int>(*m_quantizers, bits,
                                   {{tr("Activations"), &distribution.activationQuantizers},
                                    {tr("Weights"), &distribution.weightQuantizers}});
    std::set<int> weightBits;
    for (const auto& [b, count] : distribution.weightParameters) {
        weightBits.insert(b);
    }
    std::vector<int> weightOrder(weightBits.begin(), weightBits.end());
    QBarSeries* parameters = fill<int64_t>(
        *m_parameters, weightBits, {{tr("Weight parameters"), &distribution.weightParameters}});
    connect(counts, &QBarSeries::clicked, this, [this, order, counts](int index, QBarSet* set) {
        const int bits = order.at(static_cast<size_t>(index));
        Q_EMIT bitwidthClicked(bits);
        // The second set of the counts chart is the weights one.
        const bool weights = counts->barSets().size() > 1 && set == counts->barSets().at(1);
        Q_EMIT quantizersClicked(quantizersInBar(bits, weights));
    });
    connect(parameters, &QBarSeries::clicked, this, [this, weightOrder](int index, QBarSet*) {
        const int bits = weightOrder.at(static_cast<size_t>(index));
        Q_EMIT bitwidthClicked(bits);
        Q_EMIT quantizersClicked(quantizersInBar(bits, true));
    });
}

QList<int> BitwidthChartPanel::quantizersInBar(int bits, bool weights) const {
    const quantization::QuantizationState* state =
        m_document.isNull() ? nullptr : m_document->quantization();
    QList<int> ids;
    if (state == nullptr) {
        return ids;
    }
    for (const auto& [id, point] : state->setup.quantizationPoints) {
        if (point.qconfig.numBits == bits && point.insertionPoint.isWeight == weights) {
            ids.push_back(id);
        }
    }
    return ids;
}

} // namespace qs::ui
