#include "ui/features/pruning/pruning_overlay.h"

#include "ui/features/pruning/pruning_state.h"
#include "ui/graph_document.h"
#include "ui/graph_items.h"
#include "ui/graph_page.h"
#include "ui/graph_scene.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QStyleOptionGraphicsItem>

#include <array>

namespace qs::ui {

namespace {
constexpr double kTintMargin = 5.0;
constexpr double kRingWidth = 2.5;
constexpr double kBarGap = 3.0;
constexpr double kBarHeight = 6.0;
constexpr double kLabelHeight = 14.0;
constexpr double kMarkSize = 11.0;
constexpr double kLabelLevelOfDetail = 0.45;
constexpr int kTintAlpha = 70;

/// Distinct, mid-saturation hues (Tableau 10 without its grey), so neighbouring sections differ
/// and none reads as a bit-width colour at the tint's low alpha.
constexpr std::array<std::array<int, 3>, 9> kSectionColors{{{78, 121, 167},
                                                            {242, 142, 43},
                                                            {89, 161, 79},
                                                            {225, 87, 89},
                                                            {118, 183, 178},
                                                            {237, 201, 72},
                                                            {176, 122, 161},
                                                            {255, 157, 167},
                                                            {156, 117, 95}}};

const GraphTheme* sceneTheme(const QGraphicsItem* item) {
    const auto* scene = qobject_cast<const GraphScene*>(item->scene());
    return scene == nullptr ? nullptr : &scene->theme();
}

QString qs(const std::string& text) {
    return QString::fromStdString(text);
}
} // namespace

QColor pruningSectionColor(int section) {
    const auto& c =
        kSectionColors[static_cast<size_t>(section < 0 ? 0 : section) % kSectionColors.size()];
    return {c[0], c[1], c[2]};
}

PruningTintItem::PruningTintItem(NodeItem* node, int section, const QColor& fill,
                                 std::optional<QColor> exitRing)
    : QGraphicsItem(node)
    , m_box(QPointF(0, 0), node->sceneBox().size())
    , m_section(section)
    , m_fill(fill)
    , m_exitRing(exitRing) {
    setFlag(ItemStacksBehindParent);
    setAcceptedMouseButtons(Qt::NoButton);
}

QRectF PruningTintItem::boundingRect() const {
    const double m = kTintMargin + kRingWidth;
    return m_box.adjusted(-m, -m, m, m);
}

void PruningTintItem::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) {
    painter->setRenderHint(QPainter::Antialiasing);
    QColor fill = m_fill;
    fill.setAlpha(kTintAlpha);
    const QRectF tint = m_box.adjusted(-kTintMargin, -kTintMargin, kTintMargin, kTintMargin);
    painter->setPen(m_exitRing ? QPen(*m_exitRing, kRingWidth) : QPen(m_fill, 1.0));
    painter->setBrush(fill);
    painter->drawRoundedRect(tint, 7, 7);
}

PruningEntryItem::PruningEntryItem(NodeItem* node, int section, int64_t channels, int64_t kept,
                                   const QColor& color, bool constrained)
    : QGraphicsItem(node)
    , m_box(QPointF(0, 0), node->sceneBox().size())
    , m_section(section)
    , m_channels(channels)
    , m_kept(kept)
    , m_color(color)
    , m_constrained(constrained) {
    setAcceptedMouseButtons(Qt::NoButton);
    setZValue(1);
}

QString PruningEntryItem::label() const {
    return QStringLiteral("%1 → %2").arg(m_channels).arg(m_kept);
}

double PruningEntryItem::keptFraction() const {
    return m_channels > 0 ? static_cast<double>(m_kept) / static_cast<double>(m_channels) : 1.0;
}

QRectF PruningEntryItem::boundingRect() const {
    return {m_box.left() - 1, m_box.bottom(), m_box.width() + 2,
            kBarGap + kBarHeight + kLabelHeight + 2};
}

void PruningEntryItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
    painter->setRenderHint(QPainter::Antialiasing);
    const GraphTheme* theme = sceneTheme(this);
    const QRectF bar(m_box.left(), m_box.bottom() + kBarGap, m_box.width(), kBarHeight);
    // The whole bar is the dense channel count: pruned channels a light track, kept ones the
    // section's colour, outlined so the track reads on a tinted or group-framed background.
    const QColor outline = theme != nullptr ? theme->secondaryText : QColor(Qt::gray);
    painter->setPen(QPen(outline, 0.8));
    painter->setBrush(theme != nullptr ? theme->nodeFill : QColor(Qt::white));
    painter->drawRoundedRect(bar, 2, 2);
    QRectF kept = bar;
    kept.setWidth(bar.width() * keptFraction());
    painter->setPen(Qt::NoPen);
    painter->setBrush(m_color.darker(125));
    painter->drawRoundedRect(kept, 2, 2);
    if (option->levelOfDetailFromTransform(painter->worldTransform()) < kLabelLevelOfDetail) {
        return;
    }
    const QRectF text(m_box.left(), bar.bottom() + 1, m_box.width(), kLabelHeight);
    QFont font = theme != nullptr ? theme->detailFont : painter->font();
    font.setBold(true);
    painter->setFont(font);
    painter->setPen(theme != nullptr ? theme->text : QColor(Qt::black));
    // Right of the centre, where the output edge leaves the box.
    const QString shown = m_constrained ? label() + QStringLiteral(" ✎") : label();
    painter->drawText(text, Qt::AlignRight | Qt::AlignVCenter, shown);
}

NotPrunableItem::NotPrunableItem(NodeItem* node, const QString& reason)
    : QGraphicsItem(node)
    , m_reason(reason) {
    // On the header band's left end: the name and shape lines below stay readable.
    setPos(4, 4);
    setToolTip(QObject::tr("Not prunable: %1").arg(reason));
    setZValue(1);
}

