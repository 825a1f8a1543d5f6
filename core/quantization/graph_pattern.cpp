// GraphPattern combinators and the subgraph matcher (NNCF graph_matching.py semantics: node-induced
// isomorphism with equal edge multiplicities, alternatives sorted by length, greedy and disjoint).

#include "core/quantization/graph_pattern.h"

#include "core/graph/metatype.h"
#include "core/quantization/graph_queries.h"

#include <queue>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace qs::quantization {

GraphPattern GraphPattern::node(std::vector<std::string_view> metatypes, bool excluded) {
    GraphPattern p;
    p.addNode(PatternNode{PatternNodeKind::Op, std::move(metatypes), excluded});
    return p;
}

GraphPattern GraphPattern::anyNode() {
    GraphPattern p;
    p.addNode(PatternNode{PatternNodeKind::Any, {}, false});
    return p;
}

GraphPattern GraphPattern::nonPatternNode() {
    GraphPattern p;
    p.addNode(PatternNode{PatternNodeKind::NonPattern, {}, false});
    return p;
}

int GraphPattern::addNode(PatternNode node) {
    m_nodes.push_back(std::move(node));
    return static_cast<int>(m_nodes.size()) - 1;
}

void GraphPattern::addEdge(int from, int to) {
    m_edges.emplace_back(from, to);
}

std::vector<int> GraphPattern::unite(const GraphPattern& other) {
    std::vector<int> ids;
    for (const PatternNode& n : other.m_nodes) {
        ids.push_back(addNode(n));
    }
    for (const auto& [from, to] : other.m_edges) {
        addEdge(ids[static_cast<size_t>(from)], ids[static_cast<size_t>(to)]);
    }
    return ids;
}

void GraphPattern::addAlternative(const GraphPattern& other) {
    unite(other);
}

std::vector<int> GraphPattern::topologicalOrder() const {
    std::vector<size_t> inDegree(m_nodes.size(), 0);
    for (const auto& edge : m_edges) {
        ++inDegree[static_cast<size_t>(edge.second)];
    }
    std::priority_queue<int, std::vector<int>, std::greater<>> ready;
    for (size_t i = 0; i < m_nodes.size(); ++i) {
        if (inDegree[i] == 0) {
            ready.push(static_cast<int>(i));
        }
    }
    std::vector<int> order;
    while (!ready.empty()) {
        const int n = ready.top();
        ready.pop();
        order.push_back(n);
        for (const auto& [from, to] : m_edges) {
            if (from == n && --inDegree[static_cast<size_t>(to)] == 0) {
                ready.push(to);
            }
        }
    }
    return order;
}

std::vector<GraphPattern> GraphPattern::components() const {
    std::vector<int> component(m_nodes.size(), -1);
    int count = 0;
    for (size_t start = 0; start < m_nodes.size(); ++start) {
        if (component[start] >= 0) {
            continue;
        }
        std::vector<int> stack = {static_cast<int>(start)};
        component[start] = count;
        while (!stack.empty()) {
            const int n = stack.back();
            stack.pop_back();
            for (const auto& [from, to] : m_edges) {
                const int other = from == n ? to : (to == n ? from : -1);
                if (other >= 0 && component[static_cast<size_t>(other)] < 0) {
                    component[static_cast<size_t>(other)] = count;
                    stack.push_back(other);
                }
            }
        }
        ++count;
    }
    std::vector<GraphPattern> out(static_cast<size_t>(count));
    std::vector<int> newId(m_nodes.size(), -1);
    for (size_t i = 0; i < m_nodes.size(); ++i) {
        newId[i] = out[static_cast<size_t>(component[i])].addNode(m_nodes[i]);
    }
    for (const auto& [from, to] : m_edges) {
        out[static_cast<size_t>(component[static_cast<size_t>(from)])].addEdge(
            newId[static_cast<size_t>(from)], newId[static_cast<size_t>(to)]);
    }
    return out;
}

