// Building the InsertionPointGraph: inference-graph mask, fused groups, operator nodes with NNCF
// keys ("<id> <name>", ids in model order with inputs and outputs after the ops), hooks, integer
// edges, barriers after ignored ops, and NNCF's lexicographic topological order.

#include "core/quantization/insertion_point_graph.h"

#include "core/quantization/graph_queries.h"

#include <queue>

#include <algorithm>
// GCC 12 reports a false maybe-uninitialized inside <regex> under sanitizer builds (clang, which
// builds the fuzz targets, has no such warning and would refuse to ignore it).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <regex>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

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

/// The steps of InsertionPointGraph::build, sharing the masks and id maps they need.
class InsertionPointGraphBuilder {
public:
    InsertionPointGraphBuilder(const graph::Graph& model, InsertionPointGraph& ipg)
        : m_model(model)
        , m_ipg(ipg)
        , m_live(inferenceNodeMask(model))
        , m_noopCast(model.numNodeSlots(), false)
        , m_nncfId(model.numNodeSlots(), 0)
        , m_runtimeInputs(model.runtimeInputs()) {
        // NNCF numbers the ONNX nodes in file order, then the inputs, then the outputs.
        const detail::NncfNodeIds ids = detail::nncfNodeIds(model);
        m_nncfId = ids.byNode;
        m_numModelNodes = ids.modelNodeCount;
        markNoOpCasts();
    }

    Result<void> run(const IgnoredScope& scope, std::string_view targetDevice) {
        QS_ASSIGN_OR_RETURN(std::vector<bool> ignored, userIgnoredNodes(m_model, scope));
        const std::vector<bool> autoIgnored = autoIgnoredNodes(m_model, m_live);
        QS_TRY(m_model.topologicalOrder()); // a cycle is an error, not an empty graph
        m_ipg.m_operatorOfNode.assign(m_model.numNodeSlots(), -1);
        for (const auto& group : findFusedPatterns(m_model, m_live, targetDevice)) {
            const NodeId primary = group.front();
            addOperator(group, ignored[primary.index()] || autoIgnored[primary.index()]);
        }
        for (size_t i = 0; i < m_runtimeInputs.size(); ++i) {
            m_inputOps.push_back(addModelBoundary(OperatorKind::ModelInput, i));
        }
        for (size_t i = 0; i < m_model.outputs().size(); ++i) {
            m_outputOps.push_back(addModelBoundary(OperatorKind::ModelOutput, i));
        }
        const size_t numOps = m_ipg.m_nodes.size();
        for (size_t op = 0; op < numOps; ++op) {
            addPostHook(static_cast<int>(op));
        }
        for (size_t op = 0; op < numOps; ++op) {
            addPreHooksOf(static_cast<int>(op));
        }
        for (size_t i = 0; i < m_outputOps.size(); ++i) {
            addPreHook(m_outputOps[i], NodeId{}, 0, m_model.outputs()[i]);
        }
        m_ipg.computeLexicographicOrder();
        return {};
    }

private:
    /// NNCF removes no-op Casts (same input and output type) before building its graph: their
    /// consumers read the Cast's input directly.
    void markNoOpCasts() {
        for (const NodeId node : m_model.nodeIds()) {
            if (detail::isNoOpCast(m_model, node)) {
                m_noopCast[node.index()] = true;
                m_live[node.index()] = false;
            }
        }
    }

    std::string opKey(NodeId node) const {
        return std::to_string(m_nncfId[node.index()]) + " " + m_model.node(node).name;
    }

    void addOperator(const std::vector<NodeId>& group, bool ignored) {
        IpNode op;
        op.type = IpNodeType::Operator;
        op.mergedNodes = group;
        op.name = m_model.node(group.front()).name;
        op.outputNodeName = m_model.node(group.back()).name;
        op.metatype = &graph::metatypeOf(m_model, group.front());
        op.ignored = ignored;
        op.key = opKey(group.front());
        for (size_t i = 1; i < group.size(); ++i) {
            op.key += "\n" + opKey(group[i]);
        }
        const int index = m_ipg.addNode(std::move(op));
        for (const NodeId member : group) {
            m_ipg.m_operatorOfNode[member.index()] = index;
        }
    }

    int addModelBoundary(OperatorKind kind, size_t index) {
        IpNode op;
        op.kind = kind;
        const bool input = kind == OperatorKind::ModelInput;
        op.name = (input ? "nncf_model_input_" : "nncf_model_output_") + std::to_string(index);
        op.outputNodeName = op.name;
        op.metatype = &graph::unknownMetatype();
        const size_t id = m_numModelNodes + (input ? 0 : m_runtimeInputs.size()) + index;
        op.key = std::to_string(id) + " " + op.name;
        return m_ipg.addNode(std::move(op));
    }

    bool hasIntegerOutput(int opIndex) const {
        const IpNode& op = m_ipg.node(opIndex);
        if (op.kind == OperatorKind::ModelInput) {
            const auto it = std::find(m_inputOps.begin(), m_inputOps.end(), opIndex);
            return isIntegerValue(
                m_model.value(m_runtimeInputs[static_cast<size_t>(it - m_inputOps.begin())]));
        }
        for (const NodeId member : op.mergedNodes) {
            for (const ValueId out : m_model.node(member).outputs) {
                if (out.valid() && isIntegerValue(m_model.value(out))) {
                    return true;
                }
            }
        }
        return false;
    }

