#include "ui/graph_items.h"

#include "ui/graph_theme.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QPainterPathStroker>
#include <QStyleOptionGraphicsItem>

namespace qs::ui {

namespace {
/// Below this zoom boxes are drawn as plain coloured blocks and ports are skipped.
constexpr double kTextLevelOfDetail = 0.35;
constexpr double kCornerRadius = 4;
constexpr double kPaddingX = 8;
constexpr double kHeaderPadding = 3;
constexpr double kHoverStrokeWidth = 8;
constexpr double kEdgeWidth = 1.2;
constexpr double kHighlightEdgeWidth = 2.2;
constexpr double kSearchHaloWidth = 5;

double levelOfDetail(const QPainter* painter) {
    return QStyleOptionGraphicsItem::levelOfDetailFromTransform(painter->worldTransform());
}

QColor highlightColor(Highlight highlight, const GraphTheme& theme, const QColor& fallback) {
    switch (highlight) {
    case Highlight::Input:
        return theme.inputHighlight;
    case Highlight::Output:
        return theme.outputHighlight;
    case Highlight::None:
        break;
    }
    return fallback;
}
} // namespace

NodeItem::NodeItem(Content content, const QRectF& box, uint32_t layoutIndex, graph::NodeId node,
                   const GraphTheme& theme)
    : m_content(std::move(content))
    , m_size(box.size())
    , m_layoutIndex(layoutIndex)
    , m_node(node)
    , m_theme(theme) {
    setPos(box.topLeft());
    setFlag(ItemIsSelectable);
    setToolTip(m_content.toolTip);
}

void NodeItem::setDetail(const QString& detail, const QString& toolTip) {
    m_content.detail = detail;
    m_content.toolTip = toolTip;
    setToolTip(toolTip);
    update();
}

QRectF NodeItem::boundingRect() const {
    const double margin = kSearchHaloWidth;
    return QRectF(QPointF(0, 0), m_size).adjusted(-margin, -margin, margin, margin);
}

void NodeItem::setHighlight(Highlight highlight) {
    if (m_highlight != highlight) {
        m_highlight = highlight;
        update();
    }
}

void NodeItem::setSearchMatch(bool match) {
    if (m_searchMatch != match) {
        m_searchMatch = match;
        update();
    }
}

void NodeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) {
    const QRectF box(QPointF(0, 0), m_size);
    QColor border =
        isSelected() ? m_theme.selection : highlightColor(m_highlight, m_theme, m_theme.nodeBorder);
    const bool emphasised = isSelected() || m_highlight != Highlight::None;
    if (levelOfDetail(painter) < kTextLevelOfDetail) {
        painter->fillRect(box, m_searchMatch  ? m_theme.searchMatch
                               : emphasised   ? border
                               : m_content.io ? m_theme.edge
                                              : m_theme.familyColor(m_content.opType));
        return;
    }
    painter->setRenderHint(QPainter::Antialiasing);
    if (m_searchMatch) {
        painter->setPen(QPen(m_theme.searchMatch, kSearchHaloWidth));
        painter->setBrush(Qt::NoBrush);
        painter->drawRoundedRect(box, kCornerRadius + 2, kCornerRadius + 2);
    }
    if (m_content.group) {
        // A stack of cards: this box stands for many.
        painter->setPen(QPen(m_theme.nodeBorder, 1.0));
        painter->setBrush(m_theme.nodeFill);
        painter->drawRoundedRect(box.translated(3, 3), kCornerRadius, kCornerRadius);
    }
    painter->setPen(QPen(border, emphasised ? 2.0 : 1.0));
    painter->setBrush(m_content.io ? m_theme.ioFill : m_theme.nodeFill);
    const double radius = m_content.io ? box.height() / 2 : kCornerRadius;
    painter->drawRoundedRect(box, radius, radius);
    paintBody(painter, box);
}

