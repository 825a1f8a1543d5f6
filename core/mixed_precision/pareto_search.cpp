// Exact Pareto front by dynamic programming over adjacency groups.

#include "core/mixed_precision/pareto_search.h"

#include "core/mixed_precision/trace_order_candidates.h"

#include <algorithm>
#include <cstdint>
#include <map>

namespace qs::mixed_precision {

namespace {

/// One joint choice of a group: its layers' bits, its activations' bits, cost and metric.
struct GroupOption {
    std::vector<int> layerBits;
    std::vector<int> activationBits;
    double cost = 0.0;
    double metric = 0.0;
    uint32_t excessive = 0; ///< bit i: the option uses excessiveBitwidths(problem)[i]
};

/// A point of the partial front: the option taken at this item, the point it extends and the
/// excessive bit widths used so far (the filter is on the whole assignment, so points that use
/// different ones are kept apart until the end).
struct FrontPoint {
    double cost = 0.0;
    double metric = 0.0;
    uint32_t parent = 0;
    uint32_t option = 0;
    uint32_t excessive = 0;
};

/// The group's joint weight bit widths: every combination of its layers' allowed widths (strict
/// mode: one width for all).
Result<std::vector<std::vector<int>>> jointBits(const HawqProblem& problem, size_t g) {
    const AdjacencyGroup& group = problem.groups[g];
    std::vector<std::vector<int>> joint;
    if (problem.mode == BitwidthAssignmentMode::Strict && !group.layers.empty()) {
        for (const int bits : problem.layers[group.layers.front()].bitsAllowed) {
            joint.emplace_back(group.layers.size(), bits);
        }
        return joint;
    }
    size_t count = 1;
    for (const size_t l : group.layers) {
        count *= problem.layers[l].bitsAllowed.size();
        if (count > kMaxGroupOptions) {
            return Error(Errc::Unsupported,
                         "adjacency group " + std::to_string(g) + " (" +
                             std::to_string(group.layers.size()) +
                             " layers) has too many joint bit-width choices for the pareto "
                             "search; use --search trace-order or --mode strict");
        }
    }
    for (size_t n = 0; n < count; ++n) {
        std::vector<int> bits(group.layers.size());
        size_t rest = n;
        for (size_t i = 0; i < group.layers.size(); ++i) {
            const std::vector<int>& allowed = problem.layers[group.layers[i]].bitsAllowed;
            bits[i] = allowed[rest % allowed.size()];
            rest /= allowed.size();
        }
        joint.push_back(std::move(bits));
    }
    return joint;
}

Result<std::vector<GroupOption>> groupOptions(const HawqProblem& problem, size_t g,
                                              std::span<const double> avgTraces,
                                              const LayerPerturbations& perturbations,
                                              std::span<const int> excessive) {
    const AdjacencyGroup& group = problem.groups[g];
    QS_ASSIGN_OR_RETURN(std::vector<std::vector<int>> joint, jointBits(problem, g));
    std::vector<GroupOption> options;
    std::vector<int> weightBits(problem.layers.size(), 0);
    std::vector<int> activationBits(problem.activations.size(), 0);
    for (std::vector<int>& bits : joint) {
        GroupOption option;
        for (size_t i = 0; i < group.layers.size(); ++i) {
            weightBits[group.layers[i]] = bits[i];
        }
        QS_TRY(assignGroupActivationBits(problem, g, weightBits, activationBits));
        for (size_t i = 0; i < group.layers.size(); ++i) {
            const WeightLayer& layer = problem.layers[group.layers[i]];
            const int a = layer.activation ? activationBits[*layer.activation] : 0;
            option.cost += static_cast<double>(layer.macs) * std::max(bits[i], a);
            option.metric +=
                avgTraces[group.layers[i]] * perturbations[group.layers[i]].at(bits[i]);
            const auto at = std::find(excessive.begin(), excessive.end(), bits[i]);
            if (at != excessive.end()) {
                option.excessive |= 1U << static_cast<unsigned>(at - excessive.begin());
            }
        }
        for (const size_t a : group.activations) {
            option.activationBits.push_back(activationBits[a]);
        }
        option.layerBits = std::move(bits);
        options.push_back(std::move(option));
    }
    return options;
}

/// Keeps the points no other point with the same excessive bit widths dominates (lower or equal
/// cost and metric), by excessive set, then cost ascending.
std::vector<FrontPoint> prune(std::vector<FrontPoint> points) {
    std::sort(points.begin(), points.end(), [](const FrontPoint& a, const FrontPoint& b) {
        if (a.excessive != b.excessive) {
            return a.excessive < b.excessive;
        }
        return a.cost != b.cost ? a.cost < b.cost : a.metric < b.metric;
    });
    std::vector<FrontPoint> kept;
    for (const FrontPoint& point : points) {
        const bool sameSet = !kept.empty() && kept.back().excessive == point.excessive;
        if (!sameSet || point.metric < kept.back().metric) {
            if (sameSet && kept.back().cost == point.cost) {
                continue; // same cost, the earlier one has the lower metric
            }
            kept.push_back(point);
        }
    }
    return kept;
}

/// Indices of the final points that pass NNCF's excessive-bitwidth filter (they do not use every
/// excessive bit width) and that no other passing point dominates, cost ascending.
std::vector<size_t> passingFront(const std::vector<FrontPoint>& points, uint32_t everyExcessive) {
    std::vector<size_t> order;
    for (size_t i = 0; i < points.size(); ++i) {
        if (everyExcessive == 0 || points[i].excessive != everyExcessive) {
            order.push_back(i);
        }
    }
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        const FrontPoint& x = points[a];
        const FrontPoint& y = points[b];
        return x.cost != y.cost ? x.cost < y.cost : x.metric < y.metric;
    });
    std::vector<size_t> kept;
    for (const size_t i : order) {
        if (kept.empty() || points[i].metric < points[kept.back()].metric) {
            if (!kept.empty() && points[kept.back()].cost == points[i].cost) {
                continue;
            }
            kept.push_back(i);
        }
    }
    return kept;
}

