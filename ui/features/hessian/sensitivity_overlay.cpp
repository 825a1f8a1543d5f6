#include "ui/features/hessian/sensitivity_overlay.h"

#include "ui/features/hessian/hessian_state.h"
#include "ui/graph_document.h"
#include "ui/graph_items.h"
#include "ui/graph_page.h"
#include "ui/graph_scene.h"
#include "ui/graph_view.h"

#include <QEvent>
#include <QLinearGradient>
#include <QPainter>
#include <QStyleOptionGraphicsItem>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace qs::ui {

namespace {
constexpr double kFrameGap = 3.0;
constexpr double kFrameWidth = 4.0;
constexpr double kLabelWidth = 46;
constexpr double kLabelHeight = 14;
constexpr double kLabelLevelOfDetail = 0.45;
constexpr int kLegendMargin = 8;
constexpr int kLegendWidth = 210;
constexpr int kLegendHeight = 54;
constexpr int kLegendMessageHeight = 28;
constexpr int kTextPad = 6;

/// Matplotlib's "plasma" at five stops: dark blue-purple, purple, pink, orange, yellow.
constexpr std::array<std::array<int, 3>, 5> kRamp{
    {{13, 8, 135}, {126, 3, 168}, {204, 71, 120}, {248, 149, 64}, {240, 249, 33}}};

QRectF frameRect(const QRectF& box) {
    return box.adjusted(-kFrameGap, -kFrameGap, kFrameGap, kFrameGap);
}

/// Above the box's right end, outside the frame.
QRectF labelRect(const QRectF& box) {
    const QRectF frame = frameRect(box);
    return {frame.right() - kLabelWidth, frame.top() - kLabelHeight - 1, kLabelWidth, kLabelHeight};
}
} // namespace

QColor sensitivityColor(double t) {
    t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0);
    const double x = t * static_cast<double>(kRamp.size() - 1);
    const auto i = std::min(static_cast<size_t>(x), kRamp.size() - 2);
    const double f = x - static_cast<double>(i);
    const auto mix = [&](size_t c) {
        return static_cast<int>(std::lround(kRamp[i][c] + f * (kRamp[i + 1][c] - kRamp[i][c])));
    };
    return {mix(0), mix(1), mix(2)};
}

SensitivityHaloItem::SensitivityHaloItem(NodeItem* node, double log10Score, double t)
    : QGraphicsItem(node)
    , m_box(QPointF(0, 0), node->sceneBox().size())
    , m_log10(log10Score)
    , m_t(t) {
    setFlag(ItemStacksBehindParent);
    setAcceptedMouseButtons(Qt::NoButton); // clicks go to the op box
}

QRectF SensitivityHaloItem::boundingRect() const {
    const QRectF frame =
        frameRect(m_box).adjusted(-kFrameWidth, -kFrameWidth, kFrameWidth, kFrameWidth);
    return frame.united(labelRect(m_box));
}

void SensitivityHaloItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option,
                                QWidget*) {
    painter->setRenderHint(QPainter::Antialiasing);
    const QColor ring = color();
    painter->setPen(QPen(ring, kFrameWidth));
    painter->setBrush(Qt::NoBrush);
    painter->drawRoundedRect(frameRect(m_box), 6, 6);
    if (option->levelOfDetailFromTransform(painter->worldTransform()) < kLabelLevelOfDetail) {
        return;
    }
    const QRectF label = labelRect(m_box);
    painter->setPen(Qt::NoPen);
    painter->setBrush(ring);
    painter->drawRoundedRect(label, 3, 3);
    const auto* graph = qobject_cast<const GraphScene*>(scene());
    QFont font = graph != nullptr ? graph->theme().detailFont : painter->font();
    font.setBold(true);
    painter->setFont(font);
    painter->setPen(m_t > 0.6 ? QColor(Qt::black) : QColor(Qt::white));
    const QString text = std::isfinite(m_log10) ? QStringLiteral("1e%1").arg(m_log10, 0, 'f', 1)
                                                : QStringLiteral("0");
    painter->drawText(label, Qt::AlignCenter, text);
}

SensitivityLegend::SensitivityLegend(QWidget* parent)
    : QWidget(parent) {
    setAttribute(Qt::WA_TransparentForMouseEvents);
    resize(sizeHint());
}

void SensitivityLegend::setRange(double low, double high) {
    m_low = low;
    m_high = high;
    update();
}

void SensitivityLegend::setMessage(const QString& message) {
    m_message = message;
    resize(sizeHint());
    update();
}

QSize SensitivityLegend::sizeHint() const {
    if (m_message.isEmpty()) {
        return {kLegendWidth, kLegendHeight};
    }
    return {std::max(kLegendWidth, fontMetrics().horizontalAdvance(m_message) + 2 * kTextPad),
            kLegendMessageHeight};
}

