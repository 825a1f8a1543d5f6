// The graph IR. A Graph owns its nodes and values in vectors addressed by strong ids; a value
// knows its producer and its consumers as (node, input port), so every quantizer insertion point
// (one per input port, one per output) is addressable. Weights live once, as shared TensorData.
#pragma once

#include "core/graph/attribute.h"
#include "core/graph/tensor.h"
#include "core/support/result.h"
#include "core/support/strong_id.h"

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace qs::graph {

struct NodeTag;
struct ValueTag;
using NodeId = StrongId<NodeTag>;
using ValueId = StrongId<ValueTag>;

/// One consumer of a value: input `port` of `node`.
struct Use {
    NodeId node;
    uint32_t port = 0;

    bool operator==(const Use&) const = default;
};

/// A tensor flowing through the graph: a graph input, an initializer or a node output.
struct Value {
    std::string name;
    DataType dtype = DataType::Undefined;
    TensorShape shape;
    NodeId producer;           ///< invalid for graph inputs and initializers
    uint32_t producerPort = 0; ///< which output of the producer
    std::vector<Use> consumers;
    TensorPtr initializer;        ///< set for weights and other constants
    std::string constantNodeName; ///< the Constant node this initializer was imported from
    std::string docString;
    std::string opaqueType; ///< serialized ONNX TypeProto of sequence/map/optional values

    bool isInitializer() const { return initializer != nullptr; }
};

/// An operation. Empty optional inputs/outputs are kept as invalid ids, so port numbers are the
/// ONNX ones.
struct Node {
    std::string name;
    std::string opType;
    std::string domain; ///< "" (or "ai.onnx") is the default domain
    std::vector<ValueId> inputs;
    std::vector<ValueId> outputs;
    std::vector<Attribute> attributes;
    std::vector<ValueId> implicitInputs; ///< outer-scope values read by subgraph attributes
    std::string docString;
    bool removed = false; ///< tombstone until Graph::compact()

    const Attribute* attribute(std::string_view attrName) const;

    int64_t intAttr(std::string_view attrName, int64_t fallback) const;

    float floatAttr(std::string_view attrName, float fallback) const;

    std::string stringAttr(std::string_view attrName, std::string fallback) const;

    std::vector<int64_t> intsAttr(std::string_view attrName) const;

    /// True for If/Loop/Scan and anything else carrying a graph attribute.
    bool hasSubgraph() const;

    bool isDefaultDomain() const { return domain.empty() || domain == "ai.onnx"; }
};

struct OpsetImport {
    std::string domain;
    int64_t version = 0;

    bool operator==(const OpsetImport&) const = default;
};

/// Model-level fields kept for a faithful export.
struct ModelMetadata {
    int64_t irVersion = 8;
    std::vector<OpsetImport> opsetImports;
    std::string producerName;
    std::string producerVersion;
    std::string domain;
    int64_t modelVersion = 0;
    std::string docString;
    std::string graphName;
    std::string graphDocString;
    std::vector<std::pair<std::string, std::string>> metadataProps;
    std::vector<std::string> serializedFunctions; ///< model-local functions, kept verbatim
};

class Graph {
public:
    /// Adds a value with a name unique in the graph.
    ValueId addValue(std::string name, DataType dtype, TensorShape shape = {});

    /// Adds a constant tensor value; dtype and shape come from the data.
    ValueId addInitializer(std::string name, TensorPtr data);

    /// Adds a node and wires producer/consumer links. Outputs must not have a producer yet.
    NodeId addNode(std::string name, std::string opType, std::vector<ValueId> inputs,
                   std::vector<ValueId> outputs, std::vector<Attribute> attributes = {},
                   std::string domain = {});

    /// Renames a value; the new name must be unused.
    void renameValue(ValueId value, std::string newName);

    void addInput(ValueId value) { m_inputs.push_back(value); }

    void addOutput(ValueId value) { m_outputs.push_back(value); }

    /// Rewires input `port` of `node` to `value` (invalid = empty optional input).
    void setNodeInput(NodeId node, uint32_t port, ValueId value);

    /// Points every consumer of `from` (and graph outputs) at `to`.
    void replaceAllUses(ValueId from, ValueId to);

    /// Detaches a node and leaves a tombstone; its outputs keep their names but lose the producer.
    void removeNode(NodeId node);

    /// Drops tombstones and values nothing refers to; ids change.
    void compact();

    const Node& node(NodeId id) const { return m_nodes[id.index()]; }

    Node& node(NodeId id) { return m_nodes[id.index()]; }

    const Value& value(ValueId id) const { return m_values[id.index()]; }

    Value& value(ValueId id) { return m_values[id.index()]; }

    size_t numNodeSlots() const { return m_nodes.size(); }

    size_t numValues() const { return m_values.size(); }

    /// Live (not removed) nodes, in insertion order.
    std::vector<NodeId> nodeIds() const;

    size_t numNodes() const;

    std::vector<ValueId> valueIds() const;

    const std::vector<ValueId>& inputs() const { return m_inputs; }

    const std::vector<ValueId>& outputs() const { return m_outputs; }

    /// True when `id` is one of outputs().
    bool isOutput(ValueId id) const;

    /// Initializer values in the order they were added.
    std::vector<ValueId> initializers() const;

    std::optional<ValueId> findValue(std::string_view name) const;

    /// Linear search; names need not be unique (or present) in ONNX.
    std::optional<NodeId> findNode(std::string_view name) const;

    /// Stable topological order: among ready nodes, the one added first goes first.
    /// A cycle gives an InvalidModel error naming a node on it.
    Result<std::vector<NodeId>> topologicalOrder() const;

    /// Opset of `domain` ("" = default domain), 0 when not imported.
    int64_t opsetVersion(std::string_view domain = {}) const;

    ModelMetadata& metadata() { return m_metadata; }

    const ModelMetadata& metadata() const { return m_metadata; }

    /// Values that are graph inputs but not initializers.
    std::vector<ValueId> runtimeInputs() const;

private:
    std::vector<Node> m_nodes;
    std::vector<Value> m_values;
    std::vector<ValueId> m_inputs;
    std::vector<ValueId> m_outputs;
    std::unordered_map<std::string, ValueId> m_valueByName;
    ModelMetadata m_metadata;
};

/// Structural equality for round-trip tests; on mismatch `diff` names the first difference.
bool graphsEqual(const Graph& a, const Graph& b, std::string* diff = nullptr);

/// Checks links, names and order; returns the first inconsistency found.
Result<void> verify(const Graph& graph);

} // namespace qs::graph
