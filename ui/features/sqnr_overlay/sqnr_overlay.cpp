#include "ui/features/sqnr_overlay/sqnr_overlay.h"

#include "ui/features/calibration/calibration_state.h"
#include "ui/graph_document.h"
#include "ui/graph_page.h"
#include "ui/graph_scene.h"
#include "ui/graph_view.h"

#include <QLinearGradient>
#include <QPainter>
#include <QStyleOptionGraphicsItem>
#include <QTextOption>

#include <algorithm>
#include <cmath>

namespace qs::ui {

namespace {
constexpr double kRingGap = 3.5;
constexpr double kRingWidth = 3.0;
constexpr double kLabelWidth = 44;
constexpr double kLabelHeight = 12;
constexpr double kLabelLevelOfDetail = 0.45; // below this zoom the dB labels are unreadable
constexpr int kBaseToolTipKey = 0x5351;      // QGraphicsItem::data key of the badge's own tooltip
constexpr int kLegendMargin = 8;
constexpr int kLegendWidth = 190;
constexpr int kLegendHeight = 54;
constexpr int kLegendMessageHeight = 28;
constexpr int kTextPad = 6;

/// Where the dB label goes: left of an activation disc (its candidate count sits on the right),
/// right of a weight pill (which sits in the op's title bar, whose text is on the left).
QRectF labelRect(bool weight, const QRectF& ring) {
    return weight ? QRectF(ring.right() + 2, -kLabelHeight / 2, kLabelWidth, kLabelHeight)
                  : QRectF(ring.left() - kLabelWidth - 1, -kLabelHeight / 2, kLabelWidth,
                           kLabelHeight);
}

QRectF ringRect(bool weight) {
    return QuantizerBadgeItem::ringRect(weight, kRingGap);
}

} // namespace

SqnrHaloItem::SqnrHaloItem(QuantizerBadgeItem* badge, double sqnrDb)
    : QGraphicsItem(badge)
    , m_weight(badge->content().weight)
    , m_sqnrDb(sqnrDb) {
    setFlag(ItemStacksBehindParent);
    setAcceptedMouseButtons(Qt::NoButton); // clicks and hovers go to the badge
}

QColor SqnrHaloItem::color() const {
    return sqnrColor(m_sqnrDb);
}

QRectF SqnrHaloItem::boundingRect() const {
    const QRectF ring =
        ringRect(m_weight).adjusted(-kRingWidth, -kRingWidth, kRingWidth, kRingWidth);
    return ring.united(labelRect(m_weight, ringRect(m_weight)));
}

void SqnrHaloItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
    painter->setRenderHint(QPainter::Antialiasing);
    const QColor ring = color();
    painter->setPen(QPen(ring, kRingWidth));
    QuantizerBadgeItem::drawRing(*painter, m_weight, kRingGap);
    const QRectF rect = ringRect(m_weight);
    if (option->levelOfDetailFromTransform(painter->worldTransform()) < kLabelLevelOfDetail) {
        return;
    }
    const auto* graph = qobject_cast<const GraphScene*>(scene());
    QFont font = graph != nullptr ? graph->theme().detailFont : painter->font();
    font.setBold(true);
    painter->setFont(font);
    painter->setPen(ring.darker(125));
    const QString text =
        std::isfinite(m_sqnrDb) ? QString::number(m_sqnrDb, 'f', 0) : QStringLiteral("∞");
    const QTextOption align((m_weight ? Qt::AlignLeft : Qt::AlignRight) | Qt::AlignVCenter);
    painter->drawText(labelRect(m_weight, rect), text + QStringLiteral(" dB"), align);
}

SqnrLegend::SqnrLegend(QWidget* parent)
    : QWidget(parent) {
    setAttribute(Qt::WA_TransparentForMouseEvents);
    resize(sizeHint());
}

void SqnrLegend::setMessage(const QString& message) {
    m_message = message;
    resize(sizeHint());
    update();
}

QSize SqnrLegend::sizeHint() const {
    if (m_message.isEmpty()) {
        return {kLegendWidth, kLegendHeight};
    }
    return {std::max(kLegendWidth, fontMetrics().horizontalAdvance(m_message) + 2 * kTextPad),
            kLegendMessageHeight};
}

