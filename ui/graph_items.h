// The items of the graph scene: NodeItem (a box with op type, name and output shape), PortItem
// (one circle per input port — a pre-hook insertion point — and per output — a post-hook point)
// and EdgeItem (a Bézier path from an output port to an input port, with the tensor's shape and
// dtype on hover). Items only paint; the scene builds them from a core Layout and owns the theme.
#pragma once

#include "core/graph/graph.h"

#include <QGraphicsItem>
#include <QGraphicsPathItem>
#include <QString>

#include <optional>
#include <vector>

namespace qs::ui {

struct GraphTheme;
class EdgeItem;

/// How an item is emphasised: not at all, as an input or output of the selection.
enum class Highlight { None, Input, Output };

/// Which side of a node a port is on.
enum class PortSide { Input, Output };

/// A box of the graph: an op, a graph input or a graph output.
class NodeItem : public QGraphicsItem {
public:
    enum { Type = UserType + 1 };

    /// What the box shows; `kind` decides the shape (ops are boxes, graph inputs and outputs
    /// are pills).
    struct Content {
        QString title;  ///< op type, or "input" / "output"
        QString name;   ///< node or value name, elided to fit
        QString detail; ///< output shape and dtype
        QString fullName;
        QString opType;
        QString toolTip;
        bool io = false;
        /// A collapsed group drawn as one box: its index in the scene's GroupTree.
        std::optional<uint32_t> group;
    };

    NodeItem(Content content, const QRectF& box, uint32_t layoutIndex, graph::NodeId node,
             const GraphTheme& theme);

    int type() const override { return Type; }

    QRectF boundingRect() const override;

    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    const Content& content() const { return m_content; }

    /// Replaces the texts (a collapsed group's quantizer summary changes with the setup).
    void setDetail(const QString& detail, const QString& toolTip);

    /// The collapsed group drawn, if this box is one.
    std::optional<uint32_t> group() const { return m_content.group; }

    /// Index of this box in the layout (and in the GraphLayoutModel).
    uint32_t layoutIndex() const { return m_layoutIndex; }

    /// The op drawn, invalid for graph inputs and outputs.
    graph::NodeId node() const { return m_node; }

    /// The box in scene coordinates.
    QRectF sceneBox() const { return mapRectToScene(QRectF(QPointF(0, 0), m_size)); }

    const std::vector<EdgeItem*>& inEdges() const { return m_inEdges; }

    const std::vector<EdgeItem*>& outEdges() const { return m_outEdges; }

    void addInEdge(EdgeItem* edge) { m_inEdges.push_back(edge); }

    void addOutEdge(EdgeItem* edge) { m_outEdges.push_back(edge); }

    void setHighlight(Highlight highlight);

    Highlight highlight() const { return m_highlight; }

    /// Marks the box as a search match (a yellow halo).
    void setSearchMatch(bool match);

    bool isSearchMatch() const { return m_searchMatch; }

private:
    void paintBody(QPainter* painter, const QRectF& box) const;

    Content m_content;
    QSizeF m_size;
    uint32_t m_layoutIndex;
    graph::NodeId m_node;
    const GraphTheme& m_theme;
    std::vector<EdgeItem*> m_inEdges;
    std::vector<EdgeItem*> m_outEdges;
    Highlight m_highlight = Highlight::None;
    bool m_searchMatch = false;
};

/// The frame of an expanded group, behind its children: a tinted box with the group's name in
/// a header strip; double-clicking the header collapses the group.
class GroupFrameItem : public QGraphicsItem {
public:
    enum { Type = UserType + 5 };

    GroupFrameItem(uint32_t group, const QString& title, const QRectF& box, double headerHeight,
                   int depth, const GraphTheme& theme);

    int type() const override { return Type; }

    QRectF boundingRect() const override;

    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    uint32_t group() const { return m_group; }

