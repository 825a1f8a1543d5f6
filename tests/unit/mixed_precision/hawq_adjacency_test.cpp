// HAWQ adjacency groups (NNCF's GroupsOfAdjacentQuantizers, reference §4) on a hand-built graph
// shaped like two ResNet blocks: the groups are the proposal's shared-input operation set groups,
// i.e. weight quantizers are adjacent only when their ops read one activation quantizer (a conv and
// the downsample conv beside it). The conv after an Add shares its input quantizer with the next
// Add, and the Add's other input quantizer joins that group, but no other weight does — so on
// ResNets almost every layer is a group of its own, as in NNCF (resnet18: 21 layers in 18 groups,
// resnet50: 54 in 50).

#include "core/mixed_precision/hawq_problem.h"
#include "core/quantization/quantization_state.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <string>
#include <vector>

namespace qs::mixed_precision {
namespace {

using graph::DataType;
using graph::ValueId;

class Builder {
public:
    Builder() { m_graph.metadata().opsetImports = {{"", 13}}; }

    ValueId input(const std::string& name) {
        const ValueId v =
            m_graph.addValue(name, DataType::Float, graph::TensorShape::ofDims({1, 8, 4, 4}));
        m_graph.addInput(v);
        return v;
    }

    ValueId op(const std::string& type, const std::string& name, std::vector<ValueId> inputs) {
        const ValueId out = m_graph.addValue(name + "_out", DataType::Float);
        m_graph.addNode(name, type, std::move(inputs), {out}, {});
        return out;
    }

    /// A 1x1 Conv, 8 channels in and out.
    ValueId conv(const std::string& name, ValueId x) {
        std::vector<float> values(64);
        std::iota(values.begin(), values.end(), 1.0F);
        const ValueId w = m_graph.addInitializer(
            name + ".weight",
            graph::TensorData::fromValues<float>(DataType::Float, {8, 8, 1, 1}, values));
        return op("Conv", name, {x, w});
    }

    void output(ValueId v) { m_graph.addOutput(v); }

    graph::Graph& graph() { return m_graph; }

private:
    graph::Graph m_graph;
};

/// stem -> relu -> block 1 (conv1 -> relu -> conv2, downsample beside it, Add, Relu) -> block 2
/// (conv1 -> relu -> conv2, identity, Add, Relu) -> out.
graph::Graph twoResidualBlocks() {
    Builder b;
    const ValueId stem = b.op("Relu", "stem_relu", {b.conv("stem", b.input("x"))});
    const ValueId b1 = b.op("Relu", "b1_relu", {b.conv("b1_conv1", stem)});
    const ValueId b1Add =
        b.op("Add", "b1_add", {b.conv("b1_conv2", b1), b.conv("b1_downsample", stem)});
    const ValueId b1Out = b.op("Relu", "b1_out", {b1Add});
    const ValueId b2 = b.op("Relu", "b2_relu", {b.conv("b2_conv1", b1Out)});
    const ValueId b2Add = b.op("Add", "b2_add", {b.conv("b2_conv2", b2), b1Out});
    b.output(b.op("Relu", "b2_out", {b2Add}));
    return std::move(b.graph());
}

TEST(HawqAdjacency, GroupsAreTheSharedInputOperationSetGroups) {
    const graph::Graph model = twoResidualBlocks();
    quantization::QuantizationSettings settings;
    settings.hw = "npu";
    auto state = quantization::computeQuantization(model, settings);
    ASSERT_TRUE(state.ok()) << state.error().toString();
    const std::vector<int> bits{2, 4, 8};
    auto problem = buildHawqProblem(model, *state, bits, BitwidthAssignmentMode::Liberal);
    ASSERT_TRUE(problem.ok()) << problem.error().toString();

    // The weighted ops of each group that has any, and which activation quantizers it holds.
    std::set<std::set<std::string>> layerGroups;
    for (const AdjacencyGroup& group : problem->groups) {
        std::set<std::string> nodes;
        for (const size_t l : group.layers) {
            nodes.insert(problem->layers[l].node);
        }
        if (!nodes.empty()) {
            layerGroups.insert(nodes);
        }
    }
    EXPECT_EQ(
        layerGroups,
        (std::set<std::set<std::string>>{
            {"stem"}, {"b1_conv1", "b1_downsample"}, {"b1_conv2"}, {"b2_conv1"}, {"b2_conv2"}}));

    // b2_conv1's group: its input quantizer (b1_out, read by b2_conv1 and b2_add) and b2_add's
    // other input quantizer (b2_conv2's output), which shares the Add with it; b2_conv2's own
    // weight stays with the quantizer feeding b2_conv2.
    const auto& points = state->proposal.setup.quantizationPoints;
    const auto layerOf = [&](const std::string& node) {
        return *std::find_if(problem->layers.begin(), problem->layers.end(),
                             [&](const WeightLayer& layer) { return layer.node == node; });
    };
    const AdjacencyGroup& b2 = problem->groups[layerOf("b2_conv1").group];
    std::set<std::string> activationTargets;
    for (const size_t a : b2.activations) {
        activationTargets.insert(
            points.at(problem->activations[a].qp).insertionPoint.targetNodeName);
    }
    EXPECT_EQ(activationTargets, (std::set<std::string>{"b1_out", "b2_conv2"}));
    EXPECT_NE(layerOf("b2_conv2").group, layerOf("b2_conv1").group);
    // Every layer is fed by an activation quantizer of its own group.
    for (const WeightLayer& layer : problem->layers) {
        ASSERT_TRUE(layer.activation.has_value()) << layer.node;
        EXPECT_EQ(problem->activations[*layer.activation].group, layer.group) << layer.node;
    }
}

} // namespace
} // namespace qs::mixed_precision