void NodeItem::paintBody(QPainter* painter, const QRectF& box) const {
    const QFontMetricsF title(m_theme.titleFont);
    const QFontMetricsF detail(m_theme.detailFont);
    const double headerHeight = title.height() + 2 * kHeaderPadding;
    QRectF textBox = box.adjusted(kPaddingX, 0, -kPaddingX, 0);
    if (m_content.io) {
        painter->setFont(m_theme.titleFont);
        painter->setPen(m_theme.secondaryText);
        // A value named like its kind ("input") reads once, not "input input".
        const QString line = m_content.name.compare(m_content.title, Qt::CaseInsensitive) == 0
                                 ? m_content.title
                                 : m_content.title + QLatin1Char(' ') + m_content.name;
        painter->drawText(textBox.adjusted(0, 2, 0, 0), Qt::AlignHCenter | Qt::AlignTop, line);
        painter->setFont(m_theme.detailFont);
        painter->setPen(m_theme.text);
        painter->drawText(textBox.adjusted(0, 0, 0, -3), Qt::AlignHCenter | Qt::AlignBottom,
                          m_content.detail);
        return;
    }
    // Header band in the op family's colour, clipped to the rounded box.
    QPainterPath outline;
    outline.addRoundedRect(box.adjusted(0.5, 0.5, -0.5, -0.5), kCornerRadius, kCornerRadius);
    QPainterPath header;
    header.addRect(QRectF(box.left(), box.top(), box.width(), headerHeight));
    painter->fillPath(outline.intersected(header), m_content.group
                                                       ? m_theme.secondaryText
                                                       : m_theme.familyColor(m_content.opType));
    painter->setFont(m_theme.titleFont);
    painter->setPen(Qt::white);
    painter->drawText(QRectF(textBox.left(), box.top(), textBox.width(), headerHeight),
                      Qt::AlignCenter, m_content.title);
    painter->setFont(m_theme.detailFont);
    painter->setPen(m_theme.secondaryText);
    const QRectF nameLine(textBox.left(), box.top() + headerHeight + 2, textBox.width(),
                          detail.height());
    painter->drawText(nameLine, Qt::AlignCenter, m_content.name);
    painter->setPen(m_theme.text);
    painter->drawText(nameLine.translated(0, detail.height()), Qt::AlignCenter, m_content.detail);
}

GroupFrameItem::GroupFrameItem(uint32_t group, const QString& title, const QRectF& box,
                               double headerHeight, int depth, const GraphTheme& theme)
    : m_group(group)
    , m_title(title)
    , m_size(box.size())
    , m_headerHeight(headerHeight)
    , m_depth(depth)
    , m_theme(theme) {
    setPos(box.topLeft());
    setZValue(-3 + 0.01 * depth); // behind edges and boxes; inner frames over outer ones
    setToolTip(title + QStringLiteral("\nDouble-click the header to collapse"));
}

QRectF GroupFrameItem::boundingRect() const {
    return {QPointF(0, 0), m_size};
}

bool GroupFrameItem::onHeader(const QPointF& scenePoint) const {
    const QPointF local = mapFromScene(scenePoint);
    return local.y() >= 0 && local.y() <= m_headerHeight && local.x() >= 0 &&
           local.x() <= m_size.width();
}

void GroupFrameItem::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) {
    const QRectF box(QPointF(0, 0), m_size);
    QColor fill = m_theme.secondaryText;
    fill.setAlpha(18 + 8 * (m_depth % 3));
    painter->setRenderHint(QPainter::Antialiasing);
    painter->setPen(QPen(m_theme.nodeBorder, 1.0, Qt::DashLine));
    painter->setBrush(fill);
    painter->drawRoundedRect(box, kCornerRadius * 2, kCornerRadius * 2);
    if (levelOfDetail(painter) < kTextLevelOfDetail) {
        return;
    }
    painter->setFont(m_theme.detailFont);
    painter->setPen(m_theme.secondaryText);
    painter->drawText(QRectF(kPaddingX, 0, m_size.width() - 2 * kPaddingX, m_headerHeight),
                      Qt::AlignLeft | Qt::AlignVCenter, QStringLiteral("\u25BE ") + m_title);
}

PortItem::PortItem(PortSide side, uint32_t port, bool weight, const GraphTheme& theme,
                   NodeItem* parent)
    : QGraphicsItem(parent)
    , m_side(side)
    , m_port(port)
    , m_weight(weight)
    , m_theme(theme) {}

