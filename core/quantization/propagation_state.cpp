// Edits of the propagation state: operator traits and allowed configs from the HW config, adding,
// cloning, removing and finishing PropagatingQuantizers, and unified-scale group bookkeeping (group
// ids in creation order; merging groups opens a new id, as NNCF does).

#include "core/quantization/propagation_state.h"

namespace qs::quantization::detail {

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
            const HWConfigOp* hwOp = m_hw.effectiveOp(meta.hwName);
            if (hwOp == nullptr) {
                trait = QuantizationTrait::NonQuantizable;
            } else {
                m_unified[i] = hwOp->unifiedScales();
                if (hwOp->hasActivations) {
                    trait = QuantizationTrait::InputsQuantizable;
                    allowed = hwOp->activations;
                } else {
                    m_wildcard[i] = true;
                    allowed = {QuantizerConfig{}};
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
    clone.upstreamPropagatingQuantizers.clear();
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
    for (const int upstream : q.upstreamPropagatingQuantizers) {
        pq(upstream).downstreamPropagatingQuantizers.erase(id);
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

} // namespace qs::quantization::detail
