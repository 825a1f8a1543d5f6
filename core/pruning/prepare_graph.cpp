#include "core/pruning/prepare_graph.h"

#include "core/graph/op_facts.h"
#include "core/pruning/pruning_section.h"

#include <algorithm>
#include <array>

namespace qs::pruning {

namespace {

using graph::NodeId;
using graph::ValueId;

/// Ops whose constants a pruned channel slices: the entries and exits, and the per-channel ops
/// (graph/op_facts.cpp's pruning roles).
bool untiesConstants(std::string_view opType) {
    return graph::opFacts(opType).pruningRole != graph::PruningRole::Blocks;
}

std::string freshName(const graph::Graph& graph, const std::string& base) {
    if (!graph.findValue(base)) {
        return base;
    }
    for (int i = 1;; ++i) {
        std::string name = base + "_" + std::to_string(i);
        if (!graph.findValue(name)) {
            return name;
        }
    }
}

/// A copy of initializer `source` for input `port` of `node`.
void giveOwnCopy(graph::Graph& graph, NodeId node, uint32_t port, ValueId source,
                 const std::string& base) {
    const graph::TensorPtr data = graph.value(source).initializer;
    const ValueId copy = graph.addInitializer(freshName(graph, base), data);
    graph.setNodeInput(node, port, copy);
}

/// Identity of a constant: each consumer reads its own initializer instead. True if any.
bool inlineConstantIdentities(graph::Graph& graph) {
    bool removed = false;
    for (const NodeId id : graph.nodeIds()) {
        const graph::Node& node = graph.node(id);
        if (node.opType != "Identity" || !node.isDefaultDomain() || node.inputs.size() != 1 ||
            node.outputs.size() != 1 || !graph.value(node.inputs[0]).isInitializer() ||
            graph.isOutput(node.outputs[0])) {
            continue;
        }
        const ValueId out = node.outputs[0];
        const ValueId in = node.inputs[0];
        const std::string name = graph.value(out).name + "_const";
        const std::vector<graph::Use> uses = graph.value(out).consumers;
        graph.removeNode(id);
        for (size_t k = 0; k < uses.size(); ++k) {
            const std::string base = uses.size() == 1 ? name : name + std::to_string(k);
            const ValueId copy =
                graph.addInitializer(freshName(graph, base), graph.value(in).initializer);
            graph.setNodeInput(uses[k].node, uses[k].port, copy);
        }
        removed = true;
    }
    return removed;
}

/// Constants shared by several nodes: one copy per prunable reader. Returns the copies made.
int untieSharedConstants(graph::Graph& graph) {
    int count = 0;
    for (const NodeId id : graph.nodeIds()) {
        const graph::Node& node = graph.node(id);
        if (!node.isDefaultDomain() || !untiesConstants(node.opType)) {
            continue;
        }
        for (uint32_t port = 0; port < graph.node(id).inputs.size(); ++port) {
            const ValueId in = graph.node(id).inputs[port];
            if (in.valid() && graph.value(in).isInitializer() &&
                (graph.value(in).consumers.size() > 1 || graph.isOutput(in))) {
                giveOwnCopy(graph, id, port, in, graph.value(in).name + "_" + graph.node(id).name);
                ++count;
            }
        }
    }
    return count;
}

} // namespace

Result<graph::Graph> preparePruningGraph(const graph::Graph& source, int* untied) {
    graph::Graph graph = source;
    const bool removed = inlineConstantIdentities(graph);
    const int count = untieSharedConstants(graph);
    if (removed || count > 0) {
        graph.compact();
    }
    QS_TRY(graph::verify(graph).context("graph prepared for pruning"));
    if (untied != nullptr) {
        *untied = count;
    }
    return graph;
}

} // namespace qs::pruning
