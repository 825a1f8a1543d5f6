// The propagation solver. Follows NNCF's QuantizerPropagationSolver step by step so that the
// placement, the order of merged config lists and the unified-scale groups match NNCF:
// initial PQs in lexicographic topological order, a deque that takes new PQs on the left and pops
// from the right, paths of at most two edges grouped by unified-scale op, clones through
// multi-input ops, waiting at downward branches, merges by rule, post-filters.

#include "core/quantization/quantizer_propagation_solver.h"

#include "core/graph/metatype.h"
#include "core/quantization/merge_configs.h"

#include <algorithm>
#include <deque>
#include <set>

namespace qs::quantization {

namespace {
using graph::QuantizationTrait;

enum class TransitionStatus {
    ShouldTransition,
    ShouldMerge,
    ShouldNotTransition,
    ShouldWaitForMerge
};

struct PropagatingQuantizer {
    int id = 0;
    QuantizerConfigList configs;
    int location = -1;
    int lastAcceptingLocation = -1;
    std::set<int> affectedEdges;
    std::set<int> affectedIpNodes;
    std::set<int> affectedOperatorNodes;
    std::set<int> quantizedInputSinkOperatorNodes;
    std::set<int> downstreamPropagatingQuantizers;
    std::optional<UnifiedScaleType> unifiedScaleType;
    size_t pathLength = 0;
    bool alive = true;
    bool finished = false;
    bool dependentOnWeights = false;
};

using Path = std::vector<int>; // edge indices, from the current IP upward

class Solver {
public:
    Solver(const InsertionPointGraph& graph, const HWConfig& hw, const PropagationOptions& options)
        : m_graph(graph)
        , m_hw(hw)
        , m_options(options)
        , m_pqAt(graph.nodes().size(), -1)
        , m_nodeAffecting(graph.nodes().size())
        , m_edgeAffecting(graph.edges().size())
        , m_trait(graph.nodes().size(), QuantizationTrait::NonQuantizable)
        , m_allowed(graph.nodes().size())
        , m_unified(graph.nodes().size(), false) {}

    Result<QuantizationProposal> run();

private:
    const IpNode& node(int index) const { return m_graph.node(index); }

    const IpEdge& edge(int index) const { return m_graph.edge(index); }

    PropagatingQuantizer& pq(int id) { return m_pqs[static_cast<size_t>(id)]; }

    Result<void> setAllowedQuantizationTypes();
    Result<void> setupInitialQuantizers();
    int addPropagatingQuantizer(const QuantizerConfigList& configs, int preHook);
    int clonePropagatingQuantizer(int original);
    void removePropagatingQuantizer(int id);
    void finish(int id);
    void unifyScales(const std::vector<int>& pqs, UnifiedScaleType type);
    int mergeUnifiedGroups(const std::vector<int>& gids);

    void propagationStep(int id);
    std::map<int, std::vector<Path>> pathsGroupedByUnifiedScales(int ipNode);
    bool isUnificationNeeded(int op) const;
    TransitionStatus checkTransitionViaPath(int id, const Path& path, const std::set<int>& family);
    std::optional<TransitionStatus> checkAffecting(int id, const std::vector<int>& affecting,
                                                   const std::set<int>& family) const;
    TransitionStatus checkBranchingTransition(int id, int branchingNode);
    void propagateViaPath(int id, const Path& path);
    void mergeIntoPath(int id, const Path& path, const std::set<int>& family);
    void handleWaiting(int id);
    void mergeAtBranchingNode(int branchingNode);

    std::set<int> activeQuantizersDominatedBy(int nodeIndex) const;
    std::vector<int> nonAgnosticOpsDominatedBy(int nodeIndex) const;
    bool isDominatingOutputs(int nodeIndex) const;
    bool allOutputsQuantized(int nodeIndex) const;
    std::vector<int> shortestDownwardPath(int from, int to) const; // edges

    void filterIntegerInputQuantizers();
    void filterElementwiseQuantizers();
    Result<MultiConfigQuantizerSetup> createQuantizerSetup();

    const InsertionPointGraph& m_graph;
    const HWConfig& m_hw;
    const PropagationOptions& m_options;

