#include "ui/features/hessian/sensitivity_panel.h"

#include "ui/features/hessian/hessian_state.h"
#include "ui/features/hessian/sensitivity_overlay.h"
#include "ui/graph_document.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPushButton>
#include <QScrollArea>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace qs::ui {

namespace {
constexpr int kRowHeight = 18;
constexpr int kAxisHeight = 20;
constexpr int kNameWidth = 170;
constexpr int kValueWidth = 64;
constexpr int kPad = 6;
constexpr int kMinBarArea = 120;
} // namespace

SensitivityChart::SensitivityChart(QWidget* parent)
    : QWidget(parent) {
    setMouseTracking(false);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

void SensitivityChart::setBars(std::vector<Bar> bars) {
    std::stable_sort(bars.begin(), bars.end(),
                     [](const Bar& a, const Bar& b) { return a.score > b.score; });
    m_bars = std::move(bars);
    double low = std::numeric_limits<double>::infinity();
    double high = -low;
    for (const Bar& bar : m_bars) {
        if (bar.score > 0) {
            low = std::min(low, std::log10(bar.score));
            high = std::max(high, std::log10(bar.score));
        }
    }
    m_lowLog = std::isfinite(low) ? low : 0.0;
    m_highLog = std::isfinite(high) ? high : 0.0;
    m_lowDecade = std::isfinite(low) ? std::floor(low) : 0.0;
    m_highDecade = std::isfinite(high) ? std::ceil(high) : 1.0;
    if (m_highDecade <= m_lowDecade) {
        m_highDecade = m_lowDecade + 1;
    }
    setFixedHeight(sizeHint().height());
    updateGeometry();
    update();
}

void SensitivityChart::setHighlighted(const QString& node) {
    m_highlighted = node;
    update();
}

QSize SensitivityChart::sizeHint() const {
    return {kNameWidth + kMinBarArea + kValueWidth + 2 * kPad,
            kAxisHeight + static_cast<int>(m_bars.size()) * kRowHeight + kPad};
}

QRect SensitivityChart::rowRect(int index) const {
    return {0, kAxisHeight + index * kRowHeight, width(), kRowHeight};
}

int SensitivityChart::barAt(const QPoint& point) const {
    const int row = (point.y() - kAxisHeight) / kRowHeight;
    return point.y() >= kAxisHeight && row < static_cast<int>(m_bars.size()) ? row : -1;
}

void SensitivityChart::mousePressEvent(QMouseEvent* event) {
    const int index = barAt(event->position().toPoint());
    if (index >= 0) {
        setHighlighted(m_bars[static_cast<size_t>(index)].node);
        Q_EMIT barClicked(m_bars[static_cast<size_t>(index)].node);
    }
}

void SensitivityChart::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    const QFontMetrics metrics = fontMetrics();
    const int left = kPad + kNameWidth;
    const int right = std::max(left + kMinBarArea, width() - kPad - kValueWidth);
    const double span = m_highDecade - m_lowDecade;
    const auto xOf = [&](double log10Score) {
        return left + (right - left) * std::clamp((log10Score - m_lowDecade) / span, 0.0, 1.0);
    };
    // The log axis: one tick per decade.
    painter.setPen(palette().color(QPalette::Mid));
    for (double d = m_lowDecade; d <= m_highDecade + 1e-9; d += 1) {
        const double x = xOf(d);
        painter.drawLine(QPointF(x, kAxisHeight - 4), QPointF(x, height() - kPad));
        painter.setPen(palette().color(QPalette::WindowText));
        painter.drawText(QRectF(x - 24, 0, 48, kAxisHeight - 4), Qt::AlignCenter,
                         QStringLiteral("1e%1").arg(static_cast<int>(d)));
        painter.setPen(palette().color(QPalette::Mid));
    }
    for (size_t i = 0; i < m_bars.size(); ++i) {
        const Bar& bar = m_bars[i];
        const QRect row = rowRect(static_cast<int>(i));
        if (bar.node == m_highlighted) {
            painter.fillRect(row, palette().color(QPalette::Highlight).lighter(170));
        }
        painter.setPen(palette().color(QPalette::WindowText));
        painter.drawText(QRect(kPad, row.top(), kNameWidth - kPad, row.height()),
                         Qt::AlignVCenter | Qt::AlignRight,
                         metrics.elidedText(bar.node, Qt::ElideMiddle, kNameWidth - kPad));
        const double l = bar.score > 0 ? std::log10(bar.score) : m_lowDecade;
        const double t = m_highLog > m_lowLog ? (l - m_lowLog) / (m_highLog - m_lowLog) : 1.0;
        const QRectF box(left, row.top() + 3, std::max(1.0, xOf(l) - left), row.height() - 6);
        painter.setPen(Qt::NoPen);
        painter.setBrush(sensitivityColor(t));
        painter.drawRect(box);
        painter.setPen(palette().color(QPalette::WindowText));
        painter.drawText(QRect(right + 4, row.top(), kValueWidth, row.height()),
                         Qt::AlignVCenter | Qt::AlignLeft, QString::number(bar.score, 'g', 3));
    }
}

