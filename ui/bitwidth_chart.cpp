#include "ui/bitwidth_chart.h"

#include "core/quantization/quantization_state.h"
#include "ui/bitwidth_chart_drawing.h"
#include "ui/graph_document.h"
#include "ui/theme.h"

#include <QMouseEvent>
#include <QPaintEvent>
#include <QPainter>
#include <QResizeEvent>
#include <QScrollArea>
#include <QVBoxLayout>

#include <cmath>

namespace qs::ui {

BitwidthChartCanvas::BitwidthChartCanvas(QWidget* parent)
    : QWidget(parent)
    , m_theme(graphThemeFor(palette().color(QPalette::Window).lightness() < 128))
    , m_drawing(std::make_unique<BitwidthChartDrawing>(m_breakdown, m_theme)) {
    setMinimumWidth(320);
    relayout();
}

BitwidthChartCanvas::~BitwidthChartCanvas() = default;

void BitwidthChartCanvas::setBreakdown(const report::BitwidthBreakdown& breakdown) {
    m_breakdown = breakdown;
    m_drawing = std::make_unique<BitwidthChartDrawing>(m_breakdown, m_theme);
    relayout();
    update();
}

void BitwidthChartCanvas::setTheme(const GraphTheme& theme) {
    m_theme = theme;
    setBreakdown(m_breakdown);
}

void BitwidthChartCanvas::relayout() {
    const int height = static_cast<int>(std::ceil(m_drawing->heightFor(width())));
    setMinimumHeight(height);
}

std::optional<ChartHit> BitwidthChartCanvas::hitAt(QPointF point) const {
    return m_drawing->hitAt(point);
}

std::optional<QPointF> BitwidthChartCanvas::barCenter(int bits, bool weights) const {
    for (const ChartHit& hit : m_drawing->hits()) {
        if (hit.bits == bits && hit.weights == weights && hit.opType.isEmpty()) {
            return hit.rect.center();
        }
    }
    return std::nullopt;
}

QSize BitwidthChartCanvas::sizeHint() const {
    return {420, minimumHeight()};
}

void BitwidthChartCanvas::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    m_drawing->paint(painter, width());
}

void BitwidthChartCanvas::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton) {
        return;
    }
    if (const std::optional<ChartHit> hit = hitAt(event->position())) {
        Q_EMIT hitClicked(*hit);
    }
}

void BitwidthChartCanvas::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    relayout();
}

BitwidthChartPanel::BitwidthChartPanel(QWidget* parent)
    : QWidget(parent)
    , m_canvas(new BitwidthChartCanvas()) {
    auto* scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidget(m_canvas);
    auto* column = new QVBoxLayout(this);
    column->setContentsMargins(0, 0, 0, 0);
    column->addWidget(scroll);
    connect(m_canvas, &BitwidthChartCanvas::hitClicked, this, &BitwidthChartPanel::activate);
}

void BitwidthChartPanel::setTheme(const GraphTheme& theme) {
    m_canvas->setTheme(theme);
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
    m_breakdown = state == nullptr ? report::BitwidthBreakdown{}
                                   : report::bitwidthBreakdown(state->setup, m_document->graph());
    m_canvas->setBreakdown(m_breakdown);
}

void BitwidthChartPanel::activate(const ChartHit& hit) {
    Q_EMIT bitwidthClicked(hit.bits);
    QList<int> ids;
    if (!hit.opType.isEmpty()) {
        const auto type = m_breakdown.opTypeIds.find(hit.opType.toStdString());
        if (type != m_breakdown.opTypeIds.end()) {
            if (const auto found = type->second.find(hit.bits); found != type->second.end()) {
                ids = QList<int>(found->second.begin(), found->second.end());
            }
        }
    } else if (hit.weights) {
        ids = quantizersInBar(hit.bits, *hit.weights);
    } else {
        ids = quantizersInBar(hit.bits, false) + quantizersInBar(hit.bits, true);
    }
    Q_EMIT quantizersClicked(ids);
}

QList<int> BitwidthChartPanel::quantizersInBar(int bits, bool weights) const {
    const auto found = m_breakdown.ids.find({bits, weights});
    return found == m_breakdown.ids.end() ? QList<int>()
                                          : QList<int>(found->second.begin(), found->second.end());
}

} // namespace qs::ui
