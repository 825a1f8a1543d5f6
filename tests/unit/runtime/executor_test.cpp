#include "core/graph/graph_builder.h"
#include "core/runtime/batching.h"
#include "core/runtime/executor.h"
#include "core/runtime/op_util.h"
#include "core/runtime/packed_gemm.h"
#include "core/runtime/parallel.h"
#include "core/support/assert.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <set>

namespace qs::runtime {
namespace {

using graph::DataType;
using graph::Graph;
using graph::NodeId;
using graph::TensorShape;
using graph::ValueId;

/// x -> Relu -> Add(w) -> Relu -> y, with w an initializer.
Graph makeChain() {
    Graph g;
    const ValueId x = g.addValue("x", DataType::Float, TensorShape::ofDims({2, 3}));
    const std::vector<float> weights = {1, -1, 2, -2, 3, -3};
    const ValueId w = g.addInitializer(
        "w", graph::TensorData::fromValues<float>(DataType::Float, {2, 3}, std::span(weights)));
    const ValueId a = g.addValue("a", DataType::Float);
    const ValueId b = g.addValue("b", DataType::Float);
    const ValueId y = g.addValue("y", DataType::Float);
    g.addInput(x);
    g.addNode("relu1", "Relu", {x}, {a});
    g.addNode("add", "Add", {a, w}, {b});
    g.addNode("relu2", "Relu", {b}, {y});
    g.addOutput(y);
    return g;
}

TEST(Executor, RunsAChain) {
    auto exec = Executor::create(makeChain());
    ASSERT_TRUE(exec.ok()) << exec.error().toString();
    const Tensor x = Tensor::fromVector<float>({2, 3}, {-1, 1, -1, 1, -1, 1});
    RunStats stats;
    auto out = exec->run(std::span(&x, 1), &stats);
    ASSERT_TRUE(out.ok()) << out.error().toString();
    ASSERT_EQ(out->size(), 1U);
    const std::vector<float> expected = {1, 0, 2, 0, 3, 0};
    for (size_t i = 0; i < expected.size(); ++i) {
        EXPECT_FLOAT_EQ((*out)[0].data<float>()[i], expected[i]);
    }
    // At most input + two activations alive at once (24 bytes each).
    EXPECT_GT(stats.peakActivationBytes, 0U);
    EXPECT_LE(stats.peakActivationBytes, 3U * 24U);
}

TEST(Executor, ReportsUnsupportedOpBeforeRunning) {
    Graph g = makeChain();
    const ValueId z = g.addValue("z", DataType::Float);
    g.addNode("mystery_node", "FancyOp", {*g.findValue("y")}, {z});
    auto exec = Executor::create(std::move(g));
    ASSERT_FALSE(exec.ok());
    EXPECT_EQ(exec.error().code(), Errc::Unsupported);
    EXPECT_NE(exec.error().toString().find("unsupported op FancyOp (node 'mystery_node')"),
              std::string::npos)
        << exec.error().toString();
}

TEST(Executor, RejectsWrongInputShape) {
    auto exec = Executor::create(makeChain());
    ASSERT_TRUE(exec.ok());
    const Tensor x = Tensor::zeros(DataType::Float, {3, 2});
    auto out = exec->run(std::span(&x, 1));
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.error().code(), Errc::InvalidArgument);
}

TEST(Executor, BackwardThroughChain) {
    auto exec = Executor::create(makeChain());
    ASSERT_TRUE(exec.ok());
    // relu(x) + w = [1,1,2,1,3,1] > 0 everywhere, so dy/dx = 1 where x > 0 and 0 elsewhere.
    const Tensor x = Tensor::fromVector<float>({2, 3}, {-1, 2, -1, 3, -1, 4});
    auto trace = exec->forwardWithTrace(std::span(&x, 1));
    ASSERT_TRUE(trace.ok());
    const ValueId y = *exec->graph().findValue("y");
    const std::pair<ValueId, Tensor> seed{y, Tensor::fromVector<float>({2, 3}, {1, 1, 1, 1, 1, 1})};
    auto grads = exec->backward(*trace, std::span(&seed, 1));
    ASSERT_TRUE(grads.ok()) << grads.error().toString();
    const Tensor& dx = (*grads)[exec->graph().findValue("x")->index()];
    ASSERT_TRUE(dx.defined());
    const std::vector<float> expected = {0, 1, 0, 1, 0, 1};
    for (size_t i = 0; i < expected.size(); ++i) {
        EXPECT_FLOAT_EQ(dx.data<float>()[i], expected[i]);
    }
}

TEST(Executor, BackwardWithKeepSkipsGradientsNoKeptValueNeeds) {
    auto exec = Executor::create(makeChain());
    ASSERT_TRUE(exec.ok());
    const Tensor x = Tensor::fromVector<float>({2, 3}, {-1, 2, -1, 3, -1, 4});
    auto trace = exec->forwardWithTrace(std::span(&x, 1));
    ASSERT_TRUE(trace.ok());
    const graph::Graph& g = exec->graph();
    const std::pair<ValueId, Tensor> seed{*g.findValue("y"),
                                          Tensor::fromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6})};
    // Keeping b needs only relu2's VJP; relu1's (down to the graph input x) is skipped.
    const ValueId kept = *g.findValue("b");
    auto grads = exec->backward(*trace, std::span(&seed, 1), std::span(&kept, 1));
    ASSERT_TRUE(grads.ok()) << grads.error().toString();
    const Tensor& db = (*grads)[kept.index()];
    ASSERT_TRUE(db.defined());
    // b = relu(x) + w > 0 everywhere, so db is the seed.
    for (int64_t i = 0; i < 6; ++i) {
        EXPECT_FLOAT_EQ(db.data<float>()[i], static_cast<float>(i + 1));
    }
    EXPECT_FALSE((*grads)[g.findValue("x")->index()].defined());
    EXPECT_FALSE((*grads)[g.findValue("a")->index()].defined());
    // Keeping x still reaches it.
    const ValueId input = *g.findValue("x");
    auto all = exec->backward(*trace, std::span(&seed, 1), std::span(&input, 1));
    ASSERT_TRUE(all.ok());
    EXPECT_TRUE((*all)[input.index()].defined());
}

