// remove-identity: Identity and inference-mode Dropout forward their input unchanged, so their
// consumers can read the input directly. Nodes whose output is a graph output stay (removing
// them would rename the output), as do Dropouts whose mask is read.

#include "core/pass/pass.h"

#include <algorithm>

namespace qs::pass {

Result<bool> removeIdentity(graph::Graph& graph, PassContext& context) {
    bool changed = false;
    for (const graph::NodeId id : graph.nodeIds()) {
        const graph::Node& node = graph.node(id);
        if (!node.isDefaultDomain() || (node.opType != "Identity" && node.opType != "Dropout")) {
            continue;
        }
        if (node.inputs.empty() || !node.inputs[0].valid() || node.outputs.empty()) {
            continue;
        }
        if (node.opType == "Dropout" && node.inputs.size() > 2 && node.inputs[2].valid()) {
            continue; // training_mode given as an input: not provably inference
        }
        const graph::ValueId in = node.inputs[0];
        const graph::ValueId out = node.outputs[0];
        const bool isGraphOutput = graph.isOutput(out);
        const bool maskRead = node.outputs.size() > 1 && node.outputs[1].valid() &&
                              !graph.value(node.outputs[1]).consumers.empty();
        if (isGraphOutput || maskRead) {
            continue;
        }
        context.log.push_back("removed " + node.opType + " '" + node.name + "'");
        graph.replaceAllUses(out, in);
        graph.removeNode(id);
        changed = true;
    }
    if (changed) {
        graph.compact();
    }
    return changed;
}

} // namespace qs::pass
