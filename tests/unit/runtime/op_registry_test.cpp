// Registry-wide op tests (the ncnn oracle, automated): for every registered op and each sample it
// offers, the fast kernel must match the plain-loop reference, and the vector-Jacobian product
// must match central finite differences of a random projection of the outputs.

#include "core/runtime/op.h"
#include "core/runtime/op_util.h"

#include <gtest/gtest.h>

#include <cmath>

namespace qs::runtime {
namespace {

// Finite differences in float32: step 1e-2 keeps rounding noise (~1e-7 / 1e-2) well under the
// tolerance, and the O(h^2) truncation error of central differences stays below 1e-3 for the
// smooth samples the ops provide (their inputs stay away from kinks).
constexpr float kStep = 1e-2F;
constexpr double kGradAtol = 2e-3;
constexpr double kGradRtol = 2e-2;
constexpr int kMaxProbesPerInput = 48;

std::vector<std::string> opNames() {
    std::vector<std::string> names;
    for (const OpDef* def : allOps()) {
        names.emplace_back(def->opType);
    }
    return names;
}

graph::Node makeNode(const OpDef& def, const OpSample& sample) {
    graph::Node node;
    node.name = "sample";
    node.opType = std::string(def.opType);
    node.domain = std::string(def.domain);
    node.attributes = sample.attributes;
    node.outputs.resize(static_cast<size_t>(sample.numOutputs));
    return node;
}

class OpRegistryTest : public ::testing::TestWithParam<std::string> {
protected:
    const OpDef& def() const { return *findOp(GetParam()); }