TEST(Executor, BackwardReturnsInitializerGradients) {
    auto exec = Executor::create(makeChain());
    ASSERT_TRUE(exec.ok());
    const Tensor x = Tensor::fromVector<float>({2, 3}, {-1, 2, -1, 3, -1, 4});
    auto trace = exec->forwardWithTrace(std::span(&x, 1));
    ASSERT_TRUE(trace.ok());
    const graph::Graph& g = exec->graph();
    const std::pair<ValueId, Tensor> seed{*g.findValue("y"),
                                          Tensor::fromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6})};
    // b = relu(x) + w: w's gradient is dy where b > 0 (here relu(x) + w = [1,1,2,1,3,1] > 0).
    const ValueId w = *g.findValue("w");
    auto grads = exec->backward(*trace, std::span(&seed, 1), std::span(&w, 1));
    ASSERT_TRUE(grads.ok()) << grads.error().toString();
    const Tensor& dw = (*grads)[w.index()];
    ASSERT_TRUE(dw.defined());
    for (int64_t i = 0; i < 6; ++i) {
        EXPECT_FLOAT_EQ(dw.data<float>()[i], static_cast<float>(i + 1));
    }
    EXPECT_FALSE((*grads)[g.findValue("x")->index()].defined());
    // Keeping nothing returns everything, weights included.
    auto all = exec->backward(*trace, std::span(&seed, 1));
    ASSERT_TRUE(all.ok());
    EXPECT_TRUE((*all)[w.index()].defined());
    EXPECT_TRUE((*all)[g.findValue("x")->index()].defined());
}

/// x [B, 2, 5, 5] -> Conv 3x3 (w) -> Relu -> Flatten -> Gemm (wg) -> MatMul (wm) -> y, and a side
/// branch x -> Sigmoid -> z (a second output).
Graph makeWeightedChain() {
    graph::GraphBuilder b(13);
    std::mt19937 rng(3);
    std::normal_distribution<float> normal(0.0F, 0.5F);
    const auto weight = [&](const std::string& name, const std::vector<int64_t>& dims) {
        int64_t count = 1;
        for (const int64_t d : dims) {
            count *= d;
        }
        std::vector<float> values(static_cast<size_t>(count));
        for (float& v : values) {
            v = normal(rng);
        }
        return b.weight(name, dims, values);
    };
    const ValueId x = b.input("x", {-1, 2, 5, 5});
    const ValueId c = b.op("Conv", "conv", {x, weight("w", {3, 2, 3, 3}), weight("bias", {3})},
                           {{"pads", std::vector<int64_t>{1, 1, 1, 1}, {}}});
    const ValueId r = b.op("Relu", "relu", {c});
    const ValueId f = b.op("Flatten", "flatten", {r}, {{"axis", int64_t{1}, {}}});
    const ValueId gm =
        b.op("Gemm", "gemm", {f, weight("wg", {6, 75})}, {{"transB", int64_t{1}, {}}});
    const ValueId dwc =
        b.op("Conv", "dwconv", {c, weight("wd", {3, 1, 3, 3})},
             {{"group", int64_t{3}, {}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}, {}}});
    const ValueId red = b.op("GlobalAveragePool", "gap", {dwc});
    const ValueId fl = b.op("Flatten", "flatten2", {red}, {{"axis", int64_t{1}, {}}});
    const ValueId cat = b.op("Concat", "cat", {gm, fl}, {{"axis", int64_t{1}, {}}});
    b.output(b.op("MatMul", "mm", {cat, weight("wm", {9, 4})}));
    b.output(b.op("Sigmoid", "side", {x}));
    return b.take();
}

TEST(Executor, PerSampleWeightGradientsEqualBatchOneRuns) {
    auto exec = Executor::create(makeWeightedChain());
    ASSERT_TRUE(exec.ok()) << exec.error().toString();
    const graph::Graph& g = exec->graph();
    const Tensor x = randomNormal({3, 2, 5, 5}, 4);
    const ValueId y = g.outputs()[0];
    const Tensor seed = randomNormal({3, 4}, 5);
    std::vector<ValueId> weights;
    for (const char* name : {"w", "wg", "wd", "wm"}) {
        weights.push_back(*g.findValue(name));
    }
    auto trace = exec->forwardWithTrace(std::span(&x, 1));
    ASSERT_TRUE(trace.ok());
    const std::pair<ValueId, Tensor> seeds{y, seed};
    RunStats stats;
    stats.profile = true;
    auto batched =
        exec->backward(*trace, std::span(&seeds, 1),
                       BackwardOptions{.keep = weights, .perSampleBatch = 3, .stats = &stats});
    ASSERT_TRUE(batched.ok()) << batched.error().toString();
    // Only ops on paths from the weights to y ran a VJP: not the side branch's Sigmoid.
    EXPECT_EQ(stats.secondsByOpType.count("Sigmoid"), 0U);
    EXPECT_EQ(stats.secondsByOpType.count("Conv"), 1U);
    for (int64_t n = 0; n < 3; ++n) {
        const Tensor xn = sliceBatch(x, n, n + 1);
        auto one = exec->forwardWithTrace(std::span(&xn, 1));
        ASSERT_TRUE(one.ok());
        const std::pair<ValueId, Tensor> seedN{y, sliceBatch(seed, n, n + 1)};
        auto single = exec->backward(*one, std::span(&seedN, 1), weights);
        ASSERT_TRUE(single.ok()) << single.error().toString();
        for (const ValueId w : weights) {
            const Tensor& all = (*batched)[w.index()];
            const Tensor& ref = (*single)[w.index()];
            ASSERT_EQ(all.dim(0), 3) << g.value(w).name;
            ASSERT_EQ(all.numElements(), 3 * ref.numElements()) << g.value(w).name;
            for (int64_t i = 0; i < ref.numElements(); ++i) {
                const float expected = ref.data<float>()[i];
                EXPECT_NEAR(all.data<float>()[n * ref.numElements() + i], expected,
                            1e-5F * std::max(1.0F, std::abs(expected)))
                    << g.value(w).name << " sample " << n << " element " << i;
            }
        }
    }
}

