// recoverExportStructure(): the quantizers, pruned channels and float16 weights of an export,
// named as in the float model it came from.

#include "core/graph/metatype.h"
#include "core/report/export_diff.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <set>
#include <unordered_map>

namespace qs::report {

namespace {

using graph::Graph;
using graph::NodeId;
using graph::ValueId;
using quantization::InsertionPoint;
using quantization::QuantizerConfig;

constexpr std::string_view kModelInputPrefix = "nncf_model_input_";

bool isSignedType(graph::DataType type) {
    return type == graph::DataType::Int8 || type == graph::DataType::Int4 ||
           type == graph::DataType::Int16 || type == graph::DataType::Int32;
}

int64_t storedBytes(const Graph& g) {
    int64_t bytes = 0;
    for (const ValueId id : g.initializers()) {
        bytes += static_cast<int64_t>(g.value(id).initializer->expectedByteSize());
    }
    return bytes;
}

/// True for the names our importer gives unnamed nodes ("Conv_nncf_12": op, index in the file).
/// An export shifts those indices, so they say nothing about which node is which.
bool isImporterName(const std::string& name) {
    const size_t at = name.rfind("_nncf_");
    return at != std::string::npos && at + 6 < name.size() &&
           std::all_of(name.begin() + static_cast<std::ptrdiff_t>(at + 6), name.end(),
                       [](char c) { return c >= '0' && c <= '9'; });
}

/// A's name of a B tensor an exporter renamed when it put a node behind a graph output
/// ("logits_float" in front of the output's Q/DQ, "logits_fp16" in front of its Cast).
std::string withoutOutputSuffix(const std::string& name) {
    for (const std::string_view suffix : {"_float", "_fp16", "_fp32"}) {
        if (name.size() > suffix.size() && name.ends_with(suffix)) {
            return name.substr(0, name.size() - suffix.size());
        }
    }
    return name;
}

/// The recovery's view of the two graphs: which of B's nodes are A's. A B node is A's node of the
/// same op type that produces a tensor of the same name (exporters keep tensor names), else of
/// the same node name unless the importer made that name up; each A node matches once.
class ExportMatcher {
public:
    ExportMatcher(const Graph& a, const Graph& b)
        : m_a(a)
        , m_b(b)
        , m_aNodeOf(b.numNodeSlots())
        , m_bNodeOf(a.numNodeSlots()) {
        std::unordered_map<std::string, NodeId> byOutput;
        std::unordered_map<std::string, NodeId> byName;
        for (const NodeId id : a.nodeIds()) {
            for (const ValueId output : a.node(id).outputs) {
                if (output.valid() && !a.value(output).name.empty()) {
                    byOutput.emplace(a.value(output).name, id);
                }
            }
            byName.emplace(a.node(id).name, id);
        }
        for (const NodeId id : b.nodeIds()) {
            const std::optional<NodeId> match = matchOf(b.node(id), byOutput, byName);
            if (match && !m_bNodeOf[match->index()]) {
                m_aNodeOf[id.index()] = match;
                m_bNodeOf[match->index()] = id;
            }
        }
    }

    /// A's node that B's `bNode` is, if it is one.
    std::optional<NodeId> aNodeOf(NodeId bNode) const { return m_aNodeOf[bNode.index()]; }

    /// B's node that A's `aNode` became, if B has it.
    std::optional<NodeId> bNodeOf(NodeId aNode) const { return m_bNodeOf[aNode.index()]; }

    bool isOriginal(NodeId bNode) const { return m_aNodeOf[bNode.index()].has_value(); }

    /// A's name of the original B node `bNode`.
    const std::string& nameInA(NodeId bNode) const { return m_a.node(*aNodeOf(bNode)).name; }

    /// A's tensor a B value stands for: an original node's output or a graph input, followed
    /// back through inserted nodes (Clip, Cast, Q/DQ) along their first input.
    std::optional<ValueId> originalTensor(ValueId v) const {
        for (int guard = 0; guard < 64; ++guard) {
            const graph::Value& value = m_b.value(v);
            if (!value.producer.valid()) {
                const auto inA = m_a.findValue(value.name);
                if (inA && !m_a.value(*inA).isInitializer()) {
                    return inA;
                }
                return std::nullopt;
            }
            const graph::Node& producer = m_b.node(value.producer);
            if (isOriginal(value.producer)) {
                const graph::Node& inA = m_a.node(*aNodeOf(value.producer));
                const auto at = std::find(producer.outputs.begin(), producer.outputs.end(), v);
                const auto index = static_cast<size_t>(at - producer.outputs.begin());
                if (index >= inA.outputs.size()) {
                    return std::nullopt;
                }
                return inA.outputs[index];
            }
            if (producer.inputs.empty()) {
                return std::nullopt;
            }
            v = producer.inputs[0];
        }
        return std::nullopt;
    }

