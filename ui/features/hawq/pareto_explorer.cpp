#include "ui/features/hawq/pareto_explorer.h"

#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QSlider>
#include <QTabWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace qs::ui {

namespace {

constexpr double kMargin = 36.0;
constexpr double kPickRadius = 6.0;
constexpr int kSliderSteps = 1000;

/// log10 of a metric, with zeros (exact 8-bit weights) put just below the smallest positive one.
double logMetric(double metric, double floor) {
    return std::log10(std::max(metric, floor));
}

/// NNCF's colours by bit width.
QColor bitsColour(int bits) {
    switch (bits) {
    case 2:
        return {128, 0, 128};
    case 4:
        return {220, 40, 40};
    case 6:
        return {240, 150, 30};
    case 8:
        return {40, 160, 60};
    default:
        return {120, 120, 120};
    }
}

double smallestPositive(const mixed_precision::HawqAnalysis& analysis) {
    double floor = std::numeric_limits<double>::max();
    for (const auto& candidate : analysis.candidates) {
        if (candidate.metric > 0.0) {
            floor = std::min(floor, candidate.metric);
        }
    }
    return floor == std::numeric_limits<double>::max() ? 1e-12 : floor / 10.0;
}

} // namespace

ParetoPlot::ParetoPlot(QWidget* parent)
    : QWidget(parent) {
    setMouseTracking(true);
    setMinimumSize(240, 160);
}

void ParetoPlot::setOutcome(std::shared_ptr<const mixed_precision::HawqOutcome> outcome,
                            size_t selected) {
    m_outcome = std::move(outcome);
    m_selected = selected;
    m_hover.reset();
    if (m_outcome) {
        const auto& candidates = m_outcome->analysis.candidates;
        const double floor = smallestPositive(m_outcome->analysis);
        m_minRatio = m_maxRatio = candidates.front().ratio;
        m_minLog = m_maxLog = logMetric(candidates.front().metric, floor);
        for (const auto& candidate : candidates) {
            m_minRatio = std::min(m_minRatio, candidate.ratio);
            m_maxRatio = std::max(m_maxRatio, candidate.ratio);
            m_minLog = std::min(m_minLog, logMetric(candidate.metric, floor));
            m_maxLog = std::max(m_maxLog, logMetric(candidate.metric, floor));
        }
        if (m_maxRatio - m_minRatio < 1e-9) {
            m_maxRatio = m_minRatio + 0.1;
        }
        if (m_maxLog - m_minLog < 1e-9) {
            m_maxLog = m_minLog + 1.0;
        }
    }
    update();
}

void ParetoPlot::setSelected(size_t selected) {
    m_selected = selected;
    update();
}

QRectF ParetoPlot::plotArea() const {
    return QRectF(rect()).adjusted(kMargin + 12, 10, -12, -kMargin);
}

QPointF ParetoPlot::pointOf(size_t index) const {
    const auto& candidate = m_outcome->analysis.candidates[index];
    const QRectF area = plotArea();
    const double floor = smallestPositive(m_outcome->analysis);
    const double x = (candidate.ratio - m_minRatio) / (m_maxRatio - m_minRatio);
    const double y = (logMetric(candidate.metric, floor) - m_minLog) / (m_maxLog - m_minLog);
    return {area.left() + x * area.width(), area.bottom() - y * area.height()};
}

std::optional<size_t> ParetoPlot::candidateAt(QPointF position) const {
    if (!m_outcome) {
        return std::nullopt;
    }
    std::optional<size_t> best;
    double bestDistance = kPickRadius * kPickRadius;
    for (size_t i = 0; i < m_outcome->analysis.candidates.size(); ++i) {
        const QPointF d = pointOf(i) - position;
        const double distance = d.x() * d.x() + d.y() * d.y();
        if (distance <= bestDistance) {
            bestDistance = distance;
            best = i;
        }
    }
    return best;
}