TEST(Executor, OnGradientHandsOverEachKeptGradientOnceAndComplete) {
    auto exec = Executor::create(makeWeightedChain());
    ASSERT_TRUE(exec.ok()) << exec.error().toString();
    const graph::Graph& g = exec->graph();
    const Tensor x = randomNormal({2, 2, 5, 5}, 4);
    auto trace = exec->forwardWithTrace(std::span(&x, 1));
    ASSERT_TRUE(trace.ok());
    const ValueId y = g.outputs()[0];
    const std::pair<ValueId, Tensor> seeds{y, randomNormal({2, 4}, 5)};
    // conv's output has two consumers (relu, dwconv), w is a weight, y a seeded output nobody
    // consumes, x the graph input, the side output is never reached; conv's output is listed
    // twice.
    const ValueId c = g.node(*g.findNode("conv")).outputs[0];
    const ValueId side = g.outputs()[1];
    const std::vector<ValueId> keep{c, *g.findValue("w"), y, *g.findValue("x"), side, c};
    auto plain = exec->backward(trace.value(), std::span(&seeds, 1), keep);
    ASSERT_TRUE(plain.ok()) << plain.error().toString();
    std::map<uint32_t, int> calls;
    BackwardOptions options{.keep = keep};
    options.onGradient = [&](ValueId id, const Tensor& grad) -> Result<void> {
        ++calls[id.index()];
        const Tensor& expected = (*plain)[id.index()];
        EXPECT_EQ(grad.defined(), expected.defined()) << g.value(id).name;
        if (grad.defined() && expected.defined()) {
            EXPECT_EQ(grad.shape(), expected.shape());
            for (int64_t i = 0; i < expected.numElements(); ++i) {
                // The same sums in the same order: exact.
                EXPECT_EQ(grad.data<float>()[i], expected.data<float>()[i])
                    << g.value(id).name << " element " << i;
            }
        }
        return success();
    };
    auto handed = exec->backward(trace.value(), std::span(&seeds, 1), options);
    ASSERT_TRUE(handed.ok()) << handed.error().toString();
    EXPECT_EQ(calls.size(), 5U);
    for (const auto& [index, count] : calls) {
        EXPECT_EQ(count, 1) << g.value(ValueId(index)).name;
    }
    EXPECT_FALSE((*plain)[side.index()].defined());
    for (const Tensor& grad : *handed) {
        EXPECT_FALSE(grad.defined()); // handed over, not returned
    }
    // An error from the callback ends the sweep with it.
    options.onGradient = [](ValueId, const Tensor&) -> Result<void> {
        return Error(Errc::Cancelled, "stop here");
    };
    auto stopped = exec->backward(trace.value(), std::span(&seeds, 1), options);
    ASSERT_FALSE(stopped.ok());
    EXPECT_EQ(stopped.error().code(), Errc::Cancelled);
}

TEST(Executor, PerSampleGradientOfAnUnsupportedConsumerIsAnError) {
    auto exec = Executor::create(makeChain()); // w feeds an Add
    ASSERT_TRUE(exec.ok());
    const Tensor x = Tensor::fromVector<float>({2, 3}, {-1, 2, -1, 3, -1, 4});
    auto trace = exec->forwardWithTrace(std::span(&x, 1));
    ASSERT_TRUE(trace.ok());
    const ValueId w = *exec->graph().findValue("w");
    const std::pair<ValueId, Tensor> seed{*exec->graph().findValue("y"),
                                          Tensor::fromVector<float>({2, 3}, {1, 1, 1, 1, 1, 1})};
    auto grads = exec->backward(*trace, std::span(&seed, 1),
                                BackwardOptions{.keep = std::span(&w, 1), .perSampleBatch = 2});
    ASSERT_FALSE(grads.ok());
    EXPECT_NE(grads.error().toString().find("node 'add'"), std::string::npos)
        << grads.error().toString();
}

TEST(Executor, BackwardIsTheSameOnOneAndTwoThreads) {
    auto exec = Executor::create(makeWeightedChain());
    ASSERT_TRUE(exec.ok());
    const graph::Graph& g = exec->graph();
    std::vector<ValueId> keep = {*g.findValue("x"), *g.findValue("w"), *g.findValue("wd")};
    for (const int64_t batch : {1, 3}) {
        const Tensor x = randomNormal({batch, 2, 5, 5}, 6);
        const std::pair<ValueId, Tensor> seed{g.outputs()[0], randomNormal({batch, 4}, 7)};
        auto trace = exec->forwardWithTrace(std::span(&x, 1));
        ASSERT_TRUE(trace.ok());
        setNumThreads(1);
        auto one = exec->backward(*trace, std::span(&seed, 1), keep);
        setNumThreads(2);
        auto two = exec->backward(*trace, std::span(&seed, 1), keep);
        setNumThreads(0);
        ASSERT_TRUE(one.ok() && two.ok());
        for (const ValueId id : keep) {
            const Tensor& a = (*one)[id.index()];
            const Tensor& b = (*two)[id.index()];
            ASSERT_EQ(a.shape(), b.shape());
            for (int64_t i = 0; i < a.numElements(); ++i) {
                EXPECT_NEAR(a.data<float>()[i], b.data<float>()[i],
                            1e-5F * std::max(1.0F, std::abs(a.data<float>()[i])));
            }
        }
    }
}

