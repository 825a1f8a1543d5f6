// The only file that includes cgraph/gvc. Everything Graphviz allocates is owned by RAII
// wrappers; one mutex serializes all calls.

#include "core/layout/graphviz_layout.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

namespace qs::layout::detail {

namespace {
constexpr double kPointsPerInch = 72.0;

std::mutex& graphvizMutex() {
    static std::mutex mutex;
    return mutex;
}

/// Swallows cgraph's warnings (e.g. about spline routing); failures surface as return codes.
int ignoreGraphvizMessage(char*) {
    return 0;
}

struct ContextDeleter {
    void operator()(GVC_t* context) const { gvFreeContext(context); }
};

/// The process-wide Graphviz context, created on first use. Call with the mutex held.
GVC_t* context() {
    static const std::unique_ptr<GVC_t, ContextDeleter> instance = [] {
        agseterr(AGMAX);
        agseterrf(ignoreGraphvizMessage);
        return std::unique_ptr<GVC_t, ContextDeleter>(gvContext());
    }();
    return instance.get();
}

/// An open cgraph graph, laid out at most once; frees the layout and the graph on destruction.
class DotSession {
public:
    explicit DotSession(GVC_t* gvc)
        : m_gvc(gvc) {
        std::string name = "section";
        m_graph = agopen(name.data(), Agdirected, nullptr);
    }

    DotSession(const DotSession&) = delete;
    DotSession& operator=(const DotSession&) = delete;

    ~DotSession() {
        if (m_graph == nullptr) {
            return;
        }
        if (m_laidOut) {
            gvFreeLayout(m_gvc, m_graph);
        }
        agclose(m_graph);
    }

    Agraph_t* graph() const { return m_graph; }

    bool layout() {
        m_laidOut = gvLayout(m_gvc, m_graph, "dot") == 0;
        return m_laidOut;
    }

private:
    GVC_t* m_gvc;
    Agraph_t* m_graph = nullptr;
    bool m_laidOut = false;
};

std::string inches(double points) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.4f", points / kPointsPerInch);
    return buffer;
}

Agsym_t* declare(Agraph_t* graph, int kind, const char* name, const char* fallback) {
    std::string key = name;
    std::string value = fallback;
    return agattr(graph, kind, key.data(), value.data());
}

void set(void* object, Agsym_t* symbol, std::string value) {
    agxset(object, symbol, value.data());
}

/// Graph, node and edge defaults: fixed-size empty boxes, edges without arrows that leave at
/// the bottom and enter at the top.
struct Symbols {
    Agsym_t* width;
    Agsym_t* height;
};

Symbols declareDefaults(Agraph_t* graph, const DotGraph& spec) {
    declare(graph, AGRAPH, "rankdir", "TB");
    declare(graph, AGRAPH, "splines", "spline");
    declare(graph, AGRAPH, "nodesep", inches(spec.nodeSeparation).c_str());
    declare(graph, AGRAPH, "ranksep", inches(spec.rankSeparation).c_str());
    declare(graph, AGRAPH, "rank", "");
    declare(graph, AGNODE, "shape", "box");
    declare(graph, AGNODE, "fixedsize", "true");
    declare(graph, AGNODE, "label", "");
    declare(graph, AGEDGE, "arrowhead", "none");
    declare(graph, AGEDGE, "tailport", "s");
    declare(graph, AGEDGE, "headport", "n");
    return {declare(graph, AGNODE, "width", "1"), declare(graph, AGNODE, "height", "0.5")};
}

/// The subgraph that pins its nodes to the first (`min`) or last (`max`) rank.
Agraph_t* rankSubgraph(Agraph_t* graph, const char* rank) {
    std::string name = std::string("pin_") + rank;
    Agraph_t* sub = agsubg(graph, name.data(), 1);
    std::string key = "rank";
    std::string value = rank;
    std::string fallback;
    agsafeset(sub, key.data(), value.data(), fallback.data());
    return sub;
}

std::vector<Agnode_t*> addNodes(Agraph_t* graph, const DotGraph& spec, const Symbols& symbols) {
    std::vector<Agnode_t*> nodes;
    nodes.reserve(spec.nodes.size());
    Agraph_t* first = nullptr;
    Agraph_t* last = nullptr;
    for (size_t i = 0; i < spec.nodes.size(); ++i) {
        std::string name = "n" + std::to_string(i);
        Agnode_t* node = agnode(graph, name.data(), 1);
        set(node, symbols.width, inches(spec.nodes[i].size.width));
        set(node, symbols.height, inches(spec.nodes[i].size.height));
        if (spec.nodes[i].pin == RankPin::First) {
            first = first != nullptr ? first : rankSubgraph(graph, "min");
            agsubnode(first, node, 1);
        } else if (spec.nodes[i].pin == RankPin::Last) {
            last = last != nullptr ? last : rankSubgraph(graph, "max");
            agsubnode(last, node, 1);
        }
        nodes.push_back(node);
    }
    return nodes;
}

double distance(pointf a, Point b) {
    return std::hypot(a.x - b.x, a.y - b.y);
}

/// The edge's spline in our coordinates, oriented from `tail` to `head`.
std::vector<Point> readPath(Agedge_t* edge, double top, double left, Point tail) {
    std::vector<Point> points;
    const splines* spl = ED_spl(edge);
    if (spl == nullptr) {
        return points;
    }
    for (int b = 0; b < spl->size; ++b) {
        const bezier& curve = spl->list[b];
        for (int i = 0; i < curve.size; ++i) {
            if (!points.empty() && i == 0) {
                continue; // consecutive pieces share their joint
            }
            points.push_back({curve.list[i].x - left, top - curve.list[i].y});
        }
    }
    if (points.size() >= 2 && distance(pointf{points.front().x, points.front().y}, tail) >
                                  distance(pointf{points.back().x, points.back().y}, tail)) {
        std::reverse(points.begin(), points.end());
    }
    return points;
}
} // namespace

Result<DotResult> runDot(const DotGraph& spec) {
    const std::lock_guard lock(graphvizMutex());
    DotSession session(context());
    Agraph_t* graph = session.graph();
    if (graph == nullptr) {
        return Error(Errc::Internal, "Graphviz could not create a graph");
    }
    const Symbols symbols = declareDefaults(graph, spec);
    const std::vector<Agnode_t*> nodes = addNodes(graph, spec, symbols);
    std::vector<Agedge_t*> edges;
    edges.reserve(spec.edges.size());
    for (const DotEdge& edge : spec.edges) {
        edges.push_back(agedge(graph, nodes[edge.tail], nodes[edge.head], nullptr, 1));
    }
    if (!session.layout()) {
        return Error(Errc::Internal, "Graphviz dot layout failed");
    }
    const boxf box = GD_bb(graph);
    DotResult result;
    result.size = {box.UR.x - box.LL.x, box.UR.y - box.LL.y};
    result.centers.reserve(nodes.size());
    for (Agnode_t* node : nodes) {
        result.centers.push_back({ND_coord(node).x - box.LL.x, box.UR.y - ND_coord(node).y});
    }
    result.paths.reserve(edges.size());
    for (size_t e = 0; e < edges.size(); ++e) {
        const Point tail = result.centers[spec.edges[e].tail];
        result.paths.push_back(readPath(edges[e], box.UR.y, box.LL.x, tail));
    }
    return result;
}

} // namespace qs::layout::detail
