// GraphLayoutModel: which boxes a model graph is drawn with, before anything is measured. Ops
// that compute only from constants (a PyTorch export's weight Identity, a Cast or Reshape of an
// initializer) are folded into the ops they feed: no box, no edge, the consumer's port drawn as
// a weight port. Every other live op becomes a box with one input port per ONNX input slot (weights
// included: they are insertion points too) and one output per ONNX output; graph inputs and graph
// outputs get small boxes of their own; initializers are not drawn as boxes. Edges follow the
// values that flow from a box output to a box input port; boxes carry the block scope of their node
// name, so big graphs are cut into sections between blocks. The caller fills in the sizes and calls
// computeLayout.
#pragma once

#include "core/graph/graph.h"
#include "core/layout/layout.h"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace qs::layout {

enum class ItemKind { Op, GraphInput, GraphOutput };

/// What one layout node stands for.
struct LayoutItem {
    ItemKind kind = ItemKind::Op;
    graph::NodeId node;   ///< for ItemKind::Op
    graph::ValueId value; ///< for graph inputs and outputs: the value itself
};

/// A graph ready for layout: `input.nodes[i]` draws `items[i]`; `input.edges[e]` carries
/// `edgeValues[e]`.
struct GraphLayoutModel {
    std::vector<LayoutItem> items;
    LayoutInput input;
    std::vector<graph::ValueId> edgeValues;
    std::vector<uint32_t> itemOfNode; ///< by NodeId index; kNoItem for removed or folded nodes
    /// By ValueId index: true for the outputs of folded constant-only ops.
    std::vector<bool> foldedValues;
    size_t foldedCount = 0; ///< ops folded

    static constexpr uint32_t kNoItem = UINT32_MAX;

    /// True when `value` is a constant: an initializer or the output of a folded op.
    bool isConstant(const graph::Graph& graph, graph::ValueId value) const {
        return graph.value(value).isInitializer() ||
               (value.index() < foldedValues.size() && foldedValues[value.index()]);
    }
};

/// Boxes for `graph` in drawing order (graph inputs, ops in topological order, graph outputs),
/// with zero sizes. A cycle is not an error here: its nodes follow in insertion order.
GraphLayoutModel buildLayoutModel(const graph::Graph& graph);

/// Fills in every box size from `measure`.
void setSizes(GraphLayoutModel& model, const std::function<Size(const LayoutItem&)>& measure);

/// The scope path of every item (see scopePath): ops by their name, graph inputs and outputs
/// in the root.
std::vector<std::vector<std::string>> itemScopes(const graph::Graph& graph,
                                                 const GraphLayoutModel& model);

/// The block scope of an ONNX node name: its first two path components ("/layer2/1/conv1/Conv"
/// -> "/layer2/1"); empty when the name has no such path.
std::string blockScope(std::string_view nodeName);

/// The one-line label of an item for DOT and search: "Conv conv1", "input data", "output prob".
std::string itemLabel(const graph::Graph& graph, const LayoutItem& item);

} // namespace qs::layout
