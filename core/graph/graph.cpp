#include "core/graph/graph.h"

#include <queue>

#include <algorithm>
#include <functional>

namespace qs::graph {

const Attribute* Node::attribute(std::string_view attrName) const {
    for (const Attribute& attr : attributes) {
        if (attr.name == attrName) {
            return &attr;
        }
    }
    return nullptr;
}

int64_t Node::intAttr(std::string_view attrName, int64_t fallback) const {
    const Attribute* attr = attribute(attrName);
    if (attr == nullptr) {
        return fallback;
    }
    const auto* value = std::get_if<int64_t>(&attr->value);
    return value != nullptr ? *value : fallback;
}

float Node::floatAttr(std::string_view attrName, float fallback) const {
    const Attribute* attr = attribute(attrName);
    if (attr == nullptr) {
        return fallback;
    }
    const auto* value = std::get_if<float>(&attr->value);
    return value != nullptr ? *value : fallback;
}

std::string Node::stringAttr(std::string_view attrName, std::string fallback) const {
    const Attribute* attr = attribute(attrName);
    if (attr == nullptr) {
        return fallback;
    }
    const auto* value = std::get_if<std::string>(&attr->value);
    return value != nullptr ? *value : fallback;
}

std::vector<int64_t> Node::intsAttr(std::string_view attrName) const {
    const Attribute* attr = attribute(attrName);
    if (attr == nullptr) {
        return {};
    }
    const auto* value = std::get_if<std::vector<int64_t>>(&attr->value);
    return value != nullptr ? *value : std::vector<int64_t>{};
}

bool Node::hasSubgraph() const {
    if (opType == "If" || opType == "Loop" || opType == "Scan") {
        return true;
    }
    return std::any_of(attributes.begin(), attributes.end(), [](const Attribute& attr) {
        return std::holds_alternative<OpaqueAttribute>(attr.value);
    });
}

ValueId Graph::addValue(std::string name, DataType dtype, TensorShape shape) {
    QS_ASSERT(!name.empty(), "values need a name");
    QS_ASSERT(!m_valueByName.contains(name), "value names are unique");
    const ValueId id(static_cast<uint32_t>(m_values.size()));
    Value value;
    value.name = std::move(name);
    value.dtype = dtype;
    value.shape = std::move(shape);
    m_valueByName.emplace(value.name, id);
    m_values.push_back(std::move(value));
    return id;
}

void Graph::renameValue(ValueId id, std::string newName) {
    QS_ASSERT(!newName.empty() && !m_valueByName.contains(newName), "value names are unique");
    Value& v = m_values[id.index()];
    m_valueByName.erase(v.name);
    v.name = std::move(newName);
    m_valueByName.emplace(v.name, id);
}

ValueId Graph::addInitializer(std::string name, TensorPtr data) {
    const ValueId id = addValue(std::move(name), data->dtype(), TensorShape::ofDims(data->dims()));
    m_values[id.index()].initializer = std::move(data);
    return id;
}

NodeId Graph::addNode(std::string name, std::string opType, std::vector<ValueId> inputs,
                      std::vector<ValueId> outputs, std::vector<Attribute> attributes,
                      std::string domain) {
    const NodeId id(static_cast<uint32_t>(m_nodes.size()));
    for (uint32_t port = 0; port < inputs.size(); ++port) {
        if (inputs[port].valid()) {
            m_values[inputs[port].index()].consumers.push_back(Use{id, port});
        }
    }
    for (uint32_t port = 0; port < outputs.size(); ++port) {
        if (outputs[port].valid()) {
            Value& out = m_values[outputs[port].index()];
            QS_ASSERT(!out.producer.valid(), "a value has one producer");
            out.producer = id;
            out.producerPort = port;
        }
    }
    Node node;
    node.name = std::move(name);
    node.opType = std::move(opType);
    node.domain = std::move(domain);
    node.inputs = std::move(inputs);
    node.outputs = std::move(outputs);
    node.attributes = std::move(attributes);
    m_nodes.push_back(std::move(node));
    return id;
}

void Graph::setNodeInput(NodeId nodeId, uint32_t port, ValueId value) {
    Node& n = m_nodes[nodeId.index()];
    if (port >= n.inputs.size()) {
        n.inputs.resize(port + 1);
    }
    if (const ValueId old = n.inputs[port]; old.valid()) {
        auto& uses = m_values[old.index()].consumers;
        std::erase(uses, Use{nodeId, port});
    }
    n.inputs[port] = value;
    if (value.valid()) {
        m_values[value.index()].consumers.push_back(Use{nodeId, port});
    }
}

void Graph::replaceAllUses(ValueId from, ValueId to) {
    const std::vector<Use> uses = m_values[from.index()].consumers;
    for (const Use& use : uses) {
        setNodeInput(use.node, use.port, to);
    }
    std::replace(m_outputs.begin(), m_outputs.end(), from, to);
}

void Graph::removeNode(NodeId nodeId) {
    Node& n = m_nodes[nodeId.index()];
    for (uint32_t port = 0; port < n.inputs.size(); ++port) {
        if (n.inputs[port].valid()) {
            std::erase(m_values[n.inputs[port].index()].consumers, Use{nodeId, port});
        }
    }
    for (const ValueId out : n.outputs) {
        if (out.valid()) {
            m_values[out.index()].producer = NodeId();
        }
    }
    n.removed = true;
}

void Graph::compact() {
    std::vector<bool> valueUsed(m_values.size(), false);
    auto mark = [&](ValueId id) {
        if (id.valid()) {
            valueUsed[id.index()] = true;
        }
    };
    for (const Node& n : m_nodes) {
        if (n.removed) {
            continue;
        }
        std::for_each(n.inputs.begin(), n.inputs.end(), mark);
        std::for_each(n.outputs.begin(), n.outputs.end(), mark);
        std::for_each(n.implicitInputs.begin(), n.implicitInputs.end(), mark);
    }
    std::for_each(m_inputs.begin(), m_inputs.end(), mark);
    std::for_each(m_outputs.begin(), m_outputs.end(), mark);

    Graph out;
    out.m_metadata = std::move(m_metadata);
    std::vector<ValueId> newValue(m_values.size());
    for (uint32_t valueIdx = 0; valueIdx < m_values.size(); ++valueIdx) {
        if (!valueUsed[valueIdx]) {
            continue;
        }
        Value& old = m_values[valueIdx];
        const ValueId id = out.addValue(old.name, old.dtype, old.shape);
        Value& moved = out.m_values[id.index()];
        moved.initializer = std::move(old.initializer);
        moved.constantNodeName = std::move(old.constantNodeName);
        moved.docString = std::move(old.docString);
        moved.opaqueType = std::move(old.opaqueType);
        newValue[valueIdx] = id;
    }
    auto remap = [&](std::vector<ValueId> ids) {
        for (ValueId& id : ids) {
            id = id.valid() ? newValue[id.index()] : ValueId();
        }
        return ids;
    };
    for (Node& n : m_nodes) {
        if (n.removed) {
            continue;
        }
        const NodeId id =
            out.addNode(std::move(n.name), std::move(n.opType), remap(n.inputs), remap(n.outputs),
                        std::move(n.attributes), std::move(n.domain));
        out.m_nodes[id.index()].implicitInputs = remap(n.implicitInputs);
        out.m_nodes[id.index()].docString = std::move(n.docString);
    }
    out.m_inputs = remap(m_inputs);
    out.m_outputs = remap(m_outputs);
    *this = std::move(out);
}

std::vector<NodeId> Graph::nodeIds() const {
    std::vector<NodeId> ids;
    ids.reserve(m_nodes.size());
    for (uint32_t nodeIdx = 0; nodeIdx < m_nodes.size(); ++nodeIdx) {
        if (!m_nodes[nodeIdx].removed) {
            ids.emplace_back(nodeIdx);
        }
    }
    return ids;
}

size_t Graph::numNodes() const {
    return static_cast<size_t>(
        std::count_if(m_nodes.begin(), m_nodes.end(), [](const Node& n) { return !n.removed; }));
}

std::vector<ValueId> Graph::valueIds() const {
    std::vector<ValueId> ids;
    ids.reserve(m_values.size());
    for (uint32_t valueIdx = 0; valueIdx < m_values.size(); ++valueIdx) {
        ids.emplace_back(valueIdx);
    }
    return ids;
}

bool Graph::isOutput(ValueId id) const {
    return std::find(m_outputs.begin(), m_outputs.end(), id) != m_outputs.end();
}

std::vector<ValueId> Graph::initializers() const {
    std::vector<ValueId> ids;
    for (uint32_t valueIdx = 0; valueIdx < m_values.size(); ++valueIdx) {
        if (m_values[valueIdx].isInitializer()) {
            ids.emplace_back(valueIdx);
        }
    }
    return ids;
}

std::vector<ValueId> Graph::runtimeInputs() const {
    std::vector<ValueId> ids;
    for (const ValueId id : m_inputs) {
        if (!value(id).isInitializer()) {
            ids.push_back(id);
        }
    }
    return ids;
}

std::optional<ValueId> Graph::findValue(std::string_view name) const {
    const auto it = m_valueByName.find(std::string(name));
    if (it == m_valueByName.end()) {
        return std::nullopt;
    }
    return it->second;
}

std::optional<NodeId> Graph::findNode(std::string_view name) const {
    for (uint32_t nodeIdx = 0; nodeIdx < m_nodes.size(); ++nodeIdx) {
        if (!m_nodes[nodeIdx].removed && m_nodes[nodeIdx].name == name) {
            return NodeId(nodeIdx);
        }
    }
    return std::nullopt;
}

namespace {
/// For each live node: how many producers it waits for, and who waits for it.
struct Dependencies {
    std::vector<uint32_t> pending;
    std::vector<std::vector<uint32_t>> dependents;
};

Dependencies collectDependencies(const std::vector<Node>& nodes, const std::vector<Value>& values) {
    Dependencies deps;
    deps.pending.assign(nodes.size(), 0);
    deps.dependents.resize(nodes.size());
    auto addDependency = [&](uint32_t nodeIdx, ValueId input) {
        if (!input.valid()) {
            return;
        }
        const NodeId producer = values[input.index()].producer;
        if (producer.valid() && !nodes[producer.index()].removed) {
            ++deps.pending[nodeIdx];
            deps.dependents[producer.index()].push_back(nodeIdx);
        }
    };
    for (uint32_t nodeIdx = 0; nodeIdx < nodes.size(); ++nodeIdx) {
        const Node& n = nodes[nodeIdx];
        if (n.removed) {
            continue;
        }
        for (const ValueId input : n.inputs) {
            addDependency(nodeIdx, input);
        }
        for (const ValueId input : n.implicitInputs) {
            addDependency(nodeIdx, input);
        }
    }
    return deps;
}
} // namespace

Result<std::vector<NodeId>> Graph::topologicalOrder() const {
    Dependencies deps = collectDependencies(m_nodes, m_values);
    std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> ready;
    size_t live = 0;
    for (uint32_t nodeIdx = 0; nodeIdx < m_nodes.size(); ++nodeIdx) {
        if (m_nodes[nodeIdx].removed) {
            continue;
        }
        ++live;
        if (deps.pending[nodeIdx] == 0) {
            ready.push(nodeIdx);
        }
    }
    std::vector<NodeId> order;
    order.reserve(live);
    while (!ready.empty()) {
        const uint32_t nodeIdx = ready.top();
        ready.pop();
        order.emplace_back(nodeIdx);
        for (const uint32_t dependent : deps.dependents[nodeIdx]) {
            if (--deps.pending[dependent] == 0) {
                ready.push(dependent);
            }
        }
    }
    if (order.size() == live) {
        return order;
    }
    uint32_t stuck = 0;
    while (m_nodes[stuck].removed || deps.pending[stuck] == 0) {
        ++stuck;
    }
    return Error(Errc::InvalidModel, "the graph has a cycle through node '" + m_nodes[stuck].name +
                                         "' (" + m_nodes[stuck].opType + ")");
}

int64_t Graph::opsetVersion(std::string_view domain) const {
    for (const OpsetImport& opset : m_metadata.opsetImports) {
        const bool isDefault = opset.domain.empty() || opset.domain == "ai.onnx";
        if ((domain.empty() || domain == "ai.onnx") ? isDefault : opset.domain == domain) {
            return opset.version;
        }
    }
    return 0;
}

} // namespace qs::graph