/// x [N, 16, 14, 14] -> Conv a (16 -> 16, 3x3 pad 1) -> Conv b (16 -> 20, 3x3 pad 1) -> y: linear
/// in x and in each weight, with planes where dx runs through Winograd only with the weights the
/// executor packs for its sweeps and dw runs through Winograd.
Graph makeWinogradPair(const std::vector<float>& wa, const std::vector<float>& wb) {
    graph::GraphBuilder b(13);
    const ValueId x = b.input("x", {-1, 16, 14, 14});
    const std::vector<int64_t> pads{1, 1, 1, 1};
    const ValueId a =
        b.op("Conv", "a", {x, b.weight("wa", {16, 16, 3, 3}, wa)}, {{"pads", pads, {}}});
    b.output(b.op("Conv", "b", {a, b.weight("wb", {20, 16, 3, 3}, wb)}, {{"pads", pads, {}}}));
    return b.take();
}

/// sum of seed . y for the pair with weights (wa, wb) on x.
double projectedOutput(const std::vector<float>& wa, const std::vector<float>& wb, const Tensor& x,
                       const Tensor& seed) {
    auto exec = Executor::create(makeWinogradPair(wa, wb));
    QS_CHECK(exec.ok(), "executor");
    auto y = exec->run(std::span(&x, 1));
    QS_CHECK(y.ok(), "run");
    double sum = 0.0;
    for (int64_t i = 0; i < seed.numElements(); ++i) {
        sum += static_cast<double>(seed.data<float>()[i]) * (*y)[0].data<float>()[i];
    }
    return sum;
}

std::vector<float> randomValues(int64_t count, uint64_t seed) {
    const Tensor t = randomNormal({count}, seed);
    return {t.data<float>(), t.data<float>() + count};
}

TEST(Executor, WinogradSweepGradientsAreExactDirectionalDerivatives) {
    const std::vector<float> wa = randomValues(16 * 16 * 9, 21);
    const std::vector<float> wb = randomValues(20 * 16 * 9, 22);
    auto exec = Executor::create(makeWinogradPair(wa, wb));
    ASSERT_TRUE(exec.ok()) << exec.error().toString();
    const graph::Graph& g = exec->graph();
    const Tensor x = randomNormal({3, 16, 14, 14}, 23);
    const Tensor seed = randomNormal({3, 20, 14, 14}, 24);
    const std::vector<ValueId> keep = {*g.findValue("x"), *g.findValue("wa"), *g.findValue("wb")};
    auto trace = exec->forwardWithTrace(std::span(&x, 1));
    ASSERT_TRUE(trace.ok());
    const std::pair<ValueId, Tensor> seeds{g.outputs()[0], seed};
    // The first sweep packs dx's weights, the second reuses them: both the same.
    auto first = exec->backward(*trace, std::span(&seeds, 1), keep);
    auto second = exec->backward(*trace, std::span(&seeds, 1), keep);
    ASSERT_TRUE(first.ok() && second.ok());
    for (const ValueId id : keep) {
        const Tensor& a = (*first)[id.index()];
        const Tensor& b = (*second)[id.index()];
        ASSERT_TRUE(a.defined() && b.defined()) << g.value(id).name;
        for (int64_t i = 0; i < a.numElements(); ++i) {
            ASSERT_EQ(a.data<float>()[i], b.data<float>()[i]) << g.value(id).name;
        }
    }
    // Linear in each argument: f(z + u) - f(z) = <grad, u> with no truncation error.
    const double base = projectedOutput(wa, wb, x, seed);
    const auto dot = [](const Tensor& grad, const std::vector<float>& u) {
        double sum = 0.0;
        for (size_t i = 0; i < u.size(); ++i) {
            sum += static_cast<double>(grad.data<float>()[i]) * u[i];
        }
        return sum;
    };
    const std::vector<float> ux = randomValues(x.numElements(), 25);
    Tensor shifted = x.clone();
    for (size_t i = 0; i < ux.size(); ++i) {
        shifted.mutableData<float>()[i] += ux[i];
    }
    const double predictedX = dot((*first)[keep[0].index()], ux);
    EXPECT_NEAR(projectedOutput(wa, wb, shifted, seed) - base, predictedX,
                1e-4 * std::abs(predictedX));
    for (const bool firstWeight : {true, false}) {
        std::vector<float> wa2 = wa;
        std::vector<float> wb2 = wb;
        std::vector<float>& w = firstWeight ? wa2 : wb2;
        const std::vector<float> u = randomValues(static_cast<int64_t>(w.size()), 26);
        for (size_t i = 0; i < u.size(); ++i) {
            w[i] += u[i];
        }
        const double predicted = dot((*first)[keep[firstWeight ? 1 : 2].index()], u);
        EXPECT_NEAR(projectedOutput(wa2, wb2, x, seed) - base, predicted,
                    1e-4 * std::abs(predicted))
            << (firstWeight ? "wa" : "wb");
    }
    // A trace made by another executor, with other weights: dx follows the trace's weights, not
    // the ones this executor packed for its own sweeps.
    std::vector<float> waOther = wa;
    for (float& v : waOther) {
        v = -0.5F * v + 0.1F;
    }
    auto other = Executor::create(makeWinogradPair(waOther, wb));
    ASSERT_TRUE(other.ok());
    auto otherTrace = other->forwardWithTrace(std::span(&x, 1));
    ASSERT_TRUE(otherTrace.ok());
    auto expectedDx = other->backward(*otherTrace, std::span(&seeds, 1), std::span(keep.data(), 1));
    auto mixedDx = exec->backward(*otherTrace, std::span(&seeds, 1), std::span(keep.data(), 1));
    ASSERT_TRUE(expectedDx.ok() && mixedDx.ok());
    const Tensor& want = (*expectedDx)[keep[0].index()];
    const Tensor& got = (*mixedDx)[keep[0].index()];
    // The two take different kernels (F(4x4, 3x3) with packed weights, a GEMM without), whose
    // rounding scales with the magnitudes summed, not with the result: bounded by the rms. Wrong
    // weights would miss by about the rms itself.
    const double rms = rootMeanSquare(want);
    for (int64_t i = 0; i < want.numElements(); ++i) {
        ASSERT_NEAR(got.data<float>()[i], want.data<float>()[i],
                    1e-5 * rms + 1e-4 * std::abs(want.data<float>()[i]))
            << "element " << i;
    }
    // Per-sample weight gradients add up to the summed ones.
    const std::vector<ValueId> weights = {keep[1], keep[2]};
    auto perSample = exec->backward(*trace, std::span(&seeds, 1),
                                    BackwardOptions{.keep = weights, .perSampleBatch = 3});
    ASSERT_TRUE(perSample.ok()) << perSample.error().toString();
    for (const ValueId id : weights) {
        const Tensor& all = (*perSample)[id.index()];
        const Tensor& summed = (*first)[id.index()];
        ASSERT_EQ(all.numElements(), 3 * summed.numElements());
        for (int64_t i = 0; i < summed.numElements(); ++i) {
            const float* p = all.data<float>();
            const float total =
                p[i] + p[summed.numElements() + i] + p[2 * summed.numElements() + i];
            EXPECT_NEAR(total, summed.data<float>()[i],
                        1e-4F * std::max(1.0F, std::abs(summed.data<float>()[i])));
        }
    }
}

