// GraphPattern and its matcher, after NNCF's common/graph/patterns and graph_matching: a pattern is
// a small multigraph of metatype sets whose weakly connected components are alternatives; the
// matcher finds node-induced subgraph isomorphisms in the inference graph, longest alternative
// first, each model node in at most one match. The pattern tables (HW fused patterns, ignored
// patterns) are data built from these combinators in fused_patterns.cpp / ignored_patterns.cpp.
#pragma once

#include "core/graph/graph.h"

#include <string>
#include <string_view>
#include <vector>

namespace qs::quantization {

enum class PatternNodeKind {
    Op,         ///< one of `metatypes`
    Any,        ///< any op, part of the match (ANY_PATTERN_NODE_TYPE)
    NonPattern, ///< any op outside the match: only its edges count (NON_PATTERN_NODE_TYPE)
};

struct PatternNode {
    PatternNodeKind kind = PatternNodeKind::Op;
    std::vector<std::string_view> metatypes; ///< NNCF metatype names (Op nodes)
    bool excluded = false;                   ///< matched but not reported (PATTERN_NODE_TO_EXCLUDE)
};

class GraphPattern {
public:
    /// A one-node pattern.
    static GraphPattern node(std::vector<std::string_view> metatypes, bool excluded = false);
    static GraphPattern anyNode();
    static GraphPattern nonPatternNode();

    int addNode(PatternNode node);
    void addEdge(int from, int to);

    /// Adds `other`'s components as alternatives (NNCF add_pattern_alternative).
    void addAlternative(const GraphPattern& other);

    /// Every component of this pattern followed by every component of `other`: the last node of
    /// one (lexicographic topological order of node ids) feeds the first node of the other; a first
    /// node of kind Any/NonPattern is replaced by the last node (NNCF join_patterns without edges).
    void join(const GraphPattern& other);

    /// Two single-node patterns joined by `degree` parallel edges (NNCF join_patterns_parallel).
    void joinParallel(const GraphPattern& other, int degree);

    /// The alternatives, in order of their lowest node id.
    std::vector<GraphPattern> components() const;

    const std::vector<PatternNode>& nodes() const { return m_nodes; }

    const std::vector<std::pair<int, int>>& edges() const { return m_edges; }

    /// Nodes that are not NonPattern (NNCF's pattern length for sorting).
    size_t patternLength() const;

private:
    /// Appends a copy of `other`, returning the new ids of its nodes.
    std::vector<int> unite(const GraphPattern& other);
    std::vector<int> topologicalOrder() const;

    std::vector<PatternNode> m_nodes;
    std::vector<std::pair<int, int>> m_edges;
};

/// NNCF's inference graph as the matcher sees it: live ops (no-op Casts bypassed), one
/// InputNoopMetatype node per runtime input and one OutputNoopMetatype node per graph output,
/// in NNCF's node order (ops in model order, then inputs, then outputs), with one edge per
/// (tensor, consuming port).
struct PatternGraph {
    struct Node {
        graph::NodeId node; ///< invalid for input/output nodes
        std::string_view metatype;
        std::string key;             ///< NNCF node key "<id> <name>" (for the lexicographic order)
        std::vector<int> successors; ///< one entry per edge
        std::vector<int> predecessors; ///< one entry per edge
    };

    std::vector<Node> nodes;

    static PatternGraph build(const graph::Graph& model, const std::vector<bool>& live);
};

/// Matches of `pattern` in `graph`: each is a list of graph-node indices (NonPattern and excluded
/// nodes left out) in lexicographic topological order of their keys. `strict`: starting nodes have
/// no successors, last nodes no predecessors, inner nodes neither, outside the match.
std::vector<std::vector<int>>
findSubgraphsMatchingPattern(const PatternGraph& graph, const GraphPattern& pattern, bool strict);

} // namespace qs::quantization
