// The propagation solver. Follows NNCF's QuantizerPropagationSolver step by step so that the
// placement, the order of merged config lists and the unified-scale groups match NNCF:
// initial PQs in lexicographic topological order, a deque that takes new PQs on the left and pops
// from the right, paths of at most two edges grouped by unified-scale op, clones through
// multi-input ops, waiting at downward branches, merges by rule, post-filters.

#include "core/quantization/quantizer_propagation_solver.h"

#include "core/graph/metatype.h"
#include "core/quantization/merge_configs.h"
#include "core/quantization/propagation_state.h"

#include <algorithm>
#include <deque>
#include <set>

namespace qs::quantization {

namespace detail {

bool Solver::getsInitialQuantizers(int opIndex) const {
    const IpNode& op = node(opIndex);
    if (op.kind == OperatorKind::ModelOutput) {
        return m_options.quantizeOutputs;
    }
    return !op.ignored &&
           m_trait[static_cast<size_t>(opIndex)] == QuantizationTrait::InputsQuantizable;
}

Result<QuantizerConfigList> Solver::initialConfigs(int opIndex) const {
    const IpNode& op = node(opIndex);
    // A wildcard op gets NNCF's DEFAULT_QUANTIZER_CONFIG as is; listed ops are filtered by the
    // preset and user constraints.
    QuantizerConfigList configs =
        m_wildcard[static_cast<size_t>(opIndex)]
            ? m_allowed[static_cast<size_t>(opIndex)]
            : m_options.activationConstraints.filter(m_allowed[static_cast<size_t>(opIndex)]);
    if (configs.empty()) {
        return Error(
            Errc::InvalidArgument,
            "quantization parameter constraints are incompatible with HW capabilities of op '" +
                op.name + "' (HW config '" + m_hw.targetDevice() + "')");
    }
    if (m_unified[static_cast<size_t>(opIndex)]) {
        // Unified per-channel scales would break when one branch changes the tensor layout.
        std::erase_if(configs, [](const QuantizerConfig& c) { return c.perChannel; });
        if (configs.empty()) {
            return Error(Errc::InvalidArgument,
                         "op '" + op.name +
                             "' needs unified scales but allows only per-channel configs");
        }
    }
    return configs;
}

std::vector<int> Solver::quantizablePreHooks(int opIndex) const {
    const IpNode& op = node(opIndex);
    const std::vector<int>& targetPorts = op.metatype->targetInputPorts;
    std::vector<int> preHooks;
    for (const int e : op.inEdges) {
        const int hook = edge(e).from;
        if (node(hook).type != IpNodeType::PreHook || edge(e).isInteger) {
            continue;
        }
        const int port = node(hook).inputPort;
        if (targetPorts.empty() ||
            std::find(targetPorts.begin(), targetPorts.end(), port) != targetPorts.end()) {
            preHooks.push_back(hook);
        }
    }
    // NNCF visits the predecessors in sorted key order.
    std::sort(preHooks.begin(), preHooks.end(),
              [&](int a, int b) { return node(a).key < node(b).key; });
    return preHooks;
}

Result<void> Solver::setupInitialQuantizers() {
    for (const int opIndex : m_graph.lexicographicOperatorOrder()) {
        if (!getsInitialQuantizers(opIndex)) {
            continue;
        }
        const std::vector<int> preHooks = quantizablePreHooks(opIndex);
        if (preHooks.empty()) {
            continue;
        }
        QS_ASSIGN_OR_RETURN(const QuantizerConfigList configs, initialConfigs(opIndex));
        std::vector<int> created;
        for (const int hook : preHooks) {
            const int id = addPropagatingQuantizer(configs, hook);
            m_queue.push_front(id);
            created.push_back(id);
        }
        if (m_unified[static_cast<size_t>(opIndex)]) {
            unifyScales(created, UnifiedScaleType::UnifyAlways);
        }
    }
    unifyConfigLinkedScopes();
    return {};
}

void Solver::unifyConfigLinkedScopes() {
    for (const std::vector<std::string>& scope : m_options.additionalUnifiedScaleOpScopes) {
        std::vector<int> members;
        for (size_t id = 1; id < m_pqs.size(); ++id) {
            const int sink = *m_pqs[id].quantizedInputSinkOperatorNodes.begin();
            if (std::find(scope.begin(), scope.end(), node(sink).name) != scope.end()) {
                members.push_back(static_cast<int>(id));
            }
        }
        if (members.size() > 2) {
            unifyScales(members, UnifiedScaleType::UnifyAlways);
        }
    }
}

bool Solver::isUnificationNeeded(int op) const {
    // NNCF's scales_unification_map: an ONNX Concat unifies only when a Conv, ConvTranspose,
    // MatMul, Gemm or attention follows it through agnostic or unified ops. The map names exact
    // metatypes: a depthwise, group or deformable Conv does not count.
    static constexpr std::string_view kWeightedTypes[] = {
        "ONNXConvolutionMetatype", "ONNXConvolutionTransposeMetatype", "ONNXGemmMetatype",
        "ONNXMatMulMetatype", "ONNXScaledDotProductAttentionMetatype"};
    const graph::Graph& model = m_graph.model();
    const IpNode& n = node(op);
    if (n.mergedNodes.empty() || model.node(n.mergedNodes.front()).opType != "Concat") {
        return true;
    }
    std::vector<int> stack = m_graph.successors(op);
    std::set<int> seen;
    while (!stack.empty()) {
        const int current = stack.back();
        stack.pop_back();
        if (!seen.insert(current).second) {
            continue;
        }
        const IpNode& c = node(current);
        if (c.type == IpNodeType::Operator) {
            if (c.kind != OperatorKind::Regular) {
                continue;
            }
            if (std::find(std::begin(kWeightedTypes), std::end(kWeightedTypes), c.metatype->name) !=
                std::end(kWeightedTypes)) {
                return true;
            }
            if (m_trait[static_cast<size_t>(current)] != QuantizationTrait::QuantizationAgnostic &&
                !m_unified[static_cast<size_t>(current)]) {
                continue;
            }
        }
        for (const int next : m_graph.successors(current)) {
            stack.push_back(next);
        }
    }
    return false;
}

std::map<int, std::vector<Path>> Solver::pathsGroupedByUnifiedScales(int ipNode) {
    std::map<int, std::vector<Path>> paths;
    int localGroups = 0;
    // Recursive walk up to the next insertion points; an unscaled unified op starts a group.
    auto helper = [&](auto&& self, int e, Path path, int group) -> void {
        path.push_back(e);
        const int current = edge(e).from;
        const IpNode& c = node(current);
        if (c.isInsertionPoint()) {
            paths[group].push_back(std::move(path));
            return;
        }
        if (c.type != IpNodeType::Operator) {
            return;
        }
        int nextGroup = group;
        if (group < 0 && m_unified[static_cast<size_t>(current)] && isUnificationNeeded(current)) {
            nextGroup = localGroups++;
        }
        for (const int in : c.inEdges) {
            self(self, in, path, nextGroup);
        }
    };
    for (const int e : node(ipNode).inEdges) {
        if (node(edge(e).from).type == IpNodeType::AuxiliaryBarrier) {
            return {};
        }
        helper(helper, e, {}, -1);
    }
    return paths;
}

std::optional<TransitionStatus> Solver::checkAffecting(int id, const std::vector<int>& affecting,
                                                       const std::set<int>& family) const {
    std::vector<int> others;
    for (const int other : affecting) {
        if (!family.contains(other) && m_pqs[static_cast<size_t>(other)].alive) {
            others.push_back(other);
        }
    }
    if (others.empty()) {
        return std::nullopt;
    }
    const QuantizerConfigList& mine = m_pqs[static_cast<size_t>(id)].configs;
    const bool same = std::all_of(others.begin(), others.end(), [&](int other) {
        return m_pqs[static_cast<size_t>(other)].configs == mine;
    });
    return same ? TransitionStatus::ShouldMerge : TransitionStatus::ShouldNotTransition;
}

TransitionStatus Solver::checkTransitionViaPath(int id, const Path& path,
                                                const std::set<int>& family) {
    for (const int e : path) {
        const int from = edge(e).from;
        const IpNode& f = node(from);
        if (f.type == IpNodeType::Operator) {
            const QuantizationTrait trait = m_trait[static_cast<size_t>(from)];
            if (trait == QuantizationTrait::OutputQuantizationAsWeights) {
                pq(id).dependentOnWeights = true;
                return TransitionStatus::ShouldNotTransition;
            }
            if (trait == QuantizationTrait::NonQuantizable ||
                trait == QuantizationTrait::InputsQuantizable) {
                return TransitionStatus::ShouldNotTransition;
            }
        }
        if (edge(e).isInteger) {
            return TransitionStatus::ShouldNotTransition;
        }
        if (auto status = checkAffecting(id, m_edgeAffecting[static_cast<size_t>(e)], family)) {
            return *status;
        }
        if (f.isInsertionPoint()) {
            if (auto status =
                    checkAffecting(id, m_nodeAffecting[static_cast<size_t>(from)], family)) {
                return *status;
            }
        }
        if (f.outEdges.size() > 1) {
            const TransitionStatus status = checkBranchingTransition(id, from);
            if (status == TransitionStatus::ShouldNotTransition ||
                status == TransitionStatus::ShouldWaitForMerge) {
                return status;
            }
        }
    }
    return TransitionStatus::ShouldTransition;
}

namespace {

/// What a downstream walk does after visiting a node.
enum class Walk { Descend, Prune, Finish };

/// Depth-first over the nodes below `start` (its successors, theirs, ...; not `start` itself),
/// each once; `visit(node)` says whether to go below the node, not to, or to end the walk.
template <typename Visit>
void walkDownstream(const InsertionPointGraph& graph, int start, Visit visit) {
    std::set<int> seen;
    std::vector<int> stack = graph.successors(start);
    while (!stack.empty()) {
        const int current = stack.back();
        stack.pop_back();
        if (!seen.insert(current).second) {
            continue;
        }
        const Walk next = visit(current);
        if (next == Walk::Finish) {
            return;
        }
        if (next == Walk::Descend) {
            for (const int below : graph.successors(current)) {
                stack.push_back(below);
            }
        }
    }
}

} // namespace

std::set<int> Solver::activeQuantizersDominatedBy(int nodeIndex) const {
    std::set<int> out;
    walkDownstream(m_graph, nodeIndex, [&](int current) {
        const int at = m_pqAt[static_cast<size_t>(current)];
        if (!node(current).isInsertionPoint() || at < 0) {
            return Walk::Descend;
        }
        const PropagatingQuantizer& q = m_pqs[static_cast<size_t>(at)];
        if (q.alive && !q.finished) {
            out.insert(at);
        }
        return Walk::Prune;
    });
    return out;
}

std::vector<int> Solver::nonAgnosticOpsDominatedBy(int nodeIndex) const {
    std::vector<int> out;
    walkDownstream(m_graph, nodeIndex, [&](int current) {
        if (node(current).type == IpNodeType::Operator &&
            m_trait[static_cast<size_t>(current)] != QuantizationTrait::QuantizationAgnostic) {
            out.push_back(current);
            return Walk::Prune;
        }
        return Walk::Descend;
    });
    std::sort(out.begin(), out.end());
    return out;
}

bool Solver::isDominatingOutputs(int nodeIndex) const {
    bool found = false;
    walkDownstream(m_graph, nodeIndex, [&](int current) {
        const IpNode& c = node(current);
        if (c.type != IpNodeType::Operator) {
            return Walk::Descend;
        }
        if (c.kind == OperatorKind::ModelOutput) {
            found = true;
            return Walk::Finish;
        }
        return m_trait[static_cast<size_t>(current)] == QuantizationTrait::QuantizationAgnostic
                   ? Walk::Descend
                   : Walk::Prune;
    });
    return found;
}

bool Solver::allOutputsQuantized(int nodeIndex) const {
    for (const int next : m_graph.successors(nodeIndex)) {
        if (m_nodeAffecting[static_cast<size_t>(next)].empty()) {
            return false;
        }
    }
    return true;
}

TransitionStatus Solver::checkBranchingTransition(int id, int branchingNode) {
    if (isDominatingOutputs(branchingNode) && !m_options.quantizeOutputs) {
        return TransitionStatus::ShouldNotTransition;
    }
    std::set<int> dominated;
    for (const int op : nonAgnosticOpsDominatedBy(branchingNode)) {
        if (!node(op).metatype->targetInputPorts.empty() && !allOutputsQuantized(branchingNode)) {
            return TransitionStatus::ShouldNotTransition;
        }
        const std::vector<int>& affecting = m_nodeAffecting[static_cast<size_t>(op)];
        if (!affecting.empty()) {
            dominated.insert(affecting.begin(), affecting.end());
            continue;
        }
        if (m_trait[static_cast<size_t>(op)] != QuantizationTrait::Concat) {
            return TransitionStatus::ShouldNotTransition; // an FP32 branch
        }
        const std::set<int> active = activeQuantizersDominatedBy(op);
        if (active.empty()) {
            return TransitionStatus::ShouldNotTransition;
        }
        dominated.insert(active.begin(), active.end());
    }
    dominated.erase(id);
    return dominated.empty() ? TransitionStatus::ShouldTransition
                             : TransitionStatus::ShouldWaitForMerge;
}

void Solver::propagateViaPath(int id, const Path& path) {
    PropagatingQuantizer& q = pq(id);
    if (m_pqAt[static_cast<size_t>(q.location)] == id) {
        m_pqAt[static_cast<size_t>(q.location)] = -1;
    }
    for (const int e : path) {
        const int from = edge(e).from;
        if (node(from).isInsertionPoint()) {
            addUnique(m_nodeAffecting[static_cast<size_t>(from)], id);
            q.affectedIpNodes.insert(from);
            q.lastAcceptingLocation = from;
        } else if (node(from).type == IpNodeType::Operator) {
            addUnique(m_nodeAffecting[static_cast<size_t>(from)], id);
            q.affectedOperatorNodes.insert(from);
        }
        addUnique(m_edgeAffecting[static_cast<size_t>(e)], id);
        q.affectedEdges.insert(e);
        ++q.pathLength;
    }
    q.location = edge(path.back()).from;
    m_pqAt[static_cast<size_t>(q.location)] = id;
}

std::vector<int> Solver::coveringQuantizers(const Path& path, const std::set<int>& family,
                                            Path& walked) const {
    std::vector<int> survivors;
    auto pick = [&](const std::vector<int>& affecting) {
        for (const int other : affecting) {
            if (!family.contains(other) && m_pqs[static_cast<size_t>(other)].alive) {
                survivors.push_back(other);
            }
        }
    };
    for (const int e : path) {
        walked.push_back(e);
        pick(m_edgeAffecting[static_cast<size_t>(e)]);
        if (survivors.empty() && node(edge(e).from).isInsertionPoint()) {
            pick(m_nodeAffecting[static_cast<size_t>(edge(e).from)]);
        }
        if (!survivors.empty()) {
            break;
        }
    }
    return survivors;
}

void Solver::absorbQuantizer(int survivorId, const PropagatingQuantizer& merged,
                             const Path& walked) {
    PropagatingQuantizer& s = pq(survivorId);
    auto coverEdge = [&](int e) {
        s.affectedEdges.insert(e);
        addUnique(m_edgeAffecting[static_cast<size_t>(e)], survivorId);
    };
    std::for_each(merged.affectedEdges.begin(), merged.affectedEdges.end(), coverEdge);
    std::for_each(walked.begin(), walked.end(), coverEdge);
    for (const int n : merged.affectedIpNodes) {
        s.affectedIpNodes.insert(n);
        addUnique(m_nodeAffecting[static_cast<size_t>(n)], survivorId);
    }
    for (const int n : merged.quantizedInputSinkOperatorNodes) {
        s.quantizedInputSinkOperatorNodes.insert(n);
        addUnique(m_nodeAffecting[static_cast<size_t>(n)], survivorId);
    }
}

void Solver::mergeIntoPath(int id, const Path& path, const std::set<int>& family) {
    Path walked;
    const std::vector<int> survivors = coveringQuantizers(path, family, walked);
    const PropagatingQuantizer merged = pq(id);
    const auto groupIt = m_groupOf.find(id);
    const int mergedGroup = groupIt == m_groupOf.end() ? -1 : groupIt->second;
    removePropagatingQuantizer(id);
    for (const int survivorId : survivors) {
        absorbQuantizer(survivorId, merged, walked);
        if (mergedGroup < 0) {
            continue;
        }
        auto other = m_groupOf.find(survivorId);
        if (other != m_groupOf.end()) {
            mergeUnifiedGroups({other->second, mergedGroup});
        } else if (m_groups.contains(mergedGroup)) {
            m_groups[mergedGroup].insert(survivorId);
            m_groupOf[survivorId] = mergedGroup;
        }
    }
}

std::vector<std::pair<int, const Path*>>
Solver::quantizersForPaths(int id, const std::map<int, std::vector<Path>>& paths,
                           std::set<int>& family) {
    // The first path keeps the PQ, every further path gets a clone; the PQs of one unified group
    // of paths share a scale.
    std::vector<std::pair<int, const Path*>> toProcess;
    std::map<int, std::vector<int>> groupMembers;
    for (const auto& [group, groupPaths] : paths) {
        for (const Path& path : groupPaths) {
            const int member = toProcess.empty() ? id : clonePropagatingQuantizer(id);
            family.insert(member);
            toProcess.emplace_back(member, &path);
            if (group >= 0) {
                groupMembers[group].push_back(member);
            }
        }
    }
    for (const auto& [group, members] : groupMembers) {
        // NNCF unifies the primary with each further member; a lone path (a unified op with one
        // non-constant input, such as Div(x, c) on NPU) forms no group.
        if (members.size() > 1) {
            unifyScales(members, UnifiedScaleType::UnifyAlways);
        }
    }
    return toProcess;
}

void Solver::waitAtBranch(int member, const Path& path) {
    int branching = -1;
    for (const int e : path) {
        if (node(edge(e).from).outEdges.size() > 1) {
            branching = edge(e).from;
            break;
        }
    }
    m_waitingOn[member] = branching;
    m_waiters[branching].insert(member);
}

void Solver::propagationStep(int id) {
    if (m_waitingOn.contains(id)) {
        handleWaiting(id);
        return;
    }
    const std::map<int, std::vector<Path>> paths = pathsGroupedByUnifiedScales(pq(id).location);
    if (paths.empty()) {
        finish(id);
        return;
    }
    std::set<int> family = {id};
    std::vector<int> surviving;
    for (const auto& [member, path] : quantizersForPaths(id, paths, family)) {
        switch (checkTransitionViaPath(member, *path, family)) {
        case TransitionStatus::ShouldNotTransition:
            if (member != id) {
                removePropagatingQuantizer(member); // a clone is dropped
            } else {
                finish(member);
            }
            break;
        case TransitionStatus::ShouldTransition:
            propagateViaPath(member, *path);
            surviving.push_back(member);
            break;
        case TransitionStatus::ShouldMerge:
            mergeIntoPath(member, *path, family);
            break;
        case TransitionStatus::ShouldWaitForMerge:
            waitAtBranch(member, *path);
            surviving.push_back(member);
            break;
        }
    }
    for (const int member : surviving) {
        m_queue.push_front(member);
    }
}

Result<QuantizationProposal> Solver::run() {
    m_pqs.emplace_back(); // ids start at 1, as in NNCF
    m_pqs.front().alive = false;
    QS_TRY(setAllowedQuantizationTypes());
    QS_TRY(setupInitialQuantizers());
    size_t stalled = 0;
    while (!m_queue.empty()) {
        const int id = m_queue.back();
        m_queue.pop_back();
        const size_t before = m_queue.size() + m_finished.size();
        const bool wasWaiting = m_waitingOn.contains(id);
        propagationStep(id);
        // Guard against PQs waiting forever on a branch whose other quantizers finished.
        stalled = (wasWaiting && m_waitingOn.contains(id) &&
                   m_queue.size() + m_finished.size() == before + 1)
                      ? stalled + 1
                      : 0;
        if (stalled > m_queue.size() + 1) {
            for (const auto& [pqId, branching] : std::map<int, int>(m_waitingOn)) {
                (void)branching;
                finish(pqId);
                m_queue.erase(std::remove(m_queue.begin(), m_queue.end(), pqId), m_queue.end());
            }
            stalled = 0;
        }
    }
    filterIntegerInputQuantizers();
    filterElementwiseQuantizers();
    QS_ASSIGN_OR_RETURN(MultiConfigQuantizerSetup setup, createQuantizerSetup());
    QuantizationProposal proposal;
    proposal.setup = std::move(setup);
    proposal.operatorTraits = m_trait;
    proposal.edgeQuantizers.resize(m_graph.edges().size());
    for (size_t e = 0; e < m_edgeAffecting.size(); ++e) {
        for (const int id : m_edgeAffecting[e]) {
            if (proposal.setup.quantizationPoints.contains(id)) {
                proposal.edgeQuantizers[e].push_back(id);
            }
        }
        std::sort(proposal.edgeQuantizers[e].begin(), proposal.edgeQuantizers[e].end());
    }
    proposal.log = std::move(m_log);
    return proposal;
}

} // namespace detail

PropagationOptions presetOptions(QuantizationPreset preset, int64_t opset) {
    PropagationOptions options;
    options.activationConstraints.mode = preset == QuantizationPreset::Performance
                                             ? QuantizationMode::Symmetric
                                             : QuantizationMode::Asymmetric;
    options.weightConstraints.mode = QuantizationMode::Symmetric;
    if (opset > 0 && opset < 13) {
        // Per-axis QuantizeLinear needs opset 13.
        options.activationConstraints.perChannel = false;
        options.weightConstraints.perChannel = false;
    }
    return options;
}

Result<QuantizationProposal> proposeQuantizerSetup(const graph::Graph& model, const HWConfig& hw,
                                                   const PropagationOptions& options) {
    QS_ASSIGN_OR_RETURN(InsertionPointGraph ipg,
                        InsertionPointGraph::build(model, options.ignoredScope, hw.targetDevice()));
    auto graph = std::make_shared<const InsertionPointGraph>(std::move(ipg));
    detail::Solver solver(*graph, hw, options);
    QS_ASSIGN_OR_RETURN(QuantizationProposal proposal, solver.run());
    proposal.graph = std::move(graph);
    return proposal;
}

} // namespace qs::quantization