    std::vector<PropagatingQuantizer> m_pqs; ///< index = id; id 0 unused
    std::vector<int> m_pqAt;
    std::vector<std::vector<int>> m_nodeAffecting;
    std::vector<std::vector<int>> m_edgeAffecting;
    std::vector<QuantizationTrait> m_trait;
    std::vector<QuantizerConfigList> m_allowed;
    std::vector<bool> m_unified;

    std::deque<int> m_queue;
    std::vector<int> m_finished;
    std::map<int, int> m_waitingOn;         ///< pq -> branching node
    std::map<int, std::set<int>> m_waiters; ///< branching node -> pqs
    std::map<int, std::set<int>> m_groups;  ///< unified-scale groups
    std::map<int, UnifiedScaleType> m_groupType;
    std::map<int, int> m_groupOf; ///< pq -> gid
    int m_nextGid = 0;
    std::vector<std::string> m_log;
};

void eraseValue(std::vector<int>& values, int value) {
    values.erase(std::remove(values.begin(), values.end(), value), values.end());
}

void addUnique(std::vector<int>& values, int value) {
    if (std::find(values.begin(), values.end(), value) == values.end()) {
        values.push_back(value);
    }
}

Result<void> Solver::setAllowedQuantizationTypes() {
    const QuantizerConfigList defaultList = {
        m_options.activationConstraints.applyTo(QuantizerConfig{})};
    for (size_t i = 0; i < m_graph.nodes().size(); ++i) {
        const IpNode& n = m_graph.nodes()[i];
        if (n.type != IpNodeType::Operator) {
            continue;
        }
        if (n.kind == OperatorKind::ModelOutput) {
            m_allowed[i] = defaultList;
            continue;
        }
        if (n.kind != OperatorKind::Regular || n.ignored) {
            continue;
        }
        const graph::Metatype& meta = *n.metatype;
        QuantizationTrait trait = meta.defaultTrait;
        QuantizerConfigList allowed = defaultList;
        if (!meta.hwName.empty()) {
            const graph::Node& primary = m_graph.model().node(n.mergedNodes.front());
            const std::string mode = primary.stringAttr("mode", "nearest");
            const HWConfigOp* hwOp =
                m_hw.findOp(meta.hwName, mode == "nearest" ? "nearest" : "linear");
            if (hwOp == nullptr) {
                trait = QuantizationTrait::NonQuantizable;
            } else {
                m_unified[i] = hwOp->unifiedScales();
                if (hwOp->hasActivations) {
                    trait = QuantizationTrait::InputsQuantizable;
                    allowed = hwOp->activations;
                }
            }
        }
        m_trait[i] = trait;
        m_allowed[i] = std::move(allowed);
    }
    return {};
}

int Solver::addPropagatingQuantizer(const QuantizerConfigList& configs, int preHook) {
    PropagatingQuantizer q;
    q.id = static_cast<int>(m_pqs.size());
    q.configs = configs;
    q.location = preHook;
    q.lastAcceptingLocation = preHook;
    const int op = node(preHook).op;
    const int e = node(preHook).outEdges.front();
    q.affectedEdges.insert(e);
    q.affectedIpNodes.insert(preHook);
    q.quantizedInputSinkOperatorNodes.insert(op);
    m_pqs.push_back(std::move(q));
    const int id = static_cast<int>(m_pqs.size()) - 1;
    m_pqAt[static_cast<size_t>(preHook)] = id;
    m_nodeAffecting[static_cast<size_t>(preHook)].push_back(id);
    m_nodeAffecting[static_cast<size_t>(op)].push_back(id);
    m_edgeAffecting[static_cast<size_t>(e)].push_back(id);
    return id;
}

int Solver::clonePropagatingQuantizer(int original) {
    PropagatingQuantizer clone = pq(original);
    clone.id = static_cast<int>(m_pqs.size());
    clone.downstreamPropagatingQuantizers.clear();
    m_pqs.push_back(clone);
    const int id = clone.id;
    for (const int e : clone.affectedEdges) {
        m_edgeAffecting[static_cast<size_t>(e)].push_back(id);
    }
    for (const int n : clone.affectedIpNodes) {
        m_nodeAffecting[static_cast<size_t>(n)].push_back(id);
    }
    for (const int n : clone.affectedOperatorNodes) {
        m_nodeAffecting[static_cast<size_t>(n)].push_back(id);
    }
    for (const int n : clone.quantizedInputSinkOperatorNodes) {
        addUnique(m_nodeAffecting[static_cast<size_t>(n)], id);
    }
    auto group = m_groupOf.find(original);
    if (group != m_groupOf.end()) {
        m_groups[group->second].insert(id);
        m_groupOf[id] = group->second;
    }
    return id;
}

void Solver::removePropagatingQuantizer(int id) {
    PropagatingQuantizer& q = pq(id);
    q.alive = false;
    for (const int e : q.affectedEdges) {
        eraseValue(m_edgeAffecting[static_cast<size_t>(e)], id);
    }
    for (auto* nodes :
         {&q.affectedIpNodes, &q.affectedOperatorNodes, &q.quantizedInputSinkOperatorNodes}) {
        for (const int n : *nodes) {
            eraseValue(m_nodeAffecting[static_cast<size_t>(n)], id);
        }
    }
    if (q.location >= 0 && m_pqAt[static_cast<size_t>(q.location)] == id) {
        m_pqAt[static_cast<size_t>(q.location)] = -1;
    }
    auto group = m_groupOf.find(id);
    if (group != m_groupOf.end()) {
        m_groups[group->second].erase(id);
        m_groupOf.erase(group);
    }
    auto waiting = m_waitingOn.find(id);
    if (waiting != m_waitingOn.end()) {
        m_waiters[waiting->second].erase(id);
        m_waitingOn.erase(waiting);
    }
    m_queue.erase(std::remove(m_queue.begin(), m_queue.end(), id), m_queue.end());
    for (PropagatingQuantizer& other : m_pqs) {
        other.downstreamPropagatingQuantizers.erase(id);
    }
}

void Solver::finish(int id) {
    // Every insertion point is an accepting location in NNCF, so backtracking keeps the PQ where
    // it is.
    auto waiting = m_waitingOn.find(id);
    if (waiting != m_waitingOn.end()) {
        m_waiters[waiting->second].erase(id);
        m_waitingOn.erase(waiting);
    }
    if (!pq(id).finished) {
        pq(id).finished = true;
        m_finished.push_back(id);
    }
}

void Solver::unifyScales(const std::vector<int>& pqs, UnifiedScaleType type) {
    // Group ids are handed out in creation order and NNCF numbers the final groups that way. A
    // PQ that already belongs to a group brings the others into it (no new id); PQs from several
    // groups merge them into a new one.
    std::vector<int> existing;
    for (const int id : pqs) {
        auto it = m_groupOf.find(id);
        if (it != m_groupOf.end() &&
            std::find(existing.begin(), existing.end(), it->second) == existing.end()) {
            existing.push_back(it->second);
        }
    }
    int gid = -1;
    if (existing.size() == 1) {
        gid = existing.front();
    } else if (existing.size() > 1) {
        gid = mergeUnifiedGroups(existing);
    } else {
        gid = m_nextGid++;
        m_groupType[gid] = type;
    }
    for (const int id : pqs) {
        m_groups[gid].insert(id);
        m_groupOf[id] = gid;
        pq(id).unifiedScaleType = m_groupType[gid];
    }
}

int Solver::mergeUnifiedGroups(const std::vector<int>& gids) {
    const int merged = m_nextGid++;
    m_groupType[merged] = UnifiedScaleType::UnifyAlways;
    for (const int gid : gids) {
        auto group = m_groups.find(gid);
        if (group == m_groups.end()) {
            continue;
        }
        for (const int id : group->second) {
            m_groups[merged].insert(id);
            m_groupOf[id] = merged;
        }
        if (m_groupType[gid] == UnifiedScaleType::UnifyOnlyPerTensor) {
            m_groupType[merged] = UnifiedScaleType::UnifyOnlyPerTensor;
        }
        m_groups.erase(group);
    }
    m_groups.try_emplace(merged);
    return merged;
}

Result<void> Solver::setupInitialQuantizers() {
    for (const int opIndex : m_graph.lexicographicOperatorOrder()) {
        const IpNode& op = node(opIndex);
        const bool isOutput = op.kind == OperatorKind::ModelOutput;
        if (isOutput ? !m_options.quantizeOutputs
                     : (op.ignored || m_trait[static_cast<size_t>(opIndex)] !=
                                          QuantizationTrait::InputsQuantizable)) {
            continue;
        }
        std::vector<int> preHooks;
        for (const int e : op.inEdges) {
            if (node(edge(e).from).type == IpNodeType::PreHook) {
                preHooks.push_back(edge(e).from);
            }
        }
        if (preHooks.empty()) {
            continue;
        }
        std::sort(preHooks.begin(), preHooks.end(),
                  [&](int a, int b) { return node(a).key < node(b).key; });
        QuantizerConfigList configs =
            m_options.activationConstraints.filter(m_allowed[static_cast<size_t>(opIndex)]);
        if (configs.empty()) {
            return Error(
                Errc::InvalidArgument,
                "quantization parameter constraints are incompatible with HW capabilities of op '" +
                    op.name + "' (HW config '" + m_hw.targetDevice() + "')");
        }
        const bool unified = m_unified[static_cast<size_t>(opIndex)];
        if (unified) {
            // Unified per-channel scales would break when one branch changes the tensor layout.
            std::erase_if(configs, [](const QuantizerConfig& c) { return c.perChannel; });
            if (configs.empty()) {
                return Error(Errc::InvalidArgument,
                             "op '" + op.name +
                                 "' needs unified scales but allows only per-channel configs");
            }
        }
        const std::vector<int>& targetPorts = op.metatype->targetInputPorts;
        std::vector<int> created;
        for (const int hook : preHooks) {
            const int port = node(hook).inputPort;
            if (!targetPorts.empty() &&
                std::find(targetPorts.begin(), targetPorts.end(), port) == targetPorts.end()) {
                continue;
            }
            if (edge(node(hook).outEdges.front()).isInteger) {
                continue;
            }
            const int id = addPropagatingQuantizer(configs, hook);
            m_queue.push_front(id);
            created.push_back(id);
        }
        if (unified && !created.empty()) {
            unifyScales(created, UnifiedScaleType::UnifyAlways);
        }
    }
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
    return {};
}

bool Solver::isUnificationNeeded(int op) const {
    // NNCF's scales_unification_map: an ONNX Concat unifies only when a Conv, ConvTranspose,
    // MatMul, Gemm or attention follows it through agnostic or unified ops.
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
            const std::string_view type = model.node(c.mergedNodes.front()).opType;
            if (type == "Conv" || type == "ConvTranspose" || type == "MatMul" || type == "Gemm" ||
                type == "Attention") {
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

std::set<int> Solver::activeQuantizersDominatedBy(int nodeIndex) const {
    std::set<int> out;
    std::set<int> seen;
    std::vector<int> stack = m_graph.successors(nodeIndex);
    while (!stack.empty()) {
        const int current = stack.back();
        stack.pop_back();
        if (!seen.insert(current).second) {
            continue;
        }
        const int at = m_pqAt[static_cast<size_t>(current)];
        if (node(current).isInsertionPoint() && at >= 0) {
            const PropagatingQuantizer& q = m_pqs[static_cast<size_t>(at)];
            if (q.alive && !q.finished) {
                out.insert(at);
            }
            continue;
        }
        for (const int next : m_graph.successors(current)) {
            stack.push_back(next);
        }
    }
    return out;
}

std::vector<int> Solver::nonAgnosticOpsDominatedBy(int nodeIndex) const {
    std::vector<int> out;
    std::set<int> seen;
    std::vector<int> stack = m_graph.successors(nodeIndex);
    while (!stack.empty()) {
        const int current = stack.back();
        stack.pop_back();
        if (!seen.insert(current).second) {
            continue;
        }
        if (node(current).type == IpNodeType::Operator &&
            m_trait[static_cast<size_t>(current)] != QuantizationTrait::QuantizationAgnostic) {
            out.push_back(current);
            continue;
        }
        for (const int next : m_graph.successors(current)) {
            stack.push_back(next);
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

bool Solver::isDominatingOutputs(int nodeIndex) const {
    std::set<int> seen;
    std::vector<int> stack = m_graph.successors(nodeIndex);
    while (!stack.empty()) {
        const int current = stack.back();
        stack.pop_back();
        if (!seen.insert(current).second) {
            continue;
        }
        const IpNode& c = node(current);
        if (c.type == IpNodeType::Operator) {
            if (c.kind == OperatorKind::ModelOutput) {
                return true;
            }
            if (m_trait[static_cast<size_t>(current)] != QuantizationTrait::QuantizationAgnostic) {
                continue;
            }
        }
        for (const int next : m_graph.successors(current)) {
            stack.push_back(next);
        }
    }
    return false;
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

void Solver::mergeIntoPath(int id, const Path& path, const std::set<int>& family) {
    std::vector<int> survivors;
    Path walked;
    for (const int e : path) {
        walked.push_back(e);
        auto pick = [&](const std::vector<int>& affecting) {
            for (const int other : affecting) {
                if (!family.contains(other) && m_pqs[static_cast<size_t>(other)].alive) {
                    survivors.push_back(other);
                }
            }
        };
        pick(m_edgeAffecting[static_cast<size_t>(e)]);
        if (survivors.empty() && node(edge(e).from).isInsertionPoint()) {
            pick(m_nodeAffecting[static_cast<size_t>(edge(e).from)]);
        }
        if (!survivors.empty()) {
            break;
        }
    }
    PropagatingQuantizer merged = pq(id);
    const auto groupIt = m_groupOf.find(id);
    const int mergedGroup = groupIt == m_groupOf.end() ? -1 : groupIt->second;
    removePropagatingQuantizer(id);
    for (const int survivorId : survivors) {
        PropagatingQuantizer& s = pq(survivorId);
        for (const int e : merged.affectedEdges) {
            s.affectedEdges.insert(e);
            addUnique(m_edgeAffecting[static_cast<size_t>(e)], survivorId);
        }
        for (const int e : walked) {
            s.affectedEdges.insert(e);
            addUnique(m_edgeAffecting[static_cast<size_t>(e)], survivorId);
        }
        for (const int n : merged.affectedIpNodes) {
            s.affectedIpNodes.insert(n);
            addUnique(m_nodeAffecting[static_cast<size_t>(n)], survivorId);
        }
        for (const int n : merged.quantizedInputSinkOperatorNodes) {
            s.quantizedInputSinkOperatorNodes.insert(n);
            addUnique(m_nodeAffecting[static_cast<size_t>(n)], survivorId);
        }
        if (mergedGroup >= 0) {
            auto other = m_groupOf.find(survivorId);
            if (other != m_groupOf.end()) {
                mergeUnifiedGroups({other->second, mergedGroup});
            } else if (m_groups.contains(mergedGroup)) {
                m_groups[mergedGroup].insert(survivorId);
                m_groupOf[survivorId] = mergedGroup;
            }
        }
    }
}

std::vector<int> Solver::shortestDownwardPath(int from, int to) const {
    std::map<int, int> viaEdge;
    std::deque<int> frontier = {from};
    viaEdge[from] = -1;
    while (!frontier.empty()) {
        const int current = frontier.front();
        frontier.pop_front();
        if (current == to) {
            break;
        }
        for (const int e : node(current).outEdges) {
            const int next = edge(e).to;
            if (!viaEdge.contains(next)) {
                viaEdge[next] = e;
                frontier.push_back(next);
            }
        }
    }
    std::vector<int> path;
    if (!viaEdge.contains(to)) {
        return path;
    }
    for (int current = to; viaEdge[current] >= 0; current = edge(viaEdge[current]).from) {
        path.push_back(viaEdge[current]);
    }
    std::reverse(path.begin(), path.end());
    return path;
}

void Solver::mergeAtBranchingNode(int branchingNode) {
    const std::set<int> waiters = m_waiters[branchingNode];
    m_waiters.erase(branchingNode);
    for (const int id : waiters) {
        m_waitingOn.erase(id);
    }
    auto abort = [&] {
        for (const int id : waiters) {
            finish(id);
            m_queue.erase(std::remove(m_queue.begin(), m_queue.end(), id), m_queue.end());
        }
    };
    for (const int id : waiters) {
        if (checkBranchingTransition(id, branchingNode) == TransitionStatus::ShouldNotTransition) {
            abort();
            return;
        }
    }
    const std::vector<int> ordered(waiters.begin(), waiters.end());
    std::vector<QuantizerConfigList> branchLists;
    for (const int id : ordered) {
        branchLists.push_back(pq(id).configs);
    }
    const MergedConfigs merged = mergeConfigsForBranches(branchLists, m_options.rule);
    if (merged.mergedList.empty()) {
        m_log.push_back("Could not merge the quantizers at '" + node(branchingNode).key +
                        "': no common quantizer configurations");
        abort();
        return;
    }
    for (const int id : ordered) {
        m_queue.erase(std::remove(m_queue.begin(), m_queue.end(), id), m_queue.end());
    }
    // The merge PQ sits on the branching post-hook and covers every branch.
    PropagatingQuantizer mergeQ;
    mergeQ.id = static_cast<int>(m_pqs.size());
    mergeQ.configs = merged.mergedList;
    mergeQ.location = branchingNode;
    mergeQ.lastAcceptingLocation = branchingNode;
    mergeQ.affectedIpNodes.insert(branchingNode);
    m_pqs.push_back(mergeQ);
    const int mergeId = static_cast<int>(m_pqs.size()) - 1;
    m_pqAt[static_cast<size_t>(branchingNode)] = mergeId;
    addUnique(m_nodeAffecting[static_cast<size_t>(branchingNode)], mergeId);

    std::vector<int> groupsToMerge;
    for (size_t i = 0; i < ordered.size(); ++i) {
        auto it = m_groupOf.find(ordered[i]);
        if (!merged.branchLists[i].has_value() && it != m_groupOf.end()) {
            groupsToMerge.push_back(it->second);
        }
    }
    for (size_t i = 0; i < ordered.size(); ++i) {
        const int id = ordered[i];
        PropagatingQuantizer& m = pq(mergeId);
        const PropagatingQuantizer branch = pq(id);
        m.quantizedInputSinkOperatorNodes.insert(branch.quantizedInputSinkOperatorNodes.begin(),
                                                 branch.quantizedInputSinkOperatorNodes.end());
        for (const int n : branch.quantizedInputSinkOperatorNodes) {
            addUnique(m_nodeAffecting[static_cast<size_t>(n)], mergeId);
        }
        if (merged.branchLists[i].has_value()) {
            pq(mergeId).downstreamPropagatingQuantizers.insert(id);
            finish(id);
            continue;
        }
        for (const int e : shortestDownwardPath(branchingNode, branch.location)) {
            pq(mergeId).affectedEdges.insert(e);
            addUnique(m_edgeAffecting[static_cast<size_t>(e)], mergeId);
            const int to = edge(e).to;
            if (node(to).isInsertionPoint()) {
                pq(mergeId).affectedIpNodes.insert(to);
                addUnique(m_nodeAffecting[static_cast<size_t>(to)], mergeId);
            }
        }
        for (const int e : branch.affectedEdges) {
            pq(mergeId).affectedEdges.insert(e);
            addUnique(m_edgeAffecting[static_cast<size_t>(e)], mergeId);
        }
        for (const int n : branch.affectedIpNodes) {
            pq(mergeId).affectedIpNodes.insert(n);
            addUnique(m_nodeAffecting[static_cast<size_t>(n)], mergeId);
        }
        removePropagatingQuantizer(id);
    }
    if (!groupsToMerge.empty()) {
        // NNCF merges the branch groups into a new group, even a single one.
        const int gid = mergeUnifiedGroups(groupsToMerge);
        m_groups[gid].insert(mergeId);
        m_groupOf[mergeId] = gid;
        pq(mergeId).unifiedScaleType = m_groupType[gid];
    }
    m_pqAt[static_cast<size_t>(branchingNode)] = mergeId;
    m_queue.push_front(mergeId);
}

void Solver::handleWaiting(int id) {
    const int branchingNode = m_waitingOn.at(id);
    if (activeQuantizersDominatedBy(branchingNode) == m_waiters[branchingNode]) {
        mergeAtBranchingNode(branchingNode);
        return;
    }
    m_queue.push_front(id);
}

void Solver::propagationStep(int id) {
    if (m_waitingOn.contains(id)) {
        handleWaiting(id);
        return;
    }
    const int location = pq(id).location;
    std::map<int, std::vector<Path>> paths = pathsGroupedByUnifiedScales(location);
    if (paths.empty()) {
        finish(id);
        return;
    }
    // The first path keeps the PQ, every further path gets a clone.
    std::vector<std::pair<int, const Path*>> toProcess;
    std::map<int, std::vector<int>> groupMembers;
    std::set<int> family = {id};
    bool assigned = false;
    for (const auto& [group, groupPaths] : paths) {
        for (const Path& path : groupPaths) {
            const int member = assigned ? clonePropagatingQuantizer(id) : id;
            assigned = true;
            family.insert(member);
            toProcess.emplace_back(member, &path);
            if (group >= 0) {
                groupMembers[group].push_back(member);
            }
        }
    }
    for (const auto& [group, members] : groupMembers) {
        unifyScales(members, UnifiedScaleType::UnifyAlways);
    }
    std::vector<int> surviving;
    for (const auto& [member, path] : toProcess) {
        switch (checkTransitionViaPath(member, *path, family)) {
        case TransitionStatus::ShouldNotTransition:
            if (member != id) {
                removePropagatingQuantizer(member);
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
        case TransitionStatus::ShouldWaitForMerge: {
            int branching = -1;
            for (const int e : *path) {
                if (node(edge(e).from).outEdges.size() > 1) {
                    branching = edge(e).from;
                    break;
                }
            }
            m_waitingOn[member] = branching;
            m_waiters[branching].insert(member);
            surviving.push_back(member);
            break;
        }
        }
    }
    for (const int member : surviving) {
        m_queue.push_front(member);
    }
}

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
    // integer kernel, so NNCF drops it when it never moved away from the op (NNCF's path of
    // length <= 1 counts the initial pre-hook edge; ours counts moves).
    for (const int id : std::vector<int>(m_finished)) {
        const PropagatingQuantizer& q = pq(id);
        if (!q.alive || q.quantizedInputSinkOperatorNodes.size() != 1 || q.pathLength > 0) {
            continue;
        }
        const int op = *q.quantizedInputSinkOperatorNodes.begin();
        const IpNode& sink = node(op);
        if (sink.kind != OperatorKind::Regular) {
            continue;
        }
        const std::string& type = m_graph.model().node(sink.mergedNodes.front()).opType;
        if (type != "Add" && type != "Sub" && type != "Mul" && type != "Div") {
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

Result<MultiConfigQuantizerSetup> Solver::createQuantizerSetup() {
    MultiConfigQuantizerSetup setup;
    std::vector<int> activationIds;
    for (const int id : m_finished) {
        if (pq(id).alive) {
            activationIds.push_back(id);
        }
    }
    std::sort(activationIds.begin(), activationIds.end());
    std::map<int, int> qpOfOpWeight; // op node -> weight qp id
    std::map<int, std::set<int>> sinksOf;
    for (const int id : activationIds) {
        const PropagatingQuantizer& q = pq(id);
        std::set<int> direct = q.quantizedInputSinkOperatorNodes;
        for (const int child : q.downstreamPropagatingQuantizers) {
            if (pq(child).alive) {
                for (const int n : pq(child).quantizedInputSinkOperatorNodes) {
                    direct.erase(n);
                }
                setup.requantizationParents[child] = id;
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
        setup.quantizationPoints[id] = std::move(point);
        sinksOf[id] = q.quantizedInputSinkOperatorNodes;
    }

    // Weight quantization points from the HW "weights" lists; ids start at max(activation id) + 2.
    int nextId = (activationIds.empty() ? 0 : activationIds.back()) + 2;
    const graph::Graph& model = m_graph.model();
    for (size_t opIndex = 0; opIndex < m_graph.nodes().size(); ++opIndex) {
        const IpNode& op = m_graph.nodes()[opIndex];
        if (op.type != IpNodeType::Operator || op.kind != OperatorKind::Regular || op.ignored ||
            !op.metatype->hasWeights ||
            graph::constantWeightPorts(model, op.mergedNodes.front()).empty()) {
            continue;
        }
        const HWConfigOp* hwOp = m_hw.findOp(op.metatype->hwName);
        if (hwOp == nullptr || !hwOp->hasWeights) {
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
        qpOfOpWeight[static_cast<int>(opIndex)] = nextId;
        setup.quantizationPoints[nextId++] = std::move(point);
    }

    // Unified-scale groups (single-member groups are kept, as NNCF does).
    std::map<int, int> groupOfQp;
    for (const auto& [gid, members] : m_groups) {
        std::vector<int> ids;
        for (const int id : members) {
            if (setup.quantizationPoints.contains(id)) {
                ids.push_back(id);
            }
        }
        if (ids.empty()) {
            continue;
        }
        const int compact = static_cast<int>(setup.unifiedScaleGroups.size());
        for (const int id : ids) {
            groupOfQp[id] = compact;
        }
        setup.unifiedScaleGroups[compact] = ids;
        setup.unifiedScaleTypes[compact] = m_groupType[gid];
    }

    // Embedding outputs: the activation quantizer becomes the weight quantizer when their
    // per-tensor configs intersect (§1.7, source 3).
    for (const int id : activationIds) {
        if (!pq(id).dependentOnWeights) {
            continue;
        }
        const IpNode& at = node(pq(id).location);
        auto weightIt = qpOfOpWeight.find(at.op);
        if (at.type != IpNodeType::PostHook || weightIt == qpOfOpWeight.end()) {
            continue;
        }
        std::vector<int> groupMembers = {id};
        if (groupOfQp.contains(id)) {
            groupMembers = setup.unifiedScaleGroups[groupOfQp[id]];
        }
        MultiConfigQuantizationPoint& weight = setup.quantizationPoints[weightIt->second];
        QuantizerConfigList narrowed;
        for (const QuantizerConfig& wc : weight.possibleConfigs) {
            if (wc.perChannel) {
                continue;
            }
            const bool everywhere =
                std::all_of(groupMembers.begin(), groupMembers.end(), [&](int member) {
                    const auto& list = setup.quantizationPoints[member].possibleConfigs;
                    return std::any_of(list.begin(), list.end(), [&](const QuantizerConfig& ac) {
                        QuantizerConfig a = ac;
                        a.signednessToForce = wc.signednessToForce;
                        return !ac.signednessToForce.has_value() ? a == wc : ac == wc;
                    });
                });
            if (everywhere) {
                narrowed.push_back(wc);
            }
        }
        if (narrowed.empty()) {
            continue; // stays as an activation quantizer: a requantization of the table
        }
        weight.possibleConfigs = narrowed;
        for (const std::string& name :
             setup.quantizationPoints[id].directlyQuantizedOperatorNodeNames) {
            weight.directlyQuantizedOperatorNodeNames.push_back(name);
        }
        sinksOf[weightIt->second] = sinksOf[id];
        sinksOf.erase(id);
        if (groupOfQp.contains(id)) {
            auto& members = setup.unifiedScaleGroups[groupOfQp[id]];
            std::replace(members.begin(), members.end(), id, weightIt->second);
        }
        setup.quantizationPoints.erase(id);
    }

    // Shared-input groups: quantizers whose sink ops overlap, plus the weights of those ops.
    std::map<int, int> parent;
    std::function<int(int)> root = [&](int x) {
        return parent[x] == x ? x : parent[x] = root(parent[x]);
    };
    std::map<int, int> firstQpOfOp;
    for (const auto& [id, sinks] : sinksOf) {
        parent.try_emplace(id, id);
        for (const int op : sinks) {
            auto [it, inserted] = firstQpOfOp.try_emplace(op, id);
            if (!inserted) {
                parent[root(id)] = root(it->second);
            }
            auto weightOfOp = qpOfOpWeight.find(op);
            if (weightOfOp != qpOfOpWeight.end() && weightOfOp->second != id) {
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
            if (std::binary_search(activationIds.begin(), activationIds.end(), id)) {
                key = std::max(key, id);
            }
        }
        ordered.emplace_back(key, members);
    }
    std::sort(ordered.begin(), ordered.end());
    int gid = 0;
    for (auto& [key, members] : ordered) {
        (void)key;
        setup.sharedInputOperationSetGroups[gid++] = std::move(members);
    }
    return setup;
}

} // namespace

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
                        InsertionPointGraph::build(model, options.ignoredScope));
    auto graph = std::make_shared<const InsertionPointGraph>(std::move(ipg));
    Solver solver(*graph, hw, options);
    QS_ASSIGN_OR_RETURN(QuantizationProposal proposal, solver.run());
    proposal.graph = std::move(graph);
    return proposal;
}

} // namespace qs::quantization