    /// The original (node name, port) uses reachable from `v` through inserted nodes, and
    /// whether a graph output is.
    std::pair<std::set<std::pair<std::string, uint32_t>>, bool> reachedUses(ValueId v) const {
        std::set<std::pair<std::string, uint32_t>> uses;
        bool output = false;
        std::deque<ValueId> open{v};
        std::set<uint32_t> seen;
        while (!open.empty()) {
            const ValueId at = open.front();
            open.pop_front();
            if (!seen.insert(at.index()).second) {
                continue;
            }
            const auto& outputs = m_b.outputs();
            output = output || std::find(outputs.begin(), outputs.end(), at) != outputs.end();
            for (const graph::Use& use : m_b.value(at).consumers) {
                if (isOriginal(use.node)) {
                    uses.emplace(nameInA(use.node), use.port);
                } else {
                    for (const ValueId next : m_b.node(use.node).outputs) {
                        open.push_back(next);
                    }
                }
            }
        }
        return {uses, output};
    }

    /// The original nodes `v` reaches through inserted ones, with the port.
    std::vector<std::pair<std::string, uint32_t>> directUses(ValueId v) const {
        std::vector<std::pair<std::string, uint32_t>> uses;
        for (const graph::Use& use : m_b.value(v).consumers) {
            if (isOriginal(use.node)) {
                uses.emplace_back(nameInA(use.node), use.port);
            }
        }
        return uses;
    }

    /// NNCF's name of the node producing A's tensor `t` (a post-hook target).
    std::optional<std::string> postHookTarget(ValueId t) const {
        const graph::Value& value = m_a.value(t);
        if (value.producer.valid()) {
            return m_a.node(value.producer).name;
        }
        const std::vector<ValueId> inputs = m_a.runtimeInputs();
        const auto at = std::find(inputs.begin(), inputs.end(), t);
        if (at == inputs.end()) {
            return std::nullopt;
        }
        return std::string(kModelInputPrefix) + std::to_string(at - inputs.begin());
    }

    const Graph& a() const { return m_a; }

    const Graph& b() const { return m_b; }

private:
    /// A's node of B's `node`: by an output tensor's name, else by a name the file gave it.
    std::optional<NodeId> matchOf(const graph::Node& node,
                                  const std::unordered_map<std::string, NodeId>& byOutput,
                                  const std::unordered_map<std::string, NodeId>& byName) const {
        for (const ValueId output : node.outputs) {
            if (!output.valid()) {
                continue;
            }
            const auto found = byOutput.find(withoutOutputSuffix(m_b.value(output).name));
            if (found != byOutput.end() && m_a.node(found->second).opType == node.opType) {
                return found->second;
            }
        }
        if (node.name.empty() || isImporterName(node.name)) {
            return std::nullopt;
        }
        const auto found = byName.find(node.name);
        if (found != byName.end() && m_a.node(found->second).opType == node.opType) {
            return found->second;
        }
        return std::nullopt;
    }

