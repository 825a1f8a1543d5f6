#include "ui/graph_scene.h"

#include <QFontMetricsF>
#include <QGraphicsPathItem>
#include <QGraphicsSceneMouseEvent>
#include <QPen>
#include <QRegularExpression>

#include <algorithm>
#include <map>

namespace qs::ui {

namespace {
constexpr double kMinOpWidth = 120;
constexpr double kMaxTextWidth = 220;
constexpr double kPaddingX = 8;
constexpr double kHeaderPadding = 3;
constexpr double kSceneMargin = 40;

QString qstr(const std::string& text) {
    return QString::fromStdString(text);
}

QString valueSummary(const graph::Value& value) {
    return qstr(value.shape.toString()) + QStringLiteral(" · ") +
           qstr(std::string(graph::dataTypeName(value.dtype)));
}

QString opToolTip(const graph::Graph& graph, const graph::Node& node,
                  const layout::GraphLayoutModel* model) {
    QString text = qstr(node.opType) + QStringLiteral("  ") + qstr(node.name);
    for (size_t port = 0; port < node.inputs.size(); ++port) {
        if (!node.inputs[port].valid()) {
            continue;
        }
        const graph::Value& value = graph.value(node.inputs[port]);
        QString kind;
        if (value.isInitializer()) {
            kind = QStringLiteral(" (weight)");
        } else if (model != nullptr && model->isConstant(graph, node.inputs[port]) &&
                   value.producer.valid()) {
            // A folded constant-only op: drawn as a weight of this box.
            kind = QStringLiteral(" (weight, via folded %1)")
                       .arg(qstr(graph.node(value.producer).opType));
        }
        text += QStringLiteral("\nin %1%2: %3  %4")
                    .arg(port)
                    .arg(kind)
                    .arg(qstr(value.name), valueSummary(value));
    }
    for (size_t port = 0; port < node.outputs.size(); ++port) {
        if (node.outputs[port].valid()) {
            const graph::Value& value = graph.value(node.outputs[port]);
            text += QStringLiteral("\nout %1: %2  %3")
                        .arg(port)
                        .arg(qstr(value.name), valueSummary(value));
        }
    }
    return text;
}

NodeItem::Content contentOf(const graph::Graph& graph, const layout::LayoutItem& item,
                            const GraphTheme& theme,
                            const layout::GraphLayoutModel* model = nullptr) {
    const QFontMetricsF detail(theme.detailFont);
    NodeItem::Content content;
    if (item.kind != layout::ItemKind::Op) {
        const graph::Value& value = graph.value(item.value);
        content.io = true;
        content.title = item.kind == layout::ItemKind::GraphInput ? QStringLiteral("input")
                                                                  : QStringLiteral("output");
        content.fullName = qstr(value.name);
        content.detail = valueSummary(value);
        content.toolTip = content.title + QLatin1Char(' ') + content.fullName + QLatin1Char('\n') +
                          content.detail;
    } else {
        const graph::Node& node = graph.node(item.node);
        content.opType = qstr(node.opType);
        content.title = node.isDefaultDomain()
                            ? content.opType
                            : qstr(node.domain) + QLatin1Char('.') + content.opType;
        content.fullName = qstr(node.name);
        QStringList shapes;
        for (graph::ValueId output : node.outputs) {
            if (output.valid()) {
                shapes.push_back(qstr(graph.value(output).shape.toString()));
            }
        }
        content.detail = shapes.join(QStringLiteral(", "));
        content.toolTip = opToolTip(graph, node, model);
    }
    content.name = detail.elidedText(content.fullName, Qt::ElideMiddle, kMaxTextWidth);
    content.detail = detail.elidedText(content.detail, Qt::ElideRight, kMaxTextWidth);
    return content;
}

layout::Size measure(const NodeItem::Content& content, const GraphTheme& theme) {
    const QFontMetricsF title(theme.titleFont);
    const QFontMetricsF detail(theme.detailFont);
    if (content.io) {
        const double width =
            std::max(title.horizontalAdvance(content.title + QLatin1Char(' ') + content.name),
                     detail.horizontalAdvance(content.detail));
        return {std::ceil(width + 2 * kPaddingX + title.height()),
                std::ceil(title.height() + detail.height() + 6)};
    }
    const double width =
        std::max({title.horizontalAdvance(content.title), detail.horizontalAdvance(content.name),
                  detail.horizontalAdvance(content.detail)});
    return {std::ceil(std::max(kMinOpWidth, width + 2 * kPaddingX)),
            std::ceil(title.height() + 2 * kHeaderPadding + 2 * detail.height() + 6)};
}

const QString kModelInputPrefix = QStringLiteral("nncf_model_input_");
constexpr double kBadgeOffset = 9;
constexpr double kWeightBadgeInset = 16;

QString badgeToolTip(const quantization::QuantizerMark& mark) {
    // Single-member unified groups arrive here without their group (see showQuantizers).
    QString text = QStringLiteral("Quantizer #%1 at %2 (%3)\n%4")
                       .arg(mark.id)
                       .arg(qstr(mark.point.toString()),
                            qstr(std::string(quantization::statusName(mark.status))),
                            qstr(mark.config.toString()));
    if (mark.linkedTo) {
        text += mark.status == quantization::QuantizerStatus::Merged
                    ? QStringLiteral("\nmerged into #%1").arg(*mark.linkedTo)
                    : QStringLiteral("\nrequantizes #%1").arg(*mark.linkedTo);
    }
    if (mark.unifiedGroup) {
        text += QStringLiteral("\nunified-scale group %1 (shares one scale with the other "
                               "ringed badges of this colour)")
                    .arg(*mark.unifiedGroup);
    }
    text +=
        QStringLiteral("\n%1 candidate config(s) allowed here by the hardware config%2")
            .arg(mark.candidateCount)
            .arg(mark.candidateCount > 1 ? QStringLiteral(" (the small number beside the badge)")
                                         : QString());
    QStringList ops;
    for (const std::string& op : mark.directlyQuantized) {
        ops.push_back(qstr(op));
    }
    if (!ops.isEmpty()) {
        text += QStringLiteral("\nquantizes: ") + ops.join(QStringLiteral(", "));
    }
    return text;
}

QPointF toQt(layout::Point p) {
    return {p.x, p.y};
}

QPainterPath pathOf(const std::vector<layout::Point>& bezier) {
    QPainterPath path(toQt(bezier.front()));
    for (size_t i = 1; i + 2 < bezier.size(); i += 3) {
        path.cubicTo(toQt(bezier[i]), toQt(bezier[i + 1]), toQt(bezier[i + 2]));
    }
    return path;
}
} // namespace

GraphScene::GraphScene(QObject* parent)
    : QGraphicsScene(parent)
    , m_theme(GraphTheme::light()) {
    setBackgroundBrush(m_theme.background);
    connect(this, &QGraphicsScene::selectionChanged, this, &GraphScene::updateHighlights);
}

GraphScene::~GraphScene() {
    clearGraph(); // before QGraphicsScene deletes items that highlights still point at
}

void GraphScene::setTheme(const GraphTheme& theme) {
    m_theme = theme;
    setBackgroundBrush(m_theme.background);
    update();
}

layout::GraphLayoutModel GraphScene::prepareLayout(const graph::Graph& graph) const {
    layout::GraphLayoutModel model = layout::buildLayoutModel(graph);
    layout::setSizes(model, [&](const layout::LayoutItem& item) {
        return measure(contentOf(graph, item, m_theme), m_theme);
    });
    return model;
}

void GraphScene::clearGraph() {
    const QSignalBlocker blocker(this);
    m_highlightedNodes.clear();
    m_highlightedEdges.clear();
    m_matches.clear();
    m_badges.clear();
    m_badgeById.clear();
    m_badgeLinks.clear();
    m_shownMarks.clear();
    m_nodeByName.clear();
    m_nodes.clear();
    m_edges.clear();
    m_anchors.clear();
    m_boxOfItem.clear();
    m_itemOfNode.clear();
    m_contents.clear();
    m_groupBoxes.clear();
    m_frames.clear();
    m_tree = {};
    m_expanded.clear();
    m_portCount = 0;
    clear();
}

namespace {
constexpr double kMinGroupWidth = 150;
constexpr size_t kOpTypesShown = 3;

/// "24 ops · 8 Conv, 8 BatchNormalization, 6 Relu…" for the ops of `group`.
QString groupOpSummary(const graph::Graph& graph, const layout::GraphLayoutModel& model,
                       const layout::GroupTree& tree, uint32_t group) {
    std::map<std::string, int> counts;
    std::vector<uint32_t> stack{group};
    while (!stack.empty()) {
        const uint32_t at = stack.back();
        stack.pop_back();
        for (uint32_t item : tree.groups[at].nodes) {
            if (model.items[item].kind == layout::ItemKind::Op) {
                ++counts[graph.node(model.items[item].node).opType];
            }
        }
        stack.insert(stack.end(), tree.groups[at].groups.begin(), tree.groups[at].groups.end());
    }
    std::vector<std::pair<int, std::string>> byCount;
    int total = 0;
    for (const auto& [op, count] : counts) {
        byCount.emplace_back(-count, op);
        total += count;
    }
    std::sort(byCount.begin(), byCount.end());
    QStringList parts;
    for (size_t i = 0; i < byCount.size() && i < kOpTypesShown; ++i) {
        parts.push_back(
            QStringLiteral("%1 %2").arg(-byCount[i].first).arg(qstr(byCount[i].second)));
    }
    QString text = QStringLiteral("%1 op(s)").arg(total);
    if (!parts.isEmpty()) {
        text += QStringLiteral(" · ") + parts.join(QStringLiteral(", "));
    }
    if (byCount.size() > kOpTypesShown) {
        text += QStringLiteral(", …");
    }
    return text;
}

NodeItem::Content groupContent(const graph::Graph& graph, const layout::GraphLayoutModel& model,
                               const layout::GroupTree& tree, uint32_t group,
                               const GraphTheme& theme) {
    const QFontMetricsF detail(theme.detailFont);
    const layout::LayoutGroup& g = tree.groups[group];
    NodeItem::Content content;
    content.group = group;
    content.title = QStringLiteral("\u25B8 ") + qstr(g.name);
    content.fullName = qstr(g.artificial ? g.path + " (" + g.name + ")" : g.path);
    content.opType = QStringLiteral("group");
    const QString ops = groupOpSummary(graph, model, tree, group);
    content.name = detail.elidedText(ops, Qt::ElideRight, kMaxTextWidth);
    content.toolTip = QStringLiteral("%1\n%2\nDouble-click to expand")
                          .arg(content.fullName.isEmpty() ? qstr(g.name) : content.fullName, ops);
    return content;
}

QPointF anchorOf(const layout::Point& p) {
    return {p.x, p.y};
}
} // namespace

std::vector<layout::Size> GraphScene::measureGroups(const graph::Graph& graph,
                                                    const layout::GraphLayoutModel& model,
                                                    const layout::GroupTree& tree) const {
    std::vector<layout::Size> sizes(tree.groups.size());
    for (uint32_t g = 1; g < tree.groups.size(); ++g) {
        NodeItem::Content content = groupContent(graph, model, tree, g, m_theme);
        // Room for the quantizer summary line filled in later.
        content.detail = QStringLiteral("000 quantizers · 8-bit 000, 4-bit 000");
        layout::Size size = measure(content, m_theme);
        size.width = std::max(size.width, kMinGroupWidth);
        sizes[g] = size;
    }
    return sizes;
}

void GraphScene::populate(const graph::Graph& graph, const layout::GraphLayoutModel& model,
                          const layout::Layout& placed) {
    // A flat layout is a grouped one with the root alone.
    layout::GroupTree tree;
    tree.groups.emplace_back();
    tree.groups[0].nodeCount = model.items.size();
    tree.groupOfNode.assign(model.items.size(), 0);
    for (uint32_t i = 0; i < model.items.size(); ++i) {
        tree.groups[0].nodes.push_back(i);
    }
    layout::GroupedLayout grouped;
    grouped.nodes = placed.nodes;
    grouped.nodeVisible.assign(placed.nodes.size(), true);
    grouped.groups.resize(1);
    grouped.bounds = placed.bounds;
    for (uint32_t e = 0; e < model.input.edges.size(); ++e) {
        const layout::LayoutEdge& edge = model.input.edges[e];
        grouped.edges.push_back({{false, edge.from},
                                 edge.fromPort,
                                 {false, edge.to},
                                 edge.toPort,
                                 placed.edges[e].bezier,
                                 e});
    }
    populate(graph, model, tree, {true}, grouped);
}

void GraphScene::populate(const graph::Graph& graph, const layout::GraphLayoutModel& model,
                          const layout::GroupTree& tree, const std::vector<bool>& expanded,
                          const layout::GroupedLayout& placed) {
    const QSignalBlocker blocker(this);
    clearGraph();
    m_tree = tree;
    m_expanded = expanded;
    m_itemOfNode = model.itemOfNode;
    for (const graph::NodeId node : graph.nodeIds()) {
        m_nodeByName.try_emplace(graph.node(node).name, node);
    }
    m_contents.reserve(model.items.size());
    for (const layout::LayoutItem& item : model.items) {
        m_contents.push_back(contentOf(graph, item, m_theme, &model));
    }
    m_boxOfItem.assign(model.items.size(), UINT32_MAX);
    const auto addBox = [this](NodeItem::Content content, const layout::Rect& box,
                               graph::NodeId node, const std::vector<layout::Point>& inputs,
                               const std::vector<layout::Point>& outputs) {
        const auto index = static_cast<uint32_t>(m_nodes.size());
        auto* item = new NodeItem(std::move(content), QRectF(box.x, box.y, box.width, box.height),
                                  index, node, m_theme);
        addItem(item);
        m_nodes.push_back(item);
        m_anchors.push_back({inputs, outputs});
        return item;
    };
    for (uint32_t i = 0; i < model.items.size(); ++i) {
        if (!placed.nodeVisible[i]) {
            continue;
        }
        const layout::LayoutItem& item = model.items[i];
        const layout::PlacedNode& box = placed.nodes[i];
        m_boxOfItem[i] = static_cast<uint32_t>(m_nodes.size());
        NodeItem* node =
            addBox(m_contents[i], box.box, item.node, box.inputAnchors, box.outputAnchors);
        for (uint32_t port = 0; port < box.inputAnchors.size(); ++port) {
            const bool op = item.kind == layout::ItemKind::Op;
            const graph::ValueId value = op ? graph.node(item.node).inputs[port] : item.value;
            if (!value.valid()) {
                continue; // an empty optional input is no insertion point
            }
            auto* portItem =
                new PortItem(PortSide::Input, port, model.isConstant(graph, value), m_theme, node);
            portItem->setPos(node->mapFromScene(anchorOf(box.inputAnchors[port])));
            ++m_portCount;
        }
        for (uint32_t port = 0; port < box.outputAnchors.size(); ++port) {
            auto* portItem = new PortItem(PortSide::Output, port, false, m_theme, node);
            const graph::ValueId value = item.kind == layout::ItemKind::Op
                                             ? graph.node(item.node).outputs[port]
                                             : item.value;
            if (value.valid()) {
                portItem->setToolTip(
                    QStringLiteral("out %1: %2\n%3")
                        .arg(port)
                        .arg(qstr(graph.value(value).name), valueSummary(graph.value(value))));
            }
            portItem->setPos(node->mapFromScene(anchorOf(box.outputAnchors[port])));
            ++m_portCount;
        }
    }
    const QFontMetricsF detail(m_theme.detailFont);
    const double header = detail.height() + 4;
    for (uint32_t g = 1; g < tree.groups.size() && g < placed.groups.size(); ++g) {
        const layout::PlacedGroup& group = placed.groups[g];
        if (!group.visible) {
            continue;
        }
        if (group.expanded) {
            const layout::LayoutGroup& info = tree.groups[g];
            auto* frame = new GroupFrameItem(
                g, qstr(info.artificial ? info.name : info.path),
                QRectF(group.box.x, group.box.y, group.box.width, group.box.height),
                std::min(header, 20.0), static_cast<int>(info.depth), m_theme);
            addItem(frame);
            m_frames.emplace(g, frame);
            continue;
        }
        m_groupBoxes.emplace(g, static_cast<uint32_t>(m_nodes.size()));
        NodeItem* box = addBox(groupContent(graph, model, tree, g, m_theme), group.box, {},
                               group.inputAnchors, group.outputAnchors);
        for (uint32_t port = 0; port < group.inputAnchors.size(); ++port) {
            auto* portItem = new PortItem(PortSide::Input, port, false, m_theme, box);
            portItem->setPos(box->mapFromScene(anchorOf(group.inputAnchors[port])));
        }
        for (uint32_t port = 0; port < group.outputAnchors.size(); ++port) {
            auto* portItem = new PortItem(PortSide::Output, port, false, m_theme, box);
            portItem->setPos(box->mapFromScene(anchorOf(group.outputAnchors[port])));
        }
    }
    for (uint32_t i = 0; i < model.items.size(); ++i) {
        if (m_boxOfItem[i] == UINT32_MAX) {
            const layout::Unit unit = layout::visibleUnit(m_tree, m_expanded, i);
            if (auto found = m_groupBoxes.find(unit.index);
                unit.isGroup && found != m_groupBoxes.end()) {
                m_boxOfItem[i] = found->second;
            }
        }
    }
    m_edges.reserve(placed.edges.size());
    const auto boxOf = [this](const layout::Unit& unit) -> NodeItem* {
        if (unit.isGroup) {
            const auto found = m_groupBoxes.find(unit.index);
            return found == m_groupBoxes.end() ? nullptr : m_nodes[found->second];
        }
        const uint32_t box = m_boxOfItem[unit.index];
        return box == UINT32_MAX ? nullptr : m_nodes[box];
    };
    for (const layout::DrawnEdge& edge : placed.edges) {
        NodeItem* tail = boxOf(edge.from);
        NodeItem* head = boxOf(edge.to);
        if (tail == nullptr || head == nullptr) {
            continue;
        }
        auto* item = new EdgeItem(pathOf(edge.bezier), tail, head, m_theme);
        const graph::Value& value = graph.value(model.edgeValues[edge.edge]);
        item->setToolTip(qstr(value.name) + QLatin1Char('\n') + valueSummary(value));
        addItem(item);
        tail->addOutEdge(item);
        head->addInEdge(item);
        m_edges.push_back(item);
    }
    const layout::Rect& bounds = placed.bounds;
    setSceneRect(QRectF(bounds.x, bounds.y, bounds.width, bounds.height)
                     .adjusted(-kSceneMargin, -kSceneMargin, kSceneMargin, kSceneMargin));
}

NodeItem* GraphScene::groupBox(uint32_t group) const {
    const auto found = m_groupBoxes.find(group);
    return found == m_groupBoxes.end() ? nullptr : m_nodes[found->second];
}

GroupFrameItem* GraphScene::groupFrame(uint32_t group) const {
    const auto found = m_frames.find(group);
    return found == m_frames.end() ? nullptr : found->second;
}

std::optional<uint32_t> GraphScene::itemOf(graph::NodeId node) const {
    if (node.index() >= m_itemOfNode.size() ||
        m_itemOfNode[node.index()] == layout::GraphLayoutModel::kNoItem) {
        return std::nullopt;
    }
    return m_itemOfNode[node.index()];
}

bool GraphScene::isItemDrawn(uint32_t item) const {
    return item < m_boxOfItem.size() && m_boxOfItem[item] != UINT32_MAX &&
           !m_nodes[m_boxOfItem[item]]->group();
}

std::vector<uint32_t> GraphScene::findItems(const QString& text, bool regex) const {
    std::vector<uint32_t> matches;
    if (text.isEmpty()) {
        return matches;
    }
    const QRegularExpression pattern(regex ? text : QRegularExpression::escape(text),
                                     QRegularExpression::CaseInsensitiveOption);
    if (!pattern.isValid()) {
        return matches;
    }
    for (uint32_t i = 0; i < m_contents.size(); ++i) {
        if (pattern.match(m_contents[i].fullName).hasMatch() ||
            pattern.match(m_contents[i].title).hasMatch()) {
            matches.push_back(i);
        }
    }
    return matches;
}

void GraphScene::mouseDoubleClickEvent(QGraphicsSceneMouseEvent* event) {
    for (QGraphicsItem* item : items(event->scenePos())) {
        if (item->type() == NodeItem::Type) {
            if (auto group = static_cast<NodeItem*>(item)->group()) {
                Q_EMIT groupToggleRequested(*group);
                event->accept();
                return;
            }
            break; // an op box: not a group
        }
        if (item->type() == GroupFrameItem::Type) {
            auto* frame = static_cast<GroupFrameItem*>(item);
            if (frame->onHeader(event->scenePos())) {
                Q_EMIT groupToggleRequested(frame->group());
                event->accept();
                return;
            }
        }
    }
    QGraphicsScene::mouseDoubleClickEvent(event);
}

std::optional<uint32_t> GraphScene::boxIndex(graph::NodeId node) const {
    const std::optional<uint32_t> item = itemOf(node);
    if (!item || m_boxOfItem[*item] == UINT32_MAX) {
        return std::nullopt;
    }
    return m_boxOfItem[*item];
}

QPointF GraphScene::portAnchor(uint32_t box, PortSide side, uint32_t port) const {
    const Anchors& anchors = m_anchors.at(box);
    return anchorOf(side == PortSide::Input ? anchors.inputs.at(port) : anchors.outputs.at(port));
}

void GraphScene::previewBits(const std::unordered_map<int, int>& bitsById) {
    for (QuantizerBadgeItem* item : m_badges) {
        const auto bits = bitsById.find(item->quantizerId());
        item->setPreviewBits(bits == bitsById.end() ? std::nullopt
                                                    : std::optional<int>(bits->second));
    }
}

void GraphScene::clearBitsPreview() {
    for (QuantizerBadgeItem* item : m_badges) {
        item->setPreviewBits(std::nullopt);
    }
}

QuantizerBadgeItem* GraphScene::badge(int id) const {
    auto found = m_badgeById.find(id);
    return found == m_badgeById.end() ? nullptr : found->second;
}

void GraphScene::clearQuantizers() {
    for (const auto& [id, item] : m_badgeLinks) {
        delete item;
    }
    for (QuantizerBadgeItem* item : m_badges) {
        delete item;
    }
    m_badgeLinks.clear();
    m_badges.clear();
    m_badgeById.clear();
    m_shownMarks.clear();
}

NodeItem* GraphScene::targetBox(const quantization::InsertionPoint& point) const {
    const QString name = qstr(point.targetNodeName);
    // Graph::findNode scans every node: the name index keeps thousands of badges linear.
    if (auto node = m_nodeByName.find(point.targetNodeName); node != m_nodeByName.end()) {
        if (auto box = boxIndex(node->second)) {
            return m_nodes[*box];
        }
    } else if (name.startsWith(kModelInputPrefix)) {
        // NNCF names graph inputs nncf_model_input_N: the N-th input box.
        const int wanted = name.mid(kModelInputPrefix.size()).toInt();
        int seen = 0;
        for (NodeItem* node : m_nodes) {
            if (node->content().io && node->content().title == QLatin1String("input") &&
                seen++ == wanted) {
                return node;
            }
        }
    }
    return nullptr;
}

std::optional<QPointF> GraphScene::badgePosition(const quantization::InsertionPoint& point) const {
    NodeItem* item = targetBox(point);
    if (item == nullptr || item->group()) {
        return std::nullopt; // inside a collapsed group: counted in its summary
    }
    const Anchors& placed = m_anchors[item->layoutIndex()];
    if (point.isWeight) {
        const QRectF box = item->sceneBox();
        return QPointF(box.right() - kWeightBadgeInset, box.top() + kWeightBadgeInset);
    }
    if (point.inputPortId) {
        const auto port = static_cast<size_t>(*point.inputPortId);
        if (port >= placed.inputs.size()) {
            return std::nullopt;
        }
        return anchorOf(placed.inputs[port]) - QPointF(0, kBadgeOffset);
    }
    if (placed.outputs.empty()) {
        return std::nullopt;
    }
    return anchorOf(placed.outputs.front()) + QPointF(0, kBadgeOffset);
}

void GraphScene::updateGroupSummaries(const std::vector<quantization::QuantizerMark>& marks) {
    if (m_groupBoxes.empty()) {
        return;
    }
    std::unordered_map<uint32_t, std::map<int, int>> bits; // box -> bit width -> count
    for (const quantization::QuantizerMark& mark : marks) {
        if (mark.status == quantization::QuantizerStatus::Merged) {
            continue;
        }
        NodeItem* box = targetBox(mark.point);
        if (box != nullptr && box->group()) {
            ++bits[box->layoutIndex()][mark.config.numBits];
        }
    }
    for (const auto& [group, box] : m_groupBoxes) {
        NodeItem* item = m_nodes[box];
        const auto found = bits.find(box);
        QString summary = QStringLiteral("no quantizers");
        if (found != bits.end()) {
            int total = 0;
            QStringList mix;
            for (auto it = found->second.rbegin(); it != found->second.rend(); ++it) {
                total += it->second;
                mix.push_back(it->first > 0
                                  ? QStringLiteral("%1-bit %2").arg(it->first).arg(it->second)
                                  : QStringLiteral("float %1").arg(it->second));
            }
            summary = QStringLiteral("%1 quantizer(s) · %2")
                          .arg(total)
                          .arg(mix.join(QStringLiteral(", ")));
        }
        QString tip = item->content().toolTip.section(QStringLiteral("\nQuantizers: "), 0, 0);
        item->setDetail(summary, tip + QStringLiteral("\nQuantizers: ") + summary);
    }
}

namespace {
constexpr double kBadgeStackOffset = 17;

/// `mark` without its unified-scale group when it is the group's only member: NNCF's meaning
/// is "shares its scale with the others", and a ring around a lone badge only puzzles.
quantization::QuantizerMark withoutLoneGroup(const quantization::QuantizerMark& mark,
                                             const std::map<int, int>& members) {
    quantization::QuantizerMark copy = mark;
    if (mark.unifiedGroup) {
        const auto found = members.find(*mark.unifiedGroup);
        if (found == members.end() || found->second <= 1) {
            copy.unifiedGroup.reset();
        }
    }
    return copy;
}

/// Live members of every unified-scale group.
std::map<int, int> groupMembers(const std::vector<quantization::QuantizerMark>& marks) {
    std::map<int, int> members;
    for (const quantization::QuantizerMark& mark : marks) {
        if (mark.unifiedGroup && mark.status != quantization::QuantizerStatus::Merged) {
            ++members[*mark.unifiedGroup];
        }
    }
    return members;
}

QuantizerBadgeItem::Content badgeContent(const quantization::QuantizerMark& mark) {
    QuantizerBadgeItem::Content content;
    content.id = mark.id;
    content.weight = mark.point.isWeight;
    content.bits = mark.config.numBits;
    content.candidates = mark.candidateCount;
    content.merged = mark.status == quantization::QuantizerStatus::Merged;
    content.requantizer = mark.status == quantization::QuantizerStatus::Requantizer;
    content.group = mark.unifiedGroup;
    return content;
}

bool samePoints(const std::vector<quantization::QuantizerMark>& a,
                const std::vector<quantization::QuantizerMark>& b) {
    return std::equal(
        a.begin(), a.end(), b.begin(), b.end(),
        [](const quantization::QuantizerMark& x, const quantization::QuantizerMark& y) {
            return x.id == y.id && x.point == y.point;
        });
}
} // namespace

QPainterPath GraphScene::linkPath(const QPointF& from, const QPointF& to) const {
    // Boxes between the two badges (vertically) that a straight line would cross: the link
    // runs down a lane right of them instead of through their labels.
    constexpr double kLaneGap = 10;
    const double top = std::min(from.y(), to.y());
    const double bottom = std::max(from.y(), to.y());
    const double left = std::min(from.x(), to.x());
    const double right = std::max(from.x(), to.x());
    double lane = -1e300;
    for (const NodeItem* node : m_nodes) {
        const QRectF box = node->sceneBox();
        if (box.bottom() > top && box.top() < bottom && box.right() > left - 1 &&
            box.left() < right + 1 && !box.contains(from) && !box.contains(to)) {
            lane = std::max(lane, box.right() + kLaneGap);
        }
    }
    QPainterPath path(from);
    if (lane < -1e299) {
        path.lineTo(to);
        return path;
    }
    lane = std::max(lane, right);
    path.lineTo(lane, from.y());
    path.lineTo(lane, to.y());
    path.lineTo(to);
    return path;
}

void GraphScene::addBadgeLink(const quantization::QuantizerMark& mark) {
    QuantizerBadgeItem* from = mark.linkedTo ? badge(mark.id) : nullptr;
    QuantizerBadgeItem* to = mark.linkedTo ? badge(*mark.linkedTo) : nullptr;
    if (from == nullptr || to == nullptr) {
        return;
    }
    auto* link = new QGraphicsPathItem(linkPath(from->pos(), to->pos()));
    link->setPen(QPen(m_theme.secondaryText, 1.0, Qt::DotLine));
    link->setBrush(Qt::NoBrush);
    link->setZValue(3);
    addItem(link);
    m_badgeLinks[mark.id] = link;
}

bool GraphScene::updateChangedQuantizers(const std::vector<quantization::QuantizerMark>& marks) {
    if (m_shownMarks.empty() || !samePoints(marks, m_shownMarks)) {
        return false;
    }
    for (size_t i = 0; i < marks.size(); ++i) {
        const quantization::QuantizerMark& mark = marks[i];
        if (mark == m_shownMarks[i]) {
            continue;
        }
        m_shownMarks[i] = mark; // copying only the changed marks keeps an edit cheap
        QuantizerBadgeItem* item = badge(mark.id);
        if (item == nullptr) {
            continue; // its node is not drawn
        }
        const quantization::QuantizerMark drawn = withoutLoneGroup(mark, groupMembers(marks));
        item->setContent(badgeContent(drawn));
        item->setToolTip(badgeToolTip(drawn));
        if (auto link = m_badgeLinks.find(mark.id); link != m_badgeLinks.end()) {
            delete link->second;
            m_badgeLinks.erase(link);
        }
        addBadgeLink(mark);
    }
    return true;
}

void GraphScene::showQuantizers(const std::vector<quantization::QuantizerMark>& marks) {
    if (updateChangedQuantizers(marks)) {
        updateGroupSummaries(marks);
        return;
    }
    clearQuantizers();
    m_badges.reserve(marks.size());
    std::map<std::pair<long, long>, int> taken; // badges already at a (rounded) position
    const std::map<int, int> members = groupMembers(marks);
    for (const quantization::QuantizerMark& shown : marks) {
        const std::optional<QPointF> at = badgePosition(shown.point);
        if (!at) {
            continue;
        }
        const quantization::QuantizerMark mark = withoutLoneGroup(shown, members);
        auto* badge = new QuantizerBadgeItem(badgeContent(mark), m_theme);
        // A requantizer and a regular quantizer on one point: side by side, not stacked, so each
        // keeps its own tooltip.
        int& count = taken[{std::lround(at->x()), std::lround(at->y())}];
        badge->setPos(*at + QPointF(kBadgeStackOffset * count, 0));
        ++count;
        badge->setToolTip(badgeToolTip(mark));
        addItem(badge);
        m_badges.push_back(badge);
        m_badgeById.emplace(mark.id, badge);
    }
    for (const quantization::QuantizerMark& mark : marks) {
        addBadgeLink(mark);
    }
    m_shownMarks = marks;
    updateGroupSummaries(marks);
}

std::vector<NodeItem*> GraphScene::find(const QString& text, bool regex) const {
    std::vector<NodeItem*> matches;
    if (text.isEmpty()) {
        return matches;
    }
    const QRegularExpression pattern(regex ? text : QRegularExpression::escape(text),
                                     QRegularExpression::CaseInsensitiveOption);
    if (!pattern.isValid()) {
        return matches;
    }
    for (NodeItem* node : m_nodes) {
        const NodeItem::Content& content = node->content();
        if (pattern.match(content.fullName).hasMatch() || pattern.match(content.title).hasMatch()) {
            matches.push_back(node);
        }
    }
    return matches;
}

void GraphScene::markMatches(const std::vector<NodeItem*>& matches) {
    for (NodeItem* node : m_matches) {
        node->setSearchMatch(false);
    }
    m_matches = matches;
    for (NodeItem* node : m_matches) {
        node->setSearchMatch(true);
    }
}

void GraphScene::clearHighlights() {
    for (NodeItem* node : m_highlightedNodes) {
        node->setHighlight(Highlight::None);
    }
    for (EdgeItem* edge : m_highlightedEdges) {
        edge->setHighlight(Highlight::None);
    }
    m_highlightedNodes.clear();
    m_highlightedEdges.clear();
}

void GraphScene::selectQuantizers(const std::vector<int>& ids) {
    {
        const QSignalBlocker blocker(this);
        clearSelection();
        for (int id : ids) {
            if (QuantizerBadgeItem* item = badge(id)) {
                item->setSelected(true);
            }
        }
    }
    Q_EMIT selectionChanged();
}

std::vector<int> GraphScene::selectedQuantizers() const {
    std::vector<int> ids;
    for (QGraphicsItem* item : selectedItems()) {
        if (item->type() == QuantizerBadgeItem::Type) {
            ids.push_back(static_cast<QuantizerBadgeItem*>(item)->quantizerId());
        }
    }
    std::sort(ids.begin(), ids.end());
    return ids;
}

void GraphScene::updateHighlights() {
    clearHighlights();
    for (QGraphicsItem* item : selectedItems()) {
        if (item->type() != NodeItem::Type) {
            continue;
        }
        const auto* node = static_cast<NodeItem*>(item);
        for (EdgeItem* edge : node->inEdges()) {
            edge->setHighlight(Highlight::Input);
            edge->tail()->setHighlight(Highlight::Input);
            m_highlightedEdges.push_back(edge);
            m_highlightedNodes.push_back(edge->tail());
        }
        for (EdgeItem* edge : node->outEdges()) {
            edge->setHighlight(Highlight::Output);
            edge->head()->setHighlight(Highlight::Output);
            m_highlightedEdges.push_back(edge);
            m_highlightedNodes.push_back(edge->head());
        }
    }
}

} // namespace qs::ui
