// ModelInfo: what `quantscope-cli info` and the GUI's info panel show about a model — opsets,
// inputs/outputs with shapes, op-type counts, parameters, MACs of the compute-heavy ops, and
// the nodes we keep opaque. Computed once from a Graph; printable as text or JSON.
#pragma once

#include "core/graph/graph.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace qs::report {

struct TensorSummary {
    std::string name;
    std::string dtype;
    std::string shape; ///< "1x3x224x224", "batchx1000"
};

struct OpaqueNode {
    std::string name;
    std::string opType; ///< with domain prefix when not the default domain
    std::string reason; ///< "custom domain", "unknown op", "has subgraphs"
};

struct ModelInfo {
    std::string path;
    int64_t irVersion = 0;
    std::vector<graph::OpsetImport> opsets;
    int64_t defaultOpset = 0;
    std::string producer;
    std::vector<TensorSummary> inputs;
    std::vector<TensorSummary> outputs;
    size_t nodeCount = 0;
    std::vector<std::pair<std::string, size_t>> opTypeCounts; ///< most frequent first
    size_t initializerCount = 0;
    int64_t parameterCount = 0; ///< elements of all initializers
    int64_t parameterBytes = 0;
    int64_t macs = 0;                  ///< Conv, ConvTranspose, Gemm, MatMul with static shapes
    size_t macsUnknownNodes = 0;       ///< such nodes whose ranks were unknown
    bool macsDynamicDimsAsOne = false; ///< a symbolic dim (e.g. batch) was counted as 1
    std::vector<OpaqueNode> opaqueNodes;
    std::vector<std::string> warnings;
};

/// Multiply-accumulates of one Conv/ConvTranspose/Gemm/MatMul with known ranks; symbolic dims
/// count as 1 (then `*dynamicDimsAssumedOne` is set).
std::optional<int64_t> nodeMacs(const graph::Graph& graph, graph::NodeId node,
                                bool* dynamicDimsAssumedOne = nullptr);

ModelInfo computeModelInfo(const graph::Graph& graph);

/// Human-readable multi-line text, as `quantscope-cli info` prints it.
std::string formatModelInfo(const ModelInfo& info);

nlohmann::json modelInfoToJson(const ModelInfo& info);

} // namespace qs::report
