#include "core/layout/graph_layout.h"

#include "core/layout/group_tree.h"

#include <algorithm>
#include <unordered_map>

namespace qs::layout {

namespace {
/// Live ops in a stable topological order, or in insertion order when the graph has a cycle.
std::vector<graph::NodeId> drawingOrder(const graph::Graph& graph) {
    auto order = graph.topologicalOrder();
    if (order.ok()) {
        return std::move(order).value();
    }
    return graph.nodeIds();
}

/// True when `node` has at least one input and every one is an initializer or folded, and no
/// subgraph (an If's branches decide at run time).
bool foldsToConstant(const graph::Graph& graph, const graph::Node& node,
                     const std::vector<bool>& folded) {
    if (node.hasSubgraph()) {
        return false;
    }
    bool anyInput = false;
    for (graph::ValueId input : node.inputs) {
        if (!input.valid()) {
            continue;
        }
        anyInput = true;
        if (!graph.value(input).isInitializer() && !folded[input.index()]) {
            return false;
        }
    }
    return anyInput;
}

bool feedsGraphOutput(const graph::Graph& graph, const graph::Node& node) {
    return std::any_of(node.outputs.begin(), node.outputs.end(),
                       [&graph](graph::ValueId output) { return graph.isOutput(output); });
}

/// Marks the outputs of ops whose every input is a constant (in drawing order, so chains of
/// them fold too). Ops without inputs (a RandomNormal) and ops with a subgraph stay drawn, and so
/// does a graph output with its producer.
size_t markFolded(const graph::Graph& graph, const std::vector<graph::NodeId>& order,
                  std::vector<bool>& folded, std::vector<bool>& foldedNode) {
    folded.assign(graph.numValues(), false);
    foldedNode.assign(graph.numNodeSlots(), false);
    size_t count = 0;
    for (graph::NodeId id : order) {
        const graph::Node& node = graph.node(id);
        if (!foldsToConstant(graph, node, folded) || feedsGraphOutput(graph, node)) {
            continue;
        }
        foldedNode[id.index()] = true;
        ++count;
        for (graph::ValueId output : node.outputs) {
            if (output.valid()) {
                folded[output.index()] = true;
            }
        }
    }
    return count;
}
} // namespace

std::string blockScope(std::string_view nodeName) {
    if (nodeName.size() < 2 || nodeName.front() != '/') {
        return {};
    }
    const size_t first = nodeName.find('/', 1);
    if (first == std::string_view::npos) {
        return {};
    }
    const size_t second = nodeName.find('/', first + 1);
    if (second == std::string_view::npos) {
        return std::string(nodeName.substr(0, first)); // "/fc/Gemm" -> "/fc"
    }
    return std::string(nodeName.substr(0, second));
}

GraphLayoutModel buildLayoutModel(const graph::Graph& graph) {
    GraphLayoutModel model;
    std::unordered_map<std::string, uint32_t> scopeIds;
    model.itemOfNode.assign(graph.numNodeSlots(), GraphLayoutModel::kNoItem);
    std::vector<uint32_t> itemOfInput(graph.numValues(), GraphLayoutModel::kNoItem);
    const auto addItem = [&model](LayoutItem item, uint32_t inputs, uint32_t outputs) {
        model.items.push_back(item);
        model.input.nodes.push_back(LayoutNode{{}, inputs, outputs});
        return static_cast<uint32_t>(model.items.size() - 1);
    };
    for (graph::ValueId value : graph.runtimeInputs()) {
        itemOfInput[value.index()] = addItem({ItemKind::GraphInput, {}, value}, 0, 1);
    }
    const std::vector<graph::NodeId> order = drawingOrder(graph);
    std::vector<bool> foldedNode;
    model.foldedCount = markFolded(graph, order, model.foldedValues, foldedNode);
    for (graph::NodeId id : order) {
        if (foldedNode[id.index()]) {
            continue;
        }
        const graph::Node& node = graph.node(id);
        model.itemOfNode[id.index()] =
            addItem({ItemKind::Op, id, {}}, static_cast<uint32_t>(node.inputs.size()),
                    static_cast<uint32_t>(node.outputs.size()));
        if (std::string scope = blockScope(node.name); !scope.empty()) {
            const auto [it, added] =
                scopeIds.try_emplace(std::move(scope), static_cast<uint32_t>(scopeIds.size() + 1));
            model.input.nodes.back().scope = it->second;
        }
    }
    // The tail of an edge carrying `value`: its producer's box or its graph-input box.
    const auto tailOf = [&](graph::ValueId value, uint32_t& item, uint32_t& port) {
        const graph::Value& v = graph.value(value);
        if (v.producer.valid()) {
            item = model.itemOfNode[v.producer.index()];
            port = v.producerPort;
        } else {
            item = itemOfInput[value.index()];
            port = 0;
        }
        return item != GraphLayoutModel::kNoItem;
    };
    for (graph::NodeId id : order) {
        if (foldedNode[id.index()]) {
            continue;
        }
        const graph::Node& node = graph.node(id);
        for (uint32_t port = 0; port < node.inputs.size(); ++port) {
            const graph::ValueId value = node.inputs[port];
            uint32_t tail = 0;
            uint32_t tailPort = 0;
            if (!value.valid() || !tailOf(value, tail, tailPort)) {
                continue;
            }
            model.input.edges.push_back({tail, tailPort, model.itemOfNode[id.index()], port});
            model.edgeValues.push_back(value);
        }
    }
    for (graph::ValueId value : graph.outputs()) {
        const uint32_t item = addItem({ItemKind::GraphOutput, {}, value}, 1, 0);
        uint32_t tail = 0;
        uint32_t tailPort = 0;
        if (tailOf(value, tail, tailPort)) {
            model.input.edges.push_back({tail, tailPort, item, 0});
            model.edgeValues.push_back(value);
        }
    }
    return model;
}

void setSizes(GraphLayoutModel& model, const std::function<Size(const LayoutItem&)>& measure) {
    for (size_t i = 0; i < model.items.size(); ++i) {
        model.input.nodes[i].size = measure(model.items[i]);
    }
}

std::vector<std::vector<std::string>> itemScopes(const graph::Graph& graph,
                                                 const GraphLayoutModel& model) {
    std::vector<std::vector<std::string>> scopes(model.items.size());
    for (size_t i = 0; i < model.items.size(); ++i) {
        if (model.items[i].kind == ItemKind::Op) {
            scopes[i] = scopePath(graph.node(model.items[i].node).name);
        }
    }
    return scopes;
}

std::string itemLabel(const graph::Graph& graph, const LayoutItem& item) {
    switch (item.kind) {
    case ItemKind::Op: {
        const graph::Node& node = graph.node(item.node);
        return node.opType + ' ' + node.name;
    }
    case ItemKind::GraphInput:
        return "input " + graph.value(item.value).name;
    case ItemKind::GraphOutput:
        return "output " + graph.value(item.value).name;
    }
    return {};
}

} // namespace qs::layout