    const Graph& m_a;
    const Graph& m_b;
    std::vector<std::optional<NodeId>> m_aNodeOf; ///< by B node slot
    std::vector<std::optional<NodeId>> m_bNodeOf; ///< by A node slot
};

bool allZero(const graph::TensorData* zeroPoint) {
    if (zeroPoint == nullptr) {
        return true;
    }
    for (int64_t i = 0; i < zeroPoint->numElements(); ++i) {
        if (zeroPoint->elementAsDouble(i) != 0.0) {
            return false;
        }
    }
    return true;
}

const graph::TensorData* constantInput(const Graph& g, const graph::Node& node, size_t port) {
    if (port >= node.inputs.size() || !node.inputs[port].valid()) {
        return nullptr;
    }
    return g.value(node.inputs[port]).initializer.get();
}

/// The config a DequantizeLinear (and the stored type of its codes) stands for.
QuantizerConfig configOf(const Graph& b, const graph::Node& dq, graph::DataType codes) {
    QuantizerConfig config;
    config.numBits = graph::dataTypeBits(codes);
    const graph::TensorData* scale = constantInput(b, dq, 1);
    config.perChannel = scale != nullptr && scale->numElements() > 1;
    config.mode = allZero(constantInput(b, dq, 2)) ? quantization::QuantizationMode::Symmetric
                                                   : quantization::QuantizationMode::Asymmetric;
    config.signednessToForce = isSignedType(codes);
    return config;
}

/// A Clip (or Max then Min) the exporter put in front of a QuantizeLinear narrows the grid:
/// its range in steps of the scale gives the levels, so the bit width and narrow range.
void narrowByClip(const ExportMatcher& match, const graph::Node& q, QuantizerConfig& config) {
    const Graph& b = match.b();
    const graph::Value& input = b.value(q.inputs[0]);
    // The model's own Clip (ReLU6) in front of a quantizer says nothing of its grid.
    if (!input.producer.valid() || match.isOriginal(input.producer)) {
        return;
    }
    const graph::Node& clip = b.node(input.producer);
    const graph::TensorData* scale = constantInput(b, q, 1);
    const graph::TensorData* low = nullptr;
    const graph::TensorData* high = nullptr;
    if (clip.opType == "Clip") {
        low = constantInput(b, clip, 1);
        high = constantInput(b, clip, 2);
    } else if (clip.opType == "Min" && b.value(clip.inputs[0]).producer.valid()) {
        const graph::Node& max = b.node(b.value(clip.inputs[0]).producer);
        high = constantInput(b, clip, 1);
        low = max.opType == "Max" ? constantInput(b, max, 1) : nullptr;
    }
    if (scale == nullptr || low == nullptr || high == nullptr || scale->numElements() == 0 ||
        low->numElements() == 0 || high->numElements() == 0 || scale->elementAsDouble(0) <= 0) {
        return;
    }
    const double levels = std::round((high->elementAsDouble(0) - low->elementAsDouble(0)) /
                                     scale->elementAsDouble(0)) +
                          1.0;
    if (levels < 2) {
        return;
    }
    config.numBits = static_cast<int>(std::ceil(std::log2(levels)));
    config.narrowRange = levels < std::exp2(config.numBits);
}

/// A weight's codes: 4-bit weights stored in 8 bits (opset 13 has no int4) use at most 16 codes,
/// so 8-bit storage with such a range is a 4-bit grid; any other range keeps the stored width (an
/// 8-bit weight of one sign uses half its grid). A signed symmetric grid that never reaches its
/// lowest code is narrow ([-127, 127]); a 4-bit grid in uint8 centred on 8 is symmetric.
void narrowByCodes(const graph::TensorData& codes, const graph::TensorData* zeroPoint,
                   QuantizerConfig& config) {
    if (codes.numElements() == 0) {
        return;
    }
    double low = codes.elementAsDouble(0);
    double high = low;
    for (int64_t i = 1; i < codes.numElements(); ++i) {
        const double c = codes.elementAsDouble(i);
        low = std::min(low, c);
        high = std::max(high, c);
    }
    constexpr double kFourBitLevels = 16;
    const bool fourInEight =
        graph::dataTypeBits(codes.dtype()) == 8 && high - low + 1 <= kFourBitLevels;
    if (fourInEight) {
        config.numBits = 4;
    }
    if (config.mode == quantization::QuantizationMode::Symmetric && isSignedType(codes.dtype())) {
        config.narrowRange = low > -std::exp2(config.numBits - 1);
    }
    if (!fourInEight || zeroPoint == nullptr || isSignedType(codes.dtype())) {
        return;
    }
    bool centred = true;
    for (int64_t i = 0; i < zeroPoint->numElements(); ++i) {
        centred = centred && zeroPoint->elementAsDouble(i) == std::exp2(config.numBits - 1);
    }
    if (centred) {
        config.mode = quantization::QuantizationMode::Symmetric;
        config.signednessToForce = true;
    }
}

class QuantizerRecovery {
public:
    QuantizerRecovery(const ExportMatcher& match, ExportStructure& out)
        : m_match(match)
        , m_out(out) {}