void ParetoPlot::paintEvent(QPaintEvent* /*event*/) {
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.fillRect(rect(), palette().base());
    const QRectF area = plotArea();
    painter.setPen(palette().color(QPalette::Text));
    painter.drawRect(area);
    if (!m_outcome) {
        painter.drawText(area, Qt::AlignCenter, tr("Run Quantize ▸ HAWQ… to see candidates"));
        return;
    }
    painter.drawText(QRectF(area.left(), area.bottom() + 4, area.width(), 16), Qt::AlignLeft,
                     QString::number(m_minRatio, 'f', 2));
    painter.drawText(QRectF(area.left(), area.bottom() + 4, area.width(), 16), Qt::AlignRight,
                     QString::number(m_maxRatio, 'f', 2));
    painter.drawText(QRectF(area.left(), area.bottom() + 18, area.width(), 16), Qt::AlignCenter,
                     tr("BitOps compression ratio"));
    painter.drawText(QRectF(0, area.top(), kMargin + 8, 16), Qt::AlignRight,
                     QStringLiteral("1e%1").arg(m_maxLog, 0, 'f', 1));
    painter.drawText(QRectF(0, area.bottom() - 16, kMargin + 8, 16), Qt::AlignRight,
                     QStringLiteral("1e%1").arg(m_minLog, 0, 'f', 1));
    painter.save();
    painter.translate(10, area.center().y());
    painter.rotate(-90);
    painter.drawText(QRectF(-60, -8, 120, 16), Qt::AlignCenter, tr("metric (log)"));
    painter.restore();

    const auto& analysis = m_outcome->analysis;
    painter.setPen(Qt::NoPen);
    painter.setBrush(QColor(130, 130, 130, 160));
    for (size_t i = 0; i < analysis.candidates.size(); ++i) {
        painter.drawEllipse(pointOf(i), 2.5, 2.5);
    }
    // The front, ratio descending: a line with its points in blue.
    QPainterPath front;
    for (size_t k = 0; k < analysis.pareto.size(); ++k) {
        const QPointF p = pointOf(analysis.pareto[k]);
        k == 0 ? front.moveTo(p) : front.lineTo(p);
    }
    painter.setBrush(Qt::NoBrush);
    painter.setPen(QPen(QColor(40, 90, 220), 1.5));
    painter.drawPath(front);
    painter.setPen(Qt::NoPen);
    painter.setBrush(QColor(40, 90, 220));
    for (const size_t i : analysis.pareto) {
        painter.drawEllipse(pointOf(i), 3.5, 3.5);
    }
    if (m_hover) {
        painter.setBrush(Qt::NoBrush);
        painter.setPen(QPen(palette().color(QPalette::Text), 1.5));
        painter.drawEllipse(pointOf(*m_hover), 6, 6);
    }
    painter.setBrush(QColor(220, 40, 40));
    painter.setPen(QPen(QColor(120, 0, 0), 1.5));
    painter.drawEllipse(pointOf(m_selected), 5.5, 5.5);
}

void ParetoPlot::mouseMoveEvent(QMouseEvent* event) {
    const std::optional<size_t> hover = candidateAt(event->position());
    if (hover != m_hover) {
        m_hover = hover;
        update();
        Q_EMIT hovered(hover);
    }
}

void ParetoPlot::leaveEvent(QEvent* event) {
    if (m_hover) {
        m_hover.reset();
        update();
        Q_EMIT hovered(std::nullopt);
    }
    QWidget::leaveEvent(event);
}

void ParetoPlot::mousePressEvent(QMouseEvent* event) {
    if (event->button() == Qt::LeftButton) {
        if (const std::optional<size_t> index = candidateAt(event->position())) {
            Q_EMIT clicked(*index);
        }
    }
}

TracesPlot::TracesPlot(QWidget* parent)
    : QWidget(parent) {
    setMinimumSize(240, 160);
}

void TracesPlot::setOutcome(std::shared_ptr<const mixed_precision::HawqOutcome> outcome,
                            size_t selected) {
    m_outcome = std::move(outcome);
    m_selected = selected;
    update();
}

void TracesPlot::paintEvent(QPaintEvent* /*event*/) {
    QPainter painter(this);
    painter.fillRect(rect(), palette().base());
    const QRectF area = QRectF(rect()).adjusted(kMargin + 12, 10, -12, -kMargin);
    painter.setPen(palette().color(QPalette::Text));
    painter.drawRect(area);
    if (!m_outcome) {
        return;
    }
    const auto& traces = m_outcome->analysis.avgTraces;
    const auto& bits = m_outcome->analysis.candidates[m_selected].weightBits;
    double low = std::numeric_limits<double>::max();
    double high = std::numeric_limits<double>::lowest();
    for (const double trace : traces) {
        if (trace > 0.0) {
            low = std::min(low, std::log10(trace));
            high = std::max(high, std::log10(trace));
        }
    }
    if (low > high) {
        return;
    }
    low -= 0.5;
    high = std::max(high, low + 1.0);
    const double width = area.width() / static_cast<double>(traces.size());
    for (size_t l = 0; l < traces.size(); ++l) {
        const double value = traces[l] > 0.0 ? std::log10(traces[l]) : low;
        const double h = (value - low) / (high - low) * area.height();
        painter.fillRect(
            QRectF(area.left() + l * width + 1, area.bottom() - h, std::max(1.0, width - 2), h),
            bitsColour(bits[l]));
    }
    painter.drawText(QRectF(0, area.top(), kMargin + 8, 16), Qt::AlignRight,
                     QStringLiteral("1e%1").arg(high, 0, 'f', 1));
    painter.drawText(QRectF(0, area.bottom() - 16, kMargin + 8, 16), Qt::AlignRight,
                     QStringLiteral("1e%1").arg(low, 0, 'f', 1));
    painter.drawText(QRectF(area.left(), area.bottom() + 4, area.width(), 16), Qt::AlignCenter,
                     tr("average trace per weight, by layer (colour: chosen bits)"));
}