void GraphPattern::join(const GraphPattern& other) {
    GraphPattern result;
    std::set<int> placeholders;
    const auto mine = components();
    const auto theirs = other.components();
    for (const GraphPattern& a : mine) {
        for (const GraphPattern& b : theirs) {
            const std::vector<int> aIds = result.unite(a);
            const std::vector<int> bIds = result.unite(b);
            const int last = aIds[static_cast<size_t>(a.topologicalOrder().back())];
            const int firstLocal = b.topologicalOrder().front();
            const int first = bIds[static_cast<size_t>(firstLocal)];
            if (b.m_nodes[static_cast<size_t>(firstLocal)].kind == PatternNodeKind::Op) {
                result.addEdge(last, first);
                continue;
            }
            // The placeholder first node stands for `last`: its successors (each once) hang
            // below `last`, and the placeholder goes.
            std::set<int> successors;
            for (const auto& [from, to] : result.m_edges) {
                if (from == first) {
                    successors.insert(to);
                }
            }
            std::erase_if(result.m_edges, [&](const auto& e) { return e.first == first; });
            for (const int s : successors) {
                result.addEdge(last, s);
            }
            placeholders.insert(first);
        }
    }
    // Drop the removed placeholders, keeping the order of the others.
    GraphPattern compact;
    std::vector<int> ids(result.m_nodes.size(), -1);
    for (size_t i = 0; i < result.m_nodes.size(); ++i) {
        if (!placeholders.contains(static_cast<int>(i))) {
            ids[i] = compact.addNode(result.m_nodes[i]);
        }
    }
    for (const auto& [from, to] : result.m_edges) {
        compact.addEdge(ids[static_cast<size_t>(from)], ids[static_cast<size_t>(to)]);
    }
    *this = std::move(compact);
}

void GraphPattern::joinParallel(const GraphPattern& other, int degree) {
    const int from = 0;
    const std::vector<int> ids = unite(other);
    for (int i = 0; i < degree; ++i) {
        addEdge(from, ids.front());
    }
}

size_t GraphPattern::patternLength() const {
    return static_cast<size_t>(std::count_if(m_nodes.begin(), m_nodes.end(), [](const auto& n) {
        return n.kind != PatternNodeKind::NonPattern;
    }));
}

PatternGraph PatternGraph::build(const graph::Graph& model, const std::vector<bool>& live) {
    PatternGraph g;
    const std::vector<graph::NodeId> all = model.nodeIds();
    const detail::NncfNodeIds ids = detail::nncfNodeIds(model);
    const auto runtimeInputs = model.runtimeInputs();
    std::vector<int> index(model.numNodeSlots(), -1);
    for (auto id : all) {
        if (!live[id.index()] || detail::isNoOpCast(model, id)) {
            continue;
        }
        index[id.index()] = static_cast<int>(g.nodes.size());
        g.nodes.push_back(Node{id,
                               graph::metatypeOf(model, id).name,
                               std::to_string(ids.byNode[id.index()]) + " " + model.node(id).name,
                               {},
                               {}});
    }
    std::vector<int> inputIndex;
    for (size_t i = 0; i < runtimeInputs.size(); ++i) {
        inputIndex.push_back(static_cast<int>(g.nodes.size()));
        const std::string name = "nncf_model_input_" + std::to_string(i);
        g.nodes.push_back(Node{graph::NodeId{},
                               "InputNoopMetatype",
                               std::to_string(ids.modelNodeCount + i) + " " + name,
                               {},
                               {}});
    }
    // The node feeding `value`, looking through no-op Casts; -1 outside the inference graph.
    auto source = [&](graph::ValueId value) {
        while (model.value(value).producer.valid() &&
               detail::isNoOpCast(model, model.value(value).producer)) {
            value = model.node(model.value(value).producer).inputs[0];
        }
        const graph::NodeId producer = model.value(value).producer;
        if (producer.valid()) {
            return index[producer.index()];
        }
        const auto it = std::find(runtimeInputs.begin(), runtimeInputs.end(), value);
        return it == runtimeInputs.end()
                   ? -1
                   : inputIndex[static_cast<size_t>(it - runtimeInputs.begin())];
    };
    auto link = [&](int from, int to) {
        g.nodes[static_cast<size_t>(from)].successors.push_back(to);
        g.nodes[static_cast<size_t>(to)].predecessors.push_back(from);
    };
    const size_t numOps = g.nodes.size() - inputIndex.size();
    for (size_t n = 0; n < numOps; ++n) {
        for (const graph::ValueId input : model.node(g.nodes[n].node).inputs) {
            if (!input.valid()) {
                continue;
            }
            const int from = source(input);
            if (from >= 0) {
                link(from, static_cast<int>(n));
            }
        }
    }
    for (size_t i = 0; i < model.outputs().size(); ++i) {
        const int to = static_cast<int>(g.nodes.size());
        const std::string name = "nncf_model_output_" + std::to_string(i);
        g.nodes.push_back(
            Node{graph::NodeId{},
                 "OutputNoopMetatype",
                 std::to_string(ids.modelNodeCount + runtimeInputs.size() + i) + " " + name,
                 {},
                 {}});
        const int from = source(model.outputs()[i]);
        if (from >= 0) {
            link(from, to);
        }
    }
    return g;
}

