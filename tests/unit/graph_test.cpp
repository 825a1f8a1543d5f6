#include "core/graph/graph.h"

#include <gtest/gtest.h>

namespace qs::graph {
namespace {

TEST(Graph, TopologicalOrderIsStable) {
    Graph g;
    const ValueId x = g.addValue("x", DataType::Float, TensorShape::ofDims({1, 4}));
    const ValueId a = g.addValue("a", DataType::Float);
    const ValueId b = g.addValue("b", DataType::Float);
    const ValueId c = g.addValue("c", DataType::Float);
    g.addInput(x);
    const NodeId add = g.addNode("add", "Add", {a, b}, {c});
    const NodeId relu = g.addNode("relu", "Relu", {x}, {a});
    const NodeId neg = g.addNode("neg", "Neg", {x}, {b});
    g.addOutput(c);
    auto order = g.topologicalOrder();
    ASSERT_TRUE(order.ok());
    EXPECT_EQ(*order, (std::vector<NodeId>{relu, neg, add}));
    EXPECT_TRUE(verify(g).ok());
}

} // namespace
} // namespace qs::graph