    /// The post-hook of an op, behind a barrier when the op is ignored.
    void addPostHook(int opIndex) {
        const IpNode& op = m_ipg.node(opIndex);
        if (op.kind == OperatorKind::ModelOutput) {
            return;
        }
        const bool integerOutput = hasIntegerOutput(opIndex);
        IpNode hook;
        hook.type = IpNodeType::PostHook;
        hook.op = opIndex;
        hook.targetNodeName = op.outputNodeName;
        hook.key = "POST HOOK " + op.key;
        const bool ignored = op.ignored;
        const std::string barrierKey = "BARRIER " + op.key;
        const int hookIndex = m_ipg.addNode(std::move(hook));
        m_ipg.m_postHook[static_cast<size_t>(opIndex)] = hookIndex;
        int from = opIndex;
        if (ignored) {
            IpNode barrier;
            barrier.type = IpNodeType::AuxiliaryBarrier;
            barrier.op = opIndex;
            barrier.key = barrierKey;
            const int barrierIndex = m_ipg.addNode(std::move(barrier));
            m_ipg.addEdge(from, barrierIndex, integerOutput);
            from = barrierIndex;
        }
        m_ipg.addEdge(from, hookIndex, integerOutput);
    }

    /// The post-hook producing `value` (through no-op Casts), -1 when outside the inference graph.
    int sourceHook(ValueId value) const {
        while (m_model.value(value).producer.valid() &&
               m_noopCast[m_model.value(value).producer.index()]) {
            value = m_model.node(m_model.value(value).producer).inputs[0];
        }
        const graph::Value& v = m_model.value(value);
        if (v.producer.valid()) {
            const int op =
                m_live[v.producer.index()] ? m_ipg.m_operatorOfNode[v.producer.index()] : -1;
            return op < 0 ? -1 : m_ipg.m_postHook[static_cast<size_t>(op)];
        }
        auto it = std::find(m_runtimeInputs.begin(), m_runtimeInputs.end(), value);
        if (it == m_runtimeInputs.end()) {
            return -1;
        }
        return m_ipg.m_postHook[static_cast<size_t>(
            m_inputOps[static_cast<size_t>(it - m_runtimeInputs.begin())])];
    }

    void addPreHook(int op, NodeId target, uint32_t port, ValueId value) {
        const int source = sourceHook(value);
        if (source < 0) {
            return;
        }
        const auto& sourceEdges = m_ipg.node(source).outEdges;
        const bool integer = isIntegerValue(m_model.value(value)) ||
                             std::any_of(sourceEdges.begin(), sourceEdges.end(),
                                         [&](int e) { return m_ipg.edge(e).isInteger; });
        IpNode hook;
        hook.type = IpNodeType::PreHook;
        hook.op = op;
        hook.inputPort = static_cast<int>(port);
        hook.targetNodeName = target.valid() ? m_model.node(target).name : m_ipg.node(op).name;
        const std::string targetKey = target.valid() ? opKey(target) : m_ipg.node(op).key;
        hook.key = "PRE HOOK " + std::to_string(port) + " " + targetKey;
        const int hookIndex = m_ipg.addNode(std::move(hook));
        m_ipg.addEdge(source, hookIndex, integer);
        m_ipg.addEdge(hookIndex, op, integer);
    }

    /// One pre-hook per input port of the op's first node: NNCF keeps only the in-edges of a
    /// fused pattern's first node (inputs of later members from outside, such as x in
    /// Sub(x, ReduceMean(x)), are dropped).
    void addPreHooksOf(int opIndex) {
        const std::vector<NodeId>& merged = m_ipg.node(opIndex).mergedNodes;
        if (merged.empty()) {
            return; // model inputs and outputs
        }
        for (const NodeId member : {merged.front()}) {
            const graph::Node& n = m_model.node(member);
            for (uint32_t port = 0; port < n.inputs.size(); ++port) {
                if (!n.inputs[port].valid()) {
                    continue;
                }
                const graph::NodeId producer = m_model.value(n.inputs[port]).producer;
                if (producer.valid() && m_ipg.m_operatorOfNode[producer.index()] == opIndex) {
                    continue; // inner edge of a fused pattern
                }
                addPreHook(opIndex, member, port, n.inputs[port]);
            }
        }
    }

    const graph::Graph& m_model;
    InsertionPointGraph& m_ipg;
    std::vector<bool> m_live;
    std::vector<bool> m_noopCast;
    std::vector<size_t> m_nncfId;
    size_t m_numModelNodes = 0;
    std::vector<ValueId> m_runtimeInputs;
    std::vector<int> m_inputOps;
    std::vector<int> m_outputOps;
};

Result<InsertionPointGraph> InsertionPointGraph::build(const graph::Graph& model,
                                                       const IgnoredScope& scope,
                                                       std::string_view targetDevice) {
    InsertionPointGraph ipg;
    ipg.m_model = &model;
    InsertionPointGraphBuilder builder(model, ipg);
    QS_TRY(builder.run(scope, targetDevice));
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