namespace {

size_t countEdges(const std::vector<int>& successors, int to) {
    return static_cast<size_t>(std::count(successors.begin(), successors.end(), to));
}

/// VF2-style enumeration of node-induced subgraph isomorphisms of one pattern component: the
/// next pattern node is the lowest-id unmapped successor of the mapped set, else predecessor,
/// else any; model candidates follow the model's node order.
class ComponentMatcher {
public:
    ComponentMatcher(const PatternGraph& graph, const GraphPattern& pattern)
        : m_graph(graph)
        , m_pattern(pattern)
        , m_succ(pattern.nodes().size())
        , m_pred(pattern.nodes().size())
        , m_core(pattern.nodes().size(), -1)
        , m_used(graph.nodes.size(), false) {
        for (const auto& [from, to] : pattern.edges()) {
            m_succ[static_cast<size_t>(from)].push_back(to);
            m_pred[static_cast<size_t>(to)].push_back(from);
        }
    }

    void run(const std::function<void(const std::vector<int>&)>& onMatch) {
        m_onMatch = &onMatch;
        extend(0);
    }

private:
    bool nodeMatches(int p, int g) const {
        const PatternNode& pn = m_pattern.nodes()[static_cast<size_t>(p)];
        if (pn.kind != PatternNodeKind::Op) {
            return true;
        }
        const std::string_view type = m_graph.nodes[static_cast<size_t>(g)].metatype;
        return std::find(pn.metatypes.begin(), pn.metatypes.end(), type) != pn.metatypes.end();
    }

    /// Edge multiplicities between (p, g) and every mapped pair are equal, both directions.
    bool feasible(int p, int g) const {
        const auto& gSucc = m_graph.nodes[static_cast<size_t>(g)].successors;
        const auto& pSucc = m_succ[static_cast<size_t>(p)];
        if (countEdges(gSucc, g) != countEdges(pSucc, p)) {
            return false;
        }
        for (size_t q = 0; q < m_core.size(); ++q) {
            const int h = m_core[q];
            if (h < 0) {
                continue;
            }
            const auto& hSucc = m_graph.nodes[static_cast<size_t>(h)].successors;
            if (countEdges(gSucc, h) != countEdges(pSucc, static_cast<int>(q)) ||
                countEdges(hSucc, g) != countEdges(m_succ[q], p)) {
                return false;
            }
        }
        return true;
    }

    /// The lowest unmapped pattern node next to a mapped one (through a successor edge when
    /// `outward`, else a predecessor edge), or -1.
    int frontierPatternNode(bool outward) const {
        int best = -1;
        for (size_t q = 0; q < m_core.size(); ++q) {
            if (m_core[q] < 0) {
                continue;
            }
            for (const int n : outward ? m_succ[q] : m_pred[q]) {
                if (m_core[static_cast<size_t>(n)] < 0 && (best < 0 || n < best)) {
                    best = n;
                }
            }
        }
        return best;
    }

    /// The unused model nodes next to mapped ones, the same way, in first-seen order.
    std::vector<int> frontierGraphNodes(bool outward) const {
        std::vector<int> candidates;
        for (int q : m_core) {
            if (q < 0) {
                continue;
            }
            const auto& g = m_graph.nodes[static_cast<size_t>(q)];
            for (const int c : outward ? g.successors : g.predecessors) {
                if (!m_used[static_cast<size_t>(c)] &&
                    std::find(candidates.begin(), candidates.end(), c) == candidates.end()) {
                    candidates.push_back(c);
                }
            }
        }
        return candidates;
    }

    /// The next pattern node and its model candidates: the successor frontier first, then the
    /// predecessor frontier, else the first unmapped pattern node against every unused node.
    std::pair<int, std::vector<int>> nextPair() const {
        for (const bool outward : {true, false}) {
            if (const int best = frontierPatternNode(outward); best >= 0) {
                return {best, frontierGraphNodes(outward)};
            }
        }
        const auto unmapped =
            std::find_if(m_core.begin(), m_core.end(), [](int q) { return q < 0; });
        const int first =
            unmapped == m_core.end() ? -1 : static_cast<int>(unmapped - m_core.begin());
        std::vector<int> candidates;
        for (size_t g = 0; g < m_graph.nodes.size(); ++g) {
            if (!m_used[g]) {
                candidates.push_back(static_cast<int>(g));
            }
        }
        return {first, candidates};
    }

