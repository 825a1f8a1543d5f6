#include "ui/graph_view.h"

#include "ui/graph_legend.h"
#include "ui/graph_scene.h"
#include "ui/minimap.h"

#include <QKeyEvent>
#include <QScrollBar>
#include <QTimer>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace qs::ui {

namespace {
constexpr double kMaxZoom = 4.0;
constexpr double kKeyZoomStep = 1.25;
constexpr double kWheelZoomBase = 1.0015; ///< per wheel angle unit (120 per notch)
constexpr double kReadableZoom = 0.8;
constexpr int kMinimapMargin = 10;
} // namespace

GraphView::GraphView(GraphScene* scene, QWidget* parent)
    : QGraphicsView(scene, parent)
    , m_scene(scene)
    , m_minimap(new Minimap(*this))
    , m_legend(new GraphLegend(*this)) {
    setDragMode(QGraphicsView::ScrollHandDrag);
    setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
    setResizeAnchor(QGraphicsView::AnchorViewCenter);
    setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
    setOptimizationFlag(QGraphicsView::DontAdjustForAntialiasing);
    setRenderHint(QPainter::Antialiasing);
    setRenderHint(QPainter::TextAntialiasing);
    setFrameShape(QFrame::NoFrame);
    setFocusPolicy(Qt::StrongFocus);
}

double GraphView::zoom() const {
    return transform().m11();
}

double GraphView::minimumZoom() const {
    const QRectF scene = sceneRect();
    if (scene.isEmpty()) {
        return 0.05;
    }
    const double fit =
        std::min(viewport()->width() / scene.width(), viewport()->height() / scene.height());
    return std::min(0.05, fit * 0.5);
}

void GraphView::zoomBy(double factor) {
    const double target = std::clamp(zoom() * factor, minimumZoom(), kMaxZoom);
    const double applied = target / zoom();
    if (std::abs(applied - 1.0) < 1e-9) {
        return;
    }
    scale(applied, applied);
    m_minimap->update();
    Q_EMIT zoomChanged(zoom());
}

void GraphView::fitGraph() {
    fitRect(sceneRect());
}

void GraphView::showOpeningView() {
    fitGraph();
    if (zoom() >= 1.0) {
        return;
    }
    setTransform(QTransform());
    const QRectF area = sceneRect();
    const double halfHeight = viewport()->height() / 2.0;
    centerOn(area.center().x(), area.top() + halfHeight);
    m_minimap->update();
    Q_EMIT zoomChanged(zoom());
}

void GraphView::fitSelection() {
    QRectF area;
    for (const QGraphicsItem* item : m_scene->selectedItems()) {
        area = area.united(item->sceneBoundingRect());
    }
    if (area.isEmpty()) {
        fitGraph();
        return;
    }
    fitRect(area.adjusted(-40, -40, 40, 40));
}

void GraphView::fitRect(const QRectF& area) {
    if (area.isEmpty()) {
        return;
    }
    // The whole area, however tall: the user asked to see all of it.
    fitInView(area, Qt::KeepAspectRatio);
    if (zoom() > kMaxZoom / 2) {
        setTransform(QTransform::fromScale(kMaxZoom / 2, kMaxZoom / 2));
        centerOn(area.center());
    }
    m_minimap->update();
    Q_EMIT zoomChanged(zoom());
}

void GraphView::keepAt(const QPointF& scenePoint, const QPointF& viewPoint) {
    scrollTo(scenePoint, viewPoint);
    // Once more after the scroll bars appeared or went (they resize the viewport later).
    QTimer::singleShot(0, this, [this, scenePoint, viewPoint] { scrollTo(scenePoint, viewPoint); });
}

void GraphView::scrollTo(const QPointF& scenePoint, const QPointF& viewPoint) {
    const QPointF now = mapFromScene(scenePoint);
    horizontalScrollBar()->setValue(horizontalScrollBar()->value() +
                                    static_cast<int>(std::lround(now.x() - viewPoint.x())));
    verticalScrollBar()->setValue(verticalScrollBar()->value() +
                                  static_cast<int>(std::lround(now.y() - viewPoint.y())));
    m_minimap->update();
}

void GraphView::centerOnNode(NodeItem* node) {
    if (node == nullptr) {
        return;
    }
    if (zoom() < kReadableZoom) {
        setTransform(QTransform::fromScale(kReadableZoom, kReadableZoom));
        Q_EMIT zoomChanged(zoom());
    }
    m_scene->clearSelection();
    node->setSelected(true);
    centerOn(node->sceneBox().center());
    m_minimap->update();
}

void GraphView::sceneChanged() {
    m_minimap->refresh();
    m_legend->update(); // the theme may have changed
    placeMinimap();
}

void GraphView::wheelEvent(QWheelEvent* event) {
    if (event->modifiers() & Qt::ShiftModifier) {
        QGraphicsView::wheelEvent(event); // Shift+wheel scrolls
        return;
    }
    zoomBy(std::pow(kWheelZoomBase, event->angleDelta().y()));
    event->accept();
}

void GraphView::keyPressEvent(QKeyEvent* event) {
    switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        zoomBy(kKeyZoomStep);
        return;
    case Qt::Key_Minus:
        zoomBy(1 / kKeyZoomStep);
        return;
    case Qt::Key_Space:
        if (event->modifiers() & Qt::ShiftModifier) {
            fitSelection();
        } else {
            fitGraph();
        }
        return;
    case Qt::Key_Escape:
        m_scene->clearSelection();
        return;
    default:
        break;
    }
    QGraphicsView::keyPressEvent(event);
}

void GraphView::resizeEvent(QResizeEvent* event) {
    QGraphicsView::resizeEvent(event);
    placeMinimap();
}

void GraphView::scrollContentsBy(int dx, int dy) {
    QGraphicsView::scrollContentsBy(dx, dy);
    m_minimap->update();
}

void GraphView::placeMinimap() {
    const QRect area = viewport()->geometry();
    m_minimap->move(area.right() - m_minimap->width() - kMinimapMargin,
                    area.bottom() - m_minimap->height() - kMinimapMargin);
    m_minimap->raise();
    m_legend->move(area.left() + kMinimapMargin,
                   area.bottom() - m_legend->height() - kMinimapMargin);
    m_legend->raise();
}

} // namespace qs::ui