    /// True when `scenePoint` lies on the header strip.
    bool onHeader(const QPointF& scenePoint) const;

private:
    uint32_t m_group;
    QString m_title;
    QSizeF m_size;
    double m_headerHeight;
    int m_depth;
    const GraphTheme& m_theme;
};

/// A port circle, child of its NodeItem and centred on the layout's anchor. Quantizer badges
/// will sit on these anchors: GraphScene::portAnchor() gives their scene position.
class PortItem : public QGraphicsItem {
public:
    enum { Type = UserType + 2 };

    static constexpr double kRadius = 3.5;

    PortItem(PortSide side, uint32_t port, bool weight, const GraphTheme& theme, NodeItem* parent);

    int type() const override { return Type; }

    QRectF boundingRect() const override;

    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    PortSide side() const { return m_side; }

    uint32_t port() const { return m_port; }

    /// True for an input port fed by an initializer (a weight or other constant).
    bool isWeight() const { return m_weight; }

private:
    PortSide m_side;
    uint32_t m_port;
    bool m_weight;
    const GraphTheme& m_theme;
};

/// A tensor flowing from an output port to an input port.
class EdgeItem : public QGraphicsPathItem {
public:
    enum { Type = UserType + 3 };

    EdgeItem(const QPainterPath& path, NodeItem* tail, NodeItem* head, const GraphTheme& theme);

    int type() const override { return Type; }

    QPainterPath shape() const override;

    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    NodeItem* tail() const { return m_tail; }

    NodeItem* head() const { return m_head; }

    void setHighlight(Highlight highlight);

    Highlight highlight() const { return m_highlight; }

    bool isHovered() const { return m_hovered; }

protected:
    void hoverEnterEvent(QGraphicsSceneHoverEvent* event) override;

    void hoverLeaveEvent(QGraphicsSceneHoverEvent* event) override;

private:
    NodeItem* m_tail;
    NodeItem* m_head;
    const GraphTheme& m_theme;
    Highlight m_highlight = Highlight::None;
    bool m_hovered = false;
    mutable QPainterPath m_shape;
};

/// A quantizer on the graph: a disc on its insertion point (activations; a diamond marked "RQ" for
/// requantizers, a dashed ghost for merged-away ones) or a pill on the op box (weights), filled by
/// the chosen bit width, with the candidate count of multi-config points and a coloured ring for
/// its unified-scale group. The label is drawn in GraphTheme::badgeFont, which nothing else
/// uses, so exported SVGs show one text element per badge in that font.
class QuantizerBadgeItem : public QGraphicsItem {
public:
    enum { Type = UserType + 4 };

    /// What the badge shows.
    struct Content {
        int id = 0;
        bool weight = false;
        int bits = 8;       ///< 0 or less: float
        int candidates = 1; ///< candidate configs of the point
        bool merged = false;
        bool requantizer = false;
        std::optional<int> group; ///< unified-scale group id

        bool operator==(const Content&) const = default;
    };

    QuantizerBadgeItem(const Content& content, const GraphTheme& theme);

    int type() const override { return Type; }

    QRectF boundingRect() const override;

    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    const Content& content() const { return m_content; }

    /// Shows `content` instead (an edit recolours the badge in place).
    void setContent(const Content& content);

    /// The quantizer's id in the setup.
    int quantizerId() const { return m_content.id; }

    /// The outline `gap` outside a badge's shape (disc, or a weight's pill), in its coordinates:
    /// where overlays draw their rings around it.
    static QRectF ringRect(bool weight, double gap);

    /// Draws the ring `ringRect(weight, gap)` with the painter's pen.
    static void drawRing(QPainter& painter, bool weight, double gap);

    /// The fill colour for the chosen bit width (the previewed one while a preview is shown).
    QColor fillColor() const;

    /// Shows `bits` as a preview (a candidate hovered in the HAWQ explorer): the badge takes that
    /// width's colour and label with a dashed outline, its content unchanged; nullopt restores it.
    void setPreviewBits(std::optional<int> bits);

    std::optional<int> previewBits() const { return m_previewBits; }

private:
    QString label() const;

    Content m_content;
    std::optional<int> m_previewBits;
    const GraphTheme& m_theme;
};

} // namespace qs::ui
