#include "pruning_test_models.h"

#include "core/graph/graph_builder.h"
#include "core/onnx/model_io.h"
#include "core/runtime/batching.h"
#include "core/runtime/executor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace qs::pruning::testing {

using graph::GraphBuilder;
using graph::ValueId;

namespace {

ValueId weight(GraphBuilder& b, const std::string& name, const std::vector<int64_t>& dims,
               uint32_t seed, float mean = 0.0F, float scale = 0.5F) {
    int64_t count = 1;
    for (const int64_t d : dims) {
        count *= d;
    }
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(mean, scale);
    std::vector<float> values(static_cast<size_t>(count));
    for (float& v : values) {
        v = normal(rng);
    }
    return b.weight(name, dims, values);
}

/// Positive values (BN variance).
ValueId positive(GraphBuilder& b, const std::string& name, int64_t count, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> uniform(0.5F, 1.5F);
    std::vector<float> values(static_cast<size_t>(count));
    for (float& v : values) {
        v = uniform(rng);
    }
    return b.weight(name, {count}, values);
}

graph::AttributeList pads1() {
    return {{"pads", std::vector<int64_t>{1, 1, 1, 1}, {}}};
}

ValueId conv(GraphBuilder& b, const std::string& name, ValueId x, int64_t in, int64_t out,
             int64_t k, bool bias, uint32_t seed) {
    std::vector<ValueId> inputs = {x, weight(b, name + "_w", {out, in, k, k}, seed)};
    if (bias) {
        inputs.push_back(weight(b, name + "_b", {out}, seed + 100));
    }
    return b.op("Conv", name, inputs, k == 3 ? pads1() : graph::AttributeList{});
}

} // namespace

graph::Graph mctConv() {
    GraphBuilder b(13);
    const ValueId x = b.input("x", {1, 1, 6, 6});
    b.output(conv(b, "conv", x, 1, 2, 3, true, 1));
    return withShapes(b.graph());
}

graph::Graph chainModel() {
    GraphBuilder b(13);
    const ValueId x = b.input("x", {-1, 3, 8, 8});
    ValueId h = conv(b, "conv1", x, 3, 8, 3, true, 1);
    h = b.op("BatchNormalization", "bn",
             {h, weight(b, "bn_scale", {8}, 2, 1.0F, 0.3F), weight(b, "bn_bias", {8}, 3),
              weight(b, "bn_mean", {8}, 4), positive(b, "bn_var", 8, 5)});
    h = b.op("PRelu", "prelu", {h, weight(b, "prelu_slope", {8, 1, 1}, 6, 0.2F, 0.1F)});
    h = b.op("Mul", "mul", {h, weight(b, "mul_c", {1, 8, 1, 1}, 7, 1.0F, 0.3F)});
    const float half = 0.5F;
    h = b.op("Add", "add", {h, b.weight("add_c", {}, std::span<const float>(&half, 1))});
    h = b.op("Relu", "relu1", {h});
    h = conv(b, "conv2", h, 8, 6, 3, false, 8);
    h = b.op("Relu", "relu2", {h});
    h = b.op("MaxPool", "pool", {h},
             {{"kernel_shape", std::vector<int64_t>{2, 2}, {}},
              {"strides", std::vector<int64_t>{2, 2}, {}}});
    h = conv(b, "conv3", h, 6, 4, 1, true, 9);
    h = b.op("Tanh", "tanh", {h});
    h = b.op("GlobalAveragePool", "gap", {h});
    h = b.op("Flatten", "flatten", {h}, {{"axis", int64_t{1}, {}}});
    b.output(b.op("Gemm", "fc", {h, weight(b, "fc_w", {4, 3}, 10), weight(b, "fc_b", {3}, 11)}));
    return withShapes(b.graph());
}

graph::Graph mlpModel() {
    GraphBuilder b(13);
    const ValueId x = b.input("x", {-1, 6});
    ValueId h = b.op("Gemm", "fc1", {x, weight(b, "w1", {6, 16}, 1), weight(b, "b1", {16}, 2)});
    h = b.op("Relu", "relu", {h});
    h = b.op("Gemm", "fc2", {h, weight(b, "w2", {8, 16}, 3), weight(b, "b2", {8}, 4)},
             {{"transB", int64_t{1}, {}}});
    h = b.op("Sigmoid", "sigmoid", {h});
    h = b.op("MatMul", "mm", {h, weight(b, "wm", {8, 4}, 5)});
    b.output(b.op("Add", "bias", {h, weight(b, "bm", {4}, 6)}));
    return withShapes(b.graph());
}

graph::Graph residualModel() {
    GraphBuilder b(13);
    const ValueId x = b.input("x", {-1, 4, 6, 6});
    ValueId h = conv(b, "conv1", x, 4, 8, 3, true, 1);
    h = b.op("Relu", "relu1", {h});
    h = conv(b, "conv2", h, 8, 4, 3, true, 2);
    h = b.op("Add", "residual", {h, x});
    b.output(b.op("Relu", "relu2", {h}));
    return withShapes(b.graph());
}

