#include "tests/unit/compression/tiny_llm.h"

#include "core/graph/graph_builder.h"

#include <random>
#include <vector>

namespace qs::testing {

graph::Graph makeTinyLlm(const TinyLlmShape& shape, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0F, 1.0F);
    auto randomWeight = [&](int64_t rows, int64_t cols, float spread) {
        std::vector<float> values(static_cast<size_t>(rows * cols));
        for (float& value : values) {
            value = normal(rng) * spread;
        }
        return values;
    };
    graph::GraphBuilder b(13, 8);
    const auto ids = b.input("input_ids", {1, shape.tokens}, graph::DataType::Int64);
    const auto embedTable = randomWeight(shape.vocab, shape.hidden, 1.0F);
    const auto up = randomWeight(shape.hidden, shape.ffn, 0.1F);
    const auto down = randomWeight(shape.ffn, shape.hidden, 0.05F);
    const auto head = randomWeight(shape.hidden, shape.vocab, 0.1F);
    const auto embed = b.weight("embed.weight", {shape.vocab, shape.hidden}, embedTable);
    const auto x = b.op("Gather", "embed", {embed, ids});
    const auto upW = b.weight("mlp.up.weight", {shape.hidden, shape.ffn}, up);
    const auto h = b.op("Relu", "mlp.act", {b.op("MatMul", "mlp.up", {x, upW})});
    const auto downW = b.weight("mlp.down.weight", {shape.ffn, shape.hidden}, down);
    const auto y = b.op("Add", "residual", {x, b.op("MatMul", "mlp.down", {h, downW})});
    const auto mean = b.op("ReduceMean", "norm.mean", {y},
                           {{"axes", std::vector<int64_t>{-1}}, {"keepdims", int64_t{1}}});
    const auto centered = b.op("Sub", "norm.center", {y, mean});
    const auto headW = b.weight("lm_head.weight", {shape.hidden, shape.vocab}, head);
    const auto logits = b.op("MatMul", "lm_head", {centered, headW});
    const auto probs = b.op("Softmax", "probs", {logits}, {{"axis", int64_t{-1}}});
    b.output(probs, graph::DataType::Float, {1, shape.tokens, shape.vocab});
    return b.take();
}

} // namespace qs::testing