    void run() {
        const Graph& b = m_match.b();
        const auto order = b.topologicalOrder();
        if (!order.ok()) {
            m_out.notes.push_back("B has a cycle: its quantizers are not recovered");
            return;
        }
        for (const NodeId id : order.value()) {
            const graph::Node& node = b.node(id);
            if (node.opType != "DequantizeLinear" || m_match.isOriginal(id) ||
                node.inputs.empty()) {
                continue;
            }
            const graph::Value& codes = b.value(node.inputs[0]);
            if (codes.isInitializer()) {
                addWeight(node, codes.initializer->dtype());
            } else {
                addActivation(node);
            }
        }
        // One scale read by two DequantizeLinears is a unified group (one DQ feeding several
        // pre-hooks is one quantizer placed twice, not a group).
        for (const auto& [scale, members] : m_scaleGroups) {
            std::set<uint32_t> dequantizers;
            std::vector<int> ids;
            for (const auto& [dqOutput, id] : members) {
                dequantizers.insert(dqOutput);
                ids.push_back(id);
            }
            if (dequantizers.size() > 1) {
                const int group = static_cast<int>(m_out.setup.unifiedScaleGroups.size());
                m_out.setup.unifiedScaleGroups[group] = ids;
            }
        }
    }

private:
    int add(InsertionPoint point, const QuantizerConfig& config, const graph::Node& dq,
            std::vector<std::string> directlyQuantized) {
        const int id = m_nextId++;
        const bool isWeight = point.isWeight;
        m_out.setup.quantizationPoints[id] = {.insertionPoint = std::move(point),
                                              .qconfig = config,
                                              .directlyQuantizedOperatorNodeNames =
                                                  std::move(directlyQuantized),
                                              .ipNode = -1};
        m_qpOfDq[dq.outputs[0].index()].push_back(id);
        if (!isWeight && dq.inputs.size() > 1 && dq.inputs[1].valid()) {
            m_scaleGroups[dq.inputs[1].index()].emplace_back(dq.outputs[0].index(), id);
        }
        return id;
    }

    void addWeight(const graph::Node& dq, graph::DataType codes) {
        const std::vector<std::pair<std::string, uint32_t>> uses =
            m_match.directUses(dq.outputs[0]);
        if (uses.empty()) {
            m_out.notes.push_back("weight DequantizeLinear '" + dq.name +
                                  "' feeds no node of A: not placed");
            return;
        }
        QuantizerConfig config = configOf(m_match.b(), dq, codes);
        narrowByCodes(*m_match.b().value(dq.inputs[0]).initializer,
                      constantInput(m_match.b(), dq, 2), config);
        for (const auto& [node, port] : uses) {
            add({.isWeight = true, .targetNodeName = node, .inputPortId = std::nullopt}, config, dq,
                {node});
        }
    }

    void addActivation(const graph::Node& dq) {
        const Graph& b = m_match.b();
        const graph::Value& quantized = b.value(dq.inputs[0]);
        if (!quantized.producer.valid() || b.node(quantized.producer).opType != "QuantizeLinear") {
            m_out.notes.push_back("DequantizeLinear '" + dq.name +
                                  "' is not fed by a QuantizeLinear: not placed");
            return;
        }
        const graph::Node& q = b.node(quantized.producer);
        const std::optional<ValueId> source = m_match.originalTensor(q.inputs[0]);
        if (!source) {
            m_out.notes.push_back("QuantizeLinear '" + q.name +
                                  "' quantizes no tensor of A: not placed");
            return;
        }
        QuantizerConfig config = configOf(b, dq, quantized.dtype);
        narrowByClip(m_match, q, config);
        const std::optional<int> parent = parentOf(q);
        std::vector<int> ids;
        if (!parent && coversEveryUse(dq.outputs[0], *source)) {
            const std::optional<std::string> target = m_match.postHookTarget(*source);
            if (target) {
                ids.push_back(
                    add({.isWeight = false, .targetNodeName = *target, .inputPortId = std::nullopt},
                        config, dq, consumerNames(*source)));
            }
        } else {
            for (const auto& [node, port] : m_match.directUses(dq.outputs[0])) {
                ids.push_back(add({.isWeight = false,
                                   .targetNodeName = node,
                                   .inputPortId = static_cast<int>(port)},
                                  config, dq, {node}));
            }
        }
        if (ids.empty()) {
            m_out.notes.push_back("quantizer '" + q.name + "' of tensor '" +
                                  m_match.a().value(*source).name + "' has no point in A");
        }
        for (const int id : ids) {
            m_out.dequantizedValue[id] = b.value(dq.outputs[0]).name;
            if (parent) {
                m_out.setup.requantizationParents[id] = *parent;
            }
        }
    }

