// GraphScene: the model graph as QGraphicsItems, built from a core GroupedLayout. It measures the
// boxes for the layout (so core never sees a font), creates one NodeItem per drawn box (an op, a
// graph input or output, or a collapsed group with its op counts and quantizer summary), one
// GroupFrameItem per expanded group, one PortItem per input port and output, one EdgeItem per
// drawn edge, highlights the inputs and outputs of the
// selection, and finds nodes by name or op type. The same scene paints the window and the
// exported images.
//
// Quantizer badges attach to port anchors: portAnchor(box, PortSide::Input, p) is the pre-hook
// insertion point of input port p, portAnchor(box, PortSide::Output, k) the post-hook point of
// output k; boxIndex(NodeId) maps an op to its box.
#pragma once

#include "core/graph/graph.h"
#include "core/layout/graph_layout.h"
#include "core/layout/group_tree.h"
#include "core/layout/grouped_layout.h"
#include "core/layout/layout.h"
#include "core/quantization/quantization_state.h"
#include "ui/graph_items.h"
#include "ui/graph_theme.h"

#include <QGraphicsScene>

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace qs::ui {

/// The graph of one model, laid out.
class GraphScene : public QGraphicsScene {
    Q_OBJECT

public:
    explicit GraphScene(QObject* parent = nullptr);

    ~GraphScene() override;

    const GraphTheme& theme() const { return m_theme; }

    /// Repaints every item with `theme`.
    void setTheme(const GraphTheme& theme);

    /// The boxes of `graph` measured with this scene's fonts, ready for layout::computeLayout.
    layout::GraphLayoutModel prepareLayout(const graph::Graph& graph) const;

    /// Box sizes of the collapsed groups of `tree` (built over `model`), measured like ops.
    std::vector<layout::Size> measureGroups(const graph::Graph& graph,
                                            const layout::GraphLayoutModel& model,
                                            const layout::GroupTree& tree) const;

    /// Replaces the items with `graph` placed by `placed`, computed from `model` and `tree`
    /// with the groups `expanded` open.
    void populate(const graph::Graph& graph, const layout::GraphLayoutModel& model,
                  const layout::GroupTree& tree, const std::vector<bool>& expanded,
                  const layout::GroupedLayout& placed);

    /// Replaces the items with a flat layout of `model` (no groups: every box drawn).
    void populate(const graph::Graph& graph, const layout::GraphLayoutModel& model,
                  const layout::Layout& placed);

    const layout::GroupTree& groupTree() const { return m_tree; }

    const std::vector<bool>& expandedGroups() const { return m_expanded; }

    /// The box of collapsed group `group`, or nullptr when it is not drawn collapsed.
    NodeItem* groupBox(uint32_t group) const;

    /// The frame of expanded group `group`, or nullptr.
    GroupFrameItem* groupFrame(uint32_t group) const;

    /// Layout items (boxes of the GraphLayoutModel) whose name or op type matches, drawn or
    /// hidden in a collapsed group; in drawing order.
    std::vector<uint32_t> findItems(const QString& text, bool regex) const;

    /// The layout item of op `node`, if the model has one.
    std::optional<uint32_t> itemOf(graph::NodeId node) const;

    /// True when layout item `item` is drawn as its own box (not inside a collapsed group).
    bool isItemDrawn(uint32_t item) const;

    /// Removes every item.
    void clearGraph();

    const std::vector<NodeItem*>& nodeItems() const { return m_nodes; }

    const std::vector<EdgeItem*>& edgeItems() const { return m_edges; }

    size_t portCount() const { return m_portCount; }

    /// The box op `node` is drawn in: its own, or its collapsed group's.
    std::optional<uint32_t> boxIndex(graph::NodeId node) const;

    /// Scene position of a port anchor: where a quantizer badge of that insertion point goes.
    QPointF portAnchor(uint32_t box, PortSide side, uint32_t port) const;

    /// Replaces the quantizer badges with one per mark: activation quantizers on their insertion
    /// point (below the output port for a post-hook point, above the input port for a pre-hook
    /// point), weight quantizers on the op box, merged-away ones ghosted, with dashed links to
    /// the quantizer that absorbed them or a requantizer's parent. Marks whose node is not drawn
    /// are skipped. When the marks are the ones shown before with some configs or relations
    /// changed (an edit), only the badges and links of the changed marks are redrawn.
    /// Marks are placed on the graph given to populate().
    void showQuantizers(const std::vector<quantization::QuantizerMark>& marks);

    /// Removes the quantizer badges and their links.
    void clearQuantizers();

    const std::vector<QuantizerBadgeItem*>& badgeItems() const { return m_badges; }

    /// The badge of quantizer `id`, or nullptr.
    QuantizerBadgeItem* badge(int id) const;

    /// Previews bit widths on the badges of `bitsById` (quantizer id -> bits; a HAWQ candidate
    /// hovered) and restores every other badge; the setup and the undo stack are not touched.
    void previewBits(const std::unordered_map<int, int>& bitsById);

    /// Restores every badge from its preview.
    void clearBitsPreview();

    /// Selects exactly the badges of `ids` (one selectionChanged); ids without a badge are skipped.
    void selectQuantizers(const std::vector<int>& ids);

    /// Ids of the selected badges, ascending.
    std::vector<int> selectedQuantizers() const;

    /// Boxes whose name or op type contains `text` (case-insensitive), or, with `regex`, match
    /// it; in drawing order. An invalid regex matches nothing.
    std::vector<NodeItem*> find(const QString& text, bool regex) const;

    /// Sets the search-match mark on exactly `matches`.
    void markMatches(const std::vector<NodeItem*>& matches);

Q_SIGNALS:
    /// The user double-clicked a collapsed group's box or an expanded group's header.
    void groupToggleRequested(uint32_t group);

protected:
    void mouseDoubleClickEvent(QGraphicsSceneMouseEvent* event) override;

private:
    void updateHighlights();

    /// Quantizer count and bit-width mix of every collapsed group, from `marks`.
    void updateGroupSummaries(const std::vector<quantization::QuantizerMark>& marks);

    /// The box of the op or graph input that `point` targets.
    NodeItem* targetBox(const quantization::InsertionPoint& point) const;

    std::optional<QPointF> badgePosition(const quantization::InsertionPoint& point) const;

    /// Redraws the badges and links of the marks that differ from m_shownMarks; false (nothing
    /// touched) when `marks` are not the same quantizers at the same points.
    bool updateChangedQuantizers(const std::vector<quantization::QuantizerMark>& marks);

    void addBadgeLink(const quantization::QuantizerMark& mark);

    /// A dotted link between two badges, routed around the boxes between them.
    QPainterPath linkPath(const QPointF& from, const QPointF& to) const;

    void clearHighlights();

    GraphTheme m_theme;
    layout::GroupTree m_tree;
    std::vector<bool> m_expanded;

    struct Anchors {
        std::vector<layout::Point> inputs;
        std::vector<layout::Point> outputs;
    };

    std::vector<Anchors> m_anchors; ///< per box
    std::vector<uint32_t> m_boxOfItem;
    std::vector<uint32_t> m_itemOfNode;
    std::vector<NodeItem::Content> m_contents;           ///< every layout item's, drawn or not
    std::unordered_map<uint32_t, uint32_t> m_groupBoxes; ///< collapsed group -> box
    std::unordered_map<uint32_t, GroupFrameItem*> m_frames;
    std::vector<NodeItem*> m_nodes;
    std::vector<EdgeItem*> m_edges;
    size_t m_portCount = 0;
    std::vector<NodeItem*> m_highlightedNodes;
    std::vector<EdgeItem*> m_highlightedEdges;
    std::vector<NodeItem*> m_matches;
    std::unordered_map<std::string, graph::NodeId> m_nodeByName; ///< first live node per name
    std::vector<QuantizerBadgeItem*> m_badges;
    std::unordered_map<int, QuantizerBadgeItem*> m_badgeById;
    std::unordered_map<int, QGraphicsItem*> m_badgeLinks;  ///< by the linked quantizer's id
    std::vector<quantization::QuantizerMark> m_shownMarks; ///< what the badges show, in order
};

} // namespace qs::ui