    void extend(size_t depth) {
        if (depth == m_core.size()) {
            (*m_onMatch)(m_core);
            return;
        }
        const auto [p, candidates] = nextPair();
        for (const int g : candidates) {
            if (!nodeMatches(p, g) || !feasible(p, g)) {
                continue;
            }
            m_core[static_cast<size_t>(p)] = g;
            m_used[static_cast<size_t>(g)] = true;
            extend(depth + 1);
            m_core[static_cast<size_t>(p)] = -1;
            m_used[static_cast<size_t>(g)] = false;
        }
    }

    const PatternGraph& m_graph;
    const GraphPattern& m_pattern;
    std::vector<std::vector<int>> m_succ;
    std::vector<std::vector<int>> m_pred;
    std::vector<int> m_core; ///< pattern node -> graph node
    std::vector<bool> m_used;
    const std::function<void(const std::vector<int>&)>* m_onMatch = nullptr;
};

bool isStrictMatch(const PatternGraph& graph, const GraphPattern& pattern,
                   const std::vector<int>& core) {
    const size_t n = pattern.nodes().size();
    std::vector<bool> hasPred(n, false);
    std::vector<bool> hasSucc(n, false);
    for (const auto& [from, to] : pattern.edges()) {
        hasSucc[static_cast<size_t>(from)] = true;
        hasPred[static_cast<size_t>(to)] = true;
    }
    auto inMatch = [&](int g) { return std::find(core.begin(), core.end(), g) != core.end(); };
    for (size_t p = 0; p < n; ++p) {
        if (pattern.nodes()[p].kind == PatternNodeKind::NonPattern) {
            continue;
        }
        const auto& g = graph.nodes[static_cast<size_t>(core[p])];
        const bool externalSucc = !std::all_of(g.successors.begin(), g.successors.end(), inMatch);
        const bool externalPred =
            !std::all_of(g.predecessors.begin(), g.predecessors.end(), inMatch);
        const bool starting = !hasPred[p] && hasSucc[p];
        const bool last = hasPred[p] && !hasSucc[p];
        if ((starting && externalSucc) || (last && externalPred) ||
            (!starting && !last && (externalSucc || externalPred))) {
            return false;
        }
    }
    return true;
}

/// networkx.lexicographical_topological_sort of the subgraph induced by `members` (by key).
std::vector<int> lexicographicOrder(const PatternGraph& graph, const std::vector<int>& members) {
    std::map<int, size_t> inDegree;
    for (const int m : members) {
        inDegree[m] = 0;
    }
    for (const int m : members) {
        for (const int s : graph.nodes[static_cast<size_t>(m)].successors) {
            if (inDegree.contains(s)) {
                ++inDegree[s];
            }
        }
    }
    using Entry = std::pair<std::string, int>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
    for (const auto& [m, degree] : inDegree) {
        if (degree == 0) {
            ready.emplace(graph.nodes[static_cast<size_t>(m)].key, m);
        }
    }
    std::vector<int> order;
    while (!ready.empty()) {
        const int m = ready.top().second;
        ready.pop();
        order.push_back(m);
        for (const int s : graph.nodes[static_cast<size_t>(m)].successors) {
            auto it = inDegree.find(s);
            if (it != inDegree.end() && --it->second == 0) {
                ready.emplace(graph.nodes[static_cast<size_t>(s)].key, s);
            }
        }
    }
    return order;
}
} // namespace

std::vector<std::vector<int>>
findSubgraphsMatchingPattern(const PatternGraph& graph, const GraphPattern& pattern, bool strict) {
    std::vector<GraphPattern> alternatives = pattern.components();
    std::stable_sort(alternatives.begin(), alternatives.end(), [](const auto& a, const auto& b) {
        return a.patternLength() > b.patternLength();
    });
    std::vector<std::vector<int>> out;
    std::vector<bool> matched(graph.nodes.size(), false);
    for (const GraphPattern& alternative : alternatives) {
        ComponentMatcher matcher(graph, alternative);
        matcher.run([&](const std::vector<int>& core) {
            if (strict && !isStrictMatch(graph, alternative, core)) {
                return;
            }
            std::vector<int> members;
            for (size_t p = 0; p < core.size(); ++p) {
                const PatternNode& pn = alternative.nodes()[p];
                if (pn.kind != PatternNodeKind::NonPattern && !pn.excluded) {
                    members.push_back(core[p]);
                }
            }
            if (std::any_of(members.begin(), members.end(),
                            [&](int m) { return matched[static_cast<size_t>(m)]; })) {
                return;
            }
            for (const int m : members) {
                matched[static_cast<size_t>(m)] = true;
            }
            out.push_back(lexicographicOrder(graph, members));
        });
    }
    return out;
}

} // namespace qs::quantization
