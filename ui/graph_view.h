// GraphView: the QGraphicsView over a GraphScene — wheel and +/- zoom around the cursor, drag
// to pan, Space to fit (Shift+Space: the selection), Escape to drop the selection, a minimap in
// the bottom-right corner, and centring on a node (search).
// Level of detail is the items' business: they drop text when the zoom makes it unreadable.
#pragma once

#include <QGraphicsView>

namespace qs::ui {

class GraphScene;
class GraphLegend;
class Minimap;
class NodeItem;

/// Interactive view of a GraphScene.
class GraphView : public QGraphicsView {
    Q_OBJECT

public:
    explicit GraphView(GraphScene* scene, QWidget* parent = nullptr);

    GraphScene* graphScene() const { return m_scene; }

    Minimap* minimap() const { return m_minimap; }

    /// The legend over the bottom-left corner.
    GraphLegend* legend() const { return m_legend; }

    /// Current scale: 1 means one scene point per pixel.
    double zoom() const;

    /// Multiplies the zoom by `factor`, clamped to [minimum, 4].
    void zoomBy(double factor);

    /// Shows the whole graph (Space).
    void fitGraph();

    /// The view a model opens with: the whole graph when it fits at 100 % or more, else its top
    /// at 100 %, so a tall graph opens readable (Space still fits all of it).
    void showOpeningView();

    /// Shows the selected items (Shift+Space); the whole graph when nothing is selected.
    void fitSelection();

    /// Scrolls so that `scenePoint` appears at `viewPoint` (viewport pixels): an expanded or
    /// collapsed group stays where the user clicked it.
    void keepAt(const QPointF& scenePoint, const QPointF& viewPoint);

    /// Centres `node`, selects it alone and zooms in far enough to read it.
    void centerOnNode(NodeItem* node);

    /// Re-renders the minimap after the scene changed.
    void sceneChanged();

Q_SIGNALS:
    void zoomChanged(double zoom);

protected:
    void wheelEvent(QWheelEvent* event) override;

    void keyPressEvent(QKeyEvent* event) override;

    void resizeEvent(QResizeEvent* event) override;

    void scrollContentsBy(int dx, int dy) override;

private:
    void placeMinimap();

    double minimumZoom() const;

    void fitRect(const QRectF& area);

    void scrollTo(const QPointF& scenePoint, const QPointF& viewPoint);

    GraphScene* m_scene;
    Minimap* m_minimap;
    GraphLegend* m_legend;
};

} // namespace qs::ui