    /// The quantizer whose DequantizeLinear feeds `q` through inserted nodes (a requantizer's
    /// parent), if any.
    std::optional<int> parentOf(const graph::Node& q) const {
        const Graph& b = m_match.b();
        ValueId v = q.inputs[0];
        for (int guard = 0; guard < 64; ++guard) {
            if (const auto found = m_qpOfDq.find(v.index());
                found != m_qpOfDq.end() && !found->second.empty()) {
                return found->second.front();
            }
            const graph::Value& value = b.value(v);
            if (!value.producer.valid() || m_match.isOriginal(value.producer) ||
                b.node(value.producer).inputs.empty()) {
                return std::nullopt;
            }
            v = b.node(value.producer).inputs[0];
        }
        return std::nullopt;
    }

    /// True when every use of A's `source` (and its graph-output role) reads `dequantized`.
    bool coversEveryUse(ValueId dequantized, ValueId source) const {
        const Graph& a = m_match.a();
        const auto [reached, output] = m_match.reachedUses(dequantized);
        for (const graph::Use& use : a.value(source).consumers) {
            if (!reached.contains({a.node(use.node).name, use.port})) {
                return false;
            }
        }
        const auto& outputs = a.outputs();
        const bool isOutput = std::find(outputs.begin(), outputs.end(), source) != outputs.end();
        return !isOutput || output || !a.value(source).consumers.empty();
    }

    std::vector<std::string> consumerNames(ValueId source) const {
        std::vector<std::string> names;
        for (const graph::Use& use : m_match.a().value(source).consumers) {
            names.push_back(m_match.a().node(use.node).name);
        }
        return names;
    }

    const ExportMatcher& m_match;
    ExportStructure& m_out;
    int m_nextId = 0;
    std::unordered_map<uint32_t, std::vector<int>> m_qpOfDq; ///< by B DQ output slot
    /// By B scale initializer slot: (DQ output slot, qp id) of each reader.
    std::map<uint32_t, std::vector<std::pair<uint32_t, int>>> m_scaleGroups;
};

/// The weight ports of a node that hold a float initializer in both graphs.
struct WeightPair {
    const graph::TensorData* a = nullptr;
    const graph::TensorData* b = nullptr;
    std::string name;
    int port = 0;
};

std::optional<WeightPair> weightPair(const Graph& a, NodeId nodeA, const Graph& b, NodeId nodeB) {
    const std::vector<int> ports = graph::constantWeightPorts(a, nodeA);
    if (ports.empty()) {
        return std::nullopt;
    }
    const auto port = static_cast<size_t>(ports.front());
    const graph::Node& na = a.node(nodeA);
    const graph::Node& nb = b.node(nodeB);
    if (port >= nb.inputs.size() || !nb.inputs[port].valid()) {
        return std::nullopt;
    }
    const graph::TensorData* wa = a.value(na.inputs[port]).initializer.get();
    const graph::TensorData* wb = b.value(nb.inputs[port]).initializer.get();
    if (wa == nullptr || wb == nullptr || wa->dtype() != graph::DataType::Float ||
        wb->dtype() != graph::DataType::Float || wa->dims().size() != wb->dims().size()) {
        return std::nullopt;
    }
    return WeightPair{wa, wb, a.value(na.inputs[port]).name, ports.front()};
}

/// The rows of `w` along `axis`, each keeping only `inputs` of the input axis (empty: all); one
/// pass over the elements.
std::vector<std::vector<float>> rowsOf(const graph::TensorData& w, int64_t axis, int64_t inputAxis,
                                       const std::vector<int64_t>& inputs) {
    const std::vector<int64_t>& dims = w.dims();
    const std::span<const float> values = w.as<float>();
    std::vector<bool> keep;
    if (!inputs.empty() && inputAxis >= 0) {
        keep.assign(static_cast<size_t>(dims[static_cast<size_t>(inputAxis)]), false);
        for (const int64_t c : inputs) {
            if (c >= 0 && c < static_cast<int64_t>(keep.size())) {
                keep[static_cast<size_t>(c)] = true;
            }
        }
    }
    std::vector<std::vector<float>> rows(static_cast<size_t>(dims[static_cast<size_t>(axis)]));
    std::vector<int64_t> index(dims.size(), 0);
    for (const float value : values) {
        if (keep.empty() || keep[static_cast<size_t>(index[static_cast<size_t>(inputAxis)])]) {
            rows[static_cast<size_t>(index[static_cast<size_t>(axis)])].push_back(value);
        }
        for (size_t d = dims.size(); d-- > 0;) {
            if (++index[d] < dims[d]) {
                break;
            }
            index[d] = 0;
        }
    }
    return rows;
}

/// The input-channel axis of a weight: Conv's and Gemm's 1 beside output axis 0, else 0
/// (ConvTranspose, MatMul).
int64_t inputAxisOf(size_t rank, int64_t outputAxis) {
    if (rank < 2) {
        return -1;
    }
    return outputAxis == 0 ? 1 : 0;
}

class PruningRecovery {
public:
    PruningRecovery(const ExportMatcher& match, ExportStructure& out)
        : m_match(match)
        , m_out(out) {}

