// fold-batch-norm: an inference BatchNormalization right after a Conv, a Gemm or a MatMul + Add
// (the producer's only reader) becomes part of that producer. With a[m] = gamma[m] /
// sqrt(var[m] + eps) per output channel m, BN(y)[m] = (y[m] - mean[m]) a[m] + beta[m], so
//   Conv:         w'[m, ...] = w[m, ...] a[m],          b'[m] = (b[m] - mean[m]) a[m] + beta[m]
//   Gemm:         B' column m = B column m * a[m],      C'[m] = (beta_gemm C[m] - mean[m]) a[m] +
//                 beta[m], and the Gemm's beta becomes 1 (alpha is untouched: it scales A B')
//   MatMul + Add: B' column m = B column m * a[m],      c'[m] = (c[m] - mean[m]) a[m] + beta[m]
// (the "freeze BN" rewrite). Weights, biases and all BN parameters must be float initializers; the
// selectors check the pattern without touching the graph, the rewrites follow.

#include "core/pass/pass.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace qs::pass {

namespace {

using graph::Graph;
using graph::NodeId;
using graph::TensorData;
using graph::ValueId;

const TensorData* floatConstant(const Graph& g, ValueId id) {
    if (!id.valid() || !g.value(id).isInitializer()) {
        return nullptr;
    }
    const TensorData* data = g.value(id).initializer.get();
    return data->dtype() == graph::DataType::Float ? data : nullptr;
}

/// The default-domain node of type `opType` producing `id` as its only consumer's input, or none.
std::optional<NodeId> soleProducer(const Graph& g, ValueId id, std::string_view opType) {
    const NodeId producer = g.value(id).producer;
    if (!producer.valid() || g.node(producer).opType != opType ||
        !g.node(producer).isDefaultDomain() || g.value(id).consumers.size() != 1 ||
        g.isOutput(id)) {
        return std::nullopt;
    }
    return producer;
}

/// The BN's per-channel affine map y -> y * scale + shift.
struct ChannelAffine {
    std::vector<float> scale;
    std::vector<float> mean;
    std::vector<float> beta;

    int64_t channels() const { return static_cast<int64_t>(scale.size()); }