TEST(Executor, Fp16ModeStaysClose) {
    auto exec = Executor::create(makeChain(), ExecutorOptions{.fp16 = true});
    ASSERT_TRUE(exec.ok());
    const Tensor x = Tensor::fromVector<float>({2, 3}, {-1, 1.5F, -1, 1, -1, 1});
    auto out = exec->run(std::span(&x, 1));
    ASSERT_TRUE(out.ok()) << out.error().toString();
    EXPECT_EQ((*out)[0].dtype(), DataType::Float);
    EXPECT_NEAR((*out)[0].data<float>()[0], 1.0F, 1e-3F);
}

/// A residual block: x -> Conv 3x3 -> Relu -> Conv 1x1 -> Add(x) -> Clip(0, 6) -> depthwise Conv
/// -> Clip(0, 6) -> y, every value shaped, so run() can fuse each Conv with what follows it.
Graph makeResidualBlock() {
    Graph g;
    const TensorShape shape = TensorShape::ofDims({1, 4, 6, 6});
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> uniform(-1.0F, 1.0F);
    const auto constant = [&](const std::string& name, const std::vector<int64_t>& dims) {
        int64_t count = 1;
        for (const int64_t d : dims) {
            count *= d;
        }
        std::vector<float> values(static_cast<size_t>(count));
        for (float& v : values) {
            v = uniform(rng);
        }
        return g.addInitializer(
            name, graph::TensorData::fromValues<float>(DataType::Float, dims, std::span(values)));
    };
    const std::vector<float> lo = {0.0F};
    const std::vector<float> hi = {6.0F};
    const ValueId zero =
        g.addInitializer("zero", graph::TensorData::fromValues<float>(DataType::Float, {}, lo));
    const ValueId six =
        g.addInitializer("six", graph::TensorData::fromValues<float>(DataType::Float, {}, hi));
    const ValueId x = g.addValue("x", DataType::Float, shape);
    g.addInput(x);
    std::vector<ValueId> v;
    for (const char* name : {"c1", "r1", "c2", "s", "a", "d", "y"}) {
        v.push_back(g.addValue(name, DataType::Float, shape));
    }
    const NodeId conv1 =
        g.addNode("conv1", "Conv", {x, constant("w1", {4, 4, 3, 3}), constant("b1", {4})}, {v[0]});
    g.node(conv1).attributes.push_back(
        graph::Attribute{"pads", std::vector<int64_t>{1, 1, 1, 1}, {}});
    g.addNode("relu", "Relu", {v[0]}, {v[1]});
    g.addNode("conv2", "Conv", {v[1], constant("w2", {4, 4, 1, 1})}, {v[2]});
    g.addNode("add", "Add", {v[2], x}, {v[3]});
    g.addNode("clip1", "Clip", {v[3], zero, six}, {v[4]});
    const NodeId dw =
        g.addNode("dw", "Conv", {v[4], constant("w3", {4, 1, 3, 3}), constant("b3", {4})}, {v[5]});
    g.node(dw).attributes.push_back(graph::Attribute{"pads", std::vector<int64_t>{1, 1, 1, 1}, {}});
    g.node(dw).attributes.push_back(graph::Attribute{"group", int64_t{4}, {}});
    g.addNode("clip2", "Clip", {v[5], zero, six}, {v[6]});
    g.addOutput(v[6]);
    return g;
}

TEST(Executor, FusedRunMatchesUnfusedTrace) {
    auto exec = Executor::create(makeResidualBlock());
    ASSERT_TRUE(exec.ok()) << exec.error().toString();
    std::mt19937 rng(9);
    std::normal_distribution<float> normal(0.0F, 2.0F);
    Tensor x = Tensor::allocate(DataType::Float, {1, 4, 6, 6});
    for (int64_t i = 0; i < x.numElements(); ++i) {
        x.mutableData<float>()[i] = normal(rng);
    }
    RunStats stats;
    stats.profile = true;
    auto fused = exec->run(std::span(&x, 1), &stats);
    ASSERT_TRUE(fused.ok()) << fused.error().toString();
    // Every Relu, Add and Clip ran inside a Conv, and counts under the Conv's name.
    ASSERT_EQ(stats.secondsByOpType.size(), 1U);
    EXPECT_EQ(stats.secondsByOpType.begin()->first, "Conv");
    std::set<std::string> convs;
    for (const graph::NodeId id : exec->graph().nodeIds()) {
        if (exec->graph().node(id).opType == "Conv") {
            convs.insert(exec->graph().node(id).name);
        }
    }
    std::set<std::string> timed;
    double nodeSeconds = 0.0;
    for (const auto& [name, seconds] : stats.secondsByNode) {
        timed.insert(name);
        nodeSeconds += seconds;
    }
    EXPECT_EQ(timed, convs);
    EXPECT_NEAR(nodeSeconds, stats.secondsByOpType.begin()->second, 1e-9);
    // forwardWithTrace runs node by node: the same values, and the clamps did bite.
    auto trace = exec->forwardWithTrace(std::span(&x, 1));
    ASSERT_TRUE(trace.ok()) << trace.error().toString();
    const Tensor& unfused = trace->values[exec->graph().outputs()[0].index()];
    const Tensor& sum = trace->values[exec->graph().findValue("s")->index()];
    bool clamped = false;
    for (int64_t i = 0; i < sum.numElements(); ++i) {
        clamped = clamped || sum.data<float>()[i] < 0.0F || sum.data<float>()[i] > 6.0F;
    }
    EXPECT_TRUE(clamped);
    for (int64_t i = 0; i < unfused.numElements(); ++i) {
        EXPECT_NEAR((*fused)[0].data<float>()[i], unfused.data<float>()[i], 1e-5F) << i;
    }
}

