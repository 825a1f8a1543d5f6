// PruningSection (reference/mct-hessian-pruning.md §2.1): an entry node whose output channels are
// removed, the per-channel intermediates between it and the exit (sliced per channel), and the
// exit whose matching input channels are removed. Detection walks forward from every Conv /
// ConvTranspose (group 1), Gemm and MatMul with a 2-D weight through a strict ONNX whitelist of
// ops that act per channel or element-wise; a fan-out, a graph output, a residual Add, a Concat,
// anything that mixes or reshapes channels, or a channel-count mismatch ends the walk without a
// section. A node may be the exit of one section and the entry of the next (a shared node).
#pragma once

#include "core/graph/graph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace qs::pruning {

/// Which channel mask slices a parameter: the section's own mask on the entry's output channels
/// (entry kernel and bias, intermediates' per-channel parameters) or on the exit's input channels.
enum class ChannelRole { Output = 0, Input = 1 };

/// One constant of a section member that is sliced by the section's mask.
struct ChannelParameter {
    graph::NodeId node;
    graph::ValueId value;
    int64_t axis = 0; ///< the axis of the constant that indexes the section's channels
    ChannelRole role = ChannelRole::Output;
};

struct PruningSection {
    graph::NodeId entry;
    std::vector<graph::NodeId> intermediates; ///< in flow order
    graph::NodeId exit;
    int64_t channels = 0; ///< the entry's output channels
    /// The values carrying the section's channels: the entry's output and each intermediate's.
    std::vector<graph::ValueId> flowValues;
    int64_t flowAxis = 1; ///< their channel axis (negative: from the end)
    std::vector<ChannelParameter> parameters;
};

struct SectionDetection {
    std::vector<PruningSection> sections; ///< in topological order of their entries
    /// Per node slot: why the node is in no section ("" for section members).
    std::vector<std::string> notPrunableReason;

    /// The section whose entry is `node`, or -1.
    int sectionOfEntry(graph::NodeId node) const;
    /// The section whose exit is `node`, or -1.
    int sectionOfExit(graph::NodeId node) const;
};

/// The kernel of a node that can be an entry or an exit, as pruning sees it.
struct KernelInfo {
    graph::ValueId weight;
    graph::ValueId bias; ///< invalid when none (or not per output channel)
    int64_t outAxis = 0; ///< axis of `weight` indexing output channels
    int64_t inAxis = 1;  ///< axis of `weight` indexing input channels
    int64_t outChannels = 0;
    int64_t inChannels = 0;
    int64_t flowAxis = 1; ///< channel axis of the node's data input and output (-1: the last)
};

/// The kernel of `node` if it can be an entry or an exit; otherwise `reason` says why not
/// ("grouped convolution (group 32)", "MatMul without a 2-D weight initializer", ...).
bool edgeKernel(const graph::Graph& graph, graph::NodeId node, KernelInfo& kernel,
                std::string& reason);

/// True for the op types that can be entries or exits (Conv, ConvTranspose, Gemm, MatMul).
bool isEdgeOpType(std::string_view opType);

/// Finds every pruning section of `graph` (which must be in topological order-able form).
Result<SectionDetection> detectPruningSections(const graph::Graph& graph);

} // namespace qs::pruning
