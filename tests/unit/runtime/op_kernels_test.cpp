// Op-specific checks the registry-wide tests cannot make: float64 reductions, attribute forms of
// older opsets, and gradients defined by convention rather than by calculus (straight-through).

#include "core/runtime/executor.h"
#include "core/runtime/op.h"
#include "core/runtime/op_util.h"
#include "core/runtime/packed_gemm.h"
#include "core/runtime/parallel.h"
#include "core/runtime/sum_of_squares.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>

namespace qs::runtime {
namespace {

using graph::DataType;

struct NodeRun {
    graph::Node node;
    std::vector<Tensor> inputs;
    int64_t opset = 21;

    OpContext context() const { return OpContext{node, inputs, opset}; }

    Result<std::vector<Tensor>> forward() const { return findOp(node.opType)->forward(context()); }
};

NodeRun makeRun(std::string opType, std::vector<Tensor> inputs,
                std::vector<graph::Attribute> attributes = {}, size_t numOutputs = 1) {
    NodeRun run;
    run.node.name = "n";
    run.node.opType = std::move(opType);
    run.node.attributes = std::move(attributes);
    run.node.outputs.resize(numOutputs);
    run.inputs = std::move(inputs);
    return run;
}

TEST(ReduceOps, RunInDoublePrecision) {
    // Values whose sum needs more than float32's 24-bit mantissa: 1e9 + 1 + 1.
    const Tensor x = Tensor::fromVector<double>({1, 3}, {1e9, 1.0, 1.0});
    auto sum = makeRun("ReduceSum", {x}, {intsAttribute("axes", {1})}).forward();
    ASSERT_TRUE(sum.ok()) << sum.error().toString();
    ASSERT_EQ((*sum)[0].dtype(), DataType::Double);
    EXPECT_EQ((*sum)[0].data<double>()[0], 1e9 + 2.0);

    const Tensor small = Tensor::fromVector<double>({2, 2}, {1.0, 2.0, 3.0, 4.0});
    auto lse = makeRun("ReduceLogSumExp", {small},
                       {intsAttribute("axes", {1}), intAttribute("keepdims", 0)})
                   .forward();
    ASSERT_TRUE(lse.ok()) << lse.error().toString();
    ASSERT_EQ((*lse)[0].shape(), (Shape{2}));
    EXPECT_NEAR((*lse)[0].data<double>()[0], std::log(std::exp(1.0) + std::exp(2.0)), 1e-12);
    EXPECT_NEAR((*lse)[0].data<double>()[1], std::log(std::exp(3.0) + std::exp(4.0)), 1e-12);
}

TEST(ReduceOps, LogSumExpDoesNotOverflow) {
    const Tensor x = Tensor::fromVector<float>({2}, {1000.0F, 1000.0F});
    auto y = makeRun("ReduceLogSumExp", {x}).forward();
    ASSERT_TRUE(y.ok()) << y.error().toString();
    EXPECT_NEAR((*y)[0].data<float>()[0], 1000.0 + std::log(2.0), 1e-3);
}

TEST(ReduceOps, RejectIntegerInputsByName) {
    const Tensor x = Tensor::fromVector<int32_t>({2}, {1, 2});
    auto y = makeRun("ReduceMean", {x}).forward();
    ASSERT_FALSE(y.ok());
    EXPECT_NE(y.error().toString().find("float32 or float64"), std::string::npos)
        << y.error().toString();
}

TEST(ReduceOps, DoubleVjpMatchesTheFloatOne) {
    const Tensor xf = Tensor::fromVector<float>({2, 2}, {0.5F, 1.5F, -2.0F, 3.0F});
    const Tensor xd = Tensor::fromVector<double>({2, 2}, {0.5, 1.5, -2.0, 3.0});
    for (const char* op : {"ReduceL2", "ReduceMean", "ReduceMax", "ReduceSumSquare"}) {
        SCOPED_TRACE(op);
        NodeRun f = makeRun(op, {xf}, {intsAttribute("axes", {0})});
        NodeRun d = makeRun(op, {xd}, {intsAttribute("axes", {0})});
        auto yf = f.forward();
        auto yd = d.forward();
        ASSERT_TRUE(yf.ok() && yd.ok());
        const std::vector<Tensor> dyf{Tensor::fromVector<float>({1, 2}, {1.0F, -2.0F})};
        const std::vector<Tensor> dyd{Tensor::fromVector<double>({1, 2}, {1.0, -2.0})};
        auto gf = findOp(op)->vjp(f.context(), *yf, dyf);
        auto gd = findOp(op)->vjp(d.context(), *yd, dyd);
        ASSERT_TRUE(gf.ok() && gd.ok());
        ASSERT_EQ((*gd)[0].dtype(), DataType::Double);
        for (int64_t i = 0; i < 4; ++i) {
            EXPECT_NEAR((*gf)[0].elementAsDouble(i), (*gd)[0].elementAsDouble(i), 1e-6);
        }
    }
}

TEST(Conv, OneAndTwoThreadsMatchTheReference) {
    // The packed GEMM splits the columns among threads, or the rows of A when there are few
    // columns; the registry-wide test sees only the default thread count. Where the processor
    // has AVX-512 its kernels (the GEMM's 6 x 32 tile, 16-channel depthwise blocks) run by
    // default, so the AVX2 ones are checked with them turned off too.
    const OpDef* conv = findOp("Conv");
    std::mt19937 rng(7);
    const bool wideBefore = wideGemmKernelActive();
    for (const OpSample& sample : conv->samples(rng)) {
        SCOPED_TRACE(sample.label);
        const NodeRun run = makeRun("Conv", sample.inputs, sample.attributes);
        auto ref = conv->reference(run.context());
        ASSERT_TRUE(ref.ok()) << ref.error().toString();
        for (const bool wide : {false, true}) {
            setWideGemmKernel(wide);
            for (const int threads : {1, 2}) {
                setNumThreads(threads);
                auto fast = run.forward();
                ASSERT_TRUE(fast.ok()) << fast.error().toString();
                const Tensor& y = (*fast)[0];
                ASSERT_EQ(y.shape(), (*ref)[0].shape());
                const double floor = conv->roundingOfRms * rootMeanSquare((*ref)[0]);
                for (int64_t i = 0; i < y.numElements(); ++i) {
                    const float expected = (*ref)[0].data<float>()[i];
                    ASSERT_NEAR(y.data<float>()[i], expected,
                                1e-5 + 1e-4 * std::abs(expected) + floor)
                        << threads << " threads, AVX-512 kernels " << (wide ? "on" : "off")
                        << ", element " << i;
                }
            }
        }
    }
    setWideGemmKernel(wideBefore);
    setNumThreads(0);
}

// Slice and Transpose copy strided views, and their VJPs write dy into dx through the same view.
// The registry's finite differences probe only some elements of the larger samples; here every
// element is checked against the index map the reference reveals on x = 0, 1, 2, ... (it then
// outputs the flat index of each element it copies), with one and two threads, including copies
// large enough to be split among the threads.
TEST(DataMovement, ForwardAndVjpFollowTheReferenceIndexMap) {
    std::mt19937 rng(11);
    const auto int64s = [](std::vector<int64_t> values) { return int64Tensor(values); };
    std::vector<std::pair<std::string, OpSample>> cases;
    for (const char* opType : {"Slice", "Transpose", "Tile", "Expand"}) {
        for (OpSample& sample : findOp(opType)->samples(rng)) {
            cases.emplace_back(opType, std::move(sample));
        }
    }
    cases.push_back({"Slice",
                     {"large channel split",
                      {},
                      {allocateFloat({2, 116, 14, 14}), int64s({58}), int64s({116}), int64s({1}),
                       int64s({1})}}});
    cases.push_back(
        {"Slice",
         {"large, inner step 2",
          {},
          {allocateFloat({2, 64, 30, 40}), int64s({1}), int64s({40}), int64s({3}), int64s({2})}}});
    cases.push_back({"Transpose",
                     {"large channel shuffle",
                      {intsAttribute("perm", {0, 2, 1, 3, 4})},
                      {allocateFloat({2, 2, 58, 14, 14})}}});
    cases.push_back({"Transpose",
                     {"large NCHW to NHWC",
                      {intsAttribute("perm", {0, 2, 3, 1})},
                      {allocateFloat({2, 64, 24, 40})}}});
    // Attention's keys, [S, B x H, d] -> [B x H, d, S]: 8 x 8 register tiles and partial ones.
    cases.push_back(
        {"Transpose",
         {"attention keys", {intsAttribute("perm", {1, 2, 0})}, {allocateFloat({36, 12, 21})}}});
    // Tile's repeat axes and Expand's broadcast ones read the input with stride 0: inner axes,
    // outer ones, and a row broadcast to many rows.
    cases.push_back(
        {"Tile",
         {"large, repeats inside", {}, {allocateFloat({2, 3, 40, 50}), int64s({1, 2, 3, 2})}}});
    cases.push_back(
        {"Tile", {"large, outer repeats", {}, {allocateFloat({1, 16, 2000}), int64s({3, 1, 1})}}});
    cases.push_back(
        {"Expand",
         {"large attention mask", {}, {allocateFloat({2, 1, 1, 128}), int64s({2, 12, 128, 128})}}});
    for (const auto& [opType, sample] : cases) {
        SCOPED_TRACE(opType + ": " + sample.label);
        if (sample.inputs[0].dtype() != DataType::Float) {
            continue;
        }
        NodeRun run = makeRun(opType, sample.inputs, sample.attributes);
        Tensor& x = run.inputs[0];
        x = allocateFloat(x.shape());
        for (int64_t i = 0; i < x.numElements(); ++i) {
            x.mutableData<float>()[i] = static_cast<float>(i);
        }
        const OpDef* def = findOp(opType);
        auto ref = def->reference(run.context());
        ASSERT_TRUE(ref.ok()) << ref.error().toString();
        const Tensor& index = (*ref)[0];
        const Tensor dy = randomTensor(rng, index.shape());
        std::vector<float> expectedDx(static_cast<size_t>(x.numElements()), 0.0F);
        for (int64_t i = 0; i < index.numElements(); ++i) {
            expectedDx[static_cast<size_t>(index.data<float>()[i])] += dy.data<float>()[i];
        }
        for (const int threads : {1, 2}) {
            setNumThreads(threads);
            auto y = run.forward();
            ASSERT_TRUE(y.ok()) << y.error().toString();
            ASSERT_EQ((*y)[0].shape(), index.shape());
            for (int64_t i = 0; i < index.numElements(); ++i) {
                ASSERT_EQ((*y)[0].data<float>()[i], index.data<float>()[i])
                    << threads << " threads, element " << i;
            }
            const std::vector<Tensor> outputGrads{dy};
            auto grads = def->vjp(run.context(), *y, outputGrads);
            ASSERT_TRUE(grads.ok()) << grads.error().toString();
            const Tensor& dx = (*grads)[0];
            ASSERT_EQ(dx.shape(), x.shape());
            for (int64_t i = 0; i < dx.numElements(); ++i) {
                ASSERT_EQ(dx.data<float>()[i], expectedDx[static_cast<size_t>(i)])
                    << threads << " threads, dx element " << i;
            }
        }
    }
    setNumThreads(0);
}

TEST(PRelu, Opset6SlopeIsPerChannel) {
    // x [1, 2, 2]: channel 0 = {-1, -2}, channel 1 = {-3, 4}; slope [2] = {0.5, 0.25}.
    const Tensor x = Tensor::fromVector<float>({1, 2, 2}, {-1.0F, -2.0F, -3.0F, 4.0F});
    const Tensor slope = Tensor::fromVector<float>({2}, {0.5F, 0.25F});
    NodeRun old = makeRun("PRelu", {x, slope});
    old.opset = 6;
    auto y = old.forward();
    ASSERT_TRUE(y.ok()) << y.error().toString();
    const std::vector<float> perChannel{-0.5F, -1.0F, -0.75F, 4.0F};
    for (size_t i = 0; i < perChannel.size(); ++i) {
        EXPECT_FLOAT_EQ((*y)[0].data<float>()[i], perChannel[i]);
    }
    const std::vector<Tensor> dy{Tensor::fromVector<float>({1, 2, 2}, {1.0F, 1.0F, 1.0F, 1.0F})};
    auto grads = findOp("PRelu")->vjp(old.context(), *y, dy);
    ASSERT_TRUE(grads.ok()) << grads.error().toString();
    ASSERT_EQ((*grads)[1].shape(), (Shape{2}));
    EXPECT_FLOAT_EQ((*grads)[1].data<float>()[0], -3.0F); // -1 + -2
    EXPECT_FLOAT_EQ((*grads)[1].data<float>()[1], -3.0F); // only -3 is negative

    // From opset 7 on the same slope broadcasts numpy-style, along the last axis.
    auto numpy = makeRun("PRelu", {x, slope}).forward();
    ASSERT_TRUE(numpy.ok());
    const std::vector<float> lastAxis{-0.5F, -0.5F, -1.5F, 4.0F};
    for (size_t i = 0; i < lastAxis.size(); ++i) {
        EXPECT_FLOAT_EQ((*numpy)[0].data<float>()[i], lastAxis[i]);
    }
}

TEST(Resize, CubicReproducesACubicPolynomialInside) {
    // Keys' kernel with a = -0.5 reproduces quadratics exactly; away from the edges, upsampling
    // f(i) = i^2 must give f(x) at the mapped coordinate x.
    std::vector<float> values;
    for (int i = 0; i < 8; ++i) {
        values.push_back(static_cast<float>(i * i));
    }
    const Tensor x = Tensor::fromVector<float>({1, 8}, values);
    const Tensor scales = Tensor::fromVector<float>({2}, {1.0F, 2.0F});
    auto y = makeRun("Resize", {x, Tensor(), scales},
                     {stringAttribute("mode", "cubic"), floatAttribute("cubic_coeff_a", -0.5F),
                      stringAttribute("coordinate_transformation_mode", "asymmetric")})
                 .forward();
    ASSERT_TRUE(y.ok()) << y.error().toString();
    ASSERT_EQ((*y)[0].shape(), (Shape{1, 16}));
    for (int o = 4; o < 12; ++o) {
        const double source = o / 2.0;
        EXPECT_NEAR((*y)[0].data<float>()[o], source * source, 1e-4) << "output " << o;
    }
}

TEST(Resize, TfCropAndResizeSamplesTheRoiAndExtrapolates) {
    const Tensor x = Tensor::fromVector<float>({1, 4}, {0.0F, 10.0F, 20.0F, 30.0F});
    const std::vector<graph::Attribute> attributes{
        stringAttribute("mode", "linear"),
        stringAttribute("coordinate_transformation_mode", "tf_crop_and_resize"),
        floatAttribute("extrapolation_value", 7.0F)};
    // Dim 1 spans input coordinates 1.5 .. 4.5: samples at 1.5, 3.0 and 4.5 (outside -> 7).
    const Tensor roi = Tensor::fromVector<float>({4}, {0.0F, 0.5F, 1.0F, 1.5F});
    auto y = makeRun("Resize", {x, roi, Tensor(), int64Tensor<int>({1, 3})}, attributes).forward();
    ASSERT_TRUE(y.ok()) << y.error().toString();
    const std::vector<float> expected{15.0F, 30.0F, 7.0F};
    for (size_t i = 0; i < expected.size(); ++i) {
        EXPECT_FLOAT_EQ((*y)[0].data<float>()[i], expected[i]) << "element " << i;
    }
    auto noRoi =
        makeRun("Resize", {x, Tensor(), Tensor(), int64Tensor<int>({1, 3})}, attributes).forward();
    ASSERT_FALSE(noRoi.ok());
    EXPECT_NE(noRoi.error().toString().find("roi"), std::string::npos);
}

TEST(Resize, ThePlanePathEqualsTheGenericOneBitForBit) {
    // NCHW with only H and W resized runs plane by plane on the threads; the same data as
    // [1, N, C, H, W] takes the generic path. Both must give the same floats, for every mode.
    std::mt19937 rng(5);
    std::normal_distribution<float> normal;
    std::vector<float> values(2 * 3 * 5 * 7);
    for (float& v : values) {
        v = normal(rng);
    }
    const Tensor x4 = Tensor::fromVector<float>({2, 3, 5, 7}, values);
    const Tensor x5 = Tensor::fromVector<float>({1, 2, 3, 5, 7}, values);
    const Tensor scales4 = Tensor::fromVector<float>({4}, {1.0F, 1.0F, 2.0F, 1.5F});
    const Tensor scales5 = Tensor::fromVector<float>({5}, {1.0F, 1.0F, 1.0F, 2.0F, 1.5F});
    for (const char* mode : {"nearest", "linear", "cubic"}) {
        for (const char* transform : {"half_pixel", "align_corners", "asymmetric"}) {
            const std::vector<graph::Attribute> attributes{
                stringAttribute("mode", mode),
                stringAttribute("coordinate_transformation_mode", transform)};
            auto generic = makeRun("Resize", {x5, Tensor(), scales5}, attributes).forward();
            ASSERT_TRUE(generic.ok()) << generic.error().toString();
            for (const int threads : {1, 2}) {
                setNumThreads(threads);
                auto planes = makeRun("Resize", {x4, Tensor(), scales4}, attributes).forward();
                ASSERT_TRUE(planes.ok()) << planes.error().toString();
                ASSERT_EQ((*planes)[0].shape(), (Shape{2, 3, 10, 10}));
                ASSERT_EQ((*planes)[0].numElements(), (*generic)[0].numElements());
                for (int64_t i = 0; i < (*planes)[0].numElements(); ++i) {
                    ASSERT_EQ((*planes)[0].data<float>()[i], (*generic)[0].data<float>()[i])
                        << mode << " " << transform << ", " << threads << " threads, element " << i;
                }
            }
        }
    }
    setNumThreads(0);
}

TEST(Broadcast, ThreadedBinaryOpsEqualTheIndexByIndexReference) {
    // The threads split the output into element ranges that start and end inside rows (rows of
    // 37 or 1000 elements against chunks of 2^14); every element must still meet its operands.
    std::mt19937 rng(9);
    const std::vector<std::pair<Shape, Shape>> cases{
        {{3, 50, 37, 31}, {3, 50, 37, 31}}, // equal shapes: one flat row
        {{2, 40, 33, 37}, {1, 40, 1, 1}},   // per-channel scale, as in squeeze-excitation
        {{2, 40, 33, 37}, {37}},            // a row broadcast over everything
        {{2, 1, 33, 1000}, {2, 40, 1, 1}},  // both sides broadcast
        {{1, 1}, {70000}}};                 // a scalar-like left side
    for (const auto& [shapeA, shapeB] : cases) {
        const Tensor a = randomTensor(rng, shapeA);
        const Tensor b = randomTensor(rng, shapeB);
        auto plan = makeBroadcastPlan({a.shape(), b.shape()});
        ASSERT_TRUE(plan.ok());
        std::vector<float> expected(static_cast<size_t>(shapeNumElements(plan->outShape)));
        forEachBroadcast(*plan, [&](int64_t i, const int64_t* off) {
            expected[static_cast<size_t>(i)] = a.data<float>()[off[0]] - b.data<float>()[off[1]];
        });
        for (const int threads : {1, 2, 3}) {
            setNumThreads(threads);
            auto out = makeRun("Sub", {a, b}).forward();
            ASSERT_TRUE(out.ok()) << out.error().toString();
            ASSERT_EQ((*out)[0].shape(), plan->outShape);
            for (size_t i = 0; i < expected.size(); ++i) {
                ASSERT_EQ((*out)[0].data<float>()[i], expected[i])
                    << shapeToString(shapeA) << " - " << shapeToString(shapeB) << ", " << threads
                    << " threads, element " << i;
            }
        }
    }
    setNumThreads(0);
}

/// x seen as [outer, group, inner], laid out as [g1, outer, inner, group / g1] with the reduced
/// axis split in two around the kept ones: reducing axes 0 and 3 of that takes the generic loop,
/// which folds each output's elements in the same order (along the reduced axis).
Tensor splitAroundKeptAxes(const Tensor& x, int64_t outer, int64_t group, int64_t inner,
                           int64_t g1) {
    const int64_t g2 = group / g1;
    std::vector<float> out(static_cast<size_t>(x.numElements()));
    for (int64_t o = 0; o < outer; ++o) {
        for (int64_t g = 0; g < group; ++g) {
            for (int64_t j = 0; j < inner; ++j) {
                out[static_cast<size_t>(((g / g2 * outer + o) * inner + j) * g2 + g % g2)] =
                    x.data<float>()[(o * group + g) * inner + j];
            }
        }
    }
    return Tensor::fromVector<float>({g1, outer, inner, g2}, out);
}

TEST(ReduceOps, TrailingRunsAndMiddleAxesGiveTheGenericLoopsFloats) {
    // Reducing the last axis of [40, 5, 600] runs run by run on the threads (200 runs, 27 per
    // chunk at least); reducing the middle axis of [6, 33, 70] row by row into 70 accumulators
    // (a mean over the tokens of [batch, tokens, features]). The same values with the reduced
    // axis split around the kept ones take the generic loop. The floats must be the same, bit
    // for bit.
    std::mt19937 rng(13);

    struct Case {
        Shape shape;
        int64_t axis;
        int64_t outer, group, inner, g1;
    };

    for (const Case& c :
         {Case{{40, 5, 600}, -1, 200, 600, 1, 20}, Case{{6, 33, 70}, 1, 6, 33, 70, 3},
          Case{{1, 33, 70}, 1, 1, 33, 70, 11}}) {
        const Tensor x = randomTensor(rng, c.shape, 0.1F, 1.0F);
        const Tensor split = splitAroundKeptAxes(x, c.outer, c.group, c.inner, c.g1);
        for (const char* op :
             {"ReduceMean", "ReduceSum", "ReduceSumSquare", "ReduceL2", "ReduceMax"}) {
            for (const int threads : {1, 2}) {
                setNumThreads(threads);
                auto fast = makeRun(op, {x}, {intsAttribute("axes", {c.axis})}).forward();
                auto generic = makeRun(op, {split}, {intsAttribute("axes", {0, 3})}).forward();
                ASSERT_TRUE(fast.ok() && generic.ok()) << op;
                ASSERT_EQ((*fast)[0].numElements(), c.outer * c.inner) << op;
                for (int64_t i = 0; i < c.outer * c.inner; ++i) {
                    ASSERT_EQ((*fast)[0].data<float>()[i], (*generic)[0].data<float>()[i])
                        << op << ", " << threads << " threads, output " << i << " of "
                        << shapeToString(c.shape);
                }
            }
        }
    }
    setNumThreads(0);
    // A zero-size kept axis after the reduced one: no outputs, nothing to divide the work by.
    auto none = makeRun("ReduceSum", {Tensor::zeros(DataType::Float, {2, 3, 0})},
                        {intsAttribute("axes", {1})})
                    .forward();
    ASSERT_TRUE(none.ok()) << none.error().toString();
    EXPECT_EQ((*none)[0].shape(), (Shape{2, 1, 0}));
    // An empty reduced axis: every output is the fold's start value (0 for a sum).
    auto empty =
        makeRun("ReduceSum", {Tensor::zeros(DataType::Float, {3, 0})}, {intsAttribute("axes", {1})})
            .forward();
    ASSERT_TRUE(empty.ok()) << empty.error().toString();
    ASSERT_EQ((*empty)[0].shape(), (Shape{3, 1}));
    for (int64_t i = 0; i < 3; ++i) {
        EXPECT_EQ((*empty)[0].data<float>()[i], 0.0F);
    }
}

// ReduceMax and ReduceMin fold runs of floats eight lanes at a time, and split a few long runs
// over the threads: the same bits as the generic loop, through what order could change, the sign
// of a zero extremum (-0 seen before +0, or after) and NaNs, which never replace the extremum.
TEST(ReduceOps, ExtremaOfLongRunsEqualTheGenericLoopThroughZerosAndNaN) {
    constexpr int64_t kGroup = 300000;
    std::mt19937 rng(29);
    std::uniform_real_distribution<float> magnitude(0.5F, 8.0F);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (const char* op : {"ReduceMax", "ReduceMin"}) {
        const float sign = std::string(op) == "ReduceMax" ? -1.0F : 1.0F; // away from the extremum
        std::vector<float> values(static_cast<size_t>(4 * kGroup));
        for (float& v : values) {
            v = sign * magnitude(rng);
        }
        const auto at = [&](int64_t row, int64_t i) -> float& {
            return values[static_cast<size_t>(row * kGroup + i)];
        };
        // Row 0: the extremum is zero, -0 first (in the last lane of a vector) and +0 next (in
        // the first lane of the next one, which a fold of the lanes in order would take first);
        // row 1 the other way round, and zeros in later pieces of the run too.
        at(0, 7) = -0.0F;
        at(0, 32) = 0.0F;
        at(0, 250003) = 0.0F;
        at(1, 31) = 0.0F;
        at(1, 32) = -0.0F;
        at(1, 200017) = -0.0F;
        // Row 2: NaNs everywhere, the extremum in the last, partial vector.
        for (int64_t i = 0; i < kGroup; i += 7) {
            at(2, i) = nan;
        }
        at(2, kGroup - 3) = -sign * 9.0F;
        // Row 3: nothing but NaN.
        for (int64_t i = 0; i < kGroup; ++i) {
            at(3, i) = nan;
        }
        const Tensor x = Tensor::fromVector<float>({4, kGroup}, values);
        const Tensor split = splitAroundKeptAxes(x, 4, kGroup, 1, 3);
        for (const int threads : {1, 2}) {
            setNumThreads(threads);
            auto fast = makeRun(op, {x}, {intsAttribute("axes", {1})}).forward();
            auto generic = makeRun(op, {split}, {intsAttribute("axes", {0, 3})}).forward();
            ASSERT_TRUE(fast.ok() && generic.ok()) << op;
            for (int64_t r = 0; r < 4; ++r) {
                const float f = (*fast)[0].data<float>()[r];
                const float g = (*generic)[0].data<float>()[r];
                EXPECT_EQ(std::bit_cast<uint32_t>(f), std::bit_cast<uint32_t>(g))
                    << op << ", " << threads << " threads, row " << r << ": " << f << " vs " << g;
            }
            // Each row alone: one output, so two threads split its run into pieces.
            for (int64_t r = 0; r < 4; ++r) {
                const Tensor one = Tensor::fromVector<float>(
                    {1, kGroup}, std::vector<float>(values.begin() + r * kGroup,
                                                    values.begin() + (r + 1) * kGroup));
                auto alone = makeRun(op, {one}, {intsAttribute("axes", {1})}).forward();
                ASSERT_TRUE(alone.ok()) << op;
                EXPECT_EQ(std::bit_cast<uint32_t>((*alone)[0].data<float>()[0]),
                          std::bit_cast<uint32_t>((*generic)[0].data<float>()[r]))
                    << op << ", " << threads << " threads, row " << r << " alone";
            }
        }
        EXPECT_TRUE(std::signbit(
            (*makeRun(op, {x}, {intsAttribute("axes", {1})}).forward())[0].data<float>()[0]))
            << op << ": the first zero seen was -0";
    }
    setNumThreads(0);
}

TEST(SumInDouble, PartialSumsStayWithinRoundingOfTheLongDoubleSum) {
    std::mt19937 rng(23);
    std::uniform_real_distribution<float> uniform(-3.0F, 5.0F);
    std::vector<float> x(12547);
    for (float& v : x) {
        v = uniform(rng);
    }
    for (const int64_t count : {0, 1, 3, 15, 16, 17, 40, 12547}) {
        long double sum = 0.0L;
        long double squares = 0.0L;
        long double magnitude = 0.0L;
        for (int64_t i = 0; i < count; ++i) {
            const long double v = x[static_cast<size_t>(i)];
            sum += v;
            squares += v * v;
            magnitude += std::abs(v);
        }
        // Recursive summation: at most count adds, each rounding by 2^-53 of the magnitude.
        const double bound =
            static_cast<double>(count) * 1.2e-16 * static_cast<double>(magnitude + squares) +
            1e-300;
        EXPECT_NEAR(sumInDouble(x.data(), count), static_cast<double>(sum), bound) << count;
        EXPECT_NEAR(sumOfSquares(x.data(), count), static_cast<double>(squares), bound) << count;
    }
}

TEST(GlobalAveragePool, MeansOfLargePlanesEqualTheFloatOfTheDoubleMean) {
    // 32 planes of 112 x 112 + ... : efficientnet_b0's first squeeze-and-excite block.
    std::mt19937 rng(29);
    const Tensor x = randomTensor(rng, {2, 16, 113, 111}, -1.0F, 2.0F);
    auto out = makeRun("GlobalAveragePool", {x}, {}).forward();
    ASSERT_TRUE(out.ok()) << out.error().toString();
    ASSERT_EQ((*out)[0].shape(), (Shape{2, 16, 1, 1}));
    const int64_t inner = 113 * 111;
    for (int64_t p = 0; p < 32; ++p) {
        long double sum = 0.0L;
        for (int64_t i = 0; i < inner; ++i) {
            sum += x.data<float>()[p * inner + i];
        }
        const auto expected = static_cast<float>(static_cast<double>(sum) / inner);
        EXPECT_NEAR((*out)[0].data<float>()[p], expected, 1e-7F * (1.0F + std::abs(expected)))
            << "plane " << p;
    }
}

TEST(Pow, SquaringEqualsPowInDoubleBitForBit) {
    std::mt19937 rng(17);
    const Tensor x = randomTensor(rng, {3, 7000}, -30.0F, 30.0F);
    for (const Tensor& exponent :
         {Tensor::fromVector<float>({}, {2.0F}), Tensor::fromVector<float>({1}, {2.0F}),
          Tensor::fromVector<double>({1, 1}, {2.0})}) {
        auto y = makeRun("Pow", {x, exponent}).forward();
        ASSERT_TRUE(y.ok()) << y.error().toString();
        ASSERT_EQ((*y)[0].shape(), x.shape());
        for (int64_t i = 0; i < x.numElements(); ++i) {
            const auto expected =
                static_cast<float>(std::pow(static_cast<double>(x.data<float>()[i]), 2.0));
            ASSERT_EQ((*y)[0].data<float>()[i], expected) << "element " << i;
        }
    }
    // A higher-rank exponent broadcasts x up: the generic path, with the broadcast shape.
    auto wide = makeRun("Pow", {x, Tensor::fromVector<float>({1, 1, 1}, {2.0F})}).forward();
    ASSERT_TRUE(wide.ok());
    EXPECT_EQ((*wide)[0].shape(), (Shape{1, 3, 7000}));
}

/// x -> QuantizeLinear(scale 0.1, int8 zero point 0) -> DequantizeLinear -> y.
graph::Graph makeFakeQuant() {
    graph::Graph g;
    const auto x = g.addValue("x", DataType::Float, graph::TensorShape::ofDims({5}));
    const std::vector<float> scaleValue{0.1F};
    const std::vector<int8_t> zeroValue{0};
    const auto scale = g.addInitializer(
        "scale", graph::TensorData::fromValues<float>(DataType::Float, {}, std::span(scaleValue)));
    const auto zero = g.addInitializer(
        "zero", graph::TensorData::fromValues<int8_t>(DataType::Int8, {}, std::span(zeroValue)));
    const auto q = g.addValue("q", DataType::Int8);
    const auto y = g.addValue("y", DataType::Float);
    g.addInput(x);
    g.addNode("quantize", "QuantizeLinear", {x, scale, zero}, {q});
    g.addNode("dequantize", "DequantizeLinear", {q, scale, zero}, {y});
    g.addOutput(y);
    return g;
}

TEST(FakeQuant, StraightThroughInsideTheClipRangeZeroOutside) {
    auto exec = Executor::create(makeFakeQuant());
    ASSERT_TRUE(exec.ok()) << exec.error().toString();
    // Codes: 3 (inside), -5 (inside), 200 (clipped to 127), -130 (clipped to -128), 127 (the
    // range's edge, inside).
    const Tensor x = Tensor::fromVector<float>({5}, {0.33F, -0.5F, 20.0F, -13.0F, 12.7F});
    auto trace = exec->forwardWithTrace(std::span(&x, 1));
    ASSERT_TRUE(trace.ok()) << trace.error().toString();
    const graph::ValueId y = exec->graph().outputs()[0];
    const std::vector<float> expectedY{0.3F, -0.5F, 12.7F, -12.8F, 12.7F};
    for (int64_t i = 0; i < 5; ++i) {
        EXPECT_NEAR(trace->values[y.index()].elementAsDouble(i), expectedY[static_cast<size_t>(i)],
                    1e-6);
    }
    const std::pair<graph::ValueId, Tensor> seed{
        y, Tensor::fromVector<float>({5}, {1.0F, 2.0F, 3.0F, 4.0F, 5.0F})};
    auto grads = exec->backward(*trace, std::span(&seed, 1));
    ASSERT_TRUE(grads.ok()) << grads.error().toString();
    const Tensor& dx = (*grads)[exec->inputIds()[0].index()];
    ASSERT_TRUE(dx.defined()) << "no gradient reached x through the QDQ pair";
    const std::vector<float> expectedDx{1.0F, 2.0F, 0.0F, 0.0F, 5.0F};
    for (int64_t i = 0; i < 5; ++i) {
        EXPECT_NEAR(dx.data<float>()[i], expectedDx[static_cast<size_t>(i)], 1e-6)
            << "element " << i;
    }
}

TEST(FakeQuant, QuantizeAloneScalesByOneOverScale) {
    const Tensor x = Tensor::fromVector<float>({3}, {0.2F, 1.0F, -0.9F});
    NodeRun q =
        makeRun("QuantizeLinear", {x, Tensor::scalar<float>(0.25F), Tensor::scalar<uint8_t>(2)});
    auto codes = q.forward();
    ASSERT_TRUE(codes.ok()) << codes.error().toString();
    // round(0.8) + 2 = 3, round(4) + 2 = 6, round(-3.6) + 2 = -2 -> saturates to 0.
    EXPECT_EQ((*codes)[0].data<uint8_t>()[0], 3);
    EXPECT_EQ((*codes)[0].data<uint8_t>()[1], 6);
    EXPECT_EQ((*codes)[0].data<uint8_t>()[2], 0);
    const std::vector<Tensor> dq{Tensor::fromVector<float>({3}, {1.0F, -1.0F, 1.0F})};
    auto grads = findOp("QuantizeLinear")->vjp(q.context(), *codes, dq);
    ASSERT_TRUE(grads.ok()) << grads.error().toString();
    EXPECT_FLOAT_EQ((*grads)[0].data<float>()[0], 4.0F);
    EXPECT_FLOAT_EQ((*grads)[0].data<float>()[1], -4.0F);
    EXPECT_FLOAT_EQ((*grads)[0].data<float>()[2], 0.0F);
}

TEST(QuantizeLinear, Int4OutputSaturatesToFourBits) {
    const Tensor x = Tensor::fromVector<float>({4}, {1.0F, -1.0F, 100.0F, -100.0F});
    auto y = makeRun("QuantizeLinear", {x, Tensor::scalar<float>(0.5F)},
                     {intAttribute("output_dtype", static_cast<int64_t>(DataType::Int4))})
                 .forward();
    ASSERT_TRUE(y.ok()) << y.error().toString();
    ASSERT_EQ((*y)[0].dtype(), DataType::Int8); // int4 lives unpacked, one per byte
    const std::vector<int8_t> expected{2, -2, 7, -8};
    for (size_t i = 0; i < expected.size(); ++i) {
        EXPECT_EQ((*y)[0].data<int8_t>()[i], expected[i]);
    }
    auto u = makeRun("QuantizeLinear", {x, Tensor::scalar<float>(0.5F)},
                     {intAttribute("output_dtype", static_cast<int64_t>(DataType::UInt4))})
                 .forward();
    ASSERT_TRUE(u.ok()) << u.error().toString();
    EXPECT_EQ((*u)[0].data<uint8_t>()[2], 15);
    EXPECT_EQ((*u)[0].data<uint8_t>()[3], 0);
}

TEST(Variadic, MaxMinMeanOnHalfComputeInFloat) {
    const Tensor a =
        castTensor(Tensor::fromVector<float>({3}, {1.0F, -2.0F, 0.5F}), DataType::Float16);
    const Tensor b = castTensor(Tensor::fromVector<float>({1}, {0.25F}), DataType::Float16);
    const std::vector<std::pair<const char*, std::vector<float>>> cases{
        {"Max", {1.0F, 0.25F, 0.5F}},
        {"Min", {0.25F, -2.0F, 0.25F}},
        {"Mean", {0.625F, -0.875F, 0.375F}}};
    for (const auto& [op, expected] : cases) {
        auto y = makeRun(op, {a, b}).forward();
        ASSERT_TRUE(y.ok()) << op << ": " << y.error().toString();
        ASSERT_EQ((*y)[0].dtype(), DataType::Float16) << op;
        for (size_t i = 0; i < expected.size(); ++i) {
            EXPECT_FLOAT_EQ(static_cast<float>((*y)[0].elementAsDouble(static_cast<int64_t>(i))),
                            expected[i])
                << op << " element " << i;
        }
    }
    auto mixed = makeRun("Max", {a, Tensor::fromVector<float>({1}, {0.0F})}).forward();
    ASSERT_FALSE(mixed.ok());
    EXPECT_NE(mixed.error().toString().find("float16 and float"), std::string::npos)
        << mixed.error().toString();
}

TEST(MaxPool, Uint8MatchesTheFloatKernel) {
    const Tensor x = Tensor::fromVector<uint8_t>({1, 1, 2, 3}, {7, 250, 3, 0, 255, 9});
    auto y = makeRun("MaxPool", {x},
                     {intsAttribute("kernel_shape", {2, 2}), intsAttribute("pads", {0, 0, 0, 1})})
                 .forward();
    ASSERT_TRUE(y.ok()) << y.error().toString();
    ASSERT_EQ((*y)[0].dtype(), DataType::UInt8);
    ASSERT_EQ((*y)[0].shape(), (Shape{1, 1, 1, 3}));
    const std::vector<uint8_t> expected{255, 255, 9};
    for (size_t i = 0; i < expected.size(); ++i) {
        EXPECT_EQ((*y)[0].data<uint8_t>()[i], expected[i]);
    }
}

TEST(Gemm, InputGradSplitOverTheThreadsEqualsTheDoubleProduct) {
    // A classifier's dA at batch 1 and 3: B large enough to be split by A's columns on two
    // threads, in every transposition; the registry-wide test sees only small samples.
    std::mt19937 rng(11);
    const int64_t n = 300;
    const int64_t k = 700;
    for (const int64_t m : {1, 3}) {
        for (const int transA : {0, 1}) {
            for (const int transB : {0, 1}) {
                SCOPED_TRACE("m " + std::to_string(m) + " transA " + std::to_string(transA) +
                             " transB " + std::to_string(transB));
                const Tensor a = randomTensor(rng, transA != 0 ? Shape{k, m} : Shape{m, k});
                const Tensor b = randomTensor(rng, transB != 0 ? Shape{n, k} : Shape{k, n});
                const Tensor dy = randomTensor(rng, {m, n});
                NodeRun run =
                    makeRun("Gemm", {a, b},
                            {intAttribute("transA", transA), intAttribute("transB", transB),
                             floatAttribute("alpha", 0.5F)});
                for (const int threads : {1, 2}) {
                    setNumThreads(threads);
                    OpContext context = run.context();
                    context.gradMask = 1U; // dA only
                    auto grads = findOp("Gemm")->vjp(context, {}, std::span(&dy, 1));
                    ASSERT_TRUE(grads.ok()) << grads.error().toString();
                    const Tensor& da = (*grads)[0];
                    ASSERT_EQ(da.shape(), a.shape());
                    for (int64_t i = 0; i < m; ++i) {
                        for (int64_t j = 0; j < k; ++j) {
                            double sum = 0;
                            for (int64_t c = 0; c < n; ++c) {
                                const float bValue = transB != 0 ? b.data<float>()[c * k + j]
                                                                 : b.data<float>()[j * n + c];
                                sum += static_cast<double>(dy.data<float>()[i * n + c]) * bValue;
                            }
                            const float got = transA != 0 ? da.data<float>()[j * m + i]
                                                          : da.data<float>()[i * k + j];
                            ASSERT_NEAR(got, 0.5 * sum, 1e-4 * (1 + std::abs(sum)))
                                << threads << " threads, row " << i << " column " << j;
                        }
                    }
                }
            }
        }
    }
    setNumThreads(0);
}

} // namespace
} // namespace qs::runtime