QRectF PortItem::boundingRect() const {
    return {-kRadius - 1, -kRadius - 1, 2 * kRadius + 2, 2 * kRadius + 2};
}

void PortItem::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) {
    if (levelOfDetail(painter) < kTextLevelOfDetail) {
        return;
    }
    painter->setRenderHint(QPainter::Antialiasing);
    const QColor color = m_weight ? m_theme.weightPort : m_theme.port;
    painter->setPen(QPen(color, 1.2));
    // Outputs are filled, inputs hollow: the eye reads the flow direction from the ports.
    painter->setBrush(m_side == PortSide::Output ? QBrush(color) : QBrush(m_theme.nodeFill));
    painter->drawEllipse(QPointF(0, 0), kRadius, kRadius);
}

EdgeItem::EdgeItem(const QPainterPath& path, NodeItem* tail, NodeItem* head,
                   const GraphTheme& theme)
    : QGraphicsPathItem(path)
    , m_tail(tail)
    , m_head(head)
    , m_theme(theme) {
    setAcceptHoverEvents(true);
    setZValue(-1);
}

QPainterPath EdgeItem::shape() const {
    if (m_shape.isEmpty()) {
        QPainterPathStroker stroker;
        stroker.setWidth(kHoverStrokeWidth);
        m_shape = stroker.createStroke(path());
    }
    return m_shape;
}

void EdgeItem::setHighlight(Highlight highlight) {
    if (m_highlight != highlight) {
        m_highlight = highlight;
        update();
    }
}

void EdgeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) {
    const bool emphasised = m_hovered || m_highlight != Highlight::None;
    const QColor color =
        m_hovered ? m_theme.edgeHover : highlightColor(m_highlight, m_theme, m_theme.edge);
    painter->setRenderHint(QPainter::Antialiasing, levelOfDetail(painter) >= kTextLevelOfDetail);
    painter->setPen(QPen(color, emphasised ? kHighlightEdgeWidth : kEdgeWidth));
    painter->setBrush(Qt::NoBrush);
    painter->drawPath(path());
}

void EdgeItem::hoverEnterEvent(QGraphicsSceneHoverEvent* event) {
    m_hovered = true;
    update();
    QGraphicsPathItem::hoverEnterEvent(event);
}

void EdgeItem::hoverLeaveEvent(QGraphicsSceneHoverEvent* event) {
    m_hovered = false;
    update();
    QGraphicsPathItem::hoverLeaveEvent(event);
}

namespace {
constexpr double kBadgeRadius = 7;
constexpr double kWeightBadgeWidth = 22;
constexpr double kWeightBadgeHeight = 12;
constexpr double kGroupRingWidth = 2.2;
constexpr double kSelectionRingWidth = 2.5;
} // namespace

QuantizerBadgeItem::QuantizerBadgeItem(const Content& content, const GraphTheme& theme)
    : m_content(content)
    , m_theme(theme) {
    setZValue(m_content.merged ? 4 : 5);
    setAcceptHoverEvents(true);
    setFlag(ItemIsSelectable); // the inspector and the Bit Widths chart select badges
}

void QuantizerBadgeItem::setContent(const Content& content) {
    if (content == m_content) {
        return;
    }
    prepareGeometryChange(); // a weight badge and an activation disc differ in size
    m_content = content;
    setZValue(m_content.merged ? 4 : 5);
    update();
}

QRectF QuantizerBadgeItem::ringRect(bool weight, double gap) {
    return weight ? QRectF(-kWeightBadgeWidth / 2 - gap, -kWeightBadgeHeight / 2 - gap,
                           kWeightBadgeWidth + 2 * gap, kWeightBadgeHeight + 2 * gap)
                  : QRectF(-kBadgeRadius - gap, -kBadgeRadius - gap, 2 * (kBadgeRadius + gap),
                           2 * (kBadgeRadius + gap));
}

void QuantizerBadgeItem::drawRing(QPainter& painter, bool weight, double gap) {
    const QRectF rect = ringRect(weight, gap);
    painter.setBrush(Qt::NoBrush);
    if (weight) {
        painter.drawRoundedRect(rect, rect.height() / 2, rect.height() / 2);
    } else {
        painter.drawEllipse(rect);
    }
}

