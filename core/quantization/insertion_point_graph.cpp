// Building the InsertionPointGraph: inference-graph mask, fused groups, operator nodes with NNCF
// keys ("<id> <name>", ids in model order with inputs and outputs after the ops), hooks, integer
// edges, barriers after ignored ops, and NNCF's lexicographic topological order.

#include "core/quantization/insertion_point_graph.h"

#include "core/quantization/graph_queries.h"

#include <queue>

#include <algorithm>
// GCC 12 reports a false maybe-uninitialized inside <regex> under sanitizer builds.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <regex>
#pragma GCC diagnostic pop

namespace qs::quantization {

namespace {
using graph::NodeId;
using graph::ValueId;

bool isIntegerValue(const graph::Value& value) {
    return value.dtype != graph::DataType::Undefined && !graph::isFloatingPoint(value.dtype);
}

Result<std::vector<bool>> userIgnoredNodes(const graph::Graph& model, const IgnoredScope& scope) {
    std::vector<bool> ignored(model.numNodeSlots(), false);
    std::vector<std::regex> regexes;
    for (const std::string& pattern : scope.patterns) {
        try {
            regexes.emplace_back(pattern, std::regex::ECMAScript);
        } catch (const std::regex_error& e) {
            return Error(Errc::InvalidArgument, "bad ignore regex '" + pattern + "': " + e.what());
        }
    }
    for (const std::string& name : scope.names) {
        if (!model.findNode(name)) {
            return Error(Errc::InvalidArgument, "ignored node '" + name + "' is not in the model");
        }
    }
    // As NNCF's validated IgnoredScope: a pattern that matches nothing is a mistake worth
    // reporting.
    std::vector<bool> patternUsed(regexes.size(), false);
    for (const NodeId node : model.nodeIds()) {
        const graph::Node& n = model.node(node);
        bool hit = std::find(scope.names.begin(), scope.names.end(), n.name) != scope.names.end() ||
                   std::find(scope.types.begin(), scope.types.end(), n.opType) != scope.types.end();
        for (size_t i = 0; i < regexes.size(); ++i) {
            if (std::regex_match(n.name, regexes[i])) {
                patternUsed[i] = true;
                hit = true;
            }
        }
        ignored[node.index()] = hit;
    }
    for (size_t i = 0; i < regexes.size(); ++i) {
        if (!patternUsed[i]) {
            return Error(Errc::InvalidArgument,
                         "ignore regex '" + scope.patterns[i] + "' matches no node name");
        }
    }
    return ignored;
}
} // namespace

std::vector<bool> inferenceNodeMask(const graph::Graph& model) {
    std::vector<bool> live(model.numNodeSlots(), false);
    std::vector<NodeId> stack;
    for (const ValueId input : model.runtimeInputs()) {
        for (const graph::Use& use : model.value(input).consumers) {
            stack.push_back(use.node);
        }
    }
    while (!stack.empty()) {
        const NodeId node = stack.back();
        stack.pop_back();
        const graph::Node& n = model.node(node);
        if (live[node.index()] || n.removed || n.opType == "Shape") {
            continue;
        }
        live[node.index()] = true;
        for (const ValueId output : n.outputs) {
            if (!output.valid()) {
                continue;
            }
            for (const graph::Use& use : model.value(output).consumers) {
                stack.push_back(use.node);
            }
        }
    }
    return live;
}

int InsertionPointGraph::addNode(IpNode node) {
    m_nodes.push_back(std::move(node));
    m_postHook.push_back(-1);
    return static_cast<int>(m_nodes.size()) - 1;
}

int InsertionPointGraph::addEdge(int from, int to, bool isInteger) {
    m_edges.push_back(IpEdge{from, to, isInteger});
    const int index = static_cast<int>(m_edges.size()) - 1;
    m_nodes[static_cast<size_t>(from)].outEdges.push_back(index);
    m_nodes[static_cast<size_t>(to)].inEdges.push_back(index);
    return index;
}

int InsertionPointGraph::operatorOf(NodeId node) const {
    return node.index() < m_operatorOfNode.size() ? m_operatorOfNode[node.index()] : -1;
}

int InsertionPointGraph::postHookOf(int op) const {
    return m_postHook[static_cast<size_t>(op)];
}

std::vector<int> InsertionPointGraph::successors(int index) const {
    std::vector<int> out;
    for (const int e : m_nodes[static_cast<size_t>(index)].outEdges) {
        out.push_back(m_edges[static_cast<size_t>(e)].to);
    }
    return out;
}

Result<InsertionPointGraph> InsertionPointGraph::build(const graph::Graph& model,
                                                       const IgnoredScope& scope) {
    InsertionPointGraph ipg;
    ipg.m_model = &model;
    std::vector<bool> live = inferenceNodeMask(model);
    // NNCF removes no-op Casts (same input and output type) before building its graph: their
    // consumers read the Cast's input directly.
    std::vector<bool> noopCast(model.numNodeSlots(), false);
    for (const NodeId node : model.nodeIds()) {
        const graph::Node& n = model.node(node);
        if (n.opType == "Cast" && n.inputs.size() == 1 && n.outputs.size() == 1 &&
            n.inputs[0].valid() && n.outputs[0].valid() &&
            model.value(n.inputs[0]).dtype != graph::DataType::Undefined &&
            model.value(n.inputs[0]).dtype == model.value(n.outputs[0]).dtype) {
            noopCast[node.index()] = true;
            live[node.index()] = false;
        }
    }
    QS_ASSIGN_OR_RETURN(std::vector<bool> ignored, userIgnoredNodes(model, scope));
    const std::vector<bool> autoIgnored = autoIgnoredNodes(model, live);
    QS_TRY(model.topologicalOrder()); // a cycle is an error, not an empty graph
    const auto groups = findFusedPatterns(model, live);
    ipg.m_operatorOfNode.assign(model.numNodeSlots(), -1);

    // NNCF numbers the ONNX nodes in model order, then the inputs, then the outputs.
    const std::vector<NodeId> allNodes = model.nodeIds();
    std::vector<size_t> nncfId(model.numNodeSlots(), 0);
    for (size_t i = 0; i < allNodes.size(); ++i) {
        nncfId[allNodes[i].index()] = i;
    }
    auto opKey = [&](NodeId node) {
        return std::to_string(nncfId[node.index()]) + " " + model.node(node).name;
    };

    for (const auto& group : groups) {
        IpNode op;
        op.type = IpNodeType::Operator;
        op.mergedNodes = group;
        op.name = model.node(group.front()).name;
        op.outputNodeName = model.node(group.back()).name;
        op.metatype = &graph::metatypeOf(model, group.front());
        op.ignored = ignored[group.front().index()] || autoIgnored[group.front().index()];
        op.key = opKey(group.front());
        for (size_t i = 1; i < group.size(); ++i) {
            op.key += "\n" + opKey(group[i]);
        }
        const int index = ipg.addNode(std::move(op));
        for (const NodeId member : group) {
            ipg.m_operatorOfNode[member.index()] = index;
        }
    }
    const auto runtimeInputs = model.runtimeInputs();
    std::vector<int> inputOps;
    for (size_t i = 0; i < runtimeInputs.size(); ++i) {
        IpNode op;
        op.kind = OperatorKind::ModelInput;
        op.name = "nncf_model_input_" + std::to_string(i);
        op.outputNodeName = op.name;
        op.metatype = &graph::unknownMetatype();
        op.key = std::to_string(allNodes.size() + i) + " " + op.name;
        inputOps.push_back(ipg.addNode(std::move(op)));
    }
    std::vector<int> outputOps;
    for (size_t i = 0; i < model.outputs().size(); ++i) {
        IpNode op;
        op.kind = OperatorKind::ModelOutput;
        op.name = "nncf_model_output_" + std::to_string(i);
        op.outputNodeName = op.name;
        op.metatype = &graph::unknownMetatype();
        op.key = std::to_string(allNodes.size() + runtimeInputs.size() + i) + " " + op.name;
        outputOps.push_back(ipg.addNode(std::move(op)));
    }

    // Post-hooks (with a barrier in front for ignored ops).
    const size_t numOps = ipg.m_nodes.size();
    for (size_t opIndex = 0; opIndex < numOps; ++opIndex) {
        if (ipg.m_nodes[opIndex].kind == OperatorKind::ModelOutput) {
            continue;
        }
        bool integerOutput = false;
        for (const NodeId member : ipg.m_nodes[opIndex].mergedNodes) {
            for (const ValueId out : model.node(member).outputs) {
                integerOutput = integerOutput || (out.valid() && isIntegerValue(model.value(out)));
            }
        }
        if (ipg.m_nodes[opIndex].kind == OperatorKind::ModelInput) {
            const size_t inputIdx = static_cast<size_t>(
                std::find(inputOps.begin(), inputOps.end(), opIndex) - inputOps.begin());
            integerOutput = isIntegerValue(model.value(runtimeInputs[inputIdx]));
        }
        IpNode hook;
        hook.type = IpNodeType::PostHook;
        hook.op = static_cast<int>(opIndex);
        hook.targetNodeName = ipg.m_nodes[opIndex].outputNodeName;
        hook.key = "POST HOOK " + ipg.m_nodes[opIndex].key;
        const int hookIndex = ipg.addNode(std::move(hook));
        ipg.m_postHook[opIndex] = hookIndex;
        int from = static_cast<int>(opIndex);
        if (ipg.m_nodes[opIndex].ignored) {
            IpNode barrier;
            barrier.type = IpNodeType::AuxiliaryBarrier;
            barrier.op = static_cast<int>(opIndex);
            barrier.key = "BARRIER " + ipg.m_nodes[opIndex].key;
            const int barrierIndex = ipg.addNode(std::move(barrier));
            ipg.addEdge(from, barrierIndex, integerOutput);
            from = barrierIndex;
        }
        ipg.addEdge(from, hookIndex, integerOutput);
    }

    // Pre-hooks: one per input port fed by another operator of the inference graph.
    auto sourceHook = [&](ValueId value) -> int {
        while (model.value(value).producer.valid() &&
               noopCast[model.value(value).producer.index()]) {
            value = model.node(model.value(value).producer).inputs[0];
        }
        const graph::Value& v = model.value(value);
        if (v.producer.valid()) {
            const int op = live[v.producer.index()] ? ipg.m_operatorOfNode[v.producer.index()] : -1;
            return op < 0 ? -1 : ipg.m_postHook[static_cast<size_t>(op)];
        }
        auto it = std::find(runtimeInputs.begin(), runtimeInputs.end(), value);
        return it == runtimeInputs.end()
                   ? -1
                   : ipg.m_postHook[static_cast<size_t>(
                         inputOps[static_cast<size_t>(it - runtimeInputs.begin())])];
    };
    auto addPreHook = [&](int op, NodeId target, uint32_t port, ValueId value) {
        const int source = sourceHook(value);
        if (source < 0) {
            return;
        }
        const bool integer =
            isIntegerValue(model.value(value)) ||
            std::any_of(ipg.m_nodes[static_cast<size_t>(source)].outEdges.begin(),
                        ipg.m_nodes[static_cast<size_t>(source)].outEdges.end(),
                        [&](int e) { return ipg.m_edges[static_cast<size_t>(e)].isInteger; });
        IpNode hook;
        hook.type = IpNodeType::PreHook;
        hook.op = op;
        hook.inputPort = static_cast<int>(port);
        hook.targetNodeName =
            target.valid() ? model.node(target).name : ipg.m_nodes[static_cast<size_t>(op)].name;
        const std::string targetKey =
            target.valid() ? opKey(target) : ipg.m_nodes[static_cast<size_t>(op)].key;
        hook.key = "PRE HOOK " + std::to_string(port) + " " + targetKey;
        const int hookIndex = ipg.addNode(std::move(hook));
        ipg.addEdge(source, hookIndex, integer);
        ipg.addEdge(hookIndex, op, integer);
    };
    for (size_t opIndex = 0; opIndex < numOps; ++opIndex) {
        const std::vector<NodeId> members = ipg.m_nodes[opIndex].mergedNodes;
        for (const NodeId member : members) {
            const graph::Node& n = model.node(member);
            for (uint32_t port = 0; port < n.inputs.size(); ++port) {
                if (!n.inputs[port].valid()) {
                    continue;
                }
                const graph::NodeId producer = model.value(n.inputs[port]).producer;
                if (producer.valid() &&
                    ipg.m_operatorOfNode[producer.index()] == static_cast<int>(opIndex)) {
                    continue; // inner edge of a fused pattern
                }
                addPreHook(static_cast<int>(opIndex), member, port, n.inputs[port]);
            }
        }
    }
    for (size_t i = 0; i < outputOps.size(); ++i) {
        addPreHook(outputOps[i], NodeId{}, 0, model.outputs()[i]);
    }
    ipg.computeLexicographicOrder();
    return ipg;
}

void InsertionPointGraph::computeLexicographicOrder() {
    // networkx.lexicographical_topological_sort: among ready nodes the smallest key goes first.
    std::vector<size_t> inDegree(m_nodes.size(), 0);
    using Entry = std::pair<std::string, int>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
    for (size_t i = 0; i < m_nodes.size(); ++i) {
        inDegree[i] = m_nodes[i].inEdges.size();
        if (inDegree[i] == 0) {
            ready.emplace(m_nodes[i].key, static_cast<int>(i));
        }
    }
    m_lexOrder.clear();
    while (!ready.empty()) {
        const int index = ready.top().second;
        ready.pop();
        if (m_nodes[static_cast<size_t>(index)].type == IpNodeType::Operator) {
            m_lexOrder.push_back(index);
        }
        for (const int e : m_nodes[static_cast<size_t>(index)].outEdges) {
            const int to = m_edges[static_cast<size_t>(e)].to;
            if (--inDegree[static_cast<size_t>(to)] == 0) {
                ready.emplace(m_nodes[static_cast<size_t>(to)].key, to);
            }
        }
    }
}

} // namespace qs::quantization
