// From the finished propagation state to a MultiConfigQuantizerSetup: post-filters (integer model
// inputs, lone quantizers on elementwise ops), activation points with their directly quantized ops,
// weight points from the HW "weights" lists, unified-scale groups, embedding outputs turned into
// weight quantizers, shared-input groups (reference §1.3 step 5-6, §1.7, §1.8).

#include "core/quantization/propagation_state.h"

#include <functional>

namespace qs::quantization::detail {

void Solver::filterIntegerInputQuantizers() {
    for (const int id : std::vector<int>(m_finished)) {
        const PropagatingQuantizer& q = pq(id);
        if (!q.alive) {
            continue;
        }
        const IpNode& at = node(q.location);
        if (at.type != IpNodeType::PostHook || node(at.op).kind != OperatorKind::ModelInput) {
            continue;
        }
        const bool integer = std::any_of(at.outEdges.begin(), at.outEdges.end(),
                                         [&](int e) { return edge(e).isInteger; });
        if (integer) {
            removePropagatingQuantizer(id);
        }
    }
}

void Solver::filterElementwiseQuantizers() {
    // A lone quantizer on one input of an elementwise op (the other input constant) buys no
    // integer kernel, so NNCF drops it unless it propagated through an op: a path of at most one
    // edge (pre-hook to the producer's post-hook) still quantizes the same tensor.
    for (const int id : std::vector<int>(m_finished)) {
        const PropagatingQuantizer& q = pq(id);
        if (!q.alive || q.quantizedInputSinkOperatorNodes.size() != 1 || q.pathLength > 1) {
            continue;
        }
        const int op = *q.quantizedInputSinkOperatorNodes.begin();
        const IpNode& sink = node(op);
        if (sink.kind != OperatorKind::Regular) {
            continue;
        }
        // NNCF's ELEMENTWISE_OPERATIONS, by the operator's (first node's) metatype.
        static constexpr std::string_view kElementwise[] = {
            "ONNXAddLayerMetatype", "ONNXMulLayerMetatype",
            "ONNXSubMetatype",      "ONNXDivLayerMetatype",
            "ONNXLessMetatype",     "ONNXLessOrEqualMetatype",
            "ONNXGreaterMetatype",  "ONNXGreaterOrEqualMetatype",
            "ONNXEqualMetatype",    "ONNXModMetatype",
            "ONNXOrMetatype",       "ONNXNotMetatype",
            "ONNXAndMetatype",      "ONNXXorMetatype",
            "ONNXMaximumMetatype",  "ONNXMinimumMetatype",
            "ONNXMeanMetatype"};
        if (std::find(std::begin(kElementwise), std::end(kElementwise), sink.metatype->name) ==
            std::end(kElementwise)) {
            continue;
        }
        size_t affecting = 0;
        for (const int other : m_nodeAffecting[static_cast<size_t>(op)]) {
            affecting +=
                pq(other).alive && pq(other).quantizedInputSinkOperatorNodes.contains(op) ? 1 : 0;
        }
        if (affecting == 1) {
            removePropagatingQuantizer(id);
        }
    }
}

void Solver::addActivationPoints(SetupDraft& draft) {
    for (const int id : m_finished) {
        if (pq(id).alive) {
            draft.activationIds.push_back(id);
        }
    }
    std::sort(draft.activationIds.begin(), draft.activationIds.end());
    for (const int id : draft.activationIds) {
        const PropagatingQuantizer& q = pq(id);
        std::set<int> direct = q.quantizedInputSinkOperatorNodes;
        for (const int child : q.downstreamPropagatingQuantizers) {
            if (pq(child).alive) {
                for (const int n : pq(child).quantizedInputSinkOperatorNodes) {
                    direct.erase(n);
                }
                draft.setup.requantizationParents[child] = id;
            }
        }
        MultiConfigQuantizationPoint point;
        const IpNode& at = node(q.location);
        point.insertionPoint.targetNodeName = at.targetNodeName;
        if (at.type == IpNodeType::PreHook) {
            point.insertionPoint.inputPortId = at.inputPort;
        }
        point.possibleConfigs = q.configs;
        point.ipNode = q.location;
        for (const int op : direct) {
            point.directlyQuantizedOperatorNodeNames.push_back(node(op).name);
        }
        std::sort(point.directlyQuantizedOperatorNodeNames.begin(),
                  point.directlyQuantizedOperatorNodeNames.end());
        draft.setup.quantizationPoints[id] = std::move(point);
        draft.sinksOf[id] = q.quantizedInputSinkOperatorNodes;
    }
}

Result<void> Solver::addWeightPoints(SetupDraft& draft) {
    // Weight quantization points from the HW "weights" lists; ids start at max(activation id) + 2.
    int nextId = (draft.activationIds.empty() ? 0 : draft.activationIds.back()) + 2;
    const graph::Graph& model = m_graph.model();
    for (size_t opIndex = 0; opIndex < m_graph.nodes().size(); ++opIndex) {
        const IpNode& op = m_graph.nodes()[opIndex];
        if (op.type != IpNodeType::Operator || op.kind != OperatorKind::Regular || op.ignored ||
            !op.metatype->hasWeights ||
            graph::constantWeightPorts(model, op.mergedNodes.front()).empty()) {
            continue;
        }
        const HWConfigOp* hwOp = m_hw.effectiveOp(op.metatype->hwName);
        if (hwOp == nullptr || !hwOp->hasWeights) {
            continue;
        }
        // An embedding's table gets a quantizer only when an activation quantizer reached its
        // output and depends on it: NNCF's setups of tiny_bert (Gather -> Add(positions), whose
        // lone quantizer the elementwise filter drops) have no weight point on the embedding.
        // The cause in NNCF's code is not pinned down (core/quantization/README.md).
        if (op.metatype->defaultTrait == QuantizationTrait::OutputQuantizationAsWeights &&
            std::none_of(draft.activationIds.begin(), draft.activationIds.end(), [&](int id) {
                return pq(id).dependentOnWeights &&
                       node(pq(id).location).op == static_cast<int>(opIndex);
            })) {
            continue;
        }
        QuantizerConfigList configs = m_options.weightConstraints.filter(hwOp->weights);
        if (configs.empty()) {
            return Error(
                Errc::InvalidArgument,
                "weight quantization constraints are incompatible with HW capabilities of op '" +
                    op.name + "'");
        }
        MultiConfigQuantizationPoint point;
        point.insertionPoint.isWeight = true;
        point.insertionPoint.targetNodeName = op.name;
        point.possibleConfigs = std::move(configs);
        point.directlyQuantizedOperatorNodeNames = {op.name};
        draft.qpOfOpWeight[static_cast<int>(opIndex)] = nextId;
        draft.setup.quantizationPoints[nextId++] = std::move(point);
    }
    return {};
}

void Solver::addUnifiedScaleGroups(SetupDraft& draft) {
    // Unified-scale groups, single-member and empty ones included: NNCF's group manager keeps a
    // group whose quantizers were all removed (dropped clones, merged or filtered quantizers), and
    // its setup registers every group (the GUI does not draw empty ones).
    for (const auto& [gid, members] : m_groups) {
        std::vector<int> ids;
        for (const int id : members) {
            if (draft.setup.quantizationPoints.contains(id)) {
                ids.push_back(id);
            }
        }
        const int compact = static_cast<int>(draft.setup.unifiedScaleGroups.size());
        for (const int id : ids) {
            draft.groupOfQp[id] = compact;
        }
        draft.setup.unifiedScaleGroups[compact] = ids;
        draft.setup.unifiedScaleTypes[compact] = m_groupType[gid];
    }
}

namespace {
/// Per-tensor weight configs that every activation list accepts (an unforced activation
/// signedness matches either forced one).
QuantizerConfigList
sharedEmbeddingConfigs(const QuantizerConfigList& weightConfigs,
                       const std::vector<const QuantizerConfigList*>& activationLists) {
    auto accepts = [](const QuantizerConfigList& list, const QuantizerConfig& wc) {
        return std::any_of(list.begin(), list.end(), [&](const QuantizerConfig& ac) {
            QuantizerConfig relaxed = ac;
            if (!ac.signednessToForce.has_value()) {
                relaxed.signednessToForce = wc.signednessToForce;
            }
            return relaxed == wc;
        });
    };
    QuantizerConfigList narrowed;
    for (const QuantizerConfig& wc : weightConfigs) {
        const bool everywhere =
            std::all_of(activationLists.begin(), activationLists.end(),
                        [&](const QuantizerConfigList* list) { return accepts(*list, wc); });
        if (!wc.perChannel && everywhere) {
            narrowed.push_back(wc);
        }
    }
    return narrowed;
}
} // namespace

void Solver::foldEmbeddingOutputs(SetupDraft& draft) {
    // Embedding outputs: the activation quantizer becomes the weight quantizer when their
    // per-tensor configs intersect (§1.7, source 3).
    for (const int id : draft.activationIds) {
        const IpNode& at = node(pq(id).location);
        auto weightIt = draft.qpOfOpWeight.find(at.op);
        if (!pq(id).dependentOnWeights || at.type != IpNodeType::PostHook ||
            weightIt == draft.qpOfOpWeight.end()) {
            continue;
        }
        const int weightId = weightIt->second;
        std::vector<int> groupMembers = {id};
        if (draft.groupOfQp.contains(id)) {
            groupMembers = draft.setup.unifiedScaleGroups[draft.groupOfQp[id]];
        }
        std::vector<const QuantizerConfigList*> activationLists;
        activationLists.reserve(groupMembers.size());
        for (const int member : groupMembers) {
            activationLists.push_back(&draft.setup.quantizationPoints[member].possibleConfigs);
        }
        MultiConfigQuantizationPoint& weight = draft.setup.quantizationPoints[weightId];
        QuantizerConfigList narrowed =
            sharedEmbeddingConfigs(weight.possibleConfigs, activationLists);
        if (narrowed.empty()) {
            continue; // stays as an activation quantizer: a requantization of the table
        }
        weight.possibleConfigs = std::move(narrowed);
        const auto& names = draft.setup.quantizationPoints[id].directlyQuantizedOperatorNodeNames;
        weight.directlyQuantizedOperatorNodeNames.insert(
            weight.directlyQuantizedOperatorNodeNames.end(), names.begin(), names.end());
        draft.sinksOf[weightId] = draft.sinksOf[id];
        draft.sinksOf.erase(id);
        if (draft.groupOfQp.contains(id)) {
            auto& members = draft.setup.unifiedScaleGroups[draft.groupOfQp[id]];
            std::replace(members.begin(), members.end(), id, weightId);
        }
        draft.setup.quantizationPoints.erase(id);
    }
}

void addSharedInputGroups(SetupDraft& draft) {
    // Shared-input groups: quantizers whose sink ops overlap, plus the weights of those ops.
    std::map<int, int> parent;
    std::function<int(int)> root = [&](int x) {
        return parent[x] == x ? x : parent[x] = root(parent[x]);
    };
    std::map<int, int> firstQpOfOp;
    for (const auto& [id, sinks] : draft.sinksOf) {
        parent.try_emplace(id, id);
        for (const int op : sinks) {
            auto [it, inserted] = firstQpOfOp.try_emplace(op, id);
            if (!inserted) {
                parent[root(id)] = root(it->second);
            }
            auto weightOfOp = draft.qpOfOpWeight.find(op);
            if (weightOfOp != draft.qpOfOpWeight.end() && weightOfOp->second != id) {
                parent.try_emplace(weightOfOp->second, weightOfOp->second);
                parent[root(weightOfOp->second)] = root(id);
            }
        }
    }
    std::map<int, std::vector<int>> byRoot;
    for (const auto& [id, p] : parent) {
        (void)p;
        byRoot[root(id)].push_back(id);
    }
    // NNCF builds these groups walking the activation quantizers by id and opening a new group
    // when one joins existing ones, so a group's position is that of its last activation member.
    std::vector<std::pair<int, std::vector<int>>> ordered;
    for (auto& [r, members] : byRoot) {
        (void)r;
        std::sort(members.begin(), members.end());
        int key = members.front();
        for (const int id : members) {
            if (std::binary_search(draft.activationIds.begin(), draft.activationIds.end(), id)) {
                key = std::max(key, id);
            }
        }
        ordered.emplace_back(key, members);
    }
    std::sort(ordered.begin(), ordered.end());
    int gid = 0;
    for (auto& [key, members] : ordered) {
        (void)key;
        draft.setup.sharedInputOperationSetGroups[gid++] = std::move(members);
    }
}

Result<MultiConfigQuantizerSetup> Solver::createQuantizerSetup() {
    SetupDraft draft;
    addActivationPoints(draft);
    QS_TRY(addWeightPoints(draft));
    addUnifiedScaleGroups(draft);
    foldEmbeddingOutputs(draft);
    addSharedInputGroups(draft);
    return std::move(draft.setup);
}

} // namespace qs::quantization::detail