    /// (bias - mean) a + beta: where a bias of the producer ends up after the fold.
    float foldBias(size_t m, float bias) const { return (bias - mean[m]) * scale[m] + beta[m]; }
};

std::optional<ChannelAffine> readBatchNorm(const Graph& g, const graph::Node& bn) {
    if (bn.inputs.size() != 5 || bn.intAttr("training_mode", 0) != 0 || bn.outputs.size() != 1 ||
        g.isOutput(bn.outputs[0])) {
        return std::nullopt;
    }
    const TensorData* params[4];
    for (size_t i = 0; i < 4; ++i) {
        params[i] = floatConstant(g, bn.inputs[i + 1]);
        if (params[i] == nullptr || params[i]->numElements() != params[0]->numElements()) {
            return std::nullopt;
        }
    }
    const float eps = bn.floatAttr("epsilon", 1e-5F);
    const auto gamma = params[0]->as<float>();
    const auto var = params[3]->as<float>();
    ChannelAffine affine;
    affine.beta.assign(params[1]->as<float>().begin(), params[1]->as<float>().end());
    affine.mean.assign(params[2]->as<float>().begin(), params[2]->as<float>().end());
    for (size_t m = 0; m < gamma.size(); ++m) {
        affine.scale.push_back(gamma[m] / std::sqrt(var[m] + eps));
    }
    return affine;
}

/// A weight with the output channel along `channelAxis` (0 for Conv and transposed Gemm B, 1 for
/// MatMul and plain Gemm B), each channel's slice multiplied by a[m].
std::vector<float> scaleChannels(const TensorData& weight, int channelAxis,
                                 const ChannelAffine& affine) {
    std::vector<float> out(weight.as<float>().begin(), weight.as<float>().end());
    const auto channels = static_cast<size_t>(affine.channels());
    for (size_t i = 0; i < out.size(); ++i) {
        // Axis 0: channel-major slices; axis 1 of a 2-D [K, M] matrix: the column index.
        const size_t m = channelAxis == 0 ? i / (out.size() / channels) : i % channels;
        out[i] *= affine.scale[m];
    }
    return out;
}

/// The rewrite all three patterns end with: new weight and bias initializers on the producer's
/// ports, the BN removed and its readers moved to the producer's output.
void rewire(Graph& g, NodeId producer, NodeId bnId, uint32_t weightPort, uint32_t biasPort,
            const std::pair<std::vector<float>, std::vector<float>>& weightAndBias,
            PassContext& context) {
    const graph::Node& node = g.node(producer);
    const std::string name = node.name;
    const std::vector<int64_t> weightDims = g.value(node.inputs[weightPort]).initializer->dims();
    const ValueId producerOut = g.node(bnId).inputs[0];
    const ValueId bnOut = g.node(bnId).outputs[0];
    const std::string bnName = g.node(bnId).name;
    const ValueId w = g.addInitializer(
        name + "_bn_folded_weight",
        TensorData::fromValues<float>(graph::DataType::Float, weightDims,
                                      std::span<const float>(weightAndBias.first)));
    const ValueId b = g.addInitializer(
        name + "_bn_folded_bias",
        TensorData::fromValues<float>(graph::DataType::Float,
                                      {static_cast<int64_t>(weightAndBias.second.size())},
                                      std::span<const float>(weightAndBias.second)));
    const std::string opType = g.node(producer).opType;
    g.setNodeInput(producer, weightPort, w);
    g.setNodeInput(producer, biasPort, b);
    g.removeNode(bnId);
    g.replaceAllUses(bnOut, producerOut);
    context.log.push_back("folded BatchNormalization '" + bnName + "' into " + opType + " '" +
                          name + "'");
}

/// The bias of `producer` at `port` per channel: absent -> 0, one value -> broadcast, M values.
std::optional<std::vector<float>> channelBias(const Graph& g, const graph::Node& producer,
                                              size_t port, int64_t channels) {
    if (producer.inputs.size() <= port || !producer.inputs[port].valid()) {
        return std::vector<float>(static_cast<size_t>(channels), 0.0F);
    }
    const TensorData* bias = floatConstant(g, producer.inputs[port]);
    if (bias == nullptr || (bias->numElements() != channels && bias->numElements() != 1)) {
        return std::nullopt;
    }
    // Only the last axis may be long: [M, 1] would broadcast along the other axis.
    const auto& dims = bias->dims();
    if (!dims.empty() &&
        std::any_of(dims.begin(), dims.end() - 1, [](int64_t d) { return d != 1; })) {
        return std::nullopt;
    }
    const auto values = bias->as<float>();
    if (values.size() == 1) {
        return std::vector<float>(static_cast<size_t>(channels), values[0]);
    }
    return std::vector<float>(values.begin(), values.end());
}

bool foldIntoConv(Graph& g, NodeId bnId, const ChannelAffine& affine, PassContext& context) {
    const auto conv = soleProducer(g, g.node(bnId).inputs[0], "Conv");
    if (!conv) {
        return false;
    }
    const graph::Node& node = g.node(*conv);
    const TensorData* w = node.inputs.size() > 1 ? floatConstant(g, node.inputs[1]) : nullptr;
    if (w == nullptr || w->dims().empty() || w->dims()[0] != affine.channels()) {
        return false;
    }
    auto bias = channelBias(g, node, 2, affine.channels());
    if (!bias) {
        return false;
    }
    for (size_t m = 0; m < bias->size(); ++m) {
        (*bias)[m] = affine.foldBias(m, (*bias)[m]);
    }
    rewire(g, *conv, bnId, 1, 2, {scaleChannels(*w, 0, affine), *bias}, context);
    return true;
}

bool foldIntoGemm(Graph& g, NodeId bnId, const ChannelAffine& affine, PassContext& context) {
    const auto gemm = soleProducer(g, g.node(bnId).inputs[0], "Gemm");
    if (!gemm) {
        return false;
    }
    const graph::Node& node = g.node(*gemm);
    const TensorData* b = node.inputs.size() > 1 ? floatConstant(g, node.inputs[1]) : nullptr;
    const int channelAxis = node.intAttr("transB", 0) != 0 ? 0 : 1;
    if (b == nullptr || b->dims().size() != 2 ||
        b->dims()[static_cast<size_t>(channelAxis)] != affine.channels()) {
        return false;
    }
    auto bias = channelBias(g, node, 2, affine.channels());
    if (!bias) {
        return false;
    }
    const float gemmBeta = node.floatAttr("beta", 1.0F);
    for (size_t m = 0; m < bias->size(); ++m) {
        (*bias)[m] = affine.foldBias(m, gemmBeta * (*bias)[m]);
    }
    // C' already carries the Gemm's beta.
    auto& attributes = g.node(*gemm).attributes;
    std::erase_if(attributes, [](const graph::Attribute& a) { return a.name == "beta"; });
    rewire(g, *gemm, bnId, 1, 2, {scaleChannels(*b, channelAxis, affine), *bias}, context);
    return true;
}

/// MatMul(A, B) + c -> BN, with A of rank 2 (so BN's channel axis 1 is B's columns), B a float
/// [K, M] initializer and c a float initializer of M elements (or one).
bool foldIntoMatMulAdd(Graph& g, NodeId bnId, const ChannelAffine& affine, PassContext& context) {
    const auto add = soleProducer(g, g.node(bnId).inputs[0], "Add");
    if (!add || g.node(*add).inputs.size() != 2) {
        return false;
    }
    const graph::Node& addNode = g.node(*add);
    const uint32_t biasPort = floatConstant(g, addNode.inputs[1]) != nullptr ? 1 : 0;
    const auto matmul = soleProducer(g, addNode.inputs[1 - biasPort], "MatMul");
    if (!matmul) {
        return false;
    }
    const graph::Node& mm = g.node(*matmul);
    const TensorData* b = floatConstant(g, mm.inputs[1]);
    const graph::TensorShape& aShape = g.value(mm.inputs[0]).shape;
    if (b == nullptr || b->dims().size() != 2 || b->dims()[1] != affine.channels() ||
        !aShape.rankKnown || aShape.rank() != 2) {
        return false;
    }
    auto bias = channelBias(g, addNode, biasPort, affine.channels());
    if (!bias) {
        return false;
    }
    for (size_t m = 0; m < bias->size(); ++m) {
        (*bias)[m] = affine.foldBias(m, (*bias)[m]);
    }
    const std::vector<float> scaled = scaleChannels(*b, 1, affine);
    const ValueId w =
        g.addInitializer(mm.name + "_bn_folded_weight",
                         TensorData::fromValues<float>(graph::DataType::Float, b->dims(),
                                                       std::span<const float>(scaled)));
    g.setNodeInput(*matmul, 1, w);
    // The Add keeps its place; its constant becomes the folded bias, the BN goes.
    const ValueId addOut = g.node(*add).outputs[0];
    const ValueId bnOut = g.node(bnId).outputs[0];
    const ValueId c =
        g.addInitializer(g.node(*add).name + "_bn_folded_bias",
                         TensorData::fromValues<float>(graph::DataType::Float, {affine.channels()},
                                                       std::span<const float>(*bias)));
    g.setNodeInput(*add, biasPort, c);
    context.log.push_back("folded BatchNormalization '" + g.node(bnId).name + "' into MatMul '" +
                          g.node(*matmul).name + "' + Add '" + g.node(*add).name + "'");
    g.removeNode(bnId);
    g.replaceAllUses(bnOut, addOut);
    return true;
}

bool tryFold(Graph& g, NodeId bnId, PassContext& context) {
    const auto affine = readBatchNorm(g, g.node(bnId));
    if (!affine) {
        return false;
    }
    return foldIntoConv(g, bnId, *affine, context) || foldIntoGemm(g, bnId, *affine, context) ||
           foldIntoMatMulAdd(g, bnId, *affine, context);
}

} // namespace

Result<bool> foldBatchNorm(graph::Graph& graph, PassContext& context) {
    bool changed = false;
    for (const graph::NodeId id : graph.nodeIds()) {
        const graph::Node& node = graph.node(id);
        if (node.isDefaultDomain() && node.opType == "BatchNormalization") {
            changed = tryFold(graph, id, context) || changed;
        }
    }
    if (changed) {
        graph.compact();
    }
    return changed;
}

} // namespace qs::pass
