// fold-batch-norm: an inference BatchNormalization right after a Conv (the Conv's only reader)
// becomes part of the Conv: with a[m] = gamma[m] / sqrt(var[m] + eps),
//   w'[m, ...] = w[m, ...] a[m],  b'[m] = (b[m] - mean[m]) a[m] + beta[m]
// (the "freeze BN" rewrite). Weights, bias and all BN parameters must be float initializers.

#include "core/pass/pass.h"

#include <algorithm>
#include <cmath>

namespace qs::pass {

namespace {

const graph::TensorData* floatConstant(const graph::Graph& g, graph::ValueId id) {
    if (!id.valid() || !g.value(id).isInitializer()) {
        return nullptr;
    }
    const graph::TensorData* data = g.value(id).initializer.get();
    return data->dtype() == graph::DataType::Float ? data : nullptr;
}

bool tryFold(graph::Graph& g, graph::NodeId bnId, PassContext& context) {
    const graph::Node& bn = g.node(bnId);
    if (bn.inputs.size() != 5 || bn.intAttr("training_mode", 0) != 0 || bn.outputs.size() != 1) {
        return false;
    }
    const graph::ValueId convOut = bn.inputs[0];
    const graph::NodeId convId = g.value(convOut).producer;
    if (!convId.valid() || g.node(convId).opType != "Conv" ||
        g.value(convOut).consumers.size() != 1) {
        return false;
    }
    // Folding would rename a graph output (the Conv's output takes the BN's place).
    const auto& outputs = g.outputs();
    if (std::find(outputs.begin(), outputs.end(), convOut) != outputs.end() ||
        std::find(outputs.begin(), outputs.end(), bn.outputs[0]) != outputs.end()) {
        return false;
    }
    const graph::Node& conv = g.node(convId);
    const graph::TensorData* w = floatConstant(g, conv.inputs[1]);
    const graph::TensorData* b =
        conv.inputs.size() > 2 ? floatConstant(g, conv.inputs[2]) : nullptr;
    const bool hasBias = conv.inputs.size() > 2 && conv.inputs[2].valid();
    const graph::TensorData* params[4];
    for (int i = 0; i < 4; ++i) {
        params[i] = floatConstant(g, bn.inputs[static_cast<size_t>(i) + 1]);
    }
    if (w == nullptr || (hasBias && b == nullptr) ||
        std::any_of(params, params + 4, [](const auto* p) { return p == nullptr; })) {
        return false;
    }
    const int64_t filters = w->dims()[0];
    if (std::any_of(params, params + 4,
                    [&](const auto* p) { return p->numElements() != filters; })) {
        return false;
    }
    const float eps = bn.floatAttr("epsilon", 1e-5F);
    const auto gamma = params[0]->as<float>();
    const auto beta = params[1]->as<float>();
    const auto mean = params[2]->as<float>();
    const auto var = params[3]->as<float>();
    const int64_t perFilter = w->numElements() / filters;
    std::vector<float> newW(w->as<float>().begin(), w->as<float>().end());
    std::vector<float> newB(static_cast<size_t>(filters));
    for (int64_t m = 0; m < filters; ++m) {
        const float a = gamma[m] / std::sqrt(var[m] + eps);
        for (int64_t k = 0; k < perFilter; ++k) {
            newW[static_cast<size_t>(m * perFilter + k)] *= a;
        }
        const float bias = b != nullptr ? b->as<float>()[m] : 0.0F;
        newB[static_cast<size_t>(m)] = (bias - mean[m]) * a + beta[m];
    }
    const std::string convName = conv.name;
    const std::string bnName = bn.name;
    const graph::ValueId bnOut = bn.outputs[0];
    const graph::ValueId wId =
        g.addInitializer(convName + "_bn_folded_weight",
                         graph::TensorData::fromValues<float>(graph::DataType::Float, w->dims(),
                                                              std::span<const float>(newW)));
    const graph::ValueId bId =
        g.addInitializer(convName + "_bn_folded_bias",
                         graph::TensorData::fromValues<float>(graph::DataType::Float, {filters},
                                                              std::span<const float>(newB)));
    g.setNodeInput(convId, 1, wId);
    g.setNodeInput(convId, 2, bId);
    g.removeNode(bnId);
    g.replaceAllUses(bnOut, convOut);
    context.log.push_back("folded BatchNormalization '" + bnName + "' into Conv '" + convName +
                          "'");
    return true;
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