void SqnrLegend::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    const QRectF frame = QRectF(rect()).adjusted(0.5, 0.5, -0.5, -0.5);
    QColor background = palette().color(QPalette::Window);
    background.setAlpha(230);
    painter.setPen(palette().color(QPalette::Mid));
    painter.setBrush(background);
    painter.drawRoundedRect(frame, 4, 4);
    painter.setPen(palette().color(QPalette::WindowText));
    constexpr int kPad = kTextPad;
    constexpr int kTop = kPad / 2;
    if (!m_message.isEmpty()) {
        painter.drawText(rect().adjusted(kPad, 0, -kPad, 0), Qt::AlignVCenter | Qt::AlignLeft,
                         m_message);
        return;
    }
    const int line = fontMetrics().height();
    painter.drawText(QRect(kPad, kTop, width() - 2 * kPad, line), Qt::AlignLeft,
                     tr("SQNR vs float (dB)"));
    const QRectF bar(kPad, kTop + line + 2, width() - 2 * kPad, 10);
    QLinearGradient gradient(bar.topLeft(), bar.topRight());
    constexpr int kStops = 6;
    for (int i = 0; i <= kStops; ++i) {
        const double t = static_cast<double>(i) / kStops;
        gradient.setColorAt(t, sqnrColor(kSqnrLowDb + t * (kSqnrHighDb - kSqnrLowDb)));
    }
    painter.setPen(Qt::NoPen);
    painter.setBrush(gradient);
    painter.drawRect(bar);
    painter.setPen(palette().color(QPalette::WindowText));
    const QRect labels(kPad, static_cast<int>(bar.bottom()) + 1, width() - 2 * kPad, line);
    painter.drawText(labels, Qt::AlignLeft, QStringLiteral("≤%1").arg(kSqnrLowDb));
    painter.drawText(labels, Qt::AlignHCenter, QString::number((kSqnrLowDb + kSqnrHighDb) / 2));
    painter.drawText(labels, Qt::AlignRight, QStringLiteral("≥%1").arg(kSqnrHighDb));
}

SqnrOverlay::SqnrOverlay(GraphPage& page, QObject* parent)
    : QObject(parent)
    , m_page(page)
    , m_legend(new SqnrLegend(page.view())) {
    m_legend->move(kLegendMargin, kLegendMargin);
    m_legend->hide();
    connect(&page, &GraphPage::layoutFinished, this, &SqnrOverlay::refresh);
}

void SqnrOverlay::setDocument(GraphDocument* document) {
    disconnect(m_quantizationConnection);
    disconnect(m_calibrationConnection);
    m_document = document;
    if (document != nullptr) {
        // Queued: the page redraws the badges on the same signal, and the halos go on the new ones.
        m_quantizationConnection = connect(document, &GraphDocument::quantizationChanged, this,
                                           &SqnrOverlay::refresh, Qt::QueuedConnection);
        m_calibrationConnection = connect(
            document, &GraphDocument::stateChanged, this,
            [this](const QString& key) {
                if (key == kCalibrationKey) {
                    refresh();
                }
            },
            Qt::QueuedConnection);
    }
    refresh();
}

void SqnrOverlay::setEnabled(bool enabled) {
    m_enabled = enabled;
    refresh();
}

int SqnrOverlay::haloCount() const {
    int count = 0;
    for (const QuantizerBadgeItem* badge : m_page.scene()->badgeItems()) {
        for (const QGraphicsItem* child : badge->childItems()) {
            count += child->type() == SqnrHaloItem::Type ? 1 : 0;
        }
    }
    return count;
}

void SqnrOverlay::updateToolTips() {
    const CalibrationResult* calibration =
        m_document.isNull() ? nullptr : freshCalibration(*m_document);
    for (QuantizerBadgeItem* badge : m_page.scene()->badgeItems()) {
        if (!badge->data(kBaseToolTipKey).isValid()) {
            badge->setData(kBaseToolTipKey, badge->toolTip());
        }
        QString text = badge->data(kBaseToolTipKey).toString();
        const auto params = calibration == nullptr
                                ? quantization::QuantizerParametersMap::const_iterator{}
                                : calibration->parameters.find(badge->quantizerId());
        if (calibration != nullptr && params != calibration->parameters.end()) {
            text += QStringLiteral("\n\n") + parametersText(params->second);
            const auto error = calibration->report.quantizers.find(badge->quantizerId());
            if (error != calibration->report.quantizers.end()) {
                text += QLatin1Char('\n') + tr("SQNR %1 (own noise %2)")
                                                .arg(sqnrText(error->second.sqnrDb),
                                                     sqnrText(error->second.localSqnrDb));
            }
        }
        badge->setToolTip(text);
    }
}

void SqnrOverlay::refresh() {
    for (QuantizerBadgeItem* badge : m_page.scene()->badgeItems()) {
        const QList<QGraphicsItem*> children = badge->childItems();
        for (QGraphicsItem* child : children) {
            if (child->type() == SqnrHaloItem::Type) {
                delete child;
            }
        }
    }
    updateToolTips();
    m_legend->setVisible(m_enabled && !m_document.isNull());
    if (!m_enabled || m_document.isNull()) {
        return;
    }
    const CalibrationResult* calibration = freshCalibration(*m_document);
    if (calibration == nullptr) {
        m_legend->setMessage(isCalibrationStale(*m_document)
                                 ? tr("SQNR: calibration stale — recalibrate")
                                 : tr("SQNR: not calibrated yet"));
        return;
    }
    m_legend->setMessage({});
    for (QuantizerBadgeItem* badge : m_page.scene()->badgeItems()) {
        const auto error = calibration->report.quantizers.find(badge->quantizerId());
        if (error != calibration->report.quantizers.end() && !badge->content().merged) {
            new SqnrHaloItem(badge, error->second.sqnrDb);
        }
    }
}

} // namespace qs::ui
