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

int Solver::addMergeQuantizer(int branchingNode, const QuantizerConfigList& configs) {
    PropagatingQuantizer mergeQ;
    mergeQ.id = static_cast<int>(m_pqs.size());
    mergeQ.configs = configs;
    mergeQ.location = branchingNode;
    mergeQ.lastAcceptingLocation = branchingNode;
    mergeQ.affectedIpNodes.insert(branchingNode);
    m_pqs.push_back(mergeQ);
    const int mergeId = static_cast<int>(m_pqs.size()) - 1;
    m_pqAt[static_cast<size_t>(branchingNode)] = mergeId;
    addUnique(m_nodeAffecting[static_cast<size_t>(branchingNode)], mergeId);
    return mergeId;
}

void Solver::foldBranchInto(int mergeId, int branchingNode, int branchId) {
    const PropagatingQuantizer branch = pq(branchId);
    auto coverEdge = [&](int e) {
        pq(mergeId).affectedEdges.insert(e);
        addUnique(m_edgeAffecting[static_cast<size_t>(e)], mergeId);
    };
    auto coverIp = [&](int n) {
        pq(mergeId).affectedIpNodes.insert(n);
        addUnique(m_nodeAffecting[static_cast<size_t>(n)], mergeId);
    };
    // The merged branch quantizer folds into the merge PQ along the shortest path down to it.
    for (const int e : shortestDownwardPath(branchingNode, branch.location)) {
        coverEdge(e);
        if (node(edge(e).to).isInsertionPoint()) {
            coverIp(edge(e).to);
        }
    }
    std::for_each(branch.affectedEdges.begin(), branch.affectedEdges.end(), coverEdge);
    std::for_each(branch.affectedIpNodes.begin(), branch.affectedIpNodes.end(), coverIp);
    removePropagatingQuantizer(branchId);
}

void Solver::abortMerge(const std::set<int>& waiters) {
    for (const int id : waiters) {
        finish(id);
        m_queue.erase(std::remove(m_queue.begin(), m_queue.end(), id), m_queue.end());
    }
}

void Solver::mergeAtBranchingNode(int branchingNode) {
    const std::set<int> waiters = m_waiters[branchingNode];
    m_waiters.erase(branchingNode);
    for (const int id : waiters) {
        m_waitingOn.erase(id);
    }
    for (const int id : waiters) {
        if (checkBranchingTransition(id, branchingNode) == TransitionStatus::ShouldNotTransition) {
            abortMerge(waiters);
            return;
        }
    }
    const std::vector<int> ordered(waiters.begin(), waiters.end());
    std::vector<QuantizerConfigList> branchLists;
    branchLists.reserve(ordered.size());
    for (const int id : ordered) {
        branchLists.push_back(pq(id).configs);
    }
    const MergedConfigs merged = mergeConfigsForBranches(branchLists, m_options.rule);
    if (merged.mergedList.empty()) {
        m_log.push_back("Could not merge the quantizers at '" + node(branchingNode).key +
                        "': no common quantizer configurations");
        abortMerge(waiters);
        return;
    }
    for (const int id : ordered) {
        m_queue.erase(std::remove(m_queue.begin(), m_queue.end(), id), m_queue.end());
    }
    // The merge PQ sits on the branching post-hook and covers every branch.
    const int mergeId = addMergeQuantizer(branchingNode, merged.mergedList);
    std::vector<int> groupsToMerge;
    for (size_t i = 0; i < ordered.size(); ++i) {
        const int id = ordered[i];
        const std::set<int> sinks = pq(id).quantizedInputSinkOperatorNodes;
        pq(mergeId).quantizedInputSinkOperatorNodes.insert(sinks.begin(), sinks.end());
        for (const int n : sinks) {
            addUnique(m_nodeAffecting[static_cast<size_t>(n)], mergeId);
        }
        if (merged.branchLists[i].has_value()) {
            // Unmerged branches keep their own PQ below: a requantization child.
            pq(mergeId).downstreamPropagatingQuantizers.insert(id);
            pq(id).upstreamPropagatingQuantizers.push_back(mergeId);
            finish(id);
            continue;
        }
        if (auto it = m_groupOf.find(id); it != m_groupOf.end()) {
            groupsToMerge.push_back(it->second);
        }
        foldBranchInto(mergeId, branchingNode, id);
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
