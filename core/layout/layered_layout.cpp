#include "core/layout/layered_layout.h"

#include <algorithm>
#include <numeric>

namespace qs::layout::detail {

namespace {
constexpr int kSweeps = 4;

/// Longest-path rank of every node; pinned nodes go to the first or the last rank.
std::vector<uint32_t> rankNodes(const DotGraph& graph) {
    const size_t count = graph.nodes.size();
    std::vector<uint32_t> pending(count, 0);
    std::vector<std::vector<uint32_t>> heads(count);
    for (const DotEdge& edge : graph.edges) {
        if (edge.tail != edge.head) {
            ++pending[edge.head];
            heads[edge.tail].push_back(edge.head);
        }
    }
    std::vector<uint32_t> rank(count, 0);
    std::vector<uint32_t> ready;
    for (uint32_t node = 0; node < count; ++node) {
        if (pending[node] == 0) {
            ready.push_back(node);
        }
    }
    std::vector<bool> done(count, false);
    size_t next = 0;
    while (next < ready.size()) {
        const uint32_t node = ready[next++];
        done[node] = true;
        for (uint32_t head : heads[node]) {
            rank[head] = std::max(rank[head], rank[node] + 1);
            if (--pending[head] == 0) {
                ready.push_back(head);
            }
        }
    }
    uint32_t last = 0;
    for (uint32_t node = 0; node < count; ++node) {
        last = std::max(last, rank[node]); // nodes on a cycle keep the rank reached so far
    }
    for (uint32_t node = 0; node < count; ++node) {
        if (graph.nodes[node].pin == RankPin::First) {
            rank[node] = 0;
        } else if (graph.nodes[node].pin == RankPin::Last) {
            rank[node] = last + 1;
        }
    }
    for (const DotEdge& edge : graph.edges) {
        if (graph.nodes[edge.tail].pin == RankPin::First && rank[edge.head] == 0) {
            rank[edge.head] = 1; // keep pinned inputs above the nodes they feed
        }
    }
    return rank;
}

/// Reorders `layer` by the mean position of each node's neighbours in the previous layer.
void sortByBarycenter(std::vector<uint32_t>& layer, const std::vector<std::vector<uint32_t>>& near,
                      const std::vector<double>& position) {
    std::vector<std::pair<double, uint32_t>> keyed;
    keyed.reserve(layer.size());
    for (uint32_t node : layer) {
        double sum = 0;
        for (uint32_t other : near[node]) {
            sum += position[other];
        }
        const double key =
            near[node].empty() ? position[node] : sum / static_cast<double>(near[node].size());
        keyed.emplace_back(key, node);
    }
    std::stable_sort(keyed.begin(), keyed.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < layer.size(); ++i) {
        layer[i] = keyed[i].second;
    }
}

/// The nodes of each rank, ordered by barycentre sweeps down and up to cut crossings.
std::vector<std::vector<uint32_t>> orderedLayers(const std::vector<uint32_t>& rank,
                                                 const std::vector<std::vector<uint32_t>>& preds,
                                                 const std::vector<std::vector<uint32_t>>& succs) {
    const size_t count = rank.size();
    const uint32_t ranks = *std::max_element(rank.begin(), rank.end()) + 1;
    std::vector<std::vector<uint32_t>> layers(ranks);
    for (uint32_t node = 0; node < count; ++node) {
        layers[rank[node]].push_back(node);
    }
    std::vector<double> order(count, 0);
    const auto number = [&](const std::vector<uint32_t>& layer) {
        for (size_t i = 0; i < layer.size(); ++i) {
            order[layer[i]] = static_cast<double>(i);
        }
    };
    for (const auto& layer : layers) {
        number(layer);
    }
    for (int sweep = 0; sweep < kSweeps; ++sweep) {
        for (uint32_t r = 1; r < ranks; ++r) {
            sortByBarycenter(layers[r], preds, order);
            number(layers[r]);
        }
        for (uint32_t r = ranks - 1; r-- > 0;) {
            sortByBarycenter(layers[r], succs, order);
            number(layers[r]);
        }
    }
    return layers;
}

/// Box centres rank by rank: each box wants to sit under the mean of its inputs; overlaps are
/// pushed right. Sets result.centers and result.size.
void placeBoxes(const DotGraph& graph, const std::vector<std::vector<uint32_t>>& layers,
                const std::vector<std::vector<uint32_t>>& preds, DotResult& result) {
    std::vector<double> x(graph.nodes.size(), 0);
    result.centers.resize(graph.nodes.size());
    double y = 0;
    double left = 0;
    double right = 0;
    for (const std::vector<uint32_t>& layer : layers) {
        double height = 0;
        double cursor = -1e300;
        for (uint32_t node : layer) {
            const Size size = graph.nodes[node].size;
            height = std::max(height, size.height);
            double want = cursor;
            if (!preds[node].empty()) {
                double sum = 0;
                for (uint32_t pred : preds[node]) {
                    sum += x[pred];
                }
                want = sum / static_cast<double>(preds[node].size());
            } else if (cursor < -1e299) {
                want = size.width / 2;
            }
            const double minimum = cursor < -1e299 ? want : cursor + size.width / 2;
            x[node] = std::max(want, minimum);
            cursor = x[node] + size.width / 2 + graph.nodeSeparation;
            left = std::min(left, x[node] - size.width / 2);
            right = std::max(right, x[node] + size.width / 2);
        }
        for (uint32_t node : layer) {
            result.centers[node] = {x[node], y + height / 2};
        }
        y += height + graph.rankSeparation;
    }
    for (Point& center : result.centers) {
        center.x -= left;
    }
    result.size = {right - left, std::max(0.0, y - graph.rankSeparation)};
}

/// Edges between adjacent ranks are S-curves; longer ones leave the column and run down a lane
/// right of every box they pass, so they never cross a box. Sets result.paths (and widens
/// result.size for the lanes).
void routeLayeredEdges(const DotGraph& graph, const std::vector<uint32_t>& rank, uint32_t ranks,
                       DotResult& result) {
    std::vector<double> rankRight(ranks, 0);
    for (uint32_t node = 0; node < graph.nodes.size(); ++node) {
        rankRight[rank[node]] = std::max(rankRight[rank[node]],
                                         result.centers[node].x + graph.nodes[node].size.width / 2);
    }
    constexpr double kLaneGap = 12;
    constexpr double kLaneSpacing = 5;
    constexpr uint32_t kLanes = 24;
    uint32_t lane = 0;
    result.paths.reserve(graph.edges.size());
    for (const DotEdge& edge : graph.edges) {
        const Point from = result.centers[edge.tail];
        const Point to = result.centers[edge.head];
        const Point start{from.x, from.y + graph.nodes[edge.tail].size.height / 2};
        const Point end{to.x, to.y - graph.nodes[edge.head].size.height / 2};
        const uint32_t low = std::min(rank[edge.tail], rank[edge.head]);
        const uint32_t high = std::max(rank[edge.tail], rank[edge.head]);
        if (high <= low + 1) {
            const double bend = (end.y - start.y) / 2;
            result.paths.push_back({start, {start.x, start.y + bend}, {end.x, end.y - bend}, end});
            continue;
        }
        double right = 0;
        for (uint32_t r = low + 1; r < high; ++r) {
            right = std::max(right, rankRight[r]);
        }
        const double x = right + kLaneGap + kLaneSpacing * static_cast<double>(lane++ % kLanes);
        result.size.width = std::max(result.size.width, x + kLaneGap);
        const double out = start.y + graph.rankSeparation / 2;
        const double in = end.y - graph.rankSeparation / 2;
        result.paths.push_back({start,
                                {start.x, out},
                                {start.x, out},
                                {x, out},
                                {x, out},
                                {x, in},
                                {x, in},
                                {x, in},
                                {end.x, in},
                                end});
    }
}
} // namespace

DotResult layeredLayout(const DotGraph& graph) {
    const size_t count = graph.nodes.size();
    DotResult result;
    if (count == 0) {
        return result;
    }
    const std::vector<uint32_t> rank = rankNodes(graph);
    std::vector<std::vector<uint32_t>> preds(count);
    std::vector<std::vector<uint32_t>> succs(count);
    for (const DotEdge& edge : graph.edges) {
        preds[edge.head].push_back(edge.tail);
        succs[edge.tail].push_back(edge.head);
    }
    const std::vector<std::vector<uint32_t>> layers = orderedLayers(rank, preds, succs);
    placeBoxes(graph, layers, preds, result);
    routeLayeredEdges(graph, rank, static_cast<uint32_t>(layers.size()), result);
    return result;
}

} // namespace qs::layout::detail