void SensitivityLegend::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    QColor background = palette().color(QPalette::Window);
    background.setAlpha(230);
    painter.setPen(palette().color(QPalette::Mid));
    painter.setBrush(background);
    painter.drawRoundedRect(QRectF(rect()).adjusted(0.5, 0.5, -0.5, -0.5), 4, 4);
    painter.setPen(palette().color(QPalette::WindowText));
    if (!m_message.isEmpty()) {
        painter.drawText(rect().adjusted(kTextPad, 0, -kTextPad, 0),
                         Qt::AlignVCenter | Qt::AlignLeft, m_message);
        return;
    }
    const int line = fontMetrics().height();
    constexpr int kTop = kTextPad / 2;
    painter.drawText(QRect(kTextPad, kTop, width() - 2 * kTextPad, line), Qt::AlignLeft,
                     tr("Hessian trace, log10"));
    const QRectF bar(kTextPad, kTop + line + 2, width() - 2 * kTextPad, 10);
    QLinearGradient gradient(bar.topLeft(), bar.topRight());
    constexpr int kStops = 8;
    for (int i = 0; i <= kStops; ++i) {
        const double t = static_cast<double>(i) / kStops;
        gradient.setColorAt(t, sensitivityColor(t));
    }
    painter.setPen(Qt::NoPen);
    painter.setBrush(gradient);
    painter.drawRect(bar);
    painter.setPen(palette().color(QPalette::WindowText));
    const QRect labels(kTextPad, static_cast<int>(bar.bottom()) + 1, width() - 2 * kTextPad, line);
    painter.drawText(labels, Qt::AlignLeft, QString::number(m_low, 'f', 1));
    painter.drawText(labels, Qt::AlignHCenter, QString::number((m_low + m_high) / 2, 'f', 1));
    painter.drawText(labels, Qt::AlignRight, QString::number(m_high, 'f', 1));
}

SensitivityOverlay::SensitivityOverlay(GraphPage& page, QObject* parent)
    : QObject(parent)
    , m_page(page)
    , m_legend(new SensitivityLegend(page.view())) {
    m_legend->hide();
    page.view()->installEventFilter(this);
    connect(&page, &GraphPage::layoutFinished, this, &SensitivityOverlay::refresh);
}

bool SensitivityOverlay::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() == QEvent::Resize) {
        placeLegend();
    }
    return QObject::eventFilter(watched, event);
}

void SensitivityOverlay::placeLegend() {
    const QWidget* view = m_page.view();
    m_legend->move(std::max(kLegendMargin, view->width() - m_legend->width() - kLegendMargin - 16),
                   kLegendMargin);
}

void SensitivityOverlay::setDocument(GraphDocument* document) {
    disconnect(m_stateConnection);
    m_document = document;
    if (document != nullptr) {
        m_stateConnection = connect(
            document, &GraphDocument::stateChanged, this,
            [this](const QString& key) {
                if (key == kHessianKey) {
                    refresh();
                }
            },
            Qt::QueuedConnection);
    }
    refresh();
}

void SensitivityOverlay::setEnabled(bool enabled) {
    m_enabled = enabled;
    refresh();
}

int SensitivityOverlay::haloCount() const {
    int count = 0;
    for (const NodeItem* node : m_page.scene()->nodeItems()) {
        for (const QGraphicsItem* child : node->childItems()) {
            count += child->type() == SensitivityHaloItem::Type ? 1 : 0;
        }
    }
    return count;
}

const SensitivityHaloItem* SensitivityOverlay::halo(const QString& nodeName) const {
    for (const NodeItem* node : m_page.scene()->nodeItems()) {
        if (node->content().io || node->group() || node->content().fullName != nodeName) {
            continue;
        }
        for (const QGraphicsItem* child : node->childItems()) {
            if (child->type() == SensitivityHaloItem::Type) {
                return static_cast<const SensitivityHaloItem*>(child);
            }
        }
    }
    return nullptr;
}

void SensitivityOverlay::refresh() {
    for (NodeItem* node : m_page.scene()->nodeItems()) {
        const QList<QGraphicsItem*> children = node->childItems();
        for (QGraphicsItem* child : children) {
            if (child->type() == SensitivityHaloItem::Type) {
                delete child;
            }
        }
    }
    m_legend->setVisible(m_enabled && !m_document.isNull());
    if (!m_enabled || m_document.isNull()) {
        return;
    }
    const SensitivityResult* result = sensitivity(*m_document);
    if (result == nullptr) {
        m_legend->setMessage(tr("Sensitivity: no Hessian scores yet (Quantize ▸ Compute "
                                "Hessian Scores…)"));
        placeLegend();
        return;
    }
    if (isSensitivityStale(*m_document, *result)) {
        m_legend->setMessage(tr("Sensitivity: scores stale (model or dataset changed) — "
                                "recompute"));
        placeLegend();
        return;
    }
    std::map<std::string, double> logs;
    double low = std::numeric_limits<double>::infinity();
    double high = -low;
    for (const hessian::HessianTargetScores& target : result->scores.targets) {
        const double score = SensitivityResult::perTensorScore(target);
        const double l = score > 0 ? std::log10(score) : -std::numeric_limits<double>::infinity();
        logs[target.node] = l;
        if (std::isfinite(l)) {
            low = std::min(low, l);
            high = std::max(high, l);
        }
    }
    if (!std::isfinite(low)) {
        low = high = 0.0;
    }
    m_legend->setMessage({});
    m_legend->setRange(low, high);
    placeLegend();
    for (NodeItem* node : m_page.scene()->nodeItems()) {
        if (node->content().io || node->group()) {
            continue;
        }
        const auto found = logs.find(node->content().fullName.toStdString());
        if (found == logs.end()) {
            continue;
        }
        const double t = high > low ? (found->second - low) / (high - low) : 1.0;
        new SensitivityHaloItem(node, found->second, t);
    }
}

} // namespace qs::ui