// The trace for backward() alone runs Conv + Relu, Conv + Add + Clip and depthwise Conv + Clip
// fused: the values inside each chain come shape-only, the rest as forwardWithTrace's, and the
// gradients at the Conv outputs (what activation Hessians ask for), at the input, and per sample
// at the weights (weights mode) are forwardWithTrace's.
TEST(Executor, ForwardForBackwardKeepsWhatVjpsReadAndGivesTheSameGradients) {
    auto exec = Executor::create(makeResidualBlock());
    ASSERT_TRUE(exec.ok()) << exec.error().toString();
    const Graph& g = exec->graph();
    const Tensor x = randomNormal({1, 4, 6, 6}, 11); // the block's batch is static
    auto full = exec->forwardWithTrace(std::span(&x, 1));
    auto lean = exec->forwardForBackward(std::span(&x, 1));
    ASSERT_TRUE(full.ok()) << full.error().toString();
    ASSERT_TRUE(lean.ok()) << lean.error().toString();
    const auto id = [&g](const char* name) { return *g.findValue(name); };
    for (const char* inside : {"c1", "c2", "s", "d"}) {
        const Tensor& value = lean->values[id(inside).index()];
        EXPECT_EQ(value.rawData(), nullptr) << inside;
        EXPECT_EQ(value.shape(), full->values[id(inside).index()].shape()) << inside;
    }
    const auto near = [](const Tensor& a, const Tensor& b, const std::string& what) {
        ASSERT_NE(a.rawData(), nullptr) << what;
        ASSERT_EQ(a.shape(), b.shape()) << what;
        for (int64_t i = 0; i < a.numElements(); ++i) {
            const float expected = b.data<float>()[i];
            ASSERT_NEAR(a.data<float>()[i], expected, 1e-5F * std::max(1.0F, std::abs(expected)))
                << what << " element " << i;
        }
    };
    for (const char* kept : {"r1", "a", "y"}) {
        near(lean->values[id(kept).index()], full->values[id(kept).index()], kept);
    }
    const std::pair<ValueId, Tensor> seed{id("y"), randomNormal({1, 4, 6, 6}, 12)};
    const std::vector<ValueId> activations{id("c1"), id("c2"), id("d"), id("x")};
    auto want = exec->backward(*full, std::span(&seed, 1), activations);
    auto got = exec->backward(*lean, std::span(&seed, 1), activations);
    ASSERT_TRUE(want.ok() && got.ok()) << (got.ok() ? want.error() : got.error()).toString();
    for (const ValueId v : activations) {
        near((*got)[v.index()], (*want)[v.index()], "d/d" + g.value(v).name);
    }
    const std::vector<ValueId> weights{id("w1"), id("w2"), id("w3")};
    const BackwardOptions perSample{.keep = weights, .perSampleBatch = 1};
    auto wantW = exec->backward(*full, std::span(&seed, 1), perSample);
    auto gotW = exec->backward(*lean, std::span(&seed, 1), perSample);
    ASSERT_TRUE(wantW.ok() && gotW.ok()) << (gotW.ok() ? wantW.error() : gotW.error()).toString();
    for (const ValueId v : weights) {
        near((*gotW)[v.index()], (*wantW)[v.index()], "per-sample d/d" + g.value(v).name);
    }
}

/// x [2, 3, 9, 10] -> MaxPool 3x3, stride 2, pads 1 -> y.
Graph makeMaxPool() {
    Graph g;
    const ValueId x = g.addValue("x", DataType::Float, TensorShape::ofDims({2, 3, 9, 10}));
    const ValueId y = g.addValue("y", DataType::Float);
    g.addInput(x);
    g.addNode("pool", "MaxPool", {x}, {y},
              {intsAttribute("kernel_shape", {3, 3}), intsAttribute("strides", {2, 2}),
               intsAttribute("pads", {1, 1, 1, 1})});
    g.addOutput(y);
    return g;
}

/// Values on a coarse grid, so that many windows hold their maximum twice (the first one wins).
Tensor tiedValues(uint64_t seed) {
    Tensor x = randomNormal({2, 3, 9, 10}, seed);
    for (int64_t i = 0; i < x.numElements(); ++i) {
        x.mutableData<float>()[i] = std::round(x.data<float>()[i] * 2.0F);
    }
    return x;
}