QRectF NotPrunableItem::boundingRect() const {
    return {0, 0, kMarkSize, kMarkSize};
}

void NotPrunableItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
    if (option->levelOfDetailFromTransform(painter->worldTransform()) < kLabelLevelOfDetail) {
        return;
    }
    painter->setRenderHint(QPainter::Antialiasing);
    painter->setPen(QPen(QColor(255, 255, 255, 220), 1.4));
    painter->setBrush(Qt::NoBrush);
    const QRectF circle = boundingRect().adjusted(1, 1, -1, -1);
    painter->drawEllipse(circle);
    // The slash of a "no entry" sign.
    const double inset = circle.width() * 0.15;
    painter->drawLine(QPointF(circle.left() + inset, circle.bottom() - inset),
                      QPointF(circle.right() - inset, circle.top() + inset));
}

PruningOverlay::PruningOverlay(GraphPage& page, QObject* parent)
    : QObject(parent)
    , m_page(page) {
    connect(&page, &GraphPage::layoutFinished, this, [this](bool ok) {
        if (ok) {
            refresh();
        }
    });
}

void PruningOverlay::setDocument(GraphDocument* document) {
    disconnect(m_stateConnection);
    m_document = document;
    if (document != nullptr) {
        m_stateConnection =
            connect(document, &GraphDocument::stateChanged, this, [this](const QString& key) {
                if (key == kPruningKey) {
                    refresh();
                }
            });
    }
    refresh();
}

void PruningOverlay::setEnabled(bool enabled) {
    m_enabled = enabled;
    refresh();
}

void PruningOverlay::clear() {
    for (NodeItem* node : m_page.scene()->nodeItems()) {
        bool had = false;
        const QList<QGraphicsItem*> children = node->childItems();
        for (QGraphicsItem* child : children) {
            const int type = child->type();
            if (type == PruningTintItem::Type || type == PruningEntryItem::Type ||
                type == NotPrunableItem::Type) {
                delete child;
                had = true;
            }
        }
        if (had) {
            node->setToolTip(node->content().toolTip);
        }
    }
}

int PruningOverlay::count(int type) const {
    int total = 0;
    for (const NodeItem* node : m_page.scene()->nodeItems()) {
        for (const QGraphicsItem* child : node->childItems()) {
            total += child->type() == type ? 1 : 0;
        }
    }
    return total;
}

const QGraphicsItem* PruningOverlay::find(const QString& nodeName, int type) const {
    for (const NodeItem* node : m_page.scene()->nodeItems()) {
        if (node->content().io || node->group() || node->content().fullName != nodeName) {
            continue;
        }
        for (const QGraphicsItem* child : node->childItems()) {
            if (child->type() == type) {
                return child;
            }
        }
    }
    return nullptr;
}

namespace {

/// "\nPruning: <role> of entry → exit (<what> C → k)".
QString roleLine(const PruningRun& run, const pruning::PruningOutcome& outcome, int section,
                 const QString& role, const QString& what) {
    const auto s = static_cast<size_t>(section);
    return QObject::tr("\nPruning: %1 %2 → %3 (%4 %5 → %6)")
        .arg(role, qs(run.analysis.entryNames[s]), qs(run.analysis.exitNames[s]), what)
        .arg(run.analysis.detection.sections[s].channels)
        .arg(outcome.kept[s]);
}

/// The mark, or the tint (and the entry's label and bar), of one op box, and its tooltip.
void annotate(NodeItem* node, const PruningResult& result) {
    const PruningRun& run = *result.run;
    const pruning::PruningOutcome& outcome = *result.outcome;
    const std::string name = node->content().fullName.toStdString();
    if (const auto reason = run.notPrunable.find(name); reason != run.notPrunable.end()) {
        auto* mark = new NotPrunableItem(node, qs(reason->second));
        node->setToolTip(node->content().toolTip + QStringLiteral("\n") + mark->toolTip());
        return;
    }
    const int own = run.sectionOf(name);
    if (own < 0) {
        return;
    }
    const auto entry = run.entryOf.find(name);
    const auto exit = run.exitOf.find(name);
    const auto mid = run.intermediateOf.find(name);
    std::optional<QColor> ring;
    QString tip = node->content().toolTip;
    if (exit != run.exitOf.end()) {
        ring = pruningSectionColor(exit->second);
        tip += roleLine(run, outcome, exit->second, QObject::tr("exit of"),
                        QObject::tr("input channels"));
    }
    new PruningTintItem(node, own, pruningSectionColor(own), ring);
    if (mid != run.intermediateOf.end()) {
        tip += roleLine(run, outcome, mid->second, QObject::tr("inside"), QObject::tr("channels"));
    }
    if (entry != run.entryOf.end()) {
        const int s = entry->second;
        new PruningEntryItem(node, s,
                             run.analysis.detection.sections[static_cast<size_t>(s)].channels,
                             outcome.kept[static_cast<size_t>(s)], pruningSectionColor(s),
                             result.constraint(s).kind != pruning::EntryConstraint::Kind::Free);
        tip += roleLine(run, outcome, s, QObject::tr("entry of"), QObject::tr("output channels"));
    }
    node->setToolTip(tip);
}

} // namespace

void PruningOverlay::refresh() {
    clear();
    if (!m_enabled || m_document.isNull() || m_page.isLayingOut() ||
        m_page.document() != m_document.data()) {
        return;
    }
    const PruningResult* result = pruningResult(*m_document);
    if (result == nullptr) {
        return;
    }
    for (NodeItem* node : m_page.scene()->nodeItems()) {
        if (!node->content().io && !node->group()) {
            annotate(node, *result);
        }
    }
}

} // namespace qs::ui