graph::Graph concatModel() {
    GraphBuilder b(13);
    const ValueId x = b.input("x", {-1, 4, 6, 6});
    const ValueId a = b.op("Relu", "relu", {conv(b, "conv1", x, 4, 8, 3, true, 1)});
    const ValueId c = conv(b, "conv2", x, 4, 8, 3, true, 2);
    const ValueId cat = b.op("Concat", "concat", {a, c}, {{"axis", int64_t{1}, {}}});
    b.output(conv(b, "conv3", cat, 16, 4, 1, true, 3));
    return withShapes(b.graph());
}

graph::Graph fanOutModel() {
    GraphBuilder b(13);
    const ValueId x = b.input("x", {-1, 4, 6, 6});
    const ValueId r = b.op("Relu", "relu", {conv(b, "conv1", x, 4, 8, 3, true, 1)});
    const ValueId c2 = conv(b, "conv2", r, 8, 4, 3, true, 2);
    const ValueId c3 = conv(b, "conv3", r, 8, 4, 3, true, 3);
    b.output(b.op("Add", "add", {c2, c3}));
    return withShapes(b.graph());
}

graph::Graph flattenGemmModel() {
    GraphBuilder b(13);
    const ValueId x = b.input("x", {-1, 2, 4, 4});
    ValueId h = b.op("Relu", "relu", {conv(b, "conv", x, 2, 3, 3, true, 1)});
    h = b.op("Flatten", "flatten", {h}, {{"axis", int64_t{1}, {}}});
    b.output(b.op("Gemm", "fc", {h, weight(b, "fc_w", {48, 5}, 2)}));
    return withShapes(b.graph());
}

graph::Graph gapGemmModel() {
    GraphBuilder b(13);
    const ValueId x = b.input("x", {-1, 3, 6, 6});
    ValueId h = conv(b, "conv", x, 3, 8, 3, true, 1);
    h = b.op("BatchNormalization", "bn",
             {h, weight(b, "bn_scale", {8}, 2, 1.0F, 0.3F), weight(b, "bn_bias", {8}, 3),
              weight(b, "bn_mean", {8}, 4), positive(b, "bn_var", 8, 5)});
    h = b.op("Relu", "relu", {h});
    h = b.op("GlobalAveragePool", "gap", {h});
    h = b.op("Flatten", "flatten", {h}, {{"axis", int64_t{1}, {}}});
    b.output(b.op("Gemm", "fc", {h, weight(b, "fc_w", {5, 8}, 6), weight(b, "fc_b", {5}, 7)},
                  {{"transB", int64_t{1}, {}}}));
    return withShapes(b.graph());
}

graph::Graph depthwiseModel() {
    GraphBuilder b(13);
    const ValueId x = b.input("x", {-1, 4, 6, 6});
    ValueId h = conv(b, "conv1", x, 4, 8, 1, true, 1);
    graph::AttributeList attrs = pads1();
    attrs.push_back({"group", int64_t{8}, {}});
    h = b.op("Conv", "dw", {h, weight(b, "dw_w", {8, 1, 3, 3}, 2)}, attrs);
    h = b.op("Relu", "relu", {h});
    b.output(conv(b, "conv2", h, 8, 4, 1, true, 3));
    return withShapes(b.graph());
}

graph::Graph withShapes(const graph::Graph& graph) {
    const std::string bytes = onnx::serializeModel(graph).value();
    return onnx::importModelFromBytes(bytes, onnx::ImportOptions{}).value();
}

runtime::Tensor randomInputs(const graph::Graph& graph, int64_t count, uint64_t seed) {
    const graph::Value& input = graph.value(graph.runtimeInputs()[0]);
    const runtime::Shape shape = runtime::concreteInputShape(input, count).value();
    return runtime::randomNormal(shape, seed);
}

std::vector<runtime::Tensor> runGraph(const graph::Graph& graph, const runtime::Tensor& x) {
    auto executor = runtime::Executor::create(graph);
    EXPECT_TRUE(executor.ok()) << (executor.ok() ? "" : executor.error().toString());
    auto outputs = executor.value().run(std::span(&x, 1));
    EXPECT_TRUE(outputs.ok()) << (outputs.ok() ? "" : outputs.error().toString());
    return outputs.value();
}

double maxAbsDiff(const runtime::Tensor& a, const runtime::Tensor& b) {
    EXPECT_EQ(a.shape(), b.shape());
    double diff = 0.0;
    for (int64_t i = 0; i < a.numElements() && i < b.numElements(); ++i) {
        diff = std::max(diff, std::abs(static_cast<double>(a.data<float>()[i]) -
                                       static_cast<double>(b.data<float>()[i])));
    }
    return diff;
}

} // namespace qs::pruning::testing
