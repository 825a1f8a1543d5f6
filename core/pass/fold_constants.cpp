// fold-constants: a node whose inputs are all initializers (or omitted) computes the same value
// on every run, so it is evaluated once with the runtime's kernel and its outputs become
// initializers. Graph outputs, ops without a kernel and nodes with subgraphs are left alone.

#include "core/pass/pass.h"
#include "core/runtime/op.h"

#include <algorithm>

namespace qs::pass {

Result<bool> foldConstants(graph::Graph& graph, PassContext& context) {
    QS_ASSIGN_OR_RETURN(std::vector<graph::NodeId> order, graph.topologicalOrder());
    bool changed = false;
    for (const graph::NodeId id : order) {
        const graph::Node& node = graph.node(id);
        const runtime::OpDef* def = runtime::findOp(node.opType, node.domain);
        if (def == nullptr || node.hasSubgraph() || node.inputs.empty()) {
            continue;
        }
        const bool allConstant =
            std::all_of(node.inputs.begin(), node.inputs.end(), [&](graph::ValueId in) {
                return !in.valid() || graph.value(in).isInitializer();
            });
        const auto& outputs = graph.outputs();
        const bool feedsOutput =
            std::any_of(node.outputs.begin(), node.outputs.end(), [&](graph::ValueId out) {
                return std::find(outputs.begin(), outputs.end(), out) != outputs.end();
            });
        if (!allConstant || feedsOutput) {
            continue;
        }
        std::vector<runtime::Tensor> inputs;
        for (const graph::ValueId in : node.inputs) {
            inputs.push_back(in.valid() ? runtime::Tensor::wrap(graph.value(in).initializer)
                                        : runtime::Tensor());
        }
        const runtime::OpContext ctx{node, inputs, graph.opsetVersion()};
        auto results = def->forward(ctx);
        if (!results.ok() || results->size() < node.outputs.size()) {
            continue; // leave it to run time, where the error names the node
        }
        const std::string name = node.name;
        const std::vector<graph::ValueId> outs = node.outputs;
        graph.removeNode(id);
        for (size_t i = 0; i < outs.size(); ++i) {
            if (!outs[i].valid()) {
                continue;
            }
            graph::Value& value = graph.value(outs[i]);
            value.initializer = (*results)[i].toTensorData();
            value.dtype = value.initializer->dtype();
            value.shape = graph::TensorShape::ofDims(value.initializer->dims());
        }
        context.log.push_back("folded constant node '" + name + "'");
        changed = true;
    }
    if (changed) {
        graph.compact();
    }
    return changed;
}

} // namespace qs::pass
