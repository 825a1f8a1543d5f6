// Writes the bundled demo model: a small, real-shaped CNN (stem conv, depthwise-separable blocks
// with residual Adds, a two-branch Concat, a squeeze-excitation gate, MaxPool,
// GlobalAveragePool, Gemm head). Weights are seeded pseudo-random, so the file is reproducible:
//   qs_make_demo_model resources/models/demo_cnn.onnx

#include "core/graph/graph_builder.h"
#include "core/onnx/model_io.h"

#include <cmath>
#include <cstdio>
#include <random>
#include <string>

namespace {
using qs::graph::AttributeList;
using qs::graph::GraphBuilder;
using qs::graph::ValueId;

class DemoBuilder {
public:
    ValueId build() {
        const ValueId x = m_b.input("input", {-1, 3, 96, 96});
        ValueId y = convBnAct("/stem", x, 3, 16, 3, 2, 1, "Relu");
        y = m_b.op("MaxPool", "/stem/MaxPool", {y},
                   {{"kernel_shape", ints({2, 2})}, {"strides", ints({2, 2})}});
        y = residualBlock("/block1", y, 16, "Clip");
        y = expandBlock("/block2", y, 16, 32);
        y = residualBlock("/block3", y, 32, "HardSwish");
        y = twoBranchConcat("/mix", y, 32);
        y = squeezeExcite("/se", y, 32, 8);
        y = convBnAct("/head", y, 32, 64, 1, 1, 1, "Relu");
        y = m_b.op("GlobalAveragePool", "/pool/GlobalAveragePool", {y});
        y = m_b.op("Flatten", "/pool/Flatten", {y}, {{"axis", int64_t{1}}});
        const ValueId w = weight("fc.weight", {10, 64}, 64);
        const ValueId bias = weight("fc.bias", {10}, 0);
        y = m_b.op("Gemm", "/fc/Gemm", {y, w, bias},
                   {{"alpha", 1.0F}, {"beta", 1.0F}, {"transB", int64_t{1}}});
        return y;
    }

    GraphBuilder& builder() { return m_b; }

private:
    static qs::graph::AttributeValue ints(std::vector<int64_t> v) { return v; }

    /// He-normal weights (fanIn > 0) or small uniform values (fanIn == 0).
    ValueId weight(const std::string& name, const std::vector<int64_t>& dims, int64_t fanIn) {
        int64_t count = 1;
        for (const int64_t d : dims) {
            count *= d;
        }
        std::vector<float> values(static_cast<size_t>(count));
        const float stddev = fanIn > 0 ? std::sqrt(2.0F / static_cast<float>(fanIn)) : 0.05F;
        std::normal_distribution<float> normal(0.0F, stddev);
        for (float& v : values) {
            v = normal(m_rng);
        }
        return m_b.weight(name, dims, values);
    }

    ValueId uniform(const std::string& name, int64_t size, float lo, float hi) {
        std::uniform_real_distribution<float> dist(lo, hi);
        std::vector<float> values(static_cast<size_t>(size));
        for (float& v : values) {
            v = dist(m_rng);
        }
        return m_b.weight(name, {size}, values);
    }

    ValueId conv(const std::string& scope, ValueId x, int64_t cin, int64_t cout, int64_t k,
                 int64_t stride, int64_t group, bool bias) {
        const ValueId w = weight(scope + ".weight", {cout, cin / group, k, k}, cin / group * k * k);
        std::vector<ValueId> inputs = {x, w};
        if (bias) {
            inputs.push_back(weight(scope + ".bias", {cout}, 0));
        }
        const int64_t pad = k / 2;
        return m_b.op("Conv", scope + "/Conv", inputs,
                      {{"dilations", ints({1, 1})},
                       {"group", group},
                       {"kernel_shape", ints({k, k})},
                       {"pads", ints({pad, pad, pad, pad})},
                       {"strides", ints({stride, stride})}});
    }

    ValueId batchNorm(const std::string& scope, ValueId x, int64_t channels) {
        const ValueId gamma = uniform(scope + ".bn.weight", channels, 0.5F, 1.5F);
        const ValueId beta = uniform(scope + ".bn.bias", channels, -0.1F, 0.1F);
        const ValueId mean = uniform(scope + ".bn.running_mean", channels, -0.1F, 0.1F);
        const ValueId var = uniform(scope + ".bn.running_var", channels, 0.5F, 1.5F);
        return m_b.op("BatchNormalization", scope + "/BatchNormalization",
                      {x, gamma, beta, mean, var}, {{"epsilon", 1e-5F}, {"momentum", 0.9F}});
    }

