#include "core/runtime/layer_norm_fusion.h"

#include "core/runtime/fused_tail.h"
#include "core/runtime/tensor.h"

#include <algorithm>

namespace qs::runtime {

using graph::NodeId;
using graph::ValueId;

namespace {

bool isOp(const graph::Node& node, std::string_view opType, size_t inputs) {
    return node.isDefaultDomain() && node.opType == opType && node.inputs.size() == inputs &&
           node.outputs.size() == 1 && node.outputs[0].valid();
}

/// The node after `id` when `id` feeds it alone, is no graph output and it is `opType` with
/// `inputs` inputs; its id goes to `absorbed`.
const graph::Node* next(const graph::Graph& g, ValueId id, std::string_view opType, size_t inputs,
                        std::vector<NodeId>& absorbed) {
    const graph::Node* node = soleConsumer(g, id);
    if (node == nullptr || !isOp(*node, opType, inputs)) {
        return nullptr;
    }
    absorbed.push_back(g.value(id).consumers[0].node);
    return node;
}

/// A ReduceMean that keeps the dims and reduces only the last of `rank` axes (0: unknown): axes
/// as the attribute (before opset 18) or as an int64 initializer input (since).
bool reducesLastAxis(const graph::Graph& g, const graph::Node& node, size_t rank) {
    if (!node.isDefaultDomain() || node.opType != "ReduceMean" || node.inputs.empty() ||
        node.outputs.size() != 1 || node.intAttr("keepdims", 1) != 1) {
        return false;
    }
    std::vector<int64_t> axes = node.intsAttr("axes");
    if (node.inputs.size() > 1 && node.inputs[1].valid()) {
        const graph::Value& given = g.value(node.inputs[1]);
        if (!given.isInitializer() || given.initializer->dtype() != graph::DataType::Int64) {
            return false;
        }
        const Tensor tensor = Tensor::wrap(given.initializer);
        axes.assign(tensor.data<int64_t>(), tensor.data<int64_t>() + tensor.numElements());
    } else if (node.inputs.size() > 1) {
        return false;
    }
    // rank 0: unknown, so only -1 names the last axis.
    const auto last = static_cast<int64_t>(rank) - 1;
    return axes.size() == 1 && (axes[0] == -1 || (rank > 0 && axes[0] == last));
}

/// The element count of a float scale or bias that LayerNormalization can take and that the Mul
/// or Add broadcasts without changing the chain's shape once x's last dim equals it (checked when
/// the chain runs): every dim known, leading dims 1, rank at most x's (1 when x's is unknown).
/// 0 otherwise.
int64_t fitsLastAxis(const graph::Graph& g, ValueId id, const graph::TensorShape& x) {
    const graph::Value& value = g.value(id);
    const graph::DataType dtype = value.isInitializer() ? value.initializer->dtype() : value.dtype;
    const graph::TensorShape& shape = value.shape;
    const size_t most = x.rankKnown ? x.rank() : 1;
    if (dtype != graph::DataType::Float || !shape.rankKnown || shape.rank() > most) {
        return 0;
    }
    int64_t count = 1;
    for (size_t d = 0; d < shape.rank(); ++d) {
        const graph::Dim& dim = shape.dims[d];
        const bool last = d + 1 == shape.rank();
        if (!dim.isKnown() || (!last && dim.size != 1)) {
            return 0;
        }
        count *= dim.size;
    }
    const bool known = x.rankKnown && x.rank() > 0 && x.dims.back().isKnown();
    return count == 1 || !known || count == x.dims.back().size ? count : 0;
}

/// The operand of binary `node` other than `chain`, or invalid when both are `chain`.
ValueId otherOperand(const graph::Node& node, ValueId chain) {
    if (node.inputs[0] == node.inputs[1]) {
        return ValueId();
    }
    return node.inputs[0] == chain ? node.inputs[1] : node.inputs[0];
}

/// From the centred x (Sub's output) to the normalised one: x - mean feeds exactly Pow(d, 2)
/// and Div(d, s), and Pow -> ReduceMean -> Add eps -> Sqrt -> s. The Div, or nullptr; the ops go
/// to m.absorbed, epsilon to m.epsilon.
const graph::Node* matchNormalised(const graph::Graph& g, ValueId centred, size_t rank,
                                   LayerNormMatch& m) {
    const graph::Value& d = g.value(centred);
    const auto& outputs = g.outputs();
    if (d.consumers.size() != 2 ||
        std::find(outputs.begin(), outputs.end(), centred) != outputs.end()) {
        return nullptr;
    }
    NodeId powId = d.consumers[0].node;
    NodeId divId = d.consumers[1].node;
    if (g.node(powId).opType != "Pow") {
        std::swap(powId, divId);
    }
    const graph::Node& pow = g.node(powId);
    const graph::Node& div = g.node(divId);
    // One-element constants of rank <= x's (1 when unknown) never change the chain's shape.
    const size_t constantRank = rank > 0 ? rank : 1;
    if (!isOp(pow, "Pow", 2) || pow.inputs[0] != centred || !isOp(div, "Div", 2) ||
        div.inputs[0] != centred || scalarConstant(g, pow, 1, constantRank) != 2.0F) {
        return nullptr;
    }
    m.absorbed.push_back(powId);
    const graph::Node* variance = soleConsumer(g, pow.outputs[0]);
    if (variance == nullptr || !reducesLastAxis(g, *variance, rank) ||
        variance->inputs[0] != pow.outputs[0]) {
        return nullptr;
    }
    m.absorbed.push_back(g.value(pow.outputs[0]).consumers[0].node);
    const graph::Node* addEps = next(g, variance->outputs[0], "Add", 2, m.absorbed);
    if (addEps == nullptr) {
        return nullptr;
    }
    const std::optional<float> eps =
        scalarConstant(g, *addEps, addEps->inputs[0] == variance->outputs[0] ? 1 : 0, constantRank);
    const graph::Node* sqrt = next(g, addEps->outputs[0], "Sqrt", 1, m.absorbed);
    if (!eps || sqrt == nullptr || soleConsumer(g, sqrt->outputs[0]) != &div ||
        div.inputs[1] != sqrt->outputs[0]) {
        return nullptr;
    }
    m.epsilon = *eps;
    m.absorbed.push_back(divId);
    return &div;
}

/// After the normalised value: Mul by the scale, then Add of the bias when one fits. False when
/// no scale does.
bool matchAffine(const graph::Graph& g, ValueId normalised, const graph::TensorShape& x,
                 LayerNormMatch& m) {
    const graph::Node* mul = next(g, normalised, "Mul", 2, m.absorbed);
    if (mul == nullptr) {
        return false;
    }
    m.scale = otherOperand(*mul, normalised);
    const int64_t scaleCount = m.scale.valid() ? fitsLastAxis(g, m.scale, x) : 0;
    if (scaleCount == 0) {
        return false;
    }
    m.output = mul->outputs[0];
    std::vector<NodeId> withBias = m.absorbed;
    const graph::Node* add = next(g, m.output, "Add", 2, withBias);
    const ValueId bias = add != nullptr ? otherOperand(*add, m.output) : ValueId();
    // LayerNormalization indexes bias as it does scale.
    if (bias.valid() && fitsLastAxis(g, bias, x) == scaleCount) {
        m.bias = bias;
        m.output = add->outputs[0];
        m.absorbed = std::move(withBias);
    }
    return true;
}

} // namespace

std::optional<LayerNormMatch> matchDecomposedLayerNorm(const graph::Graph& g, NodeId head) {
    const graph::Node& mean = g.node(head);
    if (mean.inputs.empty() || !mean.inputs[0].valid()) {
        return std::nullopt;
    }
    LayerNormMatch m;
    m.input = mean.inputs[0];
    const graph::Value& x = g.value(m.input);
    if ((x.dtype != graph::DataType::Float && x.dtype != graph::DataType::Undefined) ||
        (x.shape.rankKnown && x.shape.rank() == 0)) {
        return std::nullopt;
    }
    // Exporters leave x's shape unknown behind a Reshape to computed dims (attention heads); the
    // executor checks the shapes and the dtype when the chain runs.
    const size_t rank = x.shape.rankKnown ? x.shape.rank() : 0;
    if (!reducesLastAxis(g, mean, rank)) {
        return std::nullopt;
    }
    const graph::Node* sub = next(g, mean.outputs[0], "Sub", 2, m.absorbed);
    if (sub == nullptr || sub->inputs[0] != m.input || sub->inputs[1] != mean.outputs[0]) {
        return std::nullopt;
    }
    const graph::Node* div = matchNormalised(g, sub->outputs[0], rank, m);
    if (div == nullptr || !matchAffine(g, div->outputs[0], x.shape, m)) {
        return std::nullopt;
    }
    return m;
}

bool layerNormChainRuns(const Tensor& x, const Tensor& scale, const Tensor* bias) {
    if (!x.defined() || x.dtype() != graph::DataType::Float || x.rank() == 0 || !scale.defined() ||
        scale.dtype() != graph::DataType::Float) {
        return false;
    }
    const int64_t count = scale.numElements();
    if (count != 1 && count != x.dim(-1)) {
        return false;
    }
    return bias == nullptr || (bias->defined() && bias->dtype() == graph::DataType::Float &&
                               bias->numElements() == count);
}

} // namespace qs::runtime
