#include "hessian_test_models.h"

#include "core/graph/graph_builder.h"
#include "core/runtime/batching.h"

#include <random>

namespace qs::hessian::testing {

using graph::GraphBuilder;
using graph::ValueId;

namespace {

std::vector<float> randomValues(int64_t count, uint32_t seed, float scale = 0.7F) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0F, scale);
    std::vector<float> values(static_cast<size_t>(count));
    for (float& v : values) {
        v = normal(rng);
    }
    return values;
}

ValueId weight(GraphBuilder& b, const std::string& name, const std::vector<int64_t>& dims,
               uint32_t seed) {
    int64_t count = 1;
    for (const int64_t d : dims) {
        count *= d;
    }
    const std::vector<float> values = randomValues(count, seed);
    return b.weight(name, dims, values);
}

ValueId linearBody(GraphBuilder& b) {
    const ValueId x = b.input("x", {-1, 4});
    const ValueId h = b.op("Gemm", "fc1", {x, weight(b, "w1", {4, 5}, 1), weight(b, "b1", {5}, 2)});
    return b.op("Gemm", "fc2", {h, weight(b, "w2", {3, 5}, 3), weight(b, "b2", {3}, 4)},
                {{"transB", int64_t{1}, {}}});
}

} // namespace

graph::Graph linearModel() {
    GraphBuilder b(13);
    b.output(linearBody(b));
    return b.take();
}

graph::Graph linearWithSoftmax(bool argmax) {
    GraphBuilder b(13);
    const ValueId logits = linearBody(b);
    b.output(b.op("Softmax", "softmax", {logits}, {{"axis", int64_t{1}, {}}}));
    if (argmax) {
        b.output(b.op("ArgMax", "argmax", {logits}, {{"axis", int64_t{1}, {}}}),
                 graph::DataType::Int64);
    }
    return b.take();
}

graph::Graph convReluGemm() {
    GraphBuilder b(13);
    const ValueId x = b.input("x", {-1, 2, 5, 5});
    const ValueId c =
        b.op("Conv", "conv", {x, weight(b, "wc", {3, 2, 3, 3}, 5), weight(b, "bc", {3}, 6)},
             {{"pads", std::vector<int64_t>{1, 1, 1, 1}, {}}});
    const ValueId r = b.op("Relu", "relu", {c});
    const ValueId f = b.op("Flatten", "flatten", {r}, {{"axis", int64_t{1}, {}}});
    b.output(b.op("Gemm", "fc", {f, weight(b, "wf", {75, 4}, 7)}));
    return b.take();
}

graph::Graph residualBlock() {
    GraphBuilder b(13);
    const ValueId x = b.input("x", {-1, 3, 6, 6});
    const ValueId c1 = b.op("Conv", "conv1", {x, weight(b, "w1", {3, 3, 3, 3}, 8)},
                            {{"pads", std::vector<int64_t>{1, 1, 1, 1}, {}}});
    const ValueId r1 = b.op("Relu", "relu1", {c1});
    const ValueId c2 =
        b.op("Conv", "conv2", {r1, weight(b, "w2", {3, 3, 1, 1}, 9), weight(b, "b2", {3}, 10)});
    const ValueId s = b.op("Add", "add", {c2, x});
    const ValueId r2 = b.op("Relu", "relu2", {s});
    const ValueId p = b.op("GlobalAveragePool", "gap", {r2});
    const ValueId f = b.op("Flatten", "flatten", {p}, {{"axis", int64_t{1}, {}}});
    const ValueId m = b.op("MatMul", "mm", {f, weight(b, "wm", {3, 4}, 11)});
    b.output(b.op("Tanh", "tanh", {m}));
    return b.take();
}

graph::Graph sequenceFirst() {
    GraphBuilder b(14);
    const ValueId x = b.input("x", {-1, 4, 3});
    const std::vector<int64_t> swap{1, 0, 2};
    const ValueId t = b.op("Transpose", "to_sequence", {x}, {{"perm", swap, {}}});
    const ValueId m = b.op("MatMul", "mm_seq", {t, weight(b, "ws", {3, 2}, 12)});
    const ValueId back = b.op("Transpose", "to_batch", {m}, {{"perm", swap, {}}});
    const ValueId o = b.op("MatMul", "mm_out", {back, weight(b, "wo", {2, 2}, 13)});
    b.output(b.op("Tanh", "tanh", {o}));
    return b.take();
}

runtime::Tensor randomInputs(const graph::Graph& graph, int64_t count, uint64_t seed) {
    const graph::Value& input = graph.value(graph.runtimeInputs()[0]);
    const runtime::Shape shape = runtime::concreteInputShape(input, count).value();
    return runtime::randomNormal(shape, seed);
}

runtime::Tensor sampleOf(const runtime::Tensor& x, int64_t i) {
    return runtime::sliceBatch(x, i, i + 1);
}

double exactFrobenius(const runtime::Executor& executor, const runtime::Tensor& x,
                      const std::string& tensor) {
    const graph::Graph& g = executor.graph();
    const ValueId target = *g.findValue(tensor);
    const runtime::ForwardTrace trace = executor.forwardWithTrace(std::span(&x, 1)).value();
    double total = 0.0;
    for (const ValueId out : g.outputs()) {
        const runtime::Tensor& y = trace.values[out.index()];
        for (int64_t d = 0; d < y.numElements(); ++d) {
            runtime::Tensor seed = runtime::Tensor::zeros(graph::DataType::Float, y.shape());
            seed.mutableData<float>()[d] = 1.0F;
            const std::pair<ValueId, runtime::Tensor> seeds{out, seed};
            const auto grads =
                executor.backward(trace, std::span(&seeds, 1), std::span(&target, 1));
            const runtime::Tensor& g2 = grads.value()[target.index()];
            for (int64_t i = 0; g2.defined() && i < g2.numElements(); ++i) {
                total += static_cast<double>(g2.data<float>()[i]) * g2.data<float>()[i];
            }
        }
    }
    return total;
}

} // namespace qs::hessian::testing
