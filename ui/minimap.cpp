#include "ui/minimap.h"

#include "ui/graph_scene.h"
#include "ui/graph_view.h"

#include <QMouseEvent>
#include <QPainter>

#include <algorithm>

namespace qs::ui {

namespace {
constexpr int kMaxSide = 180;
constexpr int kMinSide = 24;
} // namespace

Minimap::Minimap(GraphView& view)
    : QWidget(&view)
    , m_view(view) {
    setCursor(Qt::PointingHandCursor);
    setToolTip(tr("Overview: click or drag to move the view"));
    hide();
}

void Minimap::refresh() {
    GraphScene* scene = m_view.graphScene();
    const QRectF sceneRect = scene->sceneRect();
    if (scene->nodeItems().empty() || sceneRect.isEmpty()) {
        hide();
        return;
    }
    m_scale = std::min(kMaxSide / sceneRect.width(), kMaxSide / sceneRect.height());
    const QSize size(std::max(kMinSide, static_cast<int>(sceneRect.width() * m_scale)),
                     std::max(kMinSide, static_cast<int>(sceneRect.height() * m_scale)));
    m_overview = QPixmap(size);
    m_overview.fill(scene->theme().background);
    {
        QPainter painter(&m_overview);
        const QSizeF drawn = sceneRect.size() * m_scale;
        scene->render(&painter, QRectF(QPointF(0, 0), drawn), sceneRect);
    }
    setFixedSize(size + QSize(2, 2));
    show();
    update();
}

QRectF Minimap::sceneToMinimap(const QRectF& rect) const {
    const QPointF origin = m_view.graphScene()->sceneRect().topLeft();
    return {(rect.left() - origin.x()) * m_scale + 1, (rect.top() - origin.y()) * m_scale + 1,
            rect.width() * m_scale, rect.height() * m_scale};
}

QRectF Minimap::viewportRect() const {
    const QRectF visible = m_view.mapToScene(m_view.viewport()->rect()).boundingRect();
    return sceneToMinimap(visible).intersected(QRectF(rect()));
}

void Minimap::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    const GraphTheme& theme = m_view.graphScene()->theme();
    painter.fillRect(rect(), theme.background);
    painter.drawPixmap(1, 1, m_overview);
    painter.setPen(theme.nodeBorder);
    painter.drawRect(rect().adjusted(0, 0, -1, -1));
    QColor fill = theme.minimapViewport;
    fill.setAlpha(40);
    painter.setPen(QPen(theme.minimapViewport, 1.5));
    painter.setBrush(fill);
    painter.drawRect(viewportRect().adjusted(0.5, 0.5, -0.5, -0.5));
}

void Minimap::centerViewAt(const QPointF& minimapPoint) {
    const QPointF origin = m_view.graphScene()->sceneRect().topLeft();
    m_view.centerOn(origin + (minimapPoint - QPointF(1, 1)) / m_scale);
}

void Minimap::mousePressEvent(QMouseEvent* event) {
    centerViewAt(event->position());
}

void Minimap::mouseMoveEvent(QMouseEvent* event) {
    if (event->buttons() & Qt::LeftButton) {
        centerViewAt(event->position());
    }
}

} // namespace qs::ui
