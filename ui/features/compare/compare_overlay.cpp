#include "ui/features/compare/compare_overlay.h"

#include "ui/graph_document.h"
#include "ui/graph_page.h"
#include "ui/graph_scene.h"
#include "ui/graph_view.h"

#include <QPainter>

#include <algorithm>

namespace qs::ui {

namespace {

constexpr double kRingGap = 7.5; // outside the SQNR overlay's ring, so both show
constexpr double kRingWidth = 2.5;
constexpr int kSuffixKey = 0x434d; // QGraphicsItem::data key: the tooltip text this overlay added
constexpr int kLegendLeft = 8;
constexpr int kLegendTop = 70; // under the SQNR legend
constexpr int kTextPad = 6;
const QColor kChangedColor(0xE0, 0x8E, 0x0B); // amber: neither a bit-width colour nor SQNR's

QString markText(const quantization::QuantizerMark& mark) {
    return QStringLiteral("%1-bit %2 (%3)")
        .arg(mark.config.numBits)
        .arg(QString::fromStdString(mark.config.toString()),
             QString::fromUtf8(
                 quantization::statusName(mark.status).data(),
                 static_cast<qsizetype>(quantization::statusName(mark.status).size())));
}

} // namespace

CompareHaloItem::CompareHaloItem(QuantizerBadgeItem* badge, bool removed)
    : QGraphicsItem(badge)
    , m_weight(badge->content().weight)
    , m_removed(removed) {
    setFlag(ItemStacksBehindParent);
    setAcceptedMouseButtons(Qt::NoButton); // clicks and hovers go to the badge
}

QRectF CompareHaloItem::boundingRect() const {
    return QuantizerBadgeItem::ringRect(m_weight, kRingGap)
        .adjusted(-kRingWidth, -kRingWidth, kRingWidth, kRingWidth);
}

void CompareHaloItem::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) {
    painter->setRenderHint(QPainter::Antialiasing);
    QPen pen(kChangedColor, kRingWidth);
    if (m_removed) {
        pen.setStyle(Qt::DashLine);
    }
    painter->setPen(pen);
    QuantizerBadgeItem::drawRing(*painter, m_weight, kRingGap);
}

CompareLegend::CompareLegend(QWidget* parent)
    : QWidget(parent) {
    setAttribute(Qt::WA_TransparentForMouseEvents);
}

void CompareLegend::setText(const QString& text) {
    m_text = text;
    resize(sizeHint());
    update();
}

QSize CompareLegend::sizeHint() const {
    int width = 0;
    const QStringList lines = m_text.split(u'\n');
    for (const QString& line : lines) {
        width = std::max(width, fontMetrics().horizontalAdvance(line));
    }
    return {width + 2 * kTextPad + 16,
            static_cast<int>(lines.size()) * fontMetrics().height() + kTextPad};
}

void CompareLegend::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    QColor background = palette().color(QPalette::Window);
    background.setAlpha(230);
    painter.setPen(kChangedColor);
    painter.setBrush(background);
    painter.drawRoundedRect(QRectF(rect()).adjusted(0.5, 0.5, -0.5, -0.5), 4, 4);
    painter.setBrush(Qt::NoBrush);
    painter.setPen(QPen(kChangedColor, 2));
    painter.drawEllipse(QPointF(kTextPad + 5, kTextPad / 2.0 + fontMetrics().height() / 2.0), 5, 5);
    painter.setPen(palette().color(QPalette::WindowText));
    painter.drawText(rect().adjusted(kTextPad + 16, kTextPad / 2, -kTextPad, 0),
                     Qt::AlignLeft | Qt::AlignTop, m_text);
}

CompareOverlay::CompareOverlay(GraphPage& page, QObject* parent)
    : QObject(parent)
    , m_page(page)
    , m_legend(new CompareLegend(page.view())) {
    m_legend->move(kLegendLeft, kLegendTop);
    m_legend->hide();
    connect(&page, &GraphPage::layoutFinished, this, &CompareOverlay::refresh);
}

void CompareOverlay::setDocument(GraphDocument* document) {
    disconnect(m_quantizationConnection);
    m_document = document;
    if (document != nullptr) {
        // Queued: the page redraws the badges on the same signal, and the rings go on the new ones.
        m_quantizationConnection = connect(document, &GraphDocument::quantizationChanged, this,
                                           &CompareOverlay::refresh, Qt::QueuedConnection);
    }
    clear();
}

void CompareOverlay::compareWith(const QString& name,
                                 std::vector<quantization::QuantizerMark> marks) {
    m_name = name;
    m_other = std::move(marks);
    const bool was = m_active;
    m_active = true;
    refresh();
    if (!was) {
        Q_EMIT activeChanged(true);
    }
}

void CompareOverlay::clear() {
    const bool was = m_active;
    m_active = false;
    m_other.clear();
    m_name.clear();
    refresh();
    if (was) {
        Q_EMIT activeChanged(false);
    }
}

int CompareOverlay::haloCount() const {
    int count = 0;
    for (const QuantizerBadgeItem* badge : m_page.scene()->badgeItems()) {
        for (const QGraphicsItem* child : badge->childItems()) {
            count += child->type() == CompareHaloItem::Type ? 1 : 0;
        }
    }
    return count;
}

void CompareOverlay::refresh() {
    m_changes = m_active && !m_document.isNull()
                    ? report::markChanges(m_document->quantizerMarks(), m_other)
                    : std::map<std::string, report::MarkChange>{};
    std::map<int, std::string> pointOf;
    if (!m_document.isNull()) {
        for (const quantization::QuantizerMark& mark : m_document->quantizerMarks()) {
            pointOf.emplace(mark.id, mark.point.toString());
        }
    }
    for (QuantizerBadgeItem* badge : m_page.scene()->badgeItems()) {
        const QList<QGraphicsItem*> children = badge->childItems();
        for (QGraphicsItem* child : children) {
            if (child->type() == CompareHaloItem::Type) {
                delete child;
            }
        }
        // Take back what this overlay added to the tooltip before (other overlays add theirs).
        QString tip = badge->toolTip();
        const QString added = badge->data(kSuffixKey).toString();
        if (!added.isEmpty() && tip.endsWith(added)) {
            tip.chop(added.size());
        }
        QString suffix;
        const auto point = pointOf.find(badge->quantizerId());
        const auto change =
            point == pointOf.end() ? m_changes.end() : m_changes.find(point->second);
        if (change != m_changes.end()) {
            new CompareHaloItem(badge, !change->second.b.has_value());
            suffix = QStringLiteral("\n\n") +
                     tr("%1: %2 — %3")
                         .arg(m_name, QString::fromStdString(change->second.change),
                              change->second.b ? markText(*change->second.b) : tr("no quantizer"));
        }
        badge->setToolTip(tip + suffix);
        badge->setData(kSuffixKey, suffix);
    }
    const bool shown = m_active && !m_document.isNull();
    m_legend->setVisible(shown);
    if (!shown) {
        return;
    }
    int changed = 0;
    int onlyHere = 0;
    int onlyThere = 0;
    for (const auto& [point, change] : m_changes) {
        (change.change == "removed" ? onlyHere : change.change == "added" ? onlyThere : changed)++;
    }
    m_legend->setText(tr("Compared with %1\n%2 changed · %3 only here · %4 only there")
                          .arg(m_name)
                          .arg(changed)
                          .arg(onlyHere)
                          .arg(onlyThere));
}

} // namespace qs::ui
