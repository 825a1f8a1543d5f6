#include "ui/graph_legend.h"

#include "ui/graph_items.h"
#include "ui/graph_scene.h"
#include "ui/graph_view.h"

#include <QMouseEvent>
#include <QPainter>

#include <array>

namespace qs::ui {
namespace {

constexpr int kRowHeight = 20;
constexpr int kPadding = 8;
constexpr int kTextLeft = 40;
constexpr int kWidth = 260;
constexpr int kFoldedWidth = 90; ///< the title line alone

struct LegendRow {
    QuantizerBadgeItem::Content badge;
    const char* text;
};

// One row per mark; Content fields in declaration order (id, weight, bits, candidates, merged,
// requantizer, group).
const std::array<LegendRow, 9> kRows{{
    {{0, false, 8, 1, false, false, {}}, QT_TRANSLATE_NOOP("GraphLegend", "8-bit activation")},
    {{0, false, 6, 1, false, false, {}}, QT_TRANSLATE_NOOP("GraphLegend", "6-bit")},
    {{0, false, 4, 1, false, false, {}}, QT_TRANSLATE_NOOP("GraphLegend", "4-bit")},
    {{0, false, 2, 1, false, false, {}}, QT_TRANSLATE_NOOP("GraphLegend", "2-bit")},
    {{0, false, 0, 1, false, false, {}}, QT_TRANSLATE_NOOP("GraphLegend", "kept in float")},
    {{0, false, 8, 3, false, false, {}},
     QT_TRANSLATE_NOOP("GraphLegend", "3 = candidate configs to choose from")},
    {{0, true, 8, 1, false, false, {}}, QT_TRANSLATE_NOOP("GraphLegend", "weight quantizer")},
    {{0, false, 8, 1, false, true, {}},
     QT_TRANSLATE_NOOP("GraphLegend", "requantizer (RQ), after a branch split")},
    {{0, false, 8, 1, true, false, {}},
     QT_TRANSLATE_NOOP("GraphLegend", "merged into the quantizer upstream")},
}};

const char* const kGroupText = QT_TRANSLATE_NOOP("GraphLegend", "ring: unified-scale group");

} // namespace

GraphLegend::GraphLegend(GraphView& view)
    : QWidget(&view)
    , m_view(view) {
    setObjectName(QStringLiteral("graphLegend"));
    setCursor(Qt::PointingHandCursor);
    setToolTip(tr("What the marks on the graph mean; click to fold or unfold"));
    setAccessibleName(tr("Legend"));
    setAccessibleDescription(rowTexts().join(QStringLiteral("; ")));
    resize(sizeHint());
}

QStringList GraphLegend::rowTexts() {
    QStringList out;
    for (const LegendRow& row : kRows) {
        out << tr(row.text);
    }
    out << tr(kGroupText);
    return out;
}

QSize GraphLegend::sizeHint() const {
    const int rows = m_folded ? 0 : static_cast<int>(kRows.size()) + 1;
    return {m_folded ? kFoldedWidth : kWidth, 2 * kPadding + kRowHeight * (rows + 1)};
}

void GraphLegend::setFolded(bool folded) {
    m_folded = folded;
    const int bottom = geometry().bottom();
    resize(sizeHint());
    move(x(), bottom - height() + 1); // folds toward the corner it sits in
    update();
}

void GraphLegend::mousePressEvent(QMouseEvent* event) {
    if (event->button() == Qt::LeftButton) {
        setFolded(!m_folded);
        event->accept();
        return;
    }
    QWidget::mousePressEvent(event);
}

void GraphLegend::paintEvent(QPaintEvent*) {
    const auto* scene = qobject_cast<const GraphScene*>(m_view.scene());
    if (scene == nullptr) {
        return;
    }
    const GraphTheme& theme = scene->theme();
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    QColor panel = theme.background;
    panel.setAlpha(235);
    painter.setPen(QPen(theme.secondaryText, 0.5));
    painter.setBrush(panel);
    painter.drawRoundedRect(QRectF(rect()).adjusted(0.5, 0.5, -0.5, -0.5), 6, 6);
    painter.setFont(theme.detailFont);
    painter.setPen(theme.text);
    const QRect title(kPadding, kPadding, width() - 2 * kPadding, kRowHeight);
    painter.drawText(title, Qt::AlignLeft | Qt::AlignVCenter,
                     m_folded ? tr("Legend ▸") : tr("Legend ▾"));
    if (m_folded) {
        return;
    }
    int y = kPadding + kRowHeight;
    const auto drawRow = [&](const QuantizerBadgeItem::Content& content, const QString& text) {
        QuantizerBadgeItem badge(content, theme);
        painter.save();
        painter.translate(kPadding + 14, y + kRowHeight / 2.0);
        badge.paint(&painter, nullptr, nullptr);
        painter.restore();
        painter.setFont(theme.detailFont);
        painter.setPen(theme.text);
        painter.drawText(QRect(kTextLeft, y, width() - kTextLeft - kPadding, kRowHeight),
                         Qt::AlignLeft | Qt::AlignVCenter, text);
        y += kRowHeight;
    };
    for (const LegendRow& row : kRows) {
        drawRow(row.badge, tr(row.text));
    }
    drawRow({0, false, 8, 1, false, false, 0}, tr(kGroupText));
}

} // namespace qs::ui
