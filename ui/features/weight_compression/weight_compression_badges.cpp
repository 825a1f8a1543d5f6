#include "ui/features/weight_compression/weight_compression_badges.h"

#include "ui/features/weight_compression/compression_plan_state.h"
#include "ui/graph_document.h"
#include "ui/graph_items.h"
#include "ui/graph_page.h"
#include "ui/graph_scene.h"
#include "ui/graph_theme.h"

#include <QPainter>

namespace qs::ui {

namespace {
constexpr double kPillWidth = 30;
constexpr double kPillHeight = 12;
constexpr double kInset = 4;

QString tooltipFor(const compression::WeightDecision& decision) {
    QString text = QStringLiteral("%1: %2").arg(
        QString::fromStdString(decision.valueName),
        QString::fromStdString(compression::decisionModeLabel(decision.mode, decision.groupSize)));
    if (!decision.note.empty()) {
        text += QStringLiteral("\n") + QString::fromStdString(decision.note);
    }
    return text;
}
} // namespace

WeightModeBadgeItem::WeightModeBadgeItem(compression::CompressionMode mode, const GraphTheme& theme,
                                         QGraphicsItem* parent)
    : QGraphicsObject(parent)
    , m_mode(mode)
    , m_theme(theme) {
    setZValue(5);
}

QRectF WeightModeBadgeItem::boundingRect() const {
    return QRectF(0, 0, kPillWidth, kPillHeight).adjusted(-1, -1, 1, 1);
}

QString WeightModeBadgeItem::label() const {
    if (m_mode == compression::CompressionMode::None) {
        return QStringLiteral("F32");
    }
    return QStringLiteral("INT%1").arg(compression::modeBits(m_mode));
}

QColor WeightModeBadgeItem::fillColor() const {
    return m_theme.bitwidthColor(
        m_mode == compression::CompressionMode::None ? 0 : compression::modeBits(m_mode));
}

void WeightModeBadgeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) {
    painter->setRenderHint(QPainter::Antialiasing);
    const QColor fill = fillColor();
    painter->setPen(QPen(fill.darker(150), 1.0));
    painter->setBrush(fill);
    const QRectF body(0, 0, kPillWidth, kPillHeight);
    painter->drawRoundedRect(body, kPillHeight / 2, kPillHeight / 2);
    // Symmetric modes get a white underline-free label; the label alone tells 4 from 8 bits.
    painter->setFont(m_theme.badgeFont);
    painter->setPen(Qt::white);
    painter->drawText(body, Qt::AlignCenter, label());
}

WeightCompressionOverlay::WeightCompressionOverlay(GraphPage& page, QObject* parent)
    : QObject(parent)
    , m_page(page) {
    connect(&page, &GraphPage::layoutFinished, this, [this](bool ok, const QString&) {
        m_badges.clear(); // populate() deleted them with the old scene items
        if (ok) {
            refresh();
        }
    });
}

void WeightCompressionOverlay::setDocument(GraphDocument* document) {
    disconnect(m_connection);
    clear();
    m_document = document;
    if (document != nullptr) {
        m_connection =
            connect(document, &GraphDocument::stateChanged, this, [this](const QString& key) {
                if (key == kWeightCompressionKey) {
                    refresh();
                }
            });
    }
}

void WeightCompressionOverlay::clear() {
    for (const QPointer<WeightModeBadgeItem>& badge : m_badges) {
        delete badge.data();
    }
    m_badges.clear();
}

std::vector<WeightModeBadgeItem*> WeightCompressionOverlay::badges() const {
    std::vector<WeightModeBadgeItem*> out;
    for (const QPointer<WeightModeBadgeItem>& badge : m_badges) {
        if (!badge.isNull()) {
            out.push_back(badge.data());
        }
    }
    return out;
}

void WeightCompressionOverlay::refresh() {
    clear();
    if (m_document.isNull() || m_page.isLayingOut() || m_page.document() != m_document.data()) {
        return;
    }
    const compression::CompressionPlan* plan = compressionPlan(*m_document);
    if (plan == nullptr) {
        return;
    }
    GraphScene& scene = *m_page.scene();
    const graph::Graph& graph = m_document->graph();
    for (const compression::WeightDecision& decision : plan->weights) {
        const auto node = graph.findNode(decision.nodeName);
        const auto box = node ? scene.boxIndex(*node) : std::nullopt;
        if (!box) {
            continue;
        }
        const QRectF area = scene.nodeItems()[*box]->sceneBox();
        auto* badge = new WeightModeBadgeItem(decision.mode, scene.theme());
        badge->setPos(area.left() + kInset, area.top() - kPillHeight / 2);
        badge->setToolTip(tooltipFor(decision));
        scene.addItem(badge);
        m_badges.emplace_back(badge);
    }
}

} // namespace qs::ui