// MaxPool's VJP keeps where the maxima sit on the trace (TraceNote) after the first sweep: the
// next sweeps, with other seeds, give what a trace without notes gives, and a copy of the trace
// with another input (sharing the notes) does not read the positions of the first.
TEST(Executor, MaxPoolSweepsReuseTheMaximaPositionsOfTheirTraceOnly) {
    auto exec = Executor::create(makeMaxPool());
    ASSERT_TRUE(exec.ok()) << exec.error().toString();
    const ValueId xId = *exec->graph().findValue("x");
    const ValueId yId = *exec->graph().findValue("y");
    const Tensor x = tiedValues(21);
    auto trace = exec->forwardForBackward(std::span(&x, 1));
    ASSERT_TRUE(trace.ok()) << trace.error().toString();
    ASSERT_NE(trace->notes, nullptr);
    const std::vector<ValueId> keep{xId};
    const auto dxOf = [&](const ForwardTrace& t, uint64_t seed) {
        const Tensor& y = t.values[yId.index()];
        const std::pair<ValueId, Tensor> dy{yId, randomNormal(y.shape(), seed)};
        auto grads = exec->backward(t, std::span(&dy, 1), keep);
        EXPECT_TRUE(grads.ok()) << grads.error().toString();
        return grads.ok() ? (*grads)[xId.index()] : Tensor();
    };
    const auto same = [](const Tensor& a, const Tensor& b, const std::string& what) {
        ASSERT_TRUE(a.defined() && b.defined()) << what;
        ASSERT_EQ(a.shape(), b.shape()) << what;
        for (int64_t i = 0; i < a.numElements(); ++i) {
            ASSERT_EQ(a.data<float>()[i], b.data<float>()[i]) << what << " element " << i;
        }
    };
    const ForwardTrace bare{trace->values, nullptr};
    for (const uint64_t seed : {31U, 32U, 33U}) {
        same(dxOf(*trace, seed), dxOf(bare, seed), "sweep with seed " + std::to_string(seed));
        bool noted = false;
        for (const TraceNote& note : *trace->notes) {
            noted = noted || note.holds();
            EXPECT_EQ(note.get<int>(), nullptr) << "a note of another type must read as none";
        }
        EXPECT_TRUE(noted) << "no note kept after a sweep";
    }
    const Tensor other = tiedValues(22);
    auto otherTrace = exec->forwardForBackward(std::span(&other, 1));
    ASSERT_TRUE(otherTrace.ok()) << otherTrace.error().toString();
    ForwardTrace edited = *trace; // the first trace's notes, the other input's values
    edited.values = otherTrace->values;
    same(dxOf(edited, 34), dxOf(ForwardTrace{otherTrace->values, nullptr}, 34),
         "a copy of the trace with another input");
}

// Forward only: Conv weights that only a packed kernel reads are released (dims kept, no bytes),
// the outputs do not change, weights read elsewhere stay, and gradients are refused by name.
TEST(Executor, ReleasingPackedWeightsKeepsTheForwardAndRefusesGradients) {
    Graph shared = makeResidualBlock();
    // w2 also feeds an Identity whose output is a graph output: it must keep its bytes.
    const ValueId peek = shared.addValue("peek", DataType::Float);
    shared.addNode("peek", "Identity", {*shared.findValue("w2")}, {peek});
    shared.addOutput(peek);
    for (const bool sharedW2 : {false, true}) {
        SCOPED_TRACE(sharedW2 ? "w2 read by an Identity too" : "residual block");
        auto keeping = Executor::create(sharedW2 ? shared : makeResidualBlock());
        auto releasing = Executor::create(sharedW2 ? shared : makeResidualBlock(),
                                          {.releasePackedWeights = true});
        ASSERT_TRUE(keeping.ok()) << keeping.error().toString();
        ASSERT_TRUE(releasing.ok()) << releasing.error().toString();
        const Graph& g = releasing->graph();
        const auto bytesOf = [&g](const char* name) {
            return g.value(*g.findValue(name)).initializer->bytes().size();
        };
        // The shallow kernel reads w1 (depth 36) as it is where it runs (AVX-512), else GEMM
        // panels replace it (4 input channels: not Winograd).
        EXPECT_EQ(bytesOf("w1"), wideGemmKernelActive() ? 4U * 4U * 9U * 4U : 0U);
        EXPECT_EQ(g.value(*g.findValue("w1")).initializer->dims(),
                  (std::vector<int64_t>{4, 4, 3, 3}));
        EXPECT_EQ(bytesOf("w2"), sharedW2 ? 4U * 4U * 4U : 0U); // GEMM panels
        EXPECT_EQ(bytesOf("w3"), 4U * 9U * 4U);                 // depthwise: no packed copy
        EXPECT_EQ(bytesOf("b1"), 4U * 4U);                      // a bias is read as it is
        std::mt19937 rng(3);
        std::normal_distribution<float> normal(0.0F, 2.0F);
        Tensor x = Tensor::allocate(DataType::Float, {1, 4, 6, 6});
        for (int64_t i = 0; i < x.numElements(); ++i) {
            x.mutableData<float>()[i] = normal(rng);
        }
        auto expected = keeping->run(std::span(&x, 1));
        auto got = releasing->run(std::span(&x, 1));
        ASSERT_TRUE(expected.ok()) << expected.error().toString();
        ASSERT_TRUE(got.ok()) << got.error().toString();
        ASSERT_EQ(got->size(), expected->size());
        for (size_t o = 0; o < got->size(); ++o) {
            ASSERT_EQ((*got)[o].numElements(), (*expected)[o].numElements());
            for (int64_t i = 0; i < (*got)[o].numElements(); ++i) {
                EXPECT_EQ((*got)[o].data<float>()[i], (*expected)[o].data<float>()[i]) << i;
            }
        }
        // Gradients are refused once any weight was released (with w2 shared and w1 read as it
        // is, none was).
        auto trace = releasing->forwardWithTrace(std::span(&x, 1));
        if (bytesOf("w1") != 0 && bytesOf("w2") != 0) {
            EXPECT_TRUE(trace.ok()) << trace.error().toString();
            continue;
        }
        ASSERT_FALSE(trace.ok());
        EXPECT_NE(trace.error().message().find("released its packed Conv weights"),
                  std::string::npos);
    }
}