SensitivityPanel::SensitivityPanel(QWidget* parent)
    : QWidget(parent)
    , m_summary(new QLabel(this))
    , m_compute(new QPushButton(tr("Compute…"), this))
    , m_scroll(new QScrollArea(this))
    , m_chart(new SensitivityChart) {
    m_summary->setWordWrap(true);
    m_scroll->setWidget(m_chart);
    m_scroll->setWidgetResizable(true);
    m_scroll->setFrameShape(QFrame::NoFrame);
    auto* header = new QHBoxLayout;
    header->addWidget(m_summary, 1);
    header->addWidget(m_compute);
    auto* column = new QVBoxLayout(this);
    column->setContentsMargins(4, 4, 4, 4);
    column->addLayout(header);
    column->addWidget(m_scroll, 1);
    connect(m_compute, &QPushButton::clicked, this, &SensitivityPanel::computeRequested);
    refresh();
}

void SensitivityPanel::setDocument(GraphDocument* document) {
    disconnect(m_connection);
    m_document = document;
    if (document != nullptr) {
        m_connection =
            connect(document, &GraphDocument::stateChanged, this, [this](const QString& key) {
                if (key == kHessianKey) {
                    refresh();
                }
            });
    }
    refresh();
}

QString SensitivityPanel::summary() const {
    return m_summary->text();
}

void SensitivityPanel::refresh() {
    m_compute->setEnabled(!m_document.isNull());
    const SensitivityResult* result = m_document.isNull() ? nullptr : sensitivity(*m_document);
    if (result == nullptr) {
        m_summary->setText(m_document.isNull()
                               ? tr("Open a model to compute its Hessian scores.")
                               : tr("No Hessian scores yet: Quantize ▸ Compute Hessian Scores…"));
        m_chart->setBars({});
        return;
    }
    std::vector<SensitivityChart::Bar> bars;
    const graph::Graph& graph = m_document->graph();
    for (const hessian::HessianTargetScores& target : result->scores.targets) {
        const std::optional<graph::NodeId> node = graph.findNode(target.node);
        bars.push_back({QString::fromStdString(target.node),
                        node ? QString::fromStdString(graph.node(*node).opType) : QString(),
                        SensitivityResult::perTensorScore(target)});
    }
    m_chart->setBars(std::move(bars));
    QString text = tr("%1 ops · %2 · %3 samples, %4 iterations · %5 s")
                       .arg(result->scores.targets.size())
                       .arg(QString::fromStdString(result->dataset))
                       .arg(result->scores.sampleIndices.size())
                       .arg(result->scores.iterations)
                       .arg(result->seconds, 0, 'f', 1);
    if (isSensitivityStale(*m_document, *result)) {
        text = tr("Stale (the model or the dataset changed): ") + text;
    }
    m_summary->setText(text);
}

} // namespace qs::ui