    void run() {
        const Graph& a = m_match.a();
        const Graph& b = m_match.b();
        const auto order = b.topologicalOrder();
        if (!order.ok()) {
            return;
        }
        for (const NodeId idB : order.value()) {
            if (!m_match.isOriginal(idB)) {
                propagate(idB);
                continue;
            }
            const NodeId idA = *m_match.aNodeOf(idB);
            const std::optional<WeightPair> pair = weightPair(a, idA, b, idB);
            std::optional<int64_t> axis =
                pair ? graph::weightOutputChannelAxis(a, idA, pair->port) : std::nullopt;
            const auto rank = pair ? static_cast<int64_t>(pair->a->dims().size()) : 0;
            if (axis && *axis < 0) {
                *axis += rank;
            }
            if (!pair || !axis || *axis < 0 || *axis >= rank) {
                propagate(idB);
                continue;
            }
            // Only the input axis sliced (the layer after a pruned one): its outputs are whole.
            if (pair->a->dims()[static_cast<size_t>(*axis)] ==
                pair->b->dims()[static_cast<size_t>(*axis)]) {
                continue;
            }
            matchRows(idB, *pair, *axis);
        }
    }

private:
    /// A node that keeps channels as they come: its outputs take its first mapped input's map.
    void propagate(NodeId idB) {
        const graph::Node& node = m_match.b().node(idB);
        for (const ValueId input : node.inputs) {
            if (!input.valid()) {
                continue;
            }
            const auto found = m_out.channelMaps.find(m_match.b().value(input).name);
            if (found == m_out.channelMaps.end()) {
                continue;
            }
            for (const ValueId output : node.outputs) {
                // A known channel dim must agree; an unknown one is checked when compared.
                const graph::TensorShape& shape = m_match.b().value(output).shape;
                if (!shape.rankKnown || shape.rank() < 2 || !shape.dims[1].isKnown() ||
                    shape.dims[1].size == static_cast<int64_t>(found->second.size())) {
                    m_out.channelMaps[m_match.b().value(output).name] = found->second;
                }
            }
            return;
        }
    }

