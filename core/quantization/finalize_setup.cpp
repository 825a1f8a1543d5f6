// Finalisation: choice validation, unified-group split, merge of redundant subsequent quantizers
// across the graph (NNCF's merge_redundant_subsequent_quantizers_across_graph) and requantization
// links.

#include "core/quantization/finalize_setup.h"

#include <algorithm>
#include <charconv>
#include <deque>

namespace qs::quantization {

namespace {
using graph::QuantizationTrait;

/// Insertion point graph nodes in a topological order (Kahn, FIFO).
std::vector<int> topologicalNodes(const InsertionPointGraph& g) {
    std::vector<size_t> inDegree(g.nodes().size());
    std::deque<int> ready;
    for (size_t i = 0; i < g.nodes().size(); ++i) {
        inDegree[i] = g.nodes()[i].inEdges.size();
        if (inDegree[i] == 0) {
            ready.push_back(static_cast<int>(i));
        }
    }
    std::vector<int> order;
    while (!ready.empty()) {
        const int index = ready.front();
        ready.pop_front();
        order.push_back(index);
        for (const int e : g.node(index).outEdges) {
            const int to = g.edge(e).to;
            if (--inDegree[static_cast<size_t>(to)] == 0) {
                ready.push_back(to);
            }
        }
    }
    return order;
}

/// The quantizer covering the tensor arriving at `index`: carried over a single float edge
/// through insertion points and agnostic ops, reset at barriers and all other ops.
int incomingQuantizer(const QuantizationProposal& proposal, const std::vector<int>& upstream,
                      int index) {
    const InsertionPointGraph& g = *proposal.graph;
    const IpNode& node = g.node(index);
    if (node.inEdges.size() != 1 || g.edge(node.inEdges.front()).isInteger ||
        node.type == IpNodeType::AuxiliaryBarrier) {
        return -1;
    }
    if (node.type == IpNodeType::Operator && proposal.operatorTraits[static_cast<size_t>(index)] !=
                                                 QuantizationTrait::QuantizationAgnostic) {
        return -1;
    }
    return upstream[static_cast<size_t>(g.edge(node.inEdges.front()).from)];
}

/// Folds `qp` into the upstream quantizer `state` when that makes it redundant (returns `state`),
/// otherwise records it as a requantizer of `state` and returns `qp`.
int absorbOrChain(SingleConfigQuantizerSetup& setup, int state, int qp) {
    if (state < 0 || !setup.quantizationPoints.contains(state)) {
        return qp;
    }
    SingleConfigQuantizationPoint& upstream = setup.quantizationPoints[state];
    const SingleConfigQuantizationPoint& downstream = setup.quantizationPoints[qp];
    if (!upstream.qconfig.isRedundantWithDownstream(downstream.qconfig)) {
        setup.requantizationParents[qp] = state;
        return qp;
    }
    auto& absorbing = upstream.directlyQuantizedOperatorNodeNames;
    for (const std::string& name : downstream.directlyQuantizedOperatorNodeNames) {
        if (std::find(absorbing.begin(), absorbing.end(), name) == absorbing.end()) {
            absorbing.push_back(name);
        }
    }
    setup.mergedInto[qp] = state;
    setup.quantizationPoints.erase(qp);
    setup.requantizationParents.erase(qp);
    return state;
}

/// NNCF's merge_redundant_subsequent_quantizers_across_graph: walks the insertion point graph
/// carrying the quantizer that currently covers the tensor.
void mergeRedundantQuantizers(const QuantizationProposal& proposal,
                              SingleConfigQuantizerSetup& setup) {
    std::map<int, std::vector<int>> qpsAt;
    for (const auto& [id, point] : setup.quantizationPoints) {
        if (!point.insertionPoint.isWeight && point.ipNode >= 0) {
            qpsAt[point.ipNode].push_back(id);
        }
    }
    std::vector<int> upstream(proposal.graph->nodes().size(), -1);
    for (const int index : topologicalNodes(*proposal.graph)) {
        int state = incomingQuantizer(proposal, upstream, index);
        if (auto it = qpsAt.find(index); it != qpsAt.end()) {
            for (const int qp : it->second) {
                state = absorbOrChain(setup, state, qp);
            }
        }
        upstream[static_cast<size_t>(index)] = state;
    }
}

template <typename Groups>
void keepPresent(Groups& groups, const SingleConfigQuantizerSetup& setup) {
    for (auto it = groups.begin(); it != groups.end();) {
        auto& ids = it->second;
        std::erase_if(ids, [&](int id) { return !setup.quantizationPoints.contains(id); });
        it = ids.empty() ? groups.erase(it) : std::next(it);
    }
}

/// NNCF's select_qconfigs on unified groups. Removed points leave their groups, which stay even
/// when empty (NNCF's group manager never drops a group its quantizers left). Then, group by group
/// in id order, the per-tensor members are taken out of their groups (a group emptied that way
/// goes) and registered again under ids counted from 0, overwriting whatever group had that id;
/// per-channel members just leave. So a group that was empty from the start survives under its id
/// unless a re-registered one lands on it.
std::map<int, std::vector<int>> selectUnifiedGroups(const std::map<int, std::vector<int>>& groups,
                                                    const SingleConfigQuantizerSetup& setup) {
    std::map<int, std::vector<int>> multi = groups;
    for (auto& [gid, ids] : multi) {
        (void)gid;
        std::erase_if(ids, [&](int id) { return !setup.quantizationPoints.contains(id); });
    }
    std::map<int, std::vector<int>> out = multi;
    auto leave = [&](int id) {
        for (auto it = out.begin(); it != out.end(); ++it) {
            auto found = std::find(it->second.begin(), it->second.end(), id);
            if (found != it->second.end()) {
                it->second.erase(found);
                if (it->second.empty()) {
                    out.erase(it);
                }
                return;
            }
        }
    };
    int next = 0;
    for (const auto& [gid, ids] : multi) {
        (void)gid;
        std::vector<int> perTensor;
        for (const int id : ids) {
            const bool perChannel = setup.quantizationPoints.at(id).qconfig.perChannel;
            leave(id);
            if (!perChannel) {
                perTensor.push_back(id);
            }
        }
        if (!perTensor.empty()) {
            std::sort(perTensor.begin(), perTensor.end());
            out[next++] = std::move(perTensor);
        }
    }
    return out;
}
} // namespace

Result<SingleConfigQuantizerSetup> finalizeSetup(const QuantizationProposal& proposal,
                                                 const QuantizerConfigChoice& choice) {
    SingleConfigQuantizerSetup single;
    for (const auto& [id, point] : proposal.setup.quantizationPoints) {
        auto chosen = choice.find(id);
        if (chosen == choice.end()) {
            continue;
        }
        QuantizerConfig config = chosen->second;
        std::vector<QuantizerConfig> compatible;
        for (const QuantizerConfig& candidate : point.possibleConfigs) {
            if (candidate.isCompatibleWith(config)) {
                compatible.push_back(candidate);
            }
        }
        if (compatible.empty()) {
            return Error(Errc::InvalidArgument,
                         "config " + config.toString() + " is not a candidate of quantizer " +
                             std::to_string(id) + " at '" + point.insertionPoint.toString() + "'");
        }
        if (!config.signednessToForce.has_value()) {
            const auto forced = compatible.front().signednessToForce;
            const bool shared =
                std::all_of(compatible.begin(), compatible.end(), [&](const QuantizerConfig& c) {
                    return c.signednessToForce == forced;
                });
            if (shared) {
                config.signednessToForce = forced;
            }
        }
        single.quantizationPoints[id] = SingleConfigQuantizationPoint{
            point.insertionPoint, config, point.directlyQuantizedOperatorNodeNames, point.ipNode};
    }
    single.sharedInputOperationSetGroups = proposal.setup.sharedInputOperationSetGroups;
    for (const auto& [child, parent] : proposal.setup.requantizationParents) {
        if (single.quantizationPoints.contains(child) &&
            single.quantizationPoints.contains(parent)) {
            single.requantizationParents[child] = parent;
        }
    }
    mergeRedundantQuantizers(proposal, single);
    single.unifiedScaleGroups = selectUnifiedGroups(proposal.setup.unifiedScaleGroups, single);
    keepPresent(single.sharedInputOperationSetGroups, single);
    return single;
}

QuantizerConfigChoice selectByPreset(const MultiConfigQuantizerSetup& setup,
                                     QuantizationPreset preset) {
    QuantizerConfigChoice choice;
    for (const auto& [id, point] : setup.quantizationPoints) {
        if (point.possibleConfigs.empty()) {
            continue;
        }
        const QuantizationMode wanted =
            point.insertionPoint.isWeight || preset == QuantizationPreset::Performance
                ? QuantizationMode::Symmetric
                : QuantizationMode::Asymmetric;
        auto it = std::find_if(point.possibleConfigs.begin(), point.possibleConfigs.end(),
                               [&](const QuantizerConfig& c) { return c.mode == wanted; });
        choice[id] = it != point.possibleConfigs.end() ? *it : point.possibleConfigs.front();
    }
    return choice;
}

namespace {
struct BitwidthSpec {
    std::string nodeName;
    std::optional<int> port;
    int bits = 0;
};

Result<BitwidthSpec> parseBitwidthSpec(std::string_view spec) {
    const size_t eq = spec.rfind('=');
    if (eq == std::string_view::npos || eq == 0) {
        return Error(Errc::InvalidArgument,
                     "bad --set '" + std::string(spec) + "': expected NODE[:PORT]=BITS");
    }
    BitwidthSpec out;
    const std::string_view bitsText = spec.substr(eq + 1);
    auto [end, ec] = std::from_chars(bitsText.data(), bitsText.data() + bitsText.size(), out.bits);
    if (ec != std::errc() || end != bitsText.data() + bitsText.size() || out.bits <= 0) {
        return Error(Errc::InvalidArgument,
                     "bad --set '" + std::string(spec) + "': BITS must be a positive integer");
    }
    out.nodeName = std::string(spec.substr(0, eq));
    const size_t colon = out.nodeName.rfind(':');
    if (colon != std::string::npos && colon + 1 < out.nodeName.size() &&
        std::all_of(out.nodeName.begin() + static_cast<std::ptrdiff_t>(colon) + 1,
                    out.nodeName.end(), ::isdigit)) {
        out.port = std::stoi(out.nodeName.substr(colon + 1));
        out.nodeName.resize(colon);
    }
    return out;
}

/// Points addressed by a spec: "#ID", else activation points at NODE[:PORT], else NODE's weight.
std::vector<int> matchingPoints(const MultiConfigQuantizerSetup& setup, const BitwidthSpec& spec) {
    std::vector<int> matches;
    const std::string& name = spec.nodeName;
    if (name.size() > 1 && name.front() == '#' && !spec.port) {
        int id = -1;
        auto [idEnd, idEc] = std::from_chars(name.data() + 1, name.data() + name.size(), id);
        if (idEc == std::errc() && idEnd == name.data() + name.size() &&
            setup.quantizationPoints.contains(id)) {
            return {id};
        }
    }
    for (const auto& [id, point] : setup.quantizationPoints) {
        const InsertionPoint& ip = point.insertionPoint;
        if (!ip.isWeight && ip.targetNodeName == name && ip.inputPortId == spec.port) {
            matches.push_back(id);
        }
    }
    if (!matches.empty() || spec.port) {
        return matches;
    }
    for (const auto& [id, point] : setup.quantizationPoints) {
        if (point.insertionPoint.isWeight && point.insertionPoint.targetNodeName == name) {
            matches.push_back(id);
        }
    }
    return matches;
}

/// The first candidate with `bits`, preferring one that keeps the current mode and granularity.
const QuantizerConfig* candidateWithBits(const QuantizerConfigList& configs, int bits,
                                         const QuantizerConfig* current) {
    const QuantizerConfig* first = nullptr;
    for (const QuantizerConfig& c : configs) {
        if (c.numBits != bits) {
            continue;
        }
        if (current != nullptr && c.mode == current->mode && c.perChannel == current->perChannel) {
            return &c;
        }
        first = first != nullptr ? first : &c;
    }
    return first;
}
} // namespace

Result<void> applyBitwidthChoice(const MultiConfigQuantizerSetup& setup, std::string_view spec,
                                 QuantizerConfigChoice& choice) {
    QS_ASSIGN_OR_RETURN(const BitwidthSpec parsed, parseBitwidthSpec(spec));
    const std::vector<int> matches = matchingPoints(setup, parsed);
    if (matches.empty()) {
        return Error(Errc::InvalidArgument,
                     "--set '" + std::string(spec) + "': no quantizer at node '" + parsed.nodeName +
                         (parsed.port ? "' port " + std::to_string(*parsed.port) : "'"));
    }
    for (const int id : matches) {
        const QuantizerConfig* current = choice.contains(id) ? &choice.at(id) : nullptr;
        const QuantizerConfig* best = candidateWithBits(
            setup.quantizationPoints.at(id).possibleConfigs, parsed.bits, current);
        if (best == nullptr) {
            return Error(Errc::InvalidArgument, "--set '" + std::string(spec) + "': quantizer " +
                                                    std::to_string(id) + " has no " +
                                                    std::to_string(parsed.bits) + "-bit candidate");
        }
        choice[id] = *best;
    }
    return {};
}

} // namespace qs::quantization
