// Internal state of the quantizer propagation solver, shared by the files that implement its
// steps: the PropagatingQuantizer record, NNCF's transition statuses, and the Solver with its
// side arrays over the InsertionPointGraph (PQ at each insertion point, PQs affecting each node
// and edge, traits, allowed configs, unified-scale groups, the deque and the waiting lists).
#pragma once

#include "core/graph/metatype.h"
#include "core/quantization/quantizer_propagation_solver.h"

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace qs::quantization::detail {

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
    /// PQs listing this one as downstream: removal unlinks it there instead of scanning all PQs.
    std::vector<int> upstreamPropagatingQuantizers;
    std::optional<UnifiedScaleType> unifiedScaleType;
    size_t pathLength = 0;
    bool alive = true;
    bool finished = false;
    bool dependentOnWeights = false;
};

/// The setup under construction plus the indexes its steps share.
struct SetupDraft {
    MultiConfigQuantizerSetup setup;
    std::vector<int> activationIds;       ///< sorted
    std::map<int, int> qpOfOpWeight;      ///< operator node -> weight qp id
    std::map<int, std::set<int>> sinksOf; ///< qp id -> sink operator nodes
    std::map<int, int> groupOfQp;         ///< qp id -> unified group id
};

/// Quantizers whose sink ops overlap, plus the weights of those ops (HAWQ adjacency).
void addSharedInputGroups(SetupDraft& draft);

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
        , m_unified(graph.nodes().size(), false)
        , m_wildcard(graph.nodes().size(), false) {}

    Result<QuantizationProposal> run();

private:
    const IpNode& node(int index) const { return m_graph.node(index); }

    const IpEdge& edge(int index) const { return m_graph.edge(index); }

    PropagatingQuantizer& pq(int id) { return m_pqs[static_cast<size_t>(id)]; }

    Result<void> setAllowedQuantizationTypes();
    Result<void> setupInitialQuantizers();
    bool getsInitialQuantizers(int opIndex) const;
    Result<QuantizerConfigList> initialConfigs(int opIndex) const;
    std::vector<int> quantizablePreHooks(int opIndex) const;
    void unifyConfigLinkedScopes();
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
    std::vector<int> coveringQuantizers(const Path& path, const std::set<int>& family,
                                        Path& walked) const;
    void absorbQuantizer(int survivorId, const PropagatingQuantizer& merged, const Path& walked);
    std::vector<std::pair<int, const Path*>>
    quantizersForPaths(int id, const std::map<int, std::vector<Path>>& paths,
                       std::set<int>& family);
    void waitAtBranch(int member, const Path& path);
    void handleWaiting(int id);
    void mergeAtBranchingNode(int branchingNode);
    int addMergeQuantizer(int branchingNode, const QuantizerConfigList& configs);
    void foldBranchInto(int mergeId, int branchingNode, int branchId);
    void abortMerge(const std::set<int>& waiters);

    std::set<int> activeQuantizersDominatedBy(int nodeIndex) const;
    std::vector<int> nonAgnosticOpsDominatedBy(int nodeIndex) const;
    bool isDominatingOutputs(int nodeIndex) const;
    bool allOutputsQuantized(int nodeIndex) const;
    std::vector<int> shortestDownwardPath(int from, int to) const; // edges

    void filterIntegerInputQuantizers();
    void filterElementwiseQuantizers();
    Result<MultiConfigQuantizerSetup> createQuantizerSetup();
    void addActivationPoints(SetupDraft& draft);
    Result<void> addWeightPoints(SetupDraft& draft);
    void addUnifiedScaleGroups(SetupDraft& draft);
    void foldEmbeddingOutputs(SetupDraft& draft);

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
    /// Listed in the HW config without activation configs: NNCF's wildcard, whose quantizers take
    /// the plain default config (8-bit symmetric per-tensor), not constrained by the preset.
    std::vector<bool> m_wildcard;

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

inline void eraseValue(std::vector<int>& values, int value) {
    values.erase(std::remove(values.begin(), values.end(), value), values.end());
}

inline void addUnique(std::vector<int>& values, int value) {
    if (std::find(values.begin(), values.end(), value) == values.end()) {
        values.push_back(value);
    }
}

} // namespace qs::quantization::detail