    ValueId activation(const std::string& scope, ValueId x, const std::string& kind) {
        if (kind == "Clip") {
            const ValueId lo = m_b.weight(scope + ".clip_min", {}, std::vector<float>{0.0F});
            const ValueId hi = m_b.weight(scope + ".clip_max", {}, std::vector<float>{6.0F});
            return m_b.op("Clip", scope + "/Clip", {x, lo, hi});
        }
        if (kind == "HardSwish") {
            // Opset 13 has no HardSwish: exporters write x * HardSigmoid(x) with alpha 1/6.
            const ValueId gate = m_b.op("HardSigmoid", scope + "/HardSigmoid", {x},
                                        {{"alpha", 1.0F / 6.0F}, {"beta", 0.5F}});
            return m_b.op("Mul", scope + "/Mul", {x, gate});
        }
        return m_b.op(kind, scope + "/" + kind, {x});
    }

    ValueId convBnAct(const std::string& scope, ValueId x, int64_t cin, int64_t cout, int64_t k,
                      int64_t stride, int64_t group, const std::string& act) {
        ValueId y = conv(scope, x, cin, cout, k, stride, group, false);
        y = batchNorm(scope, y, cout);
        return act.empty() ? y : activation(scope, y, act);
    }

    /// Depthwise 3x3 + pointwise 1x1 with a residual Add.
    ValueId residualBlock(const std::string& scope, ValueId x, int64_t channels,
                          const std::string& act) {
        ValueId y = convBnAct(scope + "/dw", x, channels, channels, 3, 1, channels, act);
        y = convBnAct(scope + "/pw", y, channels, channels, 1, 1, 1, "");
        return m_b.op("Add", scope + "/Add", {x, y});
    }

    /// Pointwise expansion, strided depthwise, pointwise projection.
    ValueId expandBlock(const std::string& scope, ValueId x, int64_t cin, int64_t cout) {
        ValueId y = convBnAct(scope + "/expand", x, cin, cout, 1, 1, 1, "Relu");
        y = convBnAct(scope + "/dw", y, cout, cout, 3, 2, cout, "Relu");
        return convBnAct(scope + "/project", y, cout, cout, 1, 1, 1, "");
    }

    ValueId twoBranchConcat(const std::string& scope, ValueId x, int64_t channels) {
        ValueId a = conv(scope + "/branch1x1", x, channels, channels / 2, 1, 1, 1, true);
        a = activation(scope + "/branch1x1", a, "Relu");
        ValueId b = conv(scope + "/branch3x3", x, channels, channels / 2, 3, 1, 1, true);
        b = activation(scope + "/branch3x3", b, "Relu");
        return m_b.op("Concat", scope + "/Concat", {a, b}, {{"axis", int64_t{1}}});
    }

    /// Squeeze-excitation: GlobalAveragePool -> 1x1 reduce -> Relu -> 1x1 expand -> Sigmoid -> Mul.
    ValueId squeezeExcite(const std::string& scope, ValueId x, int64_t channels, int64_t reduced) {
        ValueId s = m_b.op("GlobalAveragePool", scope + "/GlobalAveragePool", {x});
        s = conv(scope + "/fc1", s, channels, reduced, 1, 1, 1, true);
        s = activation(scope + "/fc1", s, "Relu");
        s = conv(scope + "/fc2", s, reduced, channels, 1, 1, 1, true);
        s = activation(scope + "/fc2", s, "Sigmoid");
        return m_b.op("Mul", scope + "/Mul", {x, s});
    }

    GraphBuilder m_b{13, 7};
    std::mt19937 m_rng{20261129};
};

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s OUT.onnx\n", argv[0]);
        return 2;
    }
    DemoBuilder demo;
    const ValueId logits = demo.build();
    qs::graph::Graph& graph = demo.builder().graph();
    graph.renameValue(logits, "logits");
    demo.builder().output(logits, qs::graph::DataType::Float, {-1, 10});
    graph.metadata().graphName = "demo_cnn";
    graph.metadata().docString = "Quantscope demo CNN (seeded random weights)";
    if (auto checked = qs::onnx::checkModel(graph); !checked.ok()) {
        std::fprintf(stderr, "error: %s\n", checked.error().toString().c_str());
        return 1;
    }
    auto written = qs::onnx::exportModel(graph, argv[1]);
    if (!written.ok()) {
        std::fprintf(stderr, "error: %s\n", written.error().toString().c_str());
        return 1;
    }
    // Re-import (runs shape inference) and write again so every value carries its shape.
    auto reloaded = qs::onnx::importModel(argv[1]);
    if (!reloaded.ok()) {
        std::fprintf(stderr, "error: %s\n", reloaded.error().toString().c_str());
        return 1;
    }
    written = qs::onnx::exportModel(*reloaded, argv[1]);
    if (!written.ok()) {
        std::fprintf(stderr, "error: %s\n", written.error().toString().c_str());
        return 1;
    }
    return 0;
}
