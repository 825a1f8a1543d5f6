// verify(): the integrity check run after import and after every pass in debug and CI builds.

#include "core/graph/graph.h"

#include <algorithm>
#include <string>

namespace qs::graph {

namespace {
Error broken(std::string what) {
    return Error(Errc::InvalidModel, std::move(what));
}

Result<void> verifyNodeLinks(const Graph& graph, NodeId id) {
    const Node& n = graph.node(id);
    for (uint32_t port = 0; port < n.inputs.size(); ++port) {
        const ValueId input = n.inputs[port];
        if (!input.valid()) {
            continue;
        }
        if (input.index() >= graph.numValues()) {
            return broken("input " + std::to_string(port) + " refers to no value");
        }
        const auto& uses = graph.value(input).consumers;
        if (std::find(uses.begin(), uses.end(), Use{id, port}) == uses.end()) {
            return broken("value '" + graph.value(input).name + "' does not list its consumer");
        }
        const Value& v = graph.value(input);
        const bool isGraphInput =
            std::find(graph.inputs().begin(), graph.inputs().end(), input) != graph.inputs().end();
        if (!v.producer.valid() && !v.isInitializer() && !isGraphInput) {
            return broken("input '" + v.name + "' is produced by no node, input or initializer");
        }
    }
    for (uint32_t port = 0; port < n.outputs.size(); ++port) {
        const ValueId out = n.outputs[port];
        if (out.valid() &&
            (graph.value(out).producer != id || graph.value(out).producerPort != port)) {
            return broken("output '" + graph.value(out).name + "' has another producer");
        }
    }
    return success();
}
} // namespace

Result<void> verify(const Graph& graph) {
    for (const NodeId id : graph.nodeIds()) {
        const Node& n = graph.node(id);
        QS_TRY(verifyNodeLinks(graph, id).context("node '" + n.name + "' (" + n.opType + ")"));
    }
    for (const ValueId id : graph.valueIds()) {
        const Value& v = graph.value(id);
        for (const Use& use : v.consumers) {
            const Node& consumer = graph.node(use.node);
            if (consumer.removed || use.port >= consumer.inputs.size() ||
                consumer.inputs[use.port] != id) {
                return broken("value '" + v.name + "' lists a consumer that does not read it");
            }
        }
        if (v.isInitializer() &&
            v.initializer->bytes().size() != v.initializer->expectedByteSize() &&
            v.dtype != DataType::String) {
            return broken("initializer '" + v.name + "' holds " +
                          std::to_string(v.initializer->bytes().size()) +
                          " bytes, its shape needs " +
                          std::to_string(v.initializer->expectedByteSize()));
        }
    }
    for (const ValueId out : graph.outputs()) {
        const Value& v = graph.value(out);
        const bool isGraphInput =
            std::find(graph.inputs().begin(), graph.inputs().end(), out) != graph.inputs().end();
        if (!v.producer.valid() && !v.isInitializer() && !isGraphInput) {
            return broken("graph output '" + v.name + "' is produced by nothing");
        }
    }
    QS_TRY(graph.topologicalOrder());
    return success();
}

} // namespace qs::graph