/// Every point of `front` extended by every option of the next group, pruned.
std::vector<FrontPoint> extend(const std::vector<FrontPoint>& front,
                               const std::vector<GroupOption>& options) {
    std::vector<FrontPoint> next;
    next.reserve(front.size() * options.size());
    for (size_t p = 0; p < front.size(); ++p) {
        for (size_t o = 0; o < options.size(); ++o) {
            next.push_back({front[p].cost + options[o].cost, front[p].metric + options[o].metric,
                            static_cast<uint32_t>(p), static_cast<uint32_t>(o),
                            front[p].excessive | options[o].excessive});
        }
    }
    return prune(std::move(next));
}

/// The assignment of final point `end`, followed back through the stages (bits only).
HawqCandidate traceBack(const HawqProblem& problem,
                        const std::vector<std::vector<GroupOption>>& options,
                        const std::vector<std::vector<FrontPoint>>& stages, size_t end) {
    HawqCandidate candidate;
    candidate.weightBits.assign(problem.layers.size(), 0);
    candidate.activationBits.assign(problem.activations.size(), 0);
    size_t index = end;
    for (size_t g = problem.groups.size(); g-- > 0;) {
        const FrontPoint& point = stages[g][index];
        const GroupOption& option = options[g][point.option];
        const AdjacencyGroup& group = problem.groups[g];
        for (size_t i = 0; i < group.layers.size(); ++i) {
            candidate.weightBits[group.layers[i]] = option.layerBits[i];
        }
        for (size_t i = 0; i < group.activations.size(); ++i) {
            candidate.activationBits[group.activations[i]] = option.activationBits[i];
        }
        index = point.parent;
    }
    return candidate;
}

} // namespace

Result<std::vector<HawqCandidate>> paretoFront(const HawqProblem& problem,
                                               std::span<const double> avgTraces,
                                               const LayerPerturbations& perturbations,
                                               Progress& progress) {
    // NNCF's excessive-bitwidth filter, as on the trace-order candidates: an assignment that uses
    // every bit width no activation allows (2 under NPU) is not a candidate.
    const std::vector<int> excessive = excessiveBitwidths(problem);
    if (excessive.size() > 16) {
        return Error(Errc::Unsupported, "too many excessive bit widths for the pareto search");
    }
    const uint32_t everyExcessive = (1U << excessive.size()) - 1U;
    std::vector<std::vector<GroupOption>> options(problem.groups.size());
    std::vector<std::vector<FrontPoint>> stages;
    std::vector<FrontPoint> front{FrontPoint{}};
    for (size_t g = 0; g < problem.groups.size(); ++g) {
        QS_TRY(checkCancelled(progress));
        QS_ASSIGN_OR_RETURN(options[g],
                            groupOptions(problem, g, avgTraces, perturbations, excessive));
        front = extend(front, options[g]);
        stages.push_back(front);
        progress.report(static_cast<double>(g + 1) / static_cast<double>(problem.groups.size()),
                        "pareto search");
    }
    const double maxOps = maxBitOps(problem);
    const std::vector<size_t> ends = passingFront(front, everyExcessive);
    if (ends.empty()) {
        return Error(Errc::InvalidArgument,
                     "every assignment uses all the excessive bit widths (allowed for no "
                     "activation): no candidate for the pareto search");
    }
    std::vector<HawqCandidate> out;
    out.reserve(ends.size());
    for (const size_t end : ends) {
        HawqCandidate candidate = traceBack(problem, options, stages, end);
        // Measured as every other candidate is, so comparisons with trace-order ones are exact.
        const double ops = bitOps(problem, candidate.weightBits, candidate.activationBits);
        candidate.ratio = ops > 0.0 ? maxOps / ops : 1.0;
        candidate.metric = hawqMetric(avgTraces, perturbations, candidate.weightBits);
        out.push_back(std::move(candidate));
    }
    return out;
}

} // namespace qs::mixed_precision