    void matchRows(NodeId idB, const WeightPair& pair, int64_t axis) {
        const graph::Node& node = m_match.b().node(idB);
        const size_t rank = pair.a->dims().size();
        const int64_t inputAxis = inputAxisOf(rank, axis);
        std::vector<int64_t> inputs;
        if (inputAxis >= 0 && pair.a->dims()[static_cast<size_t>(inputAxis)] !=
                                  pair.b->dims()[static_cast<size_t>(inputAxis)]) {
            const auto found = node.inputs.empty()
                                   ? m_out.channelMaps.end()
                                   : m_out.channelMaps.find(m_match.b().value(node.inputs[0]).name);
            if (found != m_out.channelMaps.end()) {
                inputs = found->second;
            }
        }
        PrunedWeight pruned{.node = m_match.nameInA(idB),
                            .weight = pair.name,
                            .axis = axis,
                            .channels = pair.a->dims()[static_cast<size_t>(axis)],
                            .kept = pair.b->dims()[static_cast<size_t>(axis)],
                            .matched = false,
                            .prunedChannels = {}};
        const bool inputsKnown =
            inputAxis < 0 ||
            pair.a->dims()[static_cast<size_t>(inputAxis)] ==
                pair.b->dims()[static_cast<size_t>(inputAxis)] ||
            static_cast<int64_t>(inputs.size()) == pair.b->dims()[static_cast<size_t>(inputAxis)];
        if (inputsKnown && pruned.kept <= pruned.channels) {
            const std::vector<int64_t> map = matchedChannels(pair, axis, inputAxis, inputs);
            if (!map.empty()) {
                pruned.matched = true;
                std::set<int64_t> kept(map.begin(), map.end());
                for (int64_t c = 0; c < pruned.channels; ++c) {
                    if (!kept.contains(c)) {
                        pruned.prunedChannels.push_back(c);
                    }
                }
                if (axis == 0 && !node.outputs.empty()) {
                    m_out.channelMaps[m_match.b().value(node.outputs[0]).name] = map;
                }
            }
        }
        m_out.pruned.push_back(std::move(pruned));
    }

    /// A's row of each of B's rows (exact equality of the kept values), or empty.
    static std::vector<int64_t> matchedChannels(const WeightPair& pair, int64_t axis,
                                                int64_t inputAxis,
                                                const std::vector<int64_t>& inputs) {
        const int64_t rowsA = pair.a->dims()[static_cast<size_t>(axis)];
        const int64_t rowsB = pair.b->dims()[static_cast<size_t>(axis)];
        std::map<std::vector<float>, std::vector<int64_t>> byValues;
        std::vector<std::vector<float>> rows = rowsOf(*pair.a, axis, inputAxis, inputs);
        for (int64_t r = 0; r < rowsA; ++r) {
            byValues[std::move(rows[static_cast<size_t>(r)])].push_back(r);
        }
        rows = rowsOf(*pair.b, axis, -1, {});
        std::vector<int64_t> map;
        std::set<int64_t> used;
        for (int64_t r = 0; r < rowsB; ++r) {
            const auto found = byValues.find(rows[static_cast<size_t>(r)]);
            if (found == byValues.end()) {
                return {};
            }
            const auto free = std::find_if(found->second.begin(), found->second.end(),
                                           [&used](int64_t c) { return !used.contains(c); });
            if (free == found->second.end()) {
                return {};
            }
            used.insert(*free);
            map.push_back(*free);
        }
        return map;
    }

    const ExportMatcher& m_match;
    ExportStructure& m_out;
};

} // namespace

Result<ExportStructure> recoverExportStructure(const Graph& a, const Graph& b) {
    const ExportMatcher match(a, b);
    ExportStructure out;
    int shared = 0;
    for (const NodeId id : b.nodeIds()) {
        if (match.isOriginal(id)) {
            ++shared;
        } else {
            ++out.insertedOps[b.node(id).opType];
        }
    }
    if (shared == 0) {
        return Error(Errc::InvalidArgument,
                     "B shares no node (by tensor or node name) with A: it is not an export of "
                     "this model");
    }
    for (const NodeId id : a.nodeIds()) {
        const std::optional<NodeId> inB = match.bNodeOf(id);
        if (!inB) {
            out.missingNodes.push_back(a.node(id).name);
            continue;
        }
        const auto& outputsA = a.node(id).outputs;
        const auto& outputsB = b.node(*inB).outputs;
        for (size_t k = 0; k < outputsA.size() && k < outputsB.size(); ++k) {
            if (outputsA[k].valid() && outputsB[k].valid()) {
                out.tensorInB[a.value(outputsA[k]).name] = b.value(outputsB[k]).name;
            }
        }
    }
    for (const ValueId id : b.initializers()) {
        out.float16Initializers += b.value(id).initializer->dtype() == graph::DataType::Float16;
    }
    out.bytesA = storedBytes(a);
    out.bytesB = storedBytes(b);
    QuantizerRecovery(match, out).run();
    PruningRecovery(match, out).run();
    return out;
}

} // namespace qs::report