// A MatMul with a weight B runs on the packed GEMM with strips the executor packs at creation;
// the product must be the defining sum whatever the shapes' remainders (columns past a strip,
// rows past a panel, A's batch dims folded into its rows) and on one or two threads.
TEST(Executor, MatMulWithAWeightMatchesTheDefiningSumOnPrepackedStrips) {
    const int threadsBefore = numThreads();
    std::mt19937 rng(17);
    std::uniform_real_distribution<float> uniform(-1.0F, 1.0F);

    struct Case {
        std::vector<int64_t> a;
        int64_t n;
    };

    // Small products stay on one thread; [8, 64, 96] x [96, 70] is large enough to split.
    const std::vector<Case> cases = {
        {{5, 7}, 3}, {{3, 2, 19}, 37}, {{8, 64, 96}, 70}, {{2, 1, 13, 40}, 48}};
    for (const Case& c : cases) {
        const int64_t k = c.a.back();
        std::vector<float> weights(static_cast<size_t>(k * c.n));
        for (float& v : weights) {
            v = uniform(rng);
        }
        Graph g;
        const ValueId x = g.addValue("x", DataType::Float, TensorShape::ofDims(c.a));
        const ValueId w = g.addInitializer("w", graph::TensorData::fromValues<float>(
                                                    DataType::Float, {k, c.n}, std::span(weights)));
        const ValueId y = g.addValue("y", DataType::Float);
        g.addInput(x);
        g.addNode("matmul", "MatMul", {x, w}, {y});
        g.addOutput(y);
        auto exec = Executor::create(std::move(g));
        ASSERT_TRUE(exec.ok()) << exec.error().toString();
        Tensor input = Tensor::allocate(DataType::Float, c.a);
        for (int64_t i = 0; i < input.numElements(); ++i) {
            input.mutableData<float>()[i] = uniform(rng);
        }
        const int64_t rows = input.numElements() / k;
        for (const int threads : {1, 2}) {
            setNumThreads(threads);
            auto out = exec->run(std::span(&input, 1));
            ASSERT_TRUE(out.ok()) << out.error().toString();
            const Tensor& result = (*out)[0];
            ASSERT_EQ(result.numElements(), rows * c.n);
            for (int64_t r = 0; r < rows; ++r) {
                for (int64_t j = 0; j < c.n; ++j) {
                    double sum = 0.0;
                    for (int64_t p = 0; p < k; ++p) {
                        sum += static_cast<double>(input.data<float>()[r * k + p]) *
                               weights[static_cast<size_t>(p * c.n + j)];
                    }
                    ASSERT_NEAR(result.data<float>()[r * c.n + j], sum,
                                1e-5 * (1.0 + std::abs(sum)))
                        << "row " << r << ", column " << j << ", " << threads << " threads, k "
                        << k;
                }
            }
        }
    }
    setNumThreads(threadsBefore);
}

// Gemm with a weight B takes the same strips (of B^T with transB) when alpha is 1, adding the
// product to beta C; with alpha 2 it stays on Eigen. Both must give the defining sum.
TEST(Executor, GemmWithAWeightMatchesTheDefiningSumOnPrepackedStrips) {
    const int threadsBefore = numThreads();
    std::mt19937 rng(19);
    std::uniform_real_distribution<float> uniform(-1.0F, 1.0F);

    struct Case {
        int64_t m, k, n;
        bool transB;
        float alpha, beta;
        bool rowBias; // C of shape [n] (else [m, n])
    };

    // M = 5 is below a panel's 6 rows: Eigen, strips or not.
    const std::vector<Case> cases = {{5, 7, 3, true, 1.0F, 1.0F, true},
                                     {6, 7, 3, true, 1.0F, 1.0F, true},
                                     {33, 40, 300, true, 1.0F, 0.5F, false},
                                     {64, 96, 70, false, 1.0F, 1.0F, true},
                                     {9, 20, 37, true, 2.0F, 1.0F, true}};
    const auto random = [&](int64_t count) {
        std::vector<float> v(static_cast<size_t>(count));
        for (float& x : v) {
            x = uniform(rng);
        }
        return v;
    };
    for (const Case& c : cases) {
        const std::vector<float> weights = random(c.k * c.n);
        const std::vector<int64_t> cShape =
            c.rowBias ? std::vector<int64_t>{c.n} : std::vector<int64_t>{c.m, c.n};
        const std::vector<float> bias = random(c.rowBias ? c.n : c.m * c.n);
        Graph g;
        const ValueId x = g.addValue("x", DataType::Float, TensorShape::ofDims({c.m, c.k}));
        const std::vector<int64_t> wShape =
            c.transB ? std::vector<int64_t>{c.n, c.k} : std::vector<int64_t>{c.k, c.n};
        const ValueId w = g.addInitializer(
            "w", graph::TensorData::fromValues<float>(DataType::Float, wShape, std::span(weights)));
        const ValueId cv = g.addInitializer(
            "c", graph::TensorData::fromValues<float>(DataType::Float, cShape, std::span(bias)));
        const ValueId y = g.addValue("y", DataType::Float);
        g.addInput(x);
        g.addNode("gemm", "Gemm", {x, w, cv}, {y},
                  {intAttribute("transB", c.transB ? 1 : 0), floatAttribute("alpha", c.alpha),
                   floatAttribute("beta", c.beta)});
        g.addOutput(y);
        auto exec = Executor::create(std::move(g));
        ASSERT_TRUE(exec.ok()) << exec.error().toString();
        const std::vector<float> values = random(c.m * c.k);
        const Tensor input = Tensor::fromVector<float>({c.m, c.k}, values);
        for (const int threads : {1, 2}) {
            setNumThreads(threads);
            auto out = exec->run(std::span(&input, 1));
            ASSERT_TRUE(out.ok()) << out.error().toString();
            const Tensor& result = (*out)[0];
            ASSERT_EQ(result.numElements(), c.m * c.n);
            for (int64_t r = 0; r < c.m; ++r) {
                for (int64_t j = 0; j < c.n; ++j) {
                    double sum = 0.0;
                    for (int64_t p = 0; p < c.k; ++p) {
                        const size_t wi = static_cast<size_t>(c.transB ? j * c.k + p : p * c.n + j);
                        sum += static_cast<double>(values[static_cast<size_t>(r * c.k + p)]) *
                               weights[wi];
                    }
                    const double expected =
                        c.alpha * sum +
                        c.beta * bias[static_cast<size_t>(c.rowBias ? j : r * c.n + j)];
                    ASSERT_NEAR(result.data<float>()[r * c.n + j], expected,
                                1e-5 * (1.0 + std::abs(expected)))
                        << "row " << r << ", column " << j << ", " << threads << " threads, m "
                        << c.m << ", n " << c.n;
                }
            }
        }
    }
    setNumThreads(threadsBefore);
}

} // namespace
} // namespace qs::runtime
