#include "ui/bitwidth_chart_drawing.h"

#include <QBuffer>
#include <QFontMetricsF>
#include <QPainter>
#include <QSvgGenerator>

#include <algorithm>
#include <utility>

namespace qs::ui {

namespace {
constexpr double kTitle = 22;
constexpr double kGap = 14;
constexpr double kCountsPlot = 140;
constexpr double kShareRow = 20;
constexpr double kLegendRow = 16;
constexpr double kOpRow = 18;
constexpr double kLabelWidth = 96;

QString bitsLabel(int bits) {
    return bits > 0 ? QStringLiteral("%1-bit").arg(bits) : QStringLiteral("float");
}

QString percentText(double part, double whole) {
    return whole > 0 ? QStringLiteral("%1 %").arg(100.0 * part / whole, 0, 'f', 1)
                     : QStringLiteral("0 %");
}

/// Bit widths present, widest first.
std::vector<int> bitsDescending(const report::BitwidthBreakdown& breakdown) {
    std::vector<int> bits;
    for (const auto& [b, share] : breakdown.byBits) {
        bits.push_back(b);
    }
    std::sort(bits.begin(), bits.end(), std::greater<>());
    return bits;
}

/// White or black text, whichever reads on `fill`.
QColor textOn(const QColor& fill) {
    return fill.lightnessF() > 0.6 ? QColor(Qt::black) : QColor(Qt::white);
}
} // namespace

BitwidthChartDrawing::BitwidthChartDrawing(report::BitwidthBreakdown breakdown, GraphTheme theme,
                                           Panels panels)
    : m_breakdown(std::move(breakdown))
    , m_theme(std::move(theme))
    , m_panels(panels) {}

double BitwidthChartDrawing::heightFor(double width) {
    return layout(nullptr, width);
}

void BitwidthChartDrawing::paint(QPainter& painter, double width) {
    painter.save();
    painter.setRenderHint(QPainter::Antialiasing);
    layout(&painter, width);
    painter.restore();
}

std::optional<ChartHit> BitwidthChartDrawing::hitAt(QPointF point) const {
    for (const ChartHit& hit : m_hits) {
        if (hit.rect.contains(point)) {
            return hit;
        }
    }
    return std::nullopt;
}

double BitwidthChartDrawing::layout(QPainter* painter, double width) {
    m_hits.clear();
    double top = 4;
    if (m_panels != Panels::OpTypes) {
        top = countsPanel(painter, top, width) + kGap;
        top = sharesPanel(painter, top, width) + kGap;
    }
    if (m_panels != Panels::Distribution) {
        top = opTypesPanel(painter, top, width) + kGap;
    }
    return top;
}

double BitwidthChartDrawing::panelTitle(QPainter* painter, double top, double width,
                                        const QString& title) const {
    if (painter != nullptr) {
        QFont bold = painter->font();
        bold.setBold(true);
        painter->setFont(bold);
        painter->setPen(m_theme.text);
        painter->drawText(QRectF(0, top, width, kTitle), Qt::AlignLeft | Qt::AlignVCenter, title);
        bold.setBold(false);
        painter->setFont(bold);
    }
    return top + kTitle;
}

double BitwidthChartDrawing::countsPanel(QPainter* painter, double top, double width) {
    const std::vector<int> bits = bitsDescending(m_breakdown);
    top = panelTitle(painter, top, width, QObject::tr("Quantizers per bit width"));
    const double labelBand = 16; // count label above the tallest bar
    const double plotTop = top + labelBand;
    const double plotBottom = plotTop + kCountsPlot;
    int maximum = 1;
    int activations = 0;
    int weights = 0;
    for (const auto& [b, share] : m_breakdown.byBits) {
        maximum = std::max({maximum, share.activationQuantizers, share.weightQuantizers});
        activations += share.activationQuantizers;
        weights += share.weightQuantizers;
    }
    const size_t n = std::max<size_t>(bits.size(), 1);
    const double groupWidth = width / 2;
    const double barWidth = std::min(56.0, (groupWidth - 24) / static_cast<double>(n));
    for (const bool isWeight : {false, true}) {
        const double groupLeft = isWeight ? groupWidth : 0;
        const double barsWidth = barWidth * static_cast<double>(n);
        const double left = groupLeft + (groupWidth - barsWidth) / 2;
        const int total = isWeight ? weights : activations;
        for (size_t i = 0; i < bits.size(); ++i) {
            const report::BitwidthShare& share = m_breakdown.byBits.at(bits[i]);
            const int count = isWeight ? share.weightQuantizers : share.activationQuantizers;
            const double height = kCountsPlot * count / maximum;
            const QRectF bar(left + barWidth * static_cast<double>(i) + 3, plotBottom - height,
                             barWidth - 6, height);
            m_hits.push_back({.rect = bar.adjusted(0, -labelBand, 0, 0),
                              .bits = bits[i],
                              .weights = isWeight,
                              .opType = {}});
            if (painter == nullptr) {
                continue;
            }
            const QColor fill = m_theme.bitwidthColor(bits[i]);
            painter->fillRect(bar, fill);
            if (isWeight) { // weights also hatched, so the groups differ without colour
                painter->fillRect(bar, QBrush(textOn(fill), Qt::BDiagPattern));
            }
            painter->setPen(m_theme.text);
            painter->drawText(
                QRectF(bar.left() - 12, bar.top() - labelBand, bar.width() + 24, labelBand),
                Qt::AlignCenter,
                QStringLiteral("%1 (%2)").arg(count).arg(percentText(count, total)));
            painter->setPen(m_theme.secondaryText);
            painter->drawText(QRectF(bar.left() - 6, plotBottom + 2, bar.width() + 12, 14),
                              Qt::AlignCenter, bitsLabel(bits[i]));
        }
        if (painter != nullptr) {
            painter->setPen(m_theme.text);
            painter->drawText(QRectF(groupLeft, plotBottom + 16, groupWidth, 16), Qt::AlignCenter,
                              isWeight ? QObject::tr("Weights (%1)").arg(weights)
                                       : QObject::tr("Activations (%1)").arg(activations));
        }
    }
    if (painter != nullptr) {
        painter->setPen(m_theme.grid);
        painter->drawLine(QPointF(0, plotBottom), QPointF(width, plotBottom));
    }
    return plotBottom + 34;
}

double BitwidthChartDrawing::sharesPanel(QPainter* painter, double top, double width) {
    const std::vector<int> bits = bitsDescending(m_breakdown);
    top = panelTitle(painter, top, width, QObject::tr("Weight share per bit width"));
    int64_t parameters = 0;
    for (const auto& [b, share] : m_breakdown.byBits) {
        parameters += share.weightParameters;
    }
    const double bytes = static_cast<double>(m_breakdown.totalWeightBytes());
    const double bitOps = m_breakdown.totalBitOps();

    struct Row {
        QString name;
        double total;
        double (*value)(const report::BitwidthShare&);
    };

    const std::vector<Row> rows = {
        {QObject::tr("parameters"), static_cast<double>(parameters),
         [](const report::BitwidthShare& s) { return static_cast<double>(s.weightParameters); }},
        {QObject::tr("bytes"), bytes,
         [](const report::BitwidthShare& s) { return static_cast<double>(s.weightBytes); }},
        {QObject::tr("BitOps"), bitOps, [](const report::BitwidthShare& s) { return s.bitOps; }},
    };
    const double barLeft = kLabelWidth;
    const double barWidth = std::max(width - kLabelWidth - 8, 10.0);
    for (const Row& row : rows) {
        if (painter != nullptr) {
            painter->setPen(m_theme.text);
            painter->drawText(QRectF(0, top, kLabelWidth - 6, kShareRow - 4),
                              Qt::AlignRight | Qt::AlignVCenter, row.name);
            painter->fillRect(QRectF(barLeft, top, barWidth, kShareRow - 4), m_theme.grid);
        }
        double x = barLeft;
        for (const int b : bits) {
            const double value = row.value(m_breakdown.byBits.at(b));
            if (row.total <= 0 || value <= 0) {
                continue;
            }
            const QRectF segment(x, top, barWidth * value / row.total, kShareRow - 4);
            x = segment.right();
            m_hits.push_back({.rect = segment, .bits = b, .weights = true, .opType = {}});
            if (painter == nullptr) {
                continue;
            }
            const QColor fill = m_theme.bitwidthColor(b);
            painter->fillRect(segment, fill);
            const QString text = percentText(value, row.total);
            if (QFontMetricsF(painter->font()).horizontalAdvance(text) + 6 < segment.width()) {
                painter->setPen(textOn(fill));
                painter->drawText(segment, Qt::AlignCenter, text);
            }
        }
        top += kShareRow;
    }
    // The same shares written out per bit width: a thin segment's numbers stay readable.
    for (const int b : bits) {
        const report::BitwidthShare& share = m_breakdown.byBits.at(b);
        const QRectF line(barLeft, top, barWidth, kLegendRow);
        m_hits.push_back({.rect = line, .bits = b, .weights = true, .opType = {}});
        if (painter != nullptr) {
            painter->fillRect(QRectF(barLeft, top + 3, 10, 10), m_theme.bitwidthColor(b));
            painter->setPen(m_theme.text);
            painter->drawText(line.adjusted(16, 0, 0, 0), Qt::AlignLeft | Qt::AlignVCenter,
                              QObject::tr("%1: %2 of parameters, %3 of bytes, %4 of BitOps")
                                  .arg(bitsLabel(b),
                                       percentText(static_cast<double>(share.weightParameters),
                                                   static_cast<double>(parameters)),
                                       percentText(static_cast<double>(share.weightBytes), bytes),
                                       percentText(share.bitOps, bitOps)));
        }
        top += kLegendRow;
    }
    return top;
}

double BitwidthChartDrawing::opTypesPanel(QPainter* painter, double top, double width) {
    const std::vector<int> bits = bitsDescending(m_breakdown);
    top = panelTitle(painter, top, width, QObject::tr("Quantizers per op type"));
    std::vector<std::pair<std::string, int>> types;
    int maximum = 1;
    for (const auto& [type, counts] : m_breakdown.byOpType) {
        int total = 0;
        for (const auto& [b, count] : counts) {
            total += count;
        }
        types.emplace_back(type, total);
        maximum = std::max(maximum, total);
    }
    std::stable_sort(types.begin(), types.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    const double barLeft = kLabelWidth;
    const double barWidth = std::max(width - kLabelWidth - 40, 10.0);
    for (const auto& [type, total] : types) {
        const QString name = QString::fromStdString(type);
        if (painter != nullptr) {
            painter->setPen(m_theme.text);
            painter->drawText(QRectF(0, top, kLabelWidth - 6, kOpRow - 4),
                              Qt::AlignRight | Qt::AlignVCenter, name);
        }
        double x = barLeft;
        const std::map<int, int>& counts = m_breakdown.byOpType.at(type);
        for (const int b : bits) {
            const auto found = counts.find(b);
            if (found == counts.end() || found->second == 0) {
                continue;
            }
            const QRectF segment(x, top, barWidth * found->second / maximum, kOpRow - 4);
            x = segment.right();
            m_hits.push_back({.rect = segment, .bits = b, .weights = std::nullopt, .opType = name});
            if (painter == nullptr) {
                continue;
            }
            const QColor fill = m_theme.bitwidthColor(b);
            painter->fillRect(segment, fill);
            const QString text = QString::number(found->second);
            if (QFontMetricsF(painter->font()).horizontalAdvance(text) + 4 < segment.width()) {
                painter->setPen(textOn(fill));
                painter->drawText(segment, Qt::AlignCenter, text);
            }
        }
        if (painter != nullptr) {
            painter->setPen(m_theme.secondaryText);
            painter->drawText(QRectF(x + 4, top, 40, kOpRow - 4), Qt::AlignLeft | Qt::AlignVCenter,
                              QString::number(total));
        }
        top += kOpRow;
    }
    return top;
}

QByteArray bitwidthChartSvg(const report::BitwidthBreakdown& breakdown, const GraphTheme& theme,
                            BitwidthChartDrawing::Panels panels, double width) {
    BitwidthChartDrawing drawing(breakdown, theme, panels);
    const double height = drawing.heightFor(width);
    QBuffer buffer;
    buffer.open(QIODevice::WriteOnly);
    QSvgGenerator svg;
    svg.setOutputDevice(&buffer);
    svg.setSize(QSizeF(width, height).toSize());
    svg.setViewBox(QRectF(0, 0, width, height));
    svg.setTitle(panels == BitwidthChartDrawing::Panels::OpTypes
                     ? QStringLiteral("Quantizers per op type")
                     : QStringLiteral("Bit-width distribution"));
    QPainter painter(&svg);
    painter.fillRect(QRectF(0, 0, width, height), theme.background);
    drawing.paint(painter, width);
    painter.end();
    return buffer.data();
}

} // namespace qs::ui
