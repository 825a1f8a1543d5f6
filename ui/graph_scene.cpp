#include "ui/graph_scene.h"

#include <QFontMetricsF>
#include <QGraphicsLineItem>
#include <QPen>
#include <QRegularExpression>

#include <algorithm>

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

QString opToolTip(const graph::Graph& graph, const graph::Node& node) {
    QString text = qstr(node.opType) + QStringLiteral("  ") + qstr(node.name);
    for (size_t port = 0; port < node.inputs.size(); ++port) {
        if (!node.inputs[port].valid()) {
            continue;
        }
        const graph::Value& value = graph.value(node.inputs[port]);
        text += QStringLiteral("\nin %1%2: %3  %4")
                    .arg(port)
                    .arg(value.isInitializer() ? QStringLiteral(" (weight)") : QString())
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
                            const GraphTheme& theme) {
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
        content.toolTip = opToolTip(graph, node);
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
        text += QStringLiteral("\nunified-scale group %1").arg(*mark.unifiedGroup);
    }
    text += QStringLiteral("\n%1 candidate config(s)").arg(mark.candidateCount);
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
    m_boxOfNode.clear();
    m_portCount = 0;
    m_layout = {};
    clear();
}

void GraphScene::populate(const graph::Graph& graph, const layout::GraphLayoutModel& model,
                          const layout::Layout& placed) {
    const QSignalBlocker blocker(this);
    clearGraph();
    m_layout = placed;
    m_boxOfNode = model.itemOfNode;
    for (const graph::NodeId node : graph.nodeIds()) {
        m_nodeByName.try_emplace(graph.node(node).name, node);
    }
    m_nodes.reserve(model.items.size());
    for (uint32_t i = 0; i < model.items.size(); ++i) {
        const layout::LayoutItem& item = model.items[i];
        const layout::PlacedNode& box = placed.nodes[i];
        auto* node = new NodeItem(contentOf(graph, item, m_theme),
                                  QRectF(box.box.x, box.box.y, box.box.width, box.box.height), i,
                                  item.node, m_theme);
        addItem(node);
        for (uint32_t port = 0; port < box.inputAnchors.size(); ++port) {
            const bool op = item.kind == layout::ItemKind::Op;
            const graph::ValueId value = op ? graph.node(item.node).inputs[port] : item.value;
            if (!value.valid()) {
                continue; // an empty optional input is no insertion point
            }
            auto* portItem = new PortItem(PortSide::Input, port, graph.value(value).isInitializer(),
                                          m_theme, node);
            portItem->setPos(node->mapFromScene(toQt(box.inputAnchors[port])));
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
            portItem->setPos(node->mapFromScene(toQt(box.outputAnchors[port])));
            ++m_portCount;
        }
        m_nodes.push_back(node);
    }
    m_edges.reserve(model.input.edges.size());
    for (size_t e = 0; e < model.input.edges.size(); ++e) {
        const layout::LayoutEdge& edge = model.input.edges[e];
        auto* item = new EdgeItem(pathOf(placed.edges[e].bezier), m_nodes[edge.from],
                                  m_nodes[edge.to], m_theme);
        const graph::Value& value = graph.value(model.edgeValues[e]);
        item->setToolTip(qstr(value.name) + QLatin1Char('\n') + valueSummary(value));
        addItem(item);
        m_nodes[edge.from]->addOutEdge(item);
        m_nodes[edge.to]->addInEdge(item);
        m_edges.push_back(item);
    }
    const layout::Rect& bounds = placed.bounds;
    setSceneRect(QRectF(bounds.x, bounds.y, bounds.width, bounds.height)
                     .adjusted(-kSceneMargin, -kSceneMargin, kSceneMargin, kSceneMargin));
}

std::optional<uint32_t> GraphScene::boxIndex(graph::NodeId node) const {
    if (node.index() >= m_boxOfNode.size() ||
        m_boxOfNode[node.index()] == layout::GraphLayoutModel::kNoItem) {
        return std::nullopt;
    }
    return m_boxOfNode[node.index()];
}

QPointF GraphScene::portAnchor(uint32_t box, PortSide side, uint32_t port) const {
    const layout::PlacedNode& node = m_layout.nodes.at(box);
    return toQt(side == PortSide::Input ? node.inputAnchors.at(port) : node.outputAnchors.at(port));
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

std::optional<QPointF> GraphScene::badgePosition(const quantization::InsertionPoint& point) const {
    const QString name = qstr(point.targetNodeName);
    NodeItem* item = nullptr;
    // Graph::findNode scans every node: the name index keeps thousands of badges linear.
    if (auto node = m_nodeByName.find(point.targetNodeName); node != m_nodeByName.end()) {
        if (auto box = boxIndex(node->second)) {
            item = m_nodes[*box];
        }
    } else if (name.startsWith(kModelInputPrefix)) {
        // NNCF names graph inputs nncf_model_input_N: the N-th input box.
        const int wanted = name.mid(kModelInputPrefix.size()).toInt();
        int seen = 0;
        for (NodeItem* node : m_nodes) {
            if (node->content().io && node->content().title == QLatin1String("input") &&
                seen++ == wanted) {
                item = node;
                break;
            }
        }
    }
    if (item == nullptr) {
        return std::nullopt;
    }
    const layout::PlacedNode& placed = m_layout.nodes[item->layoutIndex()];
    if (point.isWeight) {
        const QRectF box = item->sceneBox();
        return QPointF(box.right() - kWeightBadgeInset, box.top() + kWeightBadgeInset);
    }
    if (point.inputPortId) {
        const auto port = static_cast<size_t>(*point.inputPortId);
        if (port >= placed.inputAnchors.size()) {
            return std::nullopt;
        }
        return toQt(placed.inputAnchors[port]) - QPointF(0, kBadgeOffset);
    }
    if (placed.outputAnchors.empty()) {
        return std::nullopt;
    }
    return toQt(placed.outputAnchors.front()) + QPointF(0, kBadgeOffset);
}

namespace {
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

void GraphScene::addBadgeLink(const quantization::QuantizerMark& mark) {
    QuantizerBadgeItem* from = mark.linkedTo ? badge(mark.id) : nullptr;
    QuantizerBadgeItem* to = mark.linkedTo ? badge(*mark.linkedTo) : nullptr;
    if (from == nullptr || to == nullptr) {
        return;
    }
    auto* link = new QGraphicsLineItem(QLineF(from->pos(), to->pos()));
    link->setPen(QPen(m_theme.secondaryText, 1.0, Qt::DotLine));
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
        item->setContent(badgeContent(mark));
        item->setToolTip(badgeToolTip(mark));
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
        return;
    }
    clearQuantizers();
    m_badges.reserve(marks.size());
    for (const quantization::QuantizerMark& mark : marks) {
        const std::optional<QPointF> at = badgePosition(mark.point);
        if (!at) {
            continue;
        }
        auto* badge = new QuantizerBadgeItem(badgeContent(mark), m_theme);
        badge->setPos(*at);
        badge->setToolTip(badgeToolTip(mark));
        addItem(badge);
        m_badges.push_back(badge);
        m_badgeById.emplace(mark.id, badge);
    }
    for (const quantization::QuantizerMark& mark : marks) {
        addBadgeLink(mark);
    }
    m_shownMarks = marks;
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
