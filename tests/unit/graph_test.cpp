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

namespace qs::graph {
namespace {

TEST(Graph, RemoveNodeAndCompactKeepLinksConsistent) {
    Graph g;
    const ValueId x = g.addValue("x", DataType::Float);
    const ValueId a = g.addValue("a", DataType::Float);
    const ValueId b = g.addValue("b", DataType::Float);
    g.addInput(x);
    const NodeId identity = g.addNode("id", "Identity", {x}, {a});
    g.addNode("relu", "Relu", {a}, {b});
    g.addOutput(b);
    g.replaceAllUses(a, x);
    g.removeNode(identity);
    ASSERT_TRUE(verify(g).ok()) << verify(g).error().toString();
    g.compact();
    EXPECT_EQ(g.numNodes(), 1U);
    EXPECT_FALSE(g.findValue("a"));
    const ValueId newX = *g.findValue("x");
    ASSERT_EQ(g.value(newX).consumers.size(), 1U);
    EXPECT_EQ(g.node(g.value(newX).consumers[0].node).name, "relu");
    EXPECT_TRUE(verify(g).ok());
}

TEST(Graph, CycleIsReportedWithANodeName) {
    Graph g;
    const ValueId a = g.addValue("a", DataType::Float);
    const ValueId b = g.addValue("b", DataType::Float);
    g.addNode("first", "Relu", {b}, {a});
    g.addNode("second", "Relu", {a}, {b});
    auto order = g.topologicalOrder();
    ASSERT_FALSE(order.ok());
    EXPECT_NE(order.error().message().find("cycle through node 'first'"), std::string::npos);
}

TEST(Graph, ShapesPrintWithSymbols) {
    TensorShape shape;
    shape.rankKnown = true;
    shape.dims = {Dim::symbolic("batch"), Dim::known(3), Dim::symbolic("")};
    EXPECT_EQ(shape.toString(), "batchx3x?");
    EXPECT_FALSE(shape.isStatic());
    EXPECT_EQ(TensorShape{}.toString(), "?");
    EXPECT_EQ(TensorShape::ofDims({}).toString(), "scalar");
    EXPECT_EQ(TensorShape::ofDims({2, 3}).numElements(), 6);
}

} // namespace
} // namespace qs::graph
