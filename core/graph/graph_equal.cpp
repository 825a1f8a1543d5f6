// graphsEqual(): structural equality used by round-trip tests (import -> export -> import).

#include "core/graph/graph.h"

namespace qs::graph {

namespace {

bool fail(std::string* diff, std::string what) {
    if (diff != nullptr) {
        *diff = std::move(what);
    }
    return false;
}

std::string valueName(const Graph& graph, ValueId id) {
    return id.valid() ? graph.value(id).name : std::string();
}

bool sameValueLists(const Graph& a, const std::vector<ValueId>& la, const Graph& b,
                    const std::vector<ValueId>& lb) {
    if (la.size() != lb.size()) {
        return false;
    }
    for (size_t i = 0; i < la.size(); ++i) {
        if (valueName(a, la[i]) != valueName(b, lb[i])) {
            return false;
        }
    }
    return true;
}

bool valuesEqual(const Value& va, const Value& vb, std::string* diff) {
    if (va.dtype != vb.dtype || va.opaqueType != vb.opaqueType) {
        return fail(diff, "value '" + va.name + "': dtype differs");
    }
    if (!(va.shape == vb.shape)) {
        return fail(diff, "value '" + va.name + "': shape " + va.shape.toString() + " vs " +
                              vb.shape.toString());
    }
    if (va.isInitializer() != vb.isInitializer() ||
        (va.isInitializer() && !tensorsEqual(*va.initializer, *vb.initializer))) {
        return fail(diff, "value '" + va.name + "': initializer differs");
    }
    return true;
}

bool nodesEqual(const Graph& a, const Node& na, const Graph& b, const Node& nb, std::string* diff) {
    if (na.name != nb.name || na.opType != nb.opType || na.domain != nb.domain) {
        return fail(diff, "node '" + na.name + "' (" + na.opType + ") vs '" + nb.name + "' (" +
                              nb.opType + ")");
    }
    if (!sameValueLists(a, na.inputs, b, nb.inputs) ||
        !sameValueLists(a, na.outputs, b, nb.outputs)) {
        return fail(diff, "node '" + na.name + "': inputs or outputs differ");
    }
    if (na.attributes.size() != nb.attributes.size()) {
        return fail(diff, "node '" + na.name + "': attribute count differs");
    }
    for (size_t attrIdx = 0; attrIdx < na.attributes.size(); ++attrIdx) {
        const Attribute& x = na.attributes[attrIdx];
        const Attribute& y = nb.attributes[attrIdx];
        if (x.name != y.name || !attributeValuesEqual(x.value, y.value)) {
            return fail(diff, "node '" + na.name + "': attribute '" + x.name + "' differs");
        }
    }
    return true;
}

} // namespace

bool graphsEqual(const Graph& a, const Graph& b, std::string* diff) {
    if (!(a.metadata().opsetImports == b.metadata().opsetImports)) {
        return fail(diff, "opset imports differ");
    }
    if (!sameValueLists(a, a.inputs(), b, b.inputs()) ||
        !sameValueLists(a, a.outputs(), b, b.outputs())) {
        return fail(diff, "graph inputs or outputs differ");
    }
    // Files may list nodes in any valid order; compare in the stable topological order.
    const auto orderA = a.topologicalOrder();
    const auto orderB = b.topologicalOrder();
    if (!orderA.ok() || !orderB.ok()) {
        return fail(diff, "a graph has a cycle");
    }
    const std::vector<NodeId>& nodesA = *orderA;
    const std::vector<NodeId>& nodesB = *orderB;
    if (nodesA.size() != nodesB.size()) {
        return fail(diff, "node count " + std::to_string(nodesA.size()) + " vs " +
                              std::to_string(nodesB.size()));
    }
    for (size_t i = 0; i < nodesA.size(); ++i) {
        if (!nodesEqual(a, a.node(nodesA[i]), b, b.node(nodesB[i]), diff)) {
            return false;
        }
    }
    size_t referencedA = 0;
    for (const ValueId id : a.valueIds()) {
        const Value& va = a.value(id);
        const bool referenced = va.producer.valid() || !va.consumers.empty() || va.isInitializer();
        if (!referenced) {
            continue;
        }
        ++referencedA;
        const auto other = b.findValue(va.name);
        if (!other) {
            return fail(diff, "value '" + va.name + "' is missing");
        }
        if (!valuesEqual(va, b.value(*other), diff)) {
            return false;
        }
    }
    size_t referencedB = 0;
    for (const ValueId id : b.valueIds()) {
        const Value& vb = b.value(id);
        referencedB += (vb.producer.valid() || !vb.consumers.empty() || vb.isInitializer()) ? 1 : 0;
    }
    if (referencedA != referencedB) {
        return fail(diff, "value count differs");
    }
    return true;
}

} // namespace qs::graph
