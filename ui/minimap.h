// Minimap: a small overview of the whole graph drawn over the corner of a GraphView, with the
// visible area outlined; clicking or dragging in it moves the view there. The overview is a
// cached picture of the scene, re-rendered only when the scene or its theme changes.
#pragma once

#include <QPixmap>
#include <QWidget>

namespace qs::ui {

class GraphView;

/// Overview of a GraphView's scene.
class Minimap : public QWidget {
    Q_OBJECT

public:
    explicit Minimap(GraphView& view);

    /// Renders the scene again into the cached overview and resizes to fit it.
    void refresh();

    /// The visible part of the scene, in minimap pixels.
    QRectF viewportRect() const;

protected:
    void paintEvent(QPaintEvent* event) override;

    void mousePressEvent(QMouseEvent* event) override;

    void mouseMoveEvent(QMouseEvent* event) override;

private:
    void centerViewAt(const QPointF& minimapPoint);

    QRectF sceneToMinimap(const QRectF& sceneRect) const;

    GraphView& m_view;
    QPixmap m_overview;
    double m_scale = 1;
};

} // namespace qs::ui
