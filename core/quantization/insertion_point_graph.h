// InsertionPointGraph: the graph quantizers move on (reference/nncf-quantization.md §1.1). Every
// op of the inference part of the model (reachable from the inputs, shape-of subgraphs and
// constant subgraphs dropped, as NNCF's inference graph) becomes an operator node with one
// pre-hook per fed input port and one post-hook; HW-fused patterns (Conv+BN+activation, a bias
// Add, Add+ReLU, swish, ...) collapse into one operator node; ignored ops get a barrier after them.
// The same structure serves as NNCF's QuantizerPropagationStateGraph: the solver keeps its
// quantizer state in side arrays indexed by node and edge.
#pragma once

#include "core/graph/graph.h"
#include "core/graph/metatype.h"
#include "core/quantization/graph_pattern.h"
#include "core/support/result.h"

#include <string>
#include <vector>

namespace qs::quantization {

/// NNCF's QuantizerPropagationStateGraphNodeType values.
enum class IpNodeType { PreHook = 0, PostHook = 1, Operator = 2, AuxiliaryBarrier = 3 };

enum class OperatorKind { Regular, ModelInput, ModelOutput };

struct IpNode {
    IpNodeType type = IpNodeType::Operator;
    std::string key; ///< NNCF's node key ("PRE HOOK 0 12 /conv", "POST HOOK 12 /conv", ...)
    std::vector<int> inEdges;
    std::vector<int> outEdges;

    // Operator nodes.
    OperatorKind kind = OperatorKind::Regular;
    std::vector<graph::NodeId> mergedNodes; ///< fused pattern, primary node first
    std::string name;                       ///< primary node name (nncf_model_input_<i> for inputs)
    std::string outputNodeName; ///< the node whose output leaves the op (post-hook target)
    const graph::Metatype* metatype = nullptr;
    bool ignored = false;

    // Hook nodes.
    int op = -1;        ///< the operator node the hook belongs to
    int inputPort = -1; ///< pre-hook port; -1 for post-hooks
    std::string targetNodeName;

    bool isInsertionPoint() const {
        return type == IpNodeType::PreHook || type == IpNodeType::PostHook;
    }
};

struct IpEdge {
    int from = -1;
    int to = -1;
    bool isInteger = false;
};

/// Why an op is excluded from quantization.
struct IgnoredScope {
    std::vector<std::string> names;    ///< exact node names
    std::vector<std::string> patterns; ///< ECMAScript regexes matched against whole node names
    std::vector<std::string> types;    ///< ONNX op types
};

class InsertionPointGraph {
public:
    /// Builds the graph for `model`; `ignored` adds user scopes (bad regex → error). NNCF's
    /// automatic ignores (SE blocks, TopK/NMS post-processing) are applied too.
    /// `targetDevice` ("CPU", "GPU", "NPU", ...) selects the device-specific fused patterns.
    static Result<InsertionPointGraph> build(const graph::Graph& model, const IgnoredScope& ignored,
                                             std::string_view targetDevice = "CPU");

    const std::vector<IpNode>& nodes() const { return m_nodes; }

    const std::vector<IpEdge>& edges() const { return m_edges; }

    const IpNode& node(int index) const { return m_nodes[static_cast<size_t>(index)]; }

    const IpEdge& edge(int index) const { return m_edges[static_cast<size_t>(index)]; }

    /// Operator node of a graph node (fused ops share one); -1 when not in the inference graph.
    int operatorOf(graph::NodeId node) const;

    /// The post-hook of an operator node, -1 if none.
    int postHookOf(int op) const;

    /// Operator nodes in NNCF's lexicographic topological order of node keys.
    const std::vector<int>& lexicographicOperatorOrder() const { return m_lexOrder; }

    /// Successor node indices.
    std::vector<int> successors(int index) const;

    const graph::Graph& model() const { return *m_model; }

private:
    friend class InsertionPointGraphBuilder;

    int addNode(IpNode node);
    int addEdge(int from, int to, bool isInteger);
    void computeLexicographicOrder();

    const graph::Graph* m_model = nullptr;
    std::vector<IpNode> m_nodes;
    std::vector<IpEdge> m_edges;
    std::vector<int> m_operatorOfNode; ///< by NodeId index
    std::vector<int> m_postHook;       ///< by IpNode index
    std::vector<int> m_lexOrder;
};

/// The graph nodes of NNCF's inference graph: reachable from the runtime inputs without passing
/// through a Shape op (shape-of subgraphs and constant subgraphs are dropped).
std::vector<bool> inferenceNodeMask(const graph::Graph& model);

/// NNCF's ONNX HW fused patterns for a device, as one pattern of alternatives.
GraphPattern hwFusedPatterns(std::string_view targetDevice);

/// NNCF's atomic_activations_operations(): an atomic activation, swish, hard-swish or GELU.
GraphPattern hwActivationPatterns();

/// Fused HW patterns: groups of graph nodes collapsed into one operator (every live node in one
/// group), members in lexicographic topological order: the first gives the inputs, the last the
/// output.
std::vector<std::vector<graph::NodeId>> findFusedPatterns(const graph::Graph& model,
                                                          const std::vector<bool>& live,
                                                          std::string_view targetDevice);

/// Nodes NNCF ignores on its own: SE-block internals and ops on paths to TopK/NMS outputs.
std::vector<bool> autoIgnoredNodes(const graph::Graph& model, const std::vector<bool>& live);

} // namespace qs::quantization