namespace qs::runtime {
namespace {

using graph::DataType;

// dx comes from the buffer pool and each plane is cleared before the scatter: a recycled buffer
// full of NaN must not leak into it. Windows overlap (3x3 stride 2, pads 1), so an input that
// wins two windows gets both gradients; a tie goes to the window's first position.
// A 1x1 stride-1 Conv padded at the bottom and right has an output larger than its input: not
// the pointwise path that reads the image as its im2col matrix (which would read past it).
TEST(Conv, A1x1ConvWithEndPadsMatchesTheReference) {
    std::mt19937 rng(6);
    std::normal_distribution<float> normal(0.0F, 1.0F);
    std::vector<float> xs(2 * 8 * 5 * 6);
    std::vector<float> ws(10 * 8);
    for (float& v : xs) {
        v = normal(rng);
    }
    for (float& v : ws) {
        v = normal(rng);
    }
    const NodeRun run = makeRun(
        "Conv",
        {Tensor::fromVector<float>({2, 8, 5, 6}, xs), Tensor::fromVector<float>({10, 8, 1, 1}, ws)},
        {intsAttribute("pads", {0, 0, 1, 1})});
    auto fast = run.forward();
    auto ref = findOp("Conv")->reference(run.context());
    ASSERT_TRUE(fast.ok() && ref.ok());
    ASSERT_EQ((*fast)[0].shape(), (Shape{2, 10, 6, 7}));
    for (int64_t i = 0; i < (*ref)[0].numElements(); ++i) {
        EXPECT_NEAR((*fast)[0].data<float>()[i], (*ref)[0].data<float>()[i], 1e-5) << i;
    }
}

TEST(Softmax, ContiguousRowsMatchTheDefiningFormula) {
    // Rows along the last axis take the vectorised path, a middle axis the strided loop; both
    // against exp(x - max) / sum in double, including rows of large logits and a -inf entry.
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> uniform(-30.0F, 30.0F);
    for (const int64_t length : {1, 7, 32, 100}) {
        for (const int64_t axis : {-1, 1}) {
            const Shape shape = axis == -1 ? Shape{3, 2, length} : Shape{3, length, 2};
            std::vector<float> values(static_cast<size_t>(3 * length * 2));
            for (float& v : values) {
                v = uniform(rng);
            }
            const int64_t inner = axis == -1 ? 1 : 2;
            if (length > 1) { // row 0: a -inf entry, and exp(80) overflows float unshifted
                values[0] = -std::numeric_limits<float>::infinity();
                values[static_cast<size_t>(inner)] = 80.0F;
            }
            const Tensor x = Tensor::fromVector<float>(shape, values);
            const NodeRun run =
                makeRun("Softmax", {x}, {graph::Attribute{"axis", int64_t{axis}, {}}});
            auto y = run.forward();
            ASSERT_TRUE(y.ok()) << y.error().toString();
            const int64_t len = length;
            for (int64_t row = 0; row < 3 * length * 2 / len; ++row) {
                const int64_t base = (row / inner) * len * inner + row % inner;
                float maxValue = -std::numeric_limits<float>::infinity();
                for (int64_t i = 0; i < len; ++i) {
                    maxValue = std::max(maxValue, values[base + i * inner]);
                }
                // The shift is a float subtraction in the kernels too; the rest in double.
                const auto shifted = [&](int64_t i) {
                    return static_cast<double>(values[base + i * inner] - maxValue);
                };
                double sum = 0.0;
                for (int64_t i = 0; i < len; ++i) {
                    sum += std::exp(shifted(i));
                }
                for (int64_t i = 0; i < len; ++i) {
                    const double expected = std::exp(shifted(i)) / sum;
                    EXPECT_NEAR((*y)[0].data<float>()[base + i * inner], expected,
                                1e-6 * expected + 1e-38)
                        << "length " << length << " axis " << axis << " row " << row;
                }
            }
        }
    }
}

TEST(Erf, TheVectorisedKernelStaysCloseToErfInDoubleAndWithinOne) {
    // Dense over [-5, 5] (erf is +-1 in float beyond), plus tiny and huge arguments and NaN.
    std::vector<float> values;
    for (int i = -50000; i <= 50000; ++i) {
        values.push_back(static_cast<float>(i) * 1e-4F);
    }
    for (const float v : {1e-30F, -1e-20F, 40.0F, -1e30F}) {
        values.push_back(v);
    }
    values.push_back(std::numeric_limits<float>::quiet_NaN());
    const auto count = static_cast<int64_t>(values.size());
    const NodeRun run = makeRun("Erf", {Tensor::fromVector<float>({count}, values)});
    auto y = run.forward();
    ASSERT_TRUE(y.ok()) << y.error().toString();
    const float* out = (*y)[0].data<float>();
    double worst = 0.0;
    for (int64_t i = 0; i + 1 < count; ++i) {
        const double expected = std::erf(static_cast<double>(values[static_cast<size_t>(i)]));
        // Relative near zero (erf(x) ~ 1.13 x), absolute elsewhere: |erf| <= 1 always.
        const double error = std::abs(out[i] - expected) / std::max(std::abs(expected), 0.1);
        worst = std::max(worst, error);
        ASSERT_LE(std::abs(out[i]), 1.0F) << "erf(" << values[static_cast<size_t>(i)] << ")";
    }
    EXPECT_LT(worst, 4e-7); // 3.3e-7 near |x| = 3.93 with Eigen 3.4's rational approximation
    EXPECT_TRUE(std::isnan(out[count - 1]));
}

/// MaxPool's fast forward of `run` equals its reference loops element by element.
void expectMaxPoolEqualsReference(const NodeRun& run, const std::string& label) {
    auto fast = run.forward();
    auto ref = findOp("MaxPool")->reference(run.context());
    ASSERT_TRUE(fast.ok() && ref.ok()) << label;
    ASSERT_EQ((*fast)[0].shape(), (*ref)[0].shape()) << label;
    for (int64_t i = 0; i < (*ref)[0].numElements(); ++i) {
        EXPECT_EQ((*fast)[0].data<float>()[i], (*ref)[0].data<float>()[i])
            << label << ", element " << i;
    }
}

// The separable forward ignores a NaN wherever it sits in a window (as the reference's `x > best`
// does), and a negative pad (a crop, which ONNX does not forbid) takes the reference loops.
TEST(MaxPool, NaNsAndNegativePadsFollowTheReference) {
    std::mt19937 rng(3);
    Tensor x = randomDistinct(rng, {1, 2, 7, 9});
    x.mutableData<float>()[0] = std::nanf("");  // first row and column of a window
    x.mutableData<float>()[40] = std::nanf(""); // inside one
    for (const std::vector<int64_t>& pads :
         {std::vector<int64_t>{1, 1, 1, 1}, std::vector<int64_t>{0, -1, 1, 0}}) {
        const NodeRun run =
            makeRun("MaxPool", {x},
                    {intsAttribute("kernel_shape", {3, 3}), intsAttribute("strides", {2, 2}),
                     intsAttribute("pads", pads)});
        expectMaxPoolEqualsReference(run, "pads " + std::to_string(pads[1]));
    }
}

// Windows of one, two, three and four rows (the row folds' cases) with NaNs in every row
// position of a window: the fast kernel ignores them as the reference does.
TEST(MaxPool, NaNsInWindowsOfEveryHeightFollowTheReference) {
    std::mt19937 rng(5);
    Tensor x = randomDistinct(rng, {1, 2, 9, 11});
    for (int64_t i = 0; i < x.numElements(); i += 7) {
        x.mutableData<float>()[i] = std::nanf("");
    }
    for (const int64_t rows : {1, 2, 3, 4}) {
        for (const int64_t stride : {1, 2}) {
            const NodeRun run = makeRun("MaxPool", {x},
                                        {intsAttribute("kernel_shape", {rows, 2}),
                                         intsAttribute("strides", {stride, stride})});
            expectMaxPoolEqualsReference(run, std::to_string(rows) + " rows, stride " +
                                                  std::to_string(stride));
        }
    }
}

// The AVX-512 row kernel (windows 2 or 3 wide at horizontal stride 2) and the AVX2 one against
// the reference loops: rows of one to three segments of 64 outputs with partial chunks, pads 0
// to 2 each side, ceil mode (windows past the end pad), window heights 1 to 4, vertical strides
// 1 and 2, NaNs in every eleventh element, one and two threads.
TEST(MaxPool, StrideTwoRowsMatchTheReferenceWithAndWithoutAvx512) {
    std::mt19937 rng(17);
    const bool wideBefore = setWideGemmKernel(true);
    for (const int64_t width : {2, 3, 5, 16, 27, 31, 33, 64, 65, 111, 112, 129, 200, 261}) {
        for (const int64_t kw : {2, 3}) {
            for (const int64_t left : {0, 1, 2}) {
                for (const int64_t ceil : {0, 1}) {
                    const int64_t kh = 1 + (width + left + ceil) % 4;
                    const int64_t rowStride = 1 + width % 2;
                    const int64_t top = std::min<int64_t>(left, kh - 1);
                    const int64_t right = (width + kw) % 3 == 0 ? 1 : 0;
                    if (left >= kw || width + left + right < kw) {
                        continue;
                    }
                    Tensor x = randomDistinct(rng, {2, 2, 5, width});
                    for (int64_t i = 0; i < x.numElements(); i += 11) {
                        x.mutableData<float>()[i] = std::nanf("");
                    }
                    const NodeRun run = makeRun("MaxPool", {x},
                                                {intsAttribute("kernel_shape", {kh, kw}),
                                                 intsAttribute("strides", {rowStride, 2}),
                                                 intsAttribute("pads", {top, left, 0, right}),
                                                 intAttribute("ceil_mode", ceil)});
                    for (const bool wide : {false, true}) {
                        setWideGemmKernel(wide);
                        for (const int threads : {1, 2}) {
                            setNumThreads(threads);
                            expectMaxPoolEqualsReference(
                                run, "width " + std::to_string(width) + ", window " +
                                         std::to_string(kh) + "x" + std::to_string(kw) +
                                         ", left pad " + std::to_string(left) + ", ceil " +
                                         std::to_string(ceil) + (wide ? ", AVX-512" : "") +
                                         ", threads " + std::to_string(threads));
                        }
                    }
                }
            }
        }
    }
    setWideGemmKernel(wideBefore);
    setNumThreads(0);
}

TEST(MaxPool, VjpScattersIntoAClearedRecycledBuffer) {
    const Shape shape{2, 3, 7, 6};
    std::mt19937 rng(5);
    std::uniform_int_distribution<int> level(0, 4); // few levels: many ties
    std::vector<float> xs(static_cast<size_t>(2 * 3 * 7 * 6));
    for (float& v : xs) {
        v = static_cast<float>(level(rng));
    }
    const Tensor x = Tensor::fromVector<float>(shape, xs);
    NodeRun run = makeRun("MaxPool", {x},
                          {intsAttribute("kernel_shape", {3, 3}), intsAttribute("strides", {2, 2}),
                           intsAttribute("pads", {1, 1, 1, 1})});
    auto y = run.forward();
    ASSERT_TRUE(y.ok()) << y.error().toString();
    const Shape outShape = (*y)[0].shape();
    ASSERT_EQ(outShape, (Shape{2, 3, 4, 3}));
    std::vector<float> dys(static_cast<size_t>((*y)[0].numElements()));
    for (size_t i = 0; i < dys.size(); ++i) {
        dys[i] = 1.0F + static_cast<float>(i);
    }
    const Tensor dy = Tensor::fromVector<float>(outShape, dys);
    const float* recycled = nullptr;
    {
        Tensor dirty = Tensor::allocate(DataType::Float, shape);
        std::fill_n(dirty.mutableData<float>(), dirty.numElements(), std::nanf(""));
        recycled = dirty.data<float>();
    }
    auto grads = findOp("MaxPool")->vjp(run.context(), *y, std::span(&dy, 1));
    ASSERT_TRUE(grads.ok()) << grads.error().toString();
    ASSERT_EQ((*grads)[0].data<float>(), recycled) << "dx did not get the recycled buffer";
    std::vector<double> expected(xs.size(), 0.0);
    for (int64_t plane = 0; plane < 6; ++plane) {
        for (int64_t oy = 0; oy < 4; ++oy) {
            for (int64_t ox = 0; ox < 3; ++ox) {
                int64_t where = -1;
                float best = -std::numeric_limits<float>::infinity();
                for (int64_t iy = 2 * oy - 1; iy <= 2 * oy + 1; ++iy) {
                    for (int64_t ix = 2 * ox - 1; ix <= 2 * ox + 1; ++ix) {
                        if (iy >= 0 && iy < 7 && ix >= 0 && ix < 6 &&
                            xs[static_cast<size_t>(plane * 42 + iy * 6 + ix)] > best) {
                            best = xs[static_cast<size_t>(plane * 42 + iy * 6 + ix)];
                            where = plane * 42 + iy * 6 + ix;
                        }
                    }
                }
                expected[static_cast<size_t>(where)] +=
                    dys[static_cast<size_t>(plane * 12 + oy * 3 + ox)];
            }
        }
    }
    const Tensor& dx = (*grads)[0];
    ASSERT_EQ(dx.shape(), shape);
    for (size_t i = 0; i < expected.size(); ++i) {
        EXPECT_EQ(dx.data<float>()[i], expected[i]) << "element " << i;
    }
}

// The VJP finds each window's first maximum by comparing with the forward's output, row by row
// (vectorised, strides 1 and 2 compiled apart); without the output it keeps a running maximum per
// window. Both must send every dy to the same element, through ties, NaNs, windows of -inf and
// windows clipped by padding or ceil mode.
TEST(MaxPool, VjpFromTheForwardsMaximaEqualsTheRunningMaximum) {
    struct Geometry {
        std::vector<int64_t> kernel, strides, pads;
        int64_t ceil = 0;
    };

    const std::vector<Geometry> geometries{
        {{3, 3}, {2, 2}, {1, 1, 1, 1}},    {{3, 3}, {1, 1}, {1, 1, 1, 1}},
        {{2, 2}, {2, 2}, {0, 0, 0, 0}, 1}, {{3, 3}, {2, 2}, {0, 1, 1, 0}, 1},
        {{5, 3}, {3, 3}, {2, 1, 2, 1}},    {{1, 4}, {1, 3}, {0, 2, 0, 3}, 1},
        {{3, 3}, {2, 2}, {0, 0, 0, 0}, 1},
    };
    std::mt19937 rng(11);
    std::uniform_int_distribution<int> level(0, 5); // few levels: ties in most windows
    const Shape shape{2, 3, 11, 37};                // rows long enough for the vector loop
    std::vector<float> xs(static_cast<size_t>(shapeNumElements(shape)));
    for (float& v : xs) {
        v = static_cast<float>(level(rng));
    }
    xs[5] = std::nanf("");
    xs[100] = std::numeric_limits<float>::infinity();
    // Plane 1 is -inf but for a NaN: its windows have no maximum to pass dy to.
    const auto plane = static_cast<std::ptrdiff_t>(11 * 37);
    std::fill(xs.begin() + plane, xs.begin() + 2 * plane, -std::numeric_limits<float>::infinity());
    xs[static_cast<size_t>(plane + 40)] = std::nanf("");
    const Tensor x = Tensor::fromVector<float>(shape, xs);
    for (const Geometry& geo : geometries) {
        const NodeRun run = makeRun(
            "MaxPool", {x},
            {intsAttribute("kernel_shape", geo.kernel), intsAttribute("strides", geo.strides),
             intsAttribute("pads", geo.pads), intAttribute("ceil_mode", geo.ceil)});
        auto y = run.forward();
        ASSERT_TRUE(y.ok()) << y.error().toString();
        std::vector<float> dys(static_cast<size_t>((*y)[0].numElements()));
        for (size_t i = 0; i < dys.size(); ++i) {
            dys[i] = 1.0F + static_cast<float>(i % 97);
        }
        const Tensor dy = Tensor::fromVector<float>((*y)[0].shape(), dys);
        auto fromMaxima = findOp("MaxPool")->vjp(run.context(), *y, std::span(&dy, 1));
        auto running = findOp("MaxPool")->vjp(run.context(), {}, std::span(&dy, 1));
        ASSERT_TRUE(fromMaxima.ok() && running.ok());
        const Tensor& a = (*fromMaxima)[0];
        const Tensor& b = (*running)[0];
        ASSERT_EQ(a.shape(), shape);
        ASSERT_EQ(b.shape(), shape);
        int64_t nonzero = 0;
        for (int64_t i = 0; i < a.numElements(); ++i) {
            ASSERT_EQ(a.data<float>()[i], b.data<float>()[i])
                << "kernel " << geo.kernel[0] << "x" << geo.kernel[1] << " stride "
                << geo.strides[1] << ", element " << i;
            nonzero += a.data<float>()[i] != 0.0F ? 1 : 0;
        }
        EXPECT_GT(nonzero, 0);
    }
}

// Concat copies on the threads: by outer index when there are many rows (axis 3 here), in
// pieces of 64 KiB when there are few long ones (axes 0 and 1, a Fire module's). Forward and VJP
// on one and two threads, element for element against plain loops.
TEST(Concat, LargeInputsCopiedOnTheThreads) {
    std::mt19937 rng(21);
    const Shape shape{2, 3, 70, 90};
    for (const int64_t axis : {int64_t{0}, int64_t{1}, int64_t{3}}) {
        Shape otherShape = shape;
        otherShape[static_cast<size_t>(axis)] = axis == 3 ? 7 : 5;
        const Tensor a = randomTensor(rng, shape);
        const Tensor b = randomTensor(rng, otherShape);
        // Plain loops: each outer index holds a's row, then b's.
        int64_t outer = 1;
        for (int64_t d = 0; d < axis; ++d) {
            outer *= shape[static_cast<size_t>(d)];
        }
        const int64_t rowA = a.numElements() / outer;
        const int64_t rowB = b.numElements() / outer;
        std::vector<float> expected;
        for (int64_t o = 0; o < outer; ++o) {
            expected.insert(expected.end(), a.data<float>() + o * rowA,
                            a.data<float>() + (o + 1) * rowA);
            expected.insert(expected.end(), b.data<float>() + o * rowB,
                            b.data<float>() + (o + 1) * rowB);
        }
        const NodeRun run = makeRun("Concat", {a, b}, {intAttribute("axis", axis)});
        for (const int threads : {1, 2}) {
            setNumThreads(threads);
            SCOPED_TRACE("axis " + std::to_string(axis) + ", " + std::to_string(threads) +
                         " threads");
            auto y = run.forward();
            ASSERT_TRUE(y.ok()) << y.error().toString();
            const Tensor& out = (*y)[0];
            ASSERT_EQ(out.numElements(), static_cast<int64_t>(expected.size()));
            for (int64_t i = 0; i < out.numElements(); ++i) {
                ASSERT_EQ(out.data<float>()[i], expected[static_cast<size_t>(i)]) << i;
            }
            const std::vector<Tensor> dy{out};
            auto grads = findOp("Concat")->vjp(run.context(), *y, dy);
            ASSERT_TRUE(grads.ok()) << grads.error().toString();
            ASSERT_EQ(grads->size(), 2U);
            for (const auto& [grad, input] : {std::pair{&(*grads)[0], &a}, {&(*grads)[1], &b}}) {
                ASSERT_EQ(grad->shape(), input->shape());
                for (int64_t i = 0; i < input->numElements(); ++i) {
                    ASSERT_EQ(grad->data<float>()[i], input->data<float>()[i]) << i;
                }
            }
        }
    }
    setNumThreads(0);
}

} // namespace
} // namespace qs::runtime