QRectF QuantizerBadgeItem::boundingRect() const {
    const double margin = kGroupRingWidth + kSelectionRingWidth + 2; // room for the rings
    if (m_content.weight) {
        return QRectF(-kWeightBadgeWidth / 2, -kWeightBadgeHeight / 2, kWeightBadgeWidth,
                      kWeightBadgeHeight)
            .adjusted(-margin, -margin, margin, margin);
    }
    // The candidate count sits to the right of the disc.
    return QRectF(-kBadgeRadius, -kBadgeRadius, 2 * kBadgeRadius + 14, 2 * kBadgeRadius)
        .adjusted(-margin, -margin, margin, margin);
}

QColor QuantizerBadgeItem::fillColor() const {
    return m_theme.bitwidthColor(m_previewBits.value_or(m_content.bits));
}

void QuantizerBadgeItem::setPreviewBits(std::optional<int> bits) {
    if (bits != m_previewBits) {
        m_previewBits = bits;
        update();
    }
}

QString QuantizerBadgeItem::label() const {
    if (m_content.requantizer && !m_previewBits) {
        return QStringLiteral("RQ");
    }
    const int shown = m_previewBits.value_or(m_content.bits);
    const QString bits = shown > 0 ? QString::number(shown) : QStringLiteral("F");
    return m_content.weight ? QStringLiteral("W") + bits : bits;
}

void QuantizerBadgeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) {
    painter->setRenderHint(QPainter::Antialiasing);
    QColor fill = fillColor();
    QPen pen(m_content.group ? GraphTheme::groupColor(*m_content.group) : fill.darker(150),
             m_content.group ? kGroupRingWidth : 1.0);
    if (m_content.merged) {
        fill.setAlpha(60);
        pen = QPen(m_theme.secondaryText, 1.0, Qt::DashLine);
    } else if (m_previewBits) {
        // A preview, not the setup: the new colour inside a dashed outline in the text colour.
        pen = QPen(m_theme.text, 1.6, Qt::DashLine);
    }
    painter->setPen(pen);
    painter->setBrush(fill);
    QRectF body(-kBadgeRadius, -kBadgeRadius, 2 * kBadgeRadius, 2 * kBadgeRadius);
    if (m_content.weight) {
        body = QRectF(-kWeightBadgeWidth / 2, -kWeightBadgeHeight / 2, kWeightBadgeWidth,
                      kWeightBadgeHeight);
        painter->drawRoundedRect(body, kWeightBadgeHeight / 2, kWeightBadgeHeight / 2);
    } else if (m_content.requantizer) {
        const double r = kBadgeRadius + 1.5;
        painter->drawPolygon(
            QPolygonF({QPointF(0, -r), QPointF(r, 0), QPointF(0, r), QPointF(-r, 0)}));
    } else {
        painter->drawEllipse(body);
    }
    if (isSelected()) {
        painter->setPen(QPen(m_theme.selection, kSelectionRingWidth));
        painter->setBrush(Qt::NoBrush);
        painter->drawRoundedRect(body.adjusted(-2.5, -2.5, 2.5, 2.5), kBadgeRadius + 2.5,
                                 kBadgeRadius + 2.5);
    }
    if (m_content.merged || levelOfDetail(painter) < kTextLevelOfDetail) {
        return; // a ghost carries no label (its config is the absorbing quantizer's); nor does
                // a badge too small to read
    }
    painter->setFont(m_theme.badgeFont);
    painter->setPen(Qt::white);
    painter->drawText(body, Qt::AlignCenter, label());
    if (m_content.candidates > 1 && !m_content.weight) {
        painter->setFont(m_theme.detailFont);
        painter->setPen(m_theme.secondaryText);
        painter->drawText(QRectF(kBadgeRadius + 1, -kBadgeRadius - 2, 14, kBadgeRadius),
                          Qt::AlignLeft | Qt::AlignVCenter,
                          QStringLiteral("%1").arg(m_content.candidates));
    }
}

} // namespace qs::ui
