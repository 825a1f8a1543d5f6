// Merging the quantizers that wait below a downward-branching node (reference §1.5): once every
// active quantizer under the branch waits there, re-check the branch, merge the config lists by
// rule, place the merge PQ on the branching post-hook and fold merged branches into it (unmerged
// ones stay as its requantization children).

#include "core/quantization/merge_configs.h"
#include "core/quantization/propagation_state.h"

namespace qs::quantization::detail {

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

} // namespace qs::quantization::detail