ParetoExplorer::ParetoExplorer(QWidget* parent)
    : QWidget(parent)
    , m_tabs(new QTabWidget(this))
    , m_plot(new ParetoPlot)
    , m_traces(new TracesPlot)
    , m_slider(new QSlider(Qt::Horizontal))
    , m_summary(new QLabel) {
    auto* pareto = new QWidget;
    auto* paretoLayout = new QVBoxLayout(pareto);
    paretoLayout->addWidget(m_plot, 1);
    paretoLayout->addWidget(m_slider);
    paretoLayout->addWidget(m_summary);
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_slider->setRange(0, kSliderSteps);
    m_slider->setEnabled(false);
    m_slider->setToolTip(tr("Target compression ratio: re-selects without recomputing traces; "
                            "release to apply"));
    m_tabs->addTab(pareto, tr("Pareto"));
    m_tabs->addTab(m_traces, tr("Traces"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_tabs);
    connect(m_slider, &QSlider::valueChanged, this, &ParetoExplorer::onSlider);
    connect(m_slider, &QSlider::sliderReleased, this, [this] {
        Q_EMIT previewRequested(std::nullopt);
        Q_EMIT applyRequested(m_selected);
    });
    connect(m_plot, &ParetoPlot::hovered, this, [this](std::optional<size_t> index) {
        showSummary(index);
        Q_EMIT previewRequested(index);
    });
    connect(m_plot, &ParetoPlot::clicked, this, [this](size_t index) {
        m_selected = index;
        m_plot->setSelected(index);
        m_traces->setOutcome(m_outcome, index);
        showSummary(std::nullopt);
        Q_EMIT applyRequested(index);
    });
    showSummary(std::nullopt);
}

void ParetoExplorer::setOutcome(std::shared_ptr<const mixed_precision::HawqOutcome> outcome,
                                size_t selected) {
    m_outcome = std::move(outcome);
    m_selected = selected;
    m_plot->setOutcome(m_outcome, selected);
    m_traces->setOutcome(m_outcome, selected);
    m_slider->setEnabled(m_outcome != nullptr);
    if (m_outcome) {
        m_minRatio = m_maxRatio = m_outcome->analysis.candidates.front().ratio;
        for (const auto& candidate : m_outcome->analysis.candidates) {
            m_minRatio = std::min(m_minRatio, candidate.ratio);
            m_maxRatio = std::max(m_maxRatio, candidate.ratio);
        }
        const double span = std::max(m_maxRatio - m_minRatio, 1e-9);
        const double at = m_outcome->analysis.candidates[selected].ratio;
        const QSignalBlocker block(m_slider);
        m_slider->setValue(static_cast<int>(std::lround((at - m_minRatio) / span * kSliderSteps)));
    }
    showSummary(std::nullopt);
}

bool ParetoExplorer::setTargetRatio(double ratio) {
    if (!m_outcome) {
        return false;
    }
    const Result<size_t> chosen = mixed_precision::selectHawqCandidate(m_outcome->analysis, ratio);
    if (!chosen.ok()) {
        m_summary->setText(QString::fromStdString(chosen.error().message()));
        return false;
    }
    m_selected = *chosen;
    m_plot->setSelected(m_selected);
    m_traces->setOutcome(m_outcome, m_selected);
    showSummary(std::nullopt);
    return true;
}

void ParetoExplorer::setStale(bool stale) {
    m_stale = stale;
    showSummary(std::nullopt);
}

void ParetoExplorer::onSlider(int value) {
    const double ratio = m_minRatio + (m_maxRatio - m_minRatio) * value / kSliderSteps;
    if (setTargetRatio(ratio) && m_slider->isSliderDown()) {
        Q_EMIT previewRequested(m_selected); // a drag: previewed now, applied on release
    }
}

void ParetoExplorer::showSummary(std::optional<size_t> hovered) {
    if (!m_outcome) {
        m_summary->setText(tr("No HAWQ result yet."));
        return;
    }
    const size_t index = hovered.value_or(m_selected);
    const auto& candidate = m_outcome->analysis.candidates[index];
    QString bits;
    for (const int b : candidate.weightBits) {
        bits += (bits.isEmpty() ? QString() : QStringLiteral(", ")) + QString::number(b);
    }
    const QString stale =
        m_stale ? tr("Stale: the model changed since this HAWQ run — re-run Quantize ▸ HAWQ…. ")
                : QString();
    m_summary->setText(stale +
                       tr("%1 #%2: ratio %3, metric %4; weight bits [%5]. %6 candidates, %7 on "
                          "the front.")
                           .arg(hovered ? tr("Candidate") : tr("Chosen"))
                           .arg(index)
                           .arg(candidate.ratio, 0, 'f', 3)
                           .arg(candidate.metric, 0, 'g', 4)
                           .arg(bits)
                           .arg(m_outcome->analysis.candidates.size())
                           .arg(m_outcome->analysis.pareto.size()));
}

} // namespace qs::ui