    std::vector<OpSample> samples() const {
        std::mt19937 rng(1234);
        return def().samples != nullptr ? def().samples(rng) : std::vector<OpSample>{};
    }
};

TEST_P(OpRegistryTest, HasSamples) {
    EXPECT_NE(def().samples, nullptr) << GetParam() << " offers no samples";
    EXPECT_FALSE(samples().empty());
}

TEST_P(OpRegistryTest, FastKernelMatchesReference) {
    if (def().reference == nullptr) {
        GTEST_SKIP() << "the kernel is the plain loop";
    }
    for (const OpSample& sample : samples()) {
        SCOPED_TRACE(sample.label);
        const graph::Node node = makeNode(def(), sample);
        const OpContext ctx{node, sample.inputs};
        auto fast = def().forward(ctx);
        auto ref = def().reference(ctx);
        ASSERT_TRUE(fast.ok()) << fast.error().toString();
        ASSERT_TRUE(ref.ok()) << ref.error().toString();
        ASSERT_EQ(fast->size(), ref->size());
        for (size_t o = 0; o < fast->size(); ++o) {
            ASSERT_EQ((*fast)[o].shape(), (*ref)[o].shape());
            const double floor = def().roundingOfRms * rootMeanSquare((*ref)[o]);
            for (int64_t i = 0; i < (*fast)[o].numElements(); ++i) {
                const double a = (*fast)[o].elementAsDouble(i);
                const double b = (*ref)[o].elementAsDouble(i);
                ASSERT_NEAR(a, b, 1e-5 + 1e-4 * std::abs(b) + floor)
                    << "output " << o << " element " << i;
            }
        }
    }
}

/// sum_k <r_k, y_k> for fixed random projections r_k of the float outputs, through the op's
/// reference loop where it has one: the VJP is checked against the op's definition, and a fast
/// kernel that rounds more (roundingOfRms) would put its noise into the differences.
double projectedLoss(const OpDef& def, const graph::Node& node, const std::vector<Tensor>& inputs,
                     const std::vector<Tensor>& projections) {
    const OpContext ctx{node, inputs};
    auto outputs = def.reference != nullptr ? def.reference(ctx) : def.forward(ctx);
    QS_CHECK(outputs.ok(), "forward failed in the finite-difference probe");
    double loss = 0.0;
    for (size_t o = 0; o < projections.size(); ++o) {
        if (!projections[o].defined()) {
            continue;
        }
        const float* y = (*outputs)[o].data<float>();
        const float* r = projections[o].data<float>();
        for (int64_t i = 0; i < projections[o].numElements(); ++i) {
            loss += static_cast<double>(y[i]) * static_cast<double>(r[i]);
        }
    }
    return loss;
}

TEST_P(OpRegistryTest, VjpMatchesFiniteDifferences) {
    if (def().vjp == nullptr) {
        GTEST_SKIP() << "not differentiable";
    }
    std::mt19937 rng(99);
    for (const OpSample& sample : samples()) {
        SCOPED_TRACE(sample.label);
        const graph::Node node = makeNode(def(), sample);
        const OpContext ctx{node, sample.inputs};
        auto outputs = def().forward(ctx);
        ASSERT_TRUE(outputs.ok()) << outputs.error().toString();
        std::vector<Tensor> projections;
        for (const Tensor& out : *outputs) {
            projections.push_back(
                out.dtype() == graph::DataType::Float ? randomTensor(rng, out.shape()) : Tensor());
        }
        auto grads = def().vjp(ctx, *outputs, projections);
        ASSERT_TRUE(grads.ok()) << grads.error().toString();
        // Handed the output gradients to reuse (as the executor does when nothing else holds
        // them), the VJP must give the same gradients.
        std::vector<Tensor> handedOver;
        for (const Tensor& projection : projections) {
            handedOver.push_back(projection.defined() ? projection.clone() : Tensor());
        }
        OpContext reusing{node, sample.inputs};
        reusing.reusableOutputGrads = ~uint64_t{0};
        auto reused = def().vjp(reusing, *outputs, handedOver);
        ASSERT_TRUE(reused.ok()) << reused.error().toString();
        ASSERT_EQ(reused->size(), grads->size());
        for (size_t i = 0; i < grads->size(); ++i) {
            ASSERT_EQ((*reused)[i].defined(), (*grads)[i].defined()) << "input " << i;
            for (int64_t e = 0; (*grads)[i].defined() && e < (*grads)[i].numElements(); ++e) {
                EXPECT_EQ((*reused)[i].elementAsDouble(e), (*grads)[i].elementAsDouble(e))
                    << "input " << i << " element " << e;
            }
        }
        std::vector<int> probeInputs = sample.gradInputs;
        if (probeInputs.empty()) {
            for (size_t i = 0; i < sample.inputs.size(); ++i) {
                if (sample.inputs[i].defined() &&
                    sample.inputs[i].dtype() == graph::DataType::Float) {
                    probeInputs.push_back(static_cast<int>(i));
                }
            }
        }
        for (const int inputIndex : probeInputs) {
            const auto idx = static_cast<size_t>(inputIndex);
            ASSERT_LT(idx, grads->size());
            const Tensor& grad = (*grads)[idx];
            ASSERT_TRUE(grad.defined()) << "no gradient for input " << inputIndex;
            ASSERT_EQ(grad.shape(), sample.inputs[idx].shape());
            const int64_t count = sample.inputs[idx].numElements();
            const int64_t stride = std::max<int64_t>(1, count / kMaxProbesPerInput);
            for (int64_t e = 0; e < count; e += stride) {
                std::vector<Tensor> perturbed = sample.inputs;
                perturbed[idx] = sample.inputs[idx].clone();
                float* value = perturbed[idx].mutableData<float>() + e;
                const float original = *value;
                *value = original + kStep;
                const double up = projectedLoss(def(), node, perturbed, projections);
                *value = original - kStep;
                const double down = projectedLoss(def(), node, perturbed, projections);
                const double numeric = (up - down) / (2.0 * static_cast<double>(kStep));
                const double analytic = grad.elementAsDouble(e);
                EXPECT_NEAR(analytic, numeric, kGradAtol + kGradRtol * std::abs(numeric))
                    << "input " << inputIndex << " element " << e;
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(AllOps, OpRegistryTest, ::testing::ValuesIn(opNames()),
                         [](const auto& info) { return info.param; });

TEST(OpRegistry, FindsOpsAndRejectsUnknown) {
    EXPECT_NE(findOp("Relu"), nullptr);
    EXPECT_NE(findOp("Relu", "ai.onnx"), nullptr);
    EXPECT_EQ(findOp("NoSuchOp"), nullptr);
    EXPECT_EQ(findOp("Relu", "com.example"), nullptr);
}

} // namespace
} // namespace qs::runtime
