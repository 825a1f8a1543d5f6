#include "core/graph/graph_builder.h"
#include "core/runtime/executor.h"
#include "core/runtime/shape_memo.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <tuple>

namespace qs::runtime {
namespace {

using graph::DataType;
using graph::Graph;
using graph::TensorShape;
using graph::ValueId;

ValueId int64Constant(Graph& g, const std::string& name, std::vector<int64_t> dims,
                      std::vector<int64_t> values) {
    return g.addInitializer(
        name, graph::TensorData::fromValues<int64_t>(DataType::Int64, dims, std::span(values)));
}

ValueId value(Graph& g, const std::string& name, DataType dtype = DataType::Int64) {
    return g.addValue(name, dtype, TensorShape());
}

/// An opset-13 graph whose float input `x` of `dims` feeds a Shape node.
struct ShapeOfInput {
    Graph graph;
    ValueId x;
    ValueId shape;
};

ShapeOfInput shapeOfInput(const std::vector<int64_t>& dims) {
    ShapeOfInput s;
    s.graph.metadata().opsetImports = {{"", 13}};
    s.x = s.graph.addValue("x", DataType::Float, TensorShape::ofDims(dims));
    s.graph.addInput(s.x);
    s.shape = value(s.graph, "shape");
    s.graph.addNode("shape", "Shape", {s.x}, {s.shape});
    return s;
}

/// A Gather or Concat node over axis 0 into a new int64 value `name`.
ValueId alongAxis0(Graph& g, const std::string& name, const std::string& op,
                   const std::vector<ValueId>& inputs) {
    const ValueId out = value(g, name);
    const graph::NodeId id = g.addNode(name, op, inputs, {out});
    g.node(id).attributes.push_back(graph::Attribute{"axis", int64_t{0}, {}});
    return out;
}

/// x [n, 6] -> Reshape to [n, 2, 3], the target computed as exporters write it: Shape, Gather of
/// the batch, Unsqueeze, Concat with the constant dims.
Graph makeReshapeByShape() {
    auto [g, x, shape] = shapeOfInput({-1, 6});
    const ValueId batch =
        alongAxis0(g, "batch", "Gather", {shape, int64Constant(g, "zero", {}, {0})});
    const ValueId batch1 = value(g, "batch1");
    g.addNode("unsqueeze", "Unsqueeze", {batch, int64Constant(g, "axes", {1}, {0})}, {batch1});
    const ValueId target =
        alongAxis0(g, "target", "Concat", {batch1, int64Constant(g, "dims", {2}, {2, 3})});
    const ValueId y = value(g, "y", DataType::Float);
    g.addNode("reshape", "Reshape", {x, target}, {y});
    g.addOutput(y);
    return std::move(g);
}

Tensor ramp(int64_t rows) {
    Tensor x = Tensor::allocate(DataType::Float, {rows, 6});
    std::iota(x.mutableData<float>(), x.mutableData<float>() + x.numElements(), 0.5F);
    return x;
}

/// Runs `exec` on `x`: the output, and how many steps came from the last run.
std::pair<Tensor, size_t> runOnce(const Executor& exec, const Tensor& x) {
    RunStats stats;
    auto out = exec.run(std::span(&x, 1), &stats);
    EXPECT_TRUE(out.ok()) << out.error().toString();
    return {out.ok() ? (*out)[0] : Tensor(), stats.reusedShapeSteps};
}

// The four shape steps run once per input shape: the second run with the same shape takes them
// from the first; a new batch recomputes them (the Reshape follows it); the old batch again
// recomputes once, then repeats.
TEST(ShapeMemo, ReshapeTargetsAreReusedWhileTheInputShapeRepeats) {
    auto exec = Executor::create(makeReshapeByShape());
    ASSERT_TRUE(exec.ok()) << exec.error().toString();
    for (const auto& [rows, reused] :
         std::vector<std::pair<int64_t, size_t>>{{2, 0}, {2, 4}, {5, 0}, {5, 4}, {2, 0}, {2, 4}}) {
        const Tensor x = ramp(rows);
        const auto [y, count] = runOnce(*exec, x);
        EXPECT_EQ(count, reused) << rows << " rows";
        ASSERT_EQ(y.shape(), (Shape{rows, 2, 3}));
        for (int64_t i = 0; i < y.numElements(); ++i) {
            ASSERT_EQ(y.data<float>()[i], x.data<float>()[i]);
        }
    }
    // A copy of the executor shares what the runs kept.
    const Executor copy = *exec;
    EXPECT_EQ(runOnce(copy, ramp(2)).second, 4U);
}

// A shape that depends on data: Range up to the input's largest element, then Shape of it and
// arithmetic on that. The same input shape with another largest element must recompute.
TEST(ShapeMemo, AShapeThatDependsOnDataIsProbedAtEveryRun) {
    Graph g;
    g.metadata().opsetImports = {{"", 13}};
    const ValueId x = g.addValue("x", DataType::Float, TensorShape::ofDims({3}));
    g.addInput(x);
    const ValueId top = value(g, "top", DataType::Float);
    const graph::NodeId max = g.addNode("max", "ReduceMax", {x}, {top});
    g.node(max).attributes.push_back(graph::Attribute{"keepdims", int64_t{0}, {}});
    const ValueId limit = value(g, "limit");
    const graph::NodeId cast = g.addNode("cast", "Cast", {top}, {limit});
    g.node(cast).attributes.push_back(
        graph::Attribute{"to", static_cast<int64_t>(DataType::Int64), {}});
    const ValueId range = value(g, "range");
    g.addNode("range", "Range",
              {int64Constant(g, "start", {}, {0}), limit, int64Constant(g, "delta", {}, {1})},
              {range});
    const ValueId length = value(g, "length");
    g.addNode("shape", "Shape", {range}, {length});
    const ValueId doubled = value(g, "doubled");
    g.addNode("double", "Mul", {length, int64Constant(g, "two", {1}, {2})}, {doubled});
    const ValueId y = value(g, "y");
    g.addNode("plus", "Add", {doubled, int64Constant(g, "nought", {1}, {0})}, {y});
    g.addOutput(y);
    auto exec = Executor::create(std::move(g));
    ASSERT_TRUE(exec.ok()) << exec.error().toString();
    for (const auto& [largest, expected, reused] : std::vector<std::tuple<float, int64_t, size_t>>{
             {3.0F, 6, 0}, {5.0F, 10, 0}, {5.0F, 10, 2}, {3.0F, 6, 0}}) {
        Tensor in = Tensor::allocate(DataType::Float, {3});
        in.mutableData<float>()[0] = 1.0F;
        in.mutableData<float>()[1] = largest;
        in.mutableData<float>()[2] = 0.0F;
        const auto [out, count] = runOnce(*exec, in);
        ASSERT_EQ(out.numElements(), 1);
        EXPECT_EQ(out.data<int64_t>()[0], expected) << "largest " << largest;
        EXPECT_EQ(count, reused) << "largest " << largest;
    }
}

// A graph output is never taken from the last run, and outputs over kMostKeptElements are
// recomputed on every run (the executor holds no large tensor between runs).
TEST(ShapeMemo, GraphOutputsAndLargeTensorsAreNotKept) {
    auto [g, x, shape] = shapeOfInput({-1, 300});
    const ValueId zeros = value(g, "zeros", DataType::Float);
    g.addNode("zeros", "ConstantOfShape", {shape}, {zeros});
    const ValueId y = value(g, "y", DataType::Float);
    g.addNode("plus", "Add", {x, zeros}, {y});
    g.addOutput(y);
    const ValueId dims = value(g, "dims");
    g.addNode("dims", "Shape", {x}, {dims});
    g.addOutput(dims);
    auto exec = Executor::create(std::move(g));
    ASSERT_TRUE(exec.ok()) << exec.error().toString();
    // 90,000 zeros are recomputed (only the Shape is reused), 600 are kept.
    for (const auto& [rows, reused] :
         std::vector<std::pair<int64_t, size_t>>{{300, 0}, {300, 1}, {2, 0}, {2, 2}}) {
        Tensor in = Tensor::allocate(DataType::Float, {rows, 300});
        std::iota(in.mutableData<float>(), in.mutableData<float>() + in.numElements(), 0.0F);
        RunStats stats;
        auto out = exec->run(std::span(&in, 1), &stats);
        ASSERT_TRUE(out.ok()) << out.error().toString();
        EXPECT_EQ((*out)[0].data<float>()[rows * 300 - 1], static_cast<float>(rows * 300 - 1));
        EXPECT_EQ((*out)[1].data<int64_t>()[0], rows);
        EXPECT_EQ(stats.reusedShapeSteps, reused) << rows << " rows";
    }
}

// An Identity of kept shape arithmetic is a graph output sharing its storage: the caller gets a
// copy, so writing into it changes nothing the next run returns.
TEST(ShapeMemo, AGraphOutputViewOfAKeptTensorIsACopy) {
    auto [g, x, shape] = shapeOfInput({-1, 3});
    const ValueId same = value(g, "same");
    g.addNode("identity", "Identity", {shape}, {same});
    g.addOutput(same);
    auto exec = Executor::create(std::move(g));
    ASSERT_TRUE(exec.ok()) << exec.error().toString();
    const Tensor in = Tensor::allocate(DataType::Float, {2, 3});
    for (const size_t reused : {size_t{0}, size_t{1}, size_t{1}}) {
        RunStats stats;
        auto out = exec->run(std::span(&in, 1), &stats);
        ASSERT_TRUE(out.ok()) << out.error().toString();
        EXPECT_EQ(stats.reusedShapeSteps, reused);
        ASSERT_EQ((*out)[0].data<int64_t>()[0], 2);
        (*out)[0].mutableData<int64_t>()[0] = 42; // the caller's to change
    }
}

// x [n, 6] reshaped to the batch of `like` [b, ...] times [-1]: the target is shape arithmetic
// on another input, and the Reshape fails when the two disagree.
Graph makeReshapeLike() {
    Graph g;
    g.metadata().opsetImports = {{"", 13}};
    const ValueId x = g.addValue("x", DataType::Float, TensorShape::ofDims({-1, 6}));
    g.addInput(x);
    const ValueId like = g.addValue("like", DataType::Float, TensorShape::ofDims({-1, 2}));
    g.addInput(like);
    const ValueId shape = value(g, "shape");
    g.addNode("shape", "Shape", {like}, {shape});
    const ValueId batch =
        alongAxis0(g, "batch", "Gather", {shape, int64Constant(g, "zero", {1}, {0})});
    const ValueId target =
        alongAxis0(g, "target", "Concat", {batch, int64Constant(g, "rest", {2}, {2, -1})});
    const ValueId y = value(g, "y", DataType::Float);
    g.addNode("reshape", "Reshape", {x, target}, {y});
    g.addOutput(y);
    return g;
}

// A run that fails after its shape arithmetic (a Reshape the new shapes do not fit) publishes
// nothing: the next run with the first run's shapes still reuses all three steps.
TEST(ShapeMemo, AFailedRunLeavesTheKeptStateAlone) {
    auto exec = Executor::create(makeReshapeLike());
    ASSERT_TRUE(exec.ok()) << exec.error().toString();
    const auto run = [&](int64_t rows, int64_t likeRows, size_t* reused) {
        const std::vector<Tensor> in{ramp(rows), Tensor::zeros(DataType::Float, {likeRows, 2})};
        RunStats stats;
        auto out = exec->run(in, &stats);
        *reused = stats.reusedShapeSteps;
        return out.ok();
    };
    size_t reused = 0;
    ASSERT_TRUE(run(4, 4, &reused)); // [4, 6] -> [4, 2, 3]
    EXPECT_EQ(reused, 0U);
    EXPECT_FALSE(run(4, 5, &reused)); // 24 elements into [5, 2, -1]: the Reshape refuses
    ASSERT_TRUE(run(4, 4, &reused));
    EXPECT_EQ(reused, 3U);
}

// In fp16 mode the kept outputs are what the steps store (int64 shapes stay int64): reused and
// still right.
TEST(ShapeMemo, Fp16ModeKeepsAndReusesTheSame) {
    auto exec = Executor::create(makeReshapeByShape(), {.fp16 = true});
    ASSERT_TRUE(exec.ok()) << exec.error().toString();
    for (const auto& [rows, reused] :
         std::vector<std::pair<int64_t, size_t>>{{3, 0}, {3, 4}, {1, 0}, {1, 4}}) {
        const Tensor x = ramp(rows);
        const auto [y, count] = runOnce(*exec, x);
        EXPECT_EQ(count, reused) << rows << " rows";
        ASSERT_EQ(y.shape(), (Shape{rows, 2, 3}));
        for (int64_t i = 0; i < y.numElements(); ++i) {
            ASSERT_NEAR(y.data<float>()[i], x.data<float>()[i],
                        0.01F * (1.0F + x.data<float>()[i]));
        }
    }
}

// The plan: fused steps, random ops and ops of other domains never qualify; a step reading a
// runtime value that no probe guards does not either.
TEST(ShapeMemo, PlanLeavesOutDataRandomnessAndOtherDomains) {
    auto [g, x, shape] = shapeOfInput({2, 3});
    const ValueId noise = value(g, "noise", DataType::Float);
    g.addNode("noise", "RandomNormalLike", {x}, {noise});
    const ValueId custom = value(g, "custom");
    const graph::NodeId ms = g.addNode("custom", "Identity", {shape}, {custom});
    g.node(ms).domain = "com.example";
    const ValueId data = value(g, "data", DataType::Float);
    g.addNode("relu", "Relu", {x}, {data});
    const ValueId cast = value(g, "cast", DataType::Float);
    const graph::NodeId c = g.addNode("cast", "Cast", {shape}, {cast});
    g.node(c).attributes.push_back(
        graph::Attribute{"to", static_cast<int64_t>(DataType::Float), {}});
    const ValueId y = value(g, "y", DataType::Float);
    g.addNode("sum", "Add", {data, cast}, {y});
    g.addOutput(y);
    const auto order = g.topologicalOrder();
    ASSERT_TRUE(order.ok());
    std::vector<bool> excluded(order->size(), false);
    const ShapeMemoPlan plan = ShapeMemoPlan::plan(g, *order, excluded);
    std::vector<std::string> memoized;
    for (size_t step = 0; step < order->size(); ++step) {
        if (plan.memoizable(step)) {
            memoized.push_back(g.node((*order)[step]).name);
        }
    }
    std::sort(memoized.begin(), memoized.end());
    EXPECT_EQ(memoized, (std::vector<std::string>{"cast", "shape"}));
    EXPECT_EQ(plan.probes(), 1U);
    // Excluding the Shape (as a fused step would be) leaves the Cast nothing to stand on.
    for (size_t step = 0; step < order->size(); ++step) {
        excluded[step] = g.node((*order)[step]).name == "shape";
    }
    EXPECT_EQ(ShapeMemoPlan::plan(g, *order, excluded).count(), 0U);
}

} // namespace
} // namespace qs::runtime
