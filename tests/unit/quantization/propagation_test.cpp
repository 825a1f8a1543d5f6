// Hand-built graphs, one per propagation behaviour of reference/nncf-quantization.md §1: each test
// asserts the exact insertion points, candidate lists and groups the solver proposes.

#include "core/onnx/model_io.h"
#include "core/quantization/finalize_setup.h"
#include "core/quantization/quantizer_propagation_solver.h"
#include "core/quantization/quantizer_setup_report.h"

#include <gtest/gtest.h>

#include <numeric>
#include <set>

namespace qs::quantization {
namespace {
using graph::DataType;
using graph::ValueId;

class Builder {
public:
    explicit Builder(int64_t opset = 13) { m_graph.metadata().opsetImports = {{"", opset}}; }

    ValueId input(const std::string& name, DataType dtype = DataType::Float) {
        const ValueId v = m_graph.addValue(name, dtype, graph::TensorShape::ofDims({1, 8, 4, 4}));
        m_graph.addInput(v);
        return v;
    }

    ValueId constant(const std::string& name, std::vector<int64_t> dims,
                     DataType dtype = DataType::Float) {
        const auto count = static_cast<size_t>(
            std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>()));
        if (dtype == DataType::Int64) {
            std::vector<int64_t> values(count, 1);
            return m_graph.addInitializer(
                name, graph::TensorData::fromValues<int64_t>(dtype, dims, values));
        }
        std::vector<float> values(count, 0.5F);
        return m_graph.addInitializer(name,
                                      graph::TensorData::fromValues<float>(dtype, dims, values));
    }

    ValueId op(const std::string& type, const std::string& name, std::vector<ValueId> inputs,
               DataType dtype = DataType::Float, std::vector<graph::Attribute> attributes = {}) {
        const ValueId out = m_graph.addValue(name + "_out", dtype);
        m_graph.addNode(name, type, std::move(inputs), {out}, std::move(attributes));
        return out;
    }

    /// A 1x1 Conv with C input and C output channels (depthwise when `depthwise`).
    ValueId conv(const std::string& name, ValueId x, bool depthwise = false) {
        const int64_t channels = 8;
        const ValueId w = constant(name + ".weight", {channels, depthwise ? 1 : channels, 1, 1});
        std::vector<graph::Attribute> attrs;
        if (depthwise) {
            attrs.push_back({"group", channels, {}});
        }
        return op("Conv", name, {x, w}, DataType::Float, attrs);
    }

    void output(ValueId v) { m_graph.addOutput(v); }

    graph::Graph& graph() { return m_graph; }

private:
    graph::Graph m_graph;
};

struct Proposed {
    QuantizationProposal proposal;
    std::map<std::string, int> idByPoint; ///< InsertionPoint::toString() -> qp id

    const MultiConfigQuantizationPoint& point(const std::string& key) const {
        return proposal.setup.quantizationPoints.at(idByPoint.at(key));
    }

    std::set<std::string> activationPoints() const {
        std::set<std::string> out;
        for (const auto& [key, id] : idByPoint) {
            if (!proposal.setup.quantizationPoints.at(id).insertionPoint.isWeight) {
                out.insert(key);
            }
        }
        return out;
    }

    std::set<std::set<std::string>> unifiedGroups() const {
        std::set<std::set<std::string>> out;
        for (const auto& [gid, ids] : proposal.setup.unifiedScaleGroups) {
            std::set<std::string> members;
            for (const int id : ids) {
                members.insert(proposal.setup.quantizationPoints.at(id).insertionPoint.toString());
            }
            out.insert(members);
        }
        return out;
    }
};

Proposed propose(Builder& b, std::string_view device = "cpu",
                 PropagationOptions options = presetOptions(QuantizationPreset::Performance, 13)) {
    auto hw = HWConfig::builtin(device);
    EXPECT_TRUE(hw.ok());
    auto proposal = proposeQuantizerSetup(b.graph(), *hw, options);
    EXPECT_TRUE(proposal.ok()) << proposal.error().toString();
    Proposed out{std::move(proposal).value(), {}};
    for (const auto& [id, point] : out.proposal.setup.quantizationPoints) {
        out.idByPoint[point.insertionPoint.toString()] = id;
    }
    return out;
}

std::vector<std::string> strings(const QuantizerConfigList& configs) {
    std::vector<std::string> out;
    for (const QuantizerConfig& c : configs) {
        out.push_back(c.toString());
    }
    return out;
}

std::set<std::string> names(const std::vector<std::string>& in) {
    return {in.begin(), in.end()};
}

const std::vector<std::string> kCpuConvPerformance = {"B:8 M:S SGN:ANY PC:N NR:N",
                                                      "B:16 M:S SGN:ANY PC:N NR:N"};

/// x -> conv_a+relu -> {conv_b -> add:0, add:1} -> conv_c -> out
Builder residualBlock() {
    Builder b;
    const ValueId x = b.input("x");
    const ValueId relu = b.op("Relu", "relu", {b.conv("conv_a", x)});
    const ValueId convB = b.conv("conv_b", relu);
    const ValueId add = b.op("Add", "add", {convB, relu});
    b.output(b.conv("conv_c", add));
    return b;
}

TEST(PropagationTest, ResidualAddQuantizesBothInputs) {
    Builder b = residualBlock();
    const Proposed cpu = propose(b, "cpu");
    EXPECT_EQ(cpu.activationPoints(),
              (std::set<std::string>{"nncf_model_input_0", "relu", "conv_b", "add"}));
    EXPECT_EQ(names(cpu.point("relu").directlyQuantizedOperatorNodeNames),
              (std::set<std::string>{"conv_b", "add"}));
    EXPECT_EQ(names(cpu.point("conv_b").directlyQuantizedOperatorNodeNames),
              (std::set<std::string>{"add"}));
    EXPECT_EQ(strings(cpu.point("relu").possibleConfigs), kCpuConvPerformance);
    EXPECT_TRUE(cpu.unifiedGroups().empty());
    EXPECT_EQ(cpu.idByPoint.count("conv_a[W]") + cpu.idByPoint.count("conv_b[W]") +
                  cpu.idByPoint.count("conv_c[W]"),
              3u);

    // On NPU the Add has unified scales: both of its inputs share one scale; the quantizer on the
    // Add output gets a group of its own (NNCF's clone through the unified op).
    const Proposed npu = propose(b, "npu");
    EXPECT_EQ(npu.activationPoints(), cpu.activationPoints());
    EXPECT_EQ(npu.unifiedGroups(), (std::set<std::set<std::string>>{{"relu", "conv_b"}, {"add"}}));
    EXPECT_EQ(strings(npu.point("relu").possibleConfigs),
              (std::vector<std::string>{"B:8 M:S SGN:ANY PC:N NR:N", "B:16 M:S SGN:ANY PC:N NR:N",
                                        "B:4 M:S SGN:ANY PC:N NR:N"}));
}

TEST(PropagationTest, ConcatInputsFormOneUnifiedGroup) {
    Builder b;
    const ValueId x = b.input("x");
    const ValueId left = b.op("Relu", "relu_l", {b.conv("conv_l", x)});
    const ValueId right = b.op("Relu", "relu_r", {b.conv("conv_r", x)});
    const ValueId cat =
        b.op("Concat", "cat", {left, right}, DataType::Float, {{"axis", int64_t{1}, {}}});
    b.output(b.conv("conv_o", cat));
    const Proposed p = propose(b, "cpu");
    EXPECT_EQ(p.activationPoints(),
              (std::set<std::string>{"nncf_model_input_0", "relu_l", "relu_r"}));
    EXPECT_EQ(p.unifiedGroups(), (std::set<std::set<std::string>>{{"relu_l", "relu_r"}}));
    EXPECT_EQ(names(p.point("relu_l").directlyQuantizedOperatorNodeNames),
              (std::set<std::string>{"conv_o"}));
    EXPECT_EQ(names(p.point("nncf_model_input_0").directlyQuantizedOperatorNodeNames),
              (std::set<std::string>{"conv_l", "conv_r"}));
}

TEST(PropagationTest, ConfigLinkedScopesUnifyMoreThanTwoQuantizers) {
    Builder b;
    const ValueId x = b.input("x");
    const ValueId a = b.op("Relu", "relu_a", {b.conv("conv_a", x)});
    const ValueId c = b.op("Relu", "relu_c", {b.conv("conv_c", x)});
    const ValueId d = b.op("Relu", "relu_d", {b.conv("conv_d", x)});
    b.output(b.conv("head_a", a));
    b.output(b.conv("head_c", c));
    b.output(b.conv("head_d", d));
    PropagationOptions options = presetOptions(QuantizationPreset::Performance, 13);
    options.additionalUnifiedScaleOpScopes = {{"head_a", "head_c", "head_d"}, {"head_a", "head_c"}};
    const Proposed p = propose(b, "cpu", options);
    EXPECT_EQ(p.unifiedGroups(), (std::set<std::set<std::string>>{{"relu_a", "relu_c", "relu_d"}}));
}

TEST(PropagationTest, ConcatNotFollowedByLinearOpIsNotUnified) {
    Builder b;
    const ValueId x = b.input("x");
    const ValueId left = b.op("Relu", "relu_l", {b.conv("conv_l", x)});
    const ValueId right = b.op("Relu", "relu_r", {b.conv("conv_r", x)});
    const ValueId cat =
        b.op("Concat", "cat", {left, right}, DataType::Float, {{"axis", int64_t{1}, {}}});
    b.output(b.op("AveragePool", "pool", {cat}));
    const Proposed p = propose(b, "cpu");
    EXPECT_EQ(p.activationPoints(),
              (std::set<std::string>{"nncf_model_input_0", "relu_l", "relu_r"}));
    EXPECT_TRUE(p.unifiedGroups().empty());

    // NNCF's map names exact metatypes: a depthwise conv after the Concat is not a plain
    // Convolution, so the branches keep separate scales.
    Builder dw;
    const ValueId y = dw.input("x");
    const ValueId l = dw.op("Relu", "relu_l", {dw.conv("conv_l", y)});
    const ValueId r = dw.op("Relu", "relu_r", {dw.conv("conv_r", y)});
    const ValueId joined =
        dw.op("Concat", "cat", {l, r}, DataType::Float, {{"axis", int64_t{1}, {}}});
    dw.output(dw.conv("dw", joined, true));
    const Proposed depthwise = propose(dw, "cpu");
    EXPECT_EQ(depthwise.activationPoints(),
              (std::set<std::string>{"nncf_model_input_0", "relu_l", "relu_r"}));
    EXPECT_TRUE(depthwise.unifiedGroups().empty());
}

/// relu output feeds a depthwise conv (per-channel capable) and a plain conv (4-bit capable on
/// NPU).
Builder divergentBranches() {
    Builder b;
    const ValueId x = b.input("x");
    const ValueId relu = b.op("Relu", "relu", {b.conv("conv_0", x)});
    const ValueId dw = b.conv("dw", relu, true);
    const ValueId pw = b.conv("pw", relu);
    b.output(b.op("Add", "sum", {dw, pw}));
    return b;
}

PropagationOptions withRule(QuantizerPropagationRule rule) {
    PropagationOptions options = presetOptions(QuantizationPreset::Performance, 13);
    options.rule = rule;
    return options;
}

TEST(PropagationTest, BranchesWithDifferentListsUnderEachRule) {
    Builder b = divergentBranches();
    const std::vector<std::string> dwList = {
        "B:8 M:S SGN:ANY PC:Y NR:N", "B:8 M:S SGN:ANY PC:N NR:N", "B:16 M:S SGN:ANY PC:Y NR:N",
        "B:16 M:S SGN:ANY PC:N NR:N"};
    const std::vector<std::string> pwList = {
        "B:8 M:S SGN:ANY PC:N NR:N", "B:16 M:S SGN:ANY PC:N NR:N", "B:4 M:S SGN:ANY PC:N NR:N"};

    const Proposed all = propose(b, "npu", withRule(QuantizerPropagationRule::MergeAllInOne));
    EXPECT_TRUE(all.activationPoints().contains("relu"));
    EXPECT_FALSE(all.activationPoints().contains("dw:0"));
    EXPECT_EQ(
        strings(all.point("relu").possibleConfigs),
        (std::vector<std::string>{"B:8 M:S SGN:ANY PC:N NR:N", "B:16 M:S SGN:ANY PC:N NR:N"}));

    for (auto rule : {QuantizerPropagationRule::DoNotMergeBranches,
                      QuantizerPropagationRule::MergeIfAllBranchesSame}) {
        const Proposed split = propose(b, "npu", withRule(rule));
        EXPECT_FALSE(split.activationPoints().contains("relu")) << ruleName(rule);
        EXPECT_EQ(strings(split.point("dw:0").possibleConfigs), dwList) << ruleName(rule);
        EXPECT_EQ(strings(split.point("pw:0").possibleConfigs), pwList) << ruleName(rule);
    }

    const Proposed requant =
        propose(b, "npu", withRule(QuantizerPropagationRule::MergeWithPotentialRequantization));
    EXPECT_EQ(strings(requant.point("relu").possibleConfigs),
              (std::vector<std::string>{"B:8 M:S SGN:ANY PC:N NR:N", "B:16 M:S SGN:ANY PC:N NR:N",
                                        "B:16 M:S SGN:ANY PC:Y NR:N"}));
    const int parent = requant.idByPoint.at("relu");
    EXPECT_EQ(requant.proposal.setup.requantizationParents.at(requant.idByPoint.at("dw:0")),
              parent);
    EXPECT_EQ(requant.proposal.setup.requantizationParents.at(requant.idByPoint.at("pw:0")),
              parent);

    // With first configs both branch quantizers are redundant after the 8-bit parent and merge.
    auto merged = finalizeSetup(requant.proposal, selectFirstConfigs(requant.proposal.setup));
    ASSERT_TRUE(merged.ok());
    EXPECT_EQ(merged->mergedInto.size(), 2u);
    EXPECT_TRUE(merged->requantizationParents.empty());

    // Choosing 4 bits for the pointwise branch leaves it as a requantizer below the parent;
    // re-finalising uses the stored proposal only.
    QuantizerConfigChoice choice = selectFirstConfigs(requant.proposal.setup);
    ASSERT_TRUE(applyBitwidthChoice(requant.proposal.setup, "pw:0=4", choice).ok());
    auto withRequant = finalizeSetup(requant.proposal, choice);
    ASSERT_TRUE(withRequant.ok());
    EXPECT_EQ(withRequant->requantizationParents.at(requant.idByPoint.at("pw:0")), parent);
    EXPECT_EQ(withRequant->quantizationPoints.at(requant.idByPoint.at("pw:0")).qconfig.numBits, 4);
    EXPECT_EQ(withRequant->mergedInto.size(), 1u);
    EXPECT_EQ(withRequant->toJson()["requantization"].size(), 1u);

    EXPECT_FALSE(applyBitwidthChoice(requant.proposal.setup, "nowhere=8", choice).ok());
    ASSERT_TRUE(
        applyBitwidthChoice(requant.proposal.setup, "#" + std::to_string(parent) + "=16", choice)
            .ok());
    EXPECT_EQ(choice.at(parent).numBits, 16);
    EXPECT_FALSE(applyBitwidthChoice(requant.proposal.setup, "pw:0=2", choice).ok());
}

TEST(PropagationTest, AgnosticOpsPassQuantizersUp) {
    Builder b;
    const ValueId x = b.input("x");
    const ValueId relu = b.op("Relu", "relu", {b.conv("conv_a", x)});
    const ValueId pool = b.op("MaxPool", "pool", {relu});
    const ValueId shape = b.constant("shape", {4}, DataType::Int64);
    const ValueId reshaped = b.op("Reshape", "reshape", {pool, shape});
    const ValueId transposed = b.op("Transpose", "transpose", {reshaped});
    b.output(b.conv("conv_b", transposed));
    const Proposed p = propose(b);
    EXPECT_EQ(p.activationPoints(), (std::set<std::string>{"nncf_model_input_0", "relu"}));
    EXPECT_EQ(names(p.point("relu").directlyQuantizedOperatorNodeNames),
              (std::set<std::string>{"conv_b"}));
}

TEST(PropagationTest, NoOpCastIsRemovedAsInNncf) {
    Builder b;
    const ValueId x = b.input("x");
    const ValueId relu = b.op("Relu", "relu", {b.conv("conv_a", x)});
    const ValueId cast = b.op("Cast", "cast", {relu}, DataType::Float, {{"to", int64_t{1}, {}}});
    b.output(b.conv("conv_b", b.op("MaxPool", "pool", {cast})));
    const Proposed p = propose(b);
    EXPECT_EQ(p.activationPoints(), (std::set<std::string>{"nncf_model_input_0", "relu"}));
}

TEST(PropagationTest, LoneQuantizerOnElementwiseOpWithConstantIsDropped) {
    Builder b;
    const ValueId x = b.input("x");
    const ValueId relu = b.op("Relu", "relu", {b.conv("conv_a", x)});
    b.output(b.op("Add", "add_const", {relu, b.constant("bias", {1, 8, 1, 1})}));
    EXPECT_EQ(propose(b).activationPoints(), (std::set<std::string>{"nncf_model_input_0"}));

    // Once it has propagated through an op it stays.
    Builder through;
    const ValueId y = through.input("x");
    const ValueId r = through.op("Relu", "relu", {through.conv("conv_a", y)});
    const ValueId pooled = through.op("MaxPool", "pool", {r});
    through.output(
        through.op("Add", "add_const", {pooled, through.constant("bias", {1, 8, 1, 1})}));
    EXPECT_EQ(propose(through).activationPoints(),
              (std::set<std::string>{"nncf_model_input_0", "relu"}));

    // NNCF's elementwise list is wider than the four arithmetic ops: Sum, Max, Min, comparisons,
    // logical ops, Mod and Mean with a constant second input lose their lone quantizer too.
    for (const char* type : {"Sum", "Max", "Min", "Less", "GreaterOrEqual"}) {
        Builder other;
        const ValueId z = other.input("x");
        const ValueId act = other.op("Relu", "relu", {other.conv("conv_a", z)});
        other.output(other.op(type, "with_const", {act, other.constant("c", {1, 8, 1, 1})}));
        EXPECT_EQ(propose(other).activationPoints(), (std::set<std::string>{"nncf_model_input_0"}))
            << type;
    }
}

TEST(PropagationTest, SqueezeExcitationInternalsStayFloat) {
    Builder b;
    const ValueId x = b.input("x");
    const ValueId features = b.op("Relu", "relu", {b.conv("conv_a", x)});
    const ValueId pooled = b.op("GlobalAveragePool", "se_pool", {features});
    const ValueId squeezed = b.op("Relu", "se_relu", {b.conv("se_fc1", pooled)});
    const ValueId gate = b.op("Sigmoid", "se_gate", {b.conv("se_fc2", squeezed)});
    const ValueId scaled = b.op("Mul", "se_scale", {features, gate});
    b.output(b.conv("conv_out", scaled));
    const Proposed p = propose(b);
    // NNCF's SE_BLOCK pattern: both SE convs and their activations are ignored, the pooling and
    // the scaling Mul are not.
    EXPECT_EQ(p.activationPoints(),
              (std::set<std::string>{"nncf_model_input_0", "relu", "se_gate", "se_scale"}));
    EXPECT_EQ(names(p.point("relu").directlyQuantizedOperatorNodeNames),
              (std::set<std::string>{"se_pool", "se_scale"}));
    EXPECT_TRUE(p.idByPoint.contains("conv_a[W]"));
    EXPECT_TRUE(p.idByPoint.contains("conv_out[W]"));
    EXPECT_FALSE(p.idByPoint.contains("se_fc1[W]"));
    EXPECT_FALSE(p.idByPoint.contains("se_fc2[W]"));
}

TEST(PropagationTest, IgnoredNodeActsAsBarrier) {
    Builder b;
    const ValueId x = b.input("x");
    const ValueId relu = b.op("Relu", "relu", {b.conv("conv_a", x)});
    const ValueId pool = b.op("MaxPool", "pool", {relu});
    b.output(b.conv("conv_b", pool));
    PropagationOptions options = presetOptions(QuantizationPreset::Performance, 13);
    options.ignoredScope.names = {"pool"};
    const Proposed p = propose(b, "cpu", options);
    EXPECT_EQ(p.activationPoints(), (std::set<std::string>{"nncf_model_input_0", "pool"}));

    options.ignoredScope = {};
    options.ignoredScope.patterns = {"conv_.*"};
    const Proposed noConvs = propose(b, "cpu", options);
    EXPECT_TRUE(noConvs.proposal.setup.quantizationPoints.empty());

    options.ignoredScope = {};
    options.ignoredScope.patterns = {"(["};
    auto hw = HWConfig::builtin("cpu");
    EXPECT_FALSE(proposeQuantizerSetup(b.graph(), *hw, options).ok());
    options.ignoredScope.patterns = {"no_such_node.*"};
    auto unmatched = proposeQuantizerSetup(b.graph(), *hw, options);
    ASSERT_FALSE(unmatched.ok());
    EXPECT_NE(unmatched.error().toString().find("no_such_node"), std::string::npos);
}

TEST(PropagationTest, ShapeSubgraphsAndIntegerEdgesCarryNoQuantizers) {
    Builder b;
    const ValueId x = b.input("x");
    const ValueId relu = b.op("Relu", "relu", {b.conv("conv_a", x)});
    const ValueId shape = b.op("Shape", "shape", {relu}, DataType::Int64);
    const ValueId index = b.constant("index", {1}, DataType::Int64);
    const ValueId dim = b.op("Gather", "gather", {shape, index}, DataType::Int64);
    const ValueId newShape =
        b.op("Concat", "shape_cat", {dim, index}, DataType::Int64, {{"axis", int64_t{0}, {}}});
    const ValueId reshaped = b.op("Reshape", "reshape", {relu, newShape});
    b.output(b.conv("conv_b", reshaped));
    const ValueId ids = b.input("ids", DataType::Int64);
    b.output(b.op("Add", "int_add", {ids, ids}, DataType::Int64));
    const Proposed p = propose(b);
    EXPECT_EQ(p.activationPoints(), (std::set<std::string>{"nncf_model_input_0", "relu"}));
}

TEST(PropagationTest, ModelOutputsStayFloatUnlessRequested) {
    Builder b;
    const ValueId x = b.input("x");
    const ValueId relu = b.op("Relu", "relu", {b.conv("conv_a", x)});
    b.output(relu);
    b.output(b.conv("conv_b", relu));
    const Proposed p = propose(b);
    EXPECT_EQ(p.activationPoints(), (std::set<std::string>{"nncf_model_input_0", "conv_b:0"}));

    PropagationOptions options = presetOptions(QuantizationPreset::Performance, 13);
    options.quantizeOutputs = true;
    const Proposed q = propose(b, "cpu", options);
    EXPECT_TRUE(q.activationPoints().contains("relu"));
    EXPECT_TRUE(q.activationPoints().contains("conv_b"));
    EXPECT_EQ(names(q.point("relu").directlyQuantizedOperatorNodeNames),
              (std::set<std::string>{"conv_b", "nncf_model_output_0"}));
}

TEST(PropagationTest, EmbeddingOutputIsQuantizedAsWeights) {
    Builder b;
    const ValueId ids = b.input("ids", DataType::Int64);
    const ValueId table = b.constant("table", {100, 16});
    const ValueId rows = b.op("Gather", "embedding", {table, ids});
    const ValueId w = b.constant("w", {16, 16});
    b.output(b.op("MatMul", "matmul", {rows, w}));
    const Proposed p = propose(b);
    EXPECT_TRUE(p.activationPoints().empty());
    const MultiConfigQuantizationPoint& table8 = p.point("embedding[W]");
    EXPECT_EQ(strings(table8.possibleConfigs),
              (std::vector<std::string>{"B:8 M:S SGN:S PC:N NR:N", "B:16 M:S SGN:S PC:N NR:N"}));
    EXPECT_EQ(names(table8.directlyQuantizedOperatorNodeNames),
              (std::set<std::string>{"embedding", "matmul"}));
    EXPECT_TRUE(p.idByPoint.contains("matmul[W]"));
}

TEST(PropagationTest, DepthwiseConvPrefersPerChannelActivationsOnCpu) {
    Builder b;
    const ValueId x = b.input("x");
    const ValueId relu = b.op("Relu", "relu", {b.conv("conv_a", x)});
    b.output(b.conv("dw", relu, true));
    const Proposed p = propose(b);
    EXPECT_EQ(
        strings(p.point("relu").possibleConfigs),
        (std::vector<std::string>{"B:8 M:S SGN:ANY PC:Y NR:N", "B:8 M:S SGN:ANY PC:N NR:N",
                                  "B:16 M:S SGN:ANY PC:Y NR:N", "B:16 M:S SGN:ANY PC:N NR:N"}));
    EXPECT_EQ(p.point("dw[W]").possibleConfigs.front().toString(), "B:8 M:S SGN:S PC:Y NR:Y");

    // Below opset 13 there is no per-axis QDQ: per-tensor only, activations and weights.
    const Proposed old = propose(b, "cpu", presetOptions(QuantizationPreset::Performance, 11));
    EXPECT_FALSE(old.point("relu").possibleConfigs.front().perChannel);
    EXPECT_FALSE(old.point("dw[W]").possibleConfigs.front().perChannel);

    const Proposed mixed = propose(b, "cpu", presetOptions(QuantizationPreset::Mixed, 13));
    EXPECT_EQ(mixed.point("relu").possibleConfigs.front().toString(), "B:8 M:A SGN:ANY PC:Y NR:N");
    EXPECT_EQ(mixed.point("dw[W]").possibleConfigs.front().mode, QuantizationMode::Symmetric);
}

/// x -> dw (depthwise, weight from a Constant node when `constantNode`) -> Mul(c) -> Add(c) ->
/// conv_b -> out: Paddle's depthwise conv with its scale-shift.
Builder depthwiseScaleShift(bool constantNode) {
    Builder b;
    const ValueId x = b.input("x");
    const ValueId w = b.constant("dw.weight", {8, 1, 1, 1});
    if (constantNode) {
        b.graph().value(w).constantNodeName = "dw.weight.node";
    }
    const ValueId dw = b.op("Conv", "dw", {x, w}, DataType::Float, {{"group", int64_t{8}, {}}});
    const ValueId scaled = b.op("Mul", "scale", {dw, b.constant("s", {1, 8, 1, 1})});
    const ValueId shifted = b.op("Add", "shift", {scaled, b.constant("t", {1, 8, 1, 1})});
    b.output(b.conv("conv_b", shifted));
    return b;
}

TEST(PropagationTest, DepthwiseConvWithConstantNodeWeightIsAGroupConvolution) {
    // Initializer weight: a depthwise conv, fused with its scale-shift (linear_scale_shift); two
    // quantizers, ids 1 and 2, and the depthwise HW entry (per-channel activations on CPU).
    Builder initializer = depthwiseScaleShift(false);
    const Proposed fused = propose(initializer);
    EXPECT_EQ(fused.activationPoints(), (std::set<std::string>{"nncf_model_input_0", "shift"}));
    EXPECT_EQ(fused.idByPoint.at("nncf_model_input_0"), 1);
    EXPECT_EQ(fused.idByPoint.at("shift"), 2);
    EXPECT_TRUE(fused.point("nncf_model_input_0").possibleConfigs.front().perChannel);

    // Constant-node weight: NNCF finds no initializer, so the conv is a GroupConvolution, which
    // is no LINEAR op: the scale-shift stays a separate operator whose quantizer (id 2) moves up
    // to the conv's output and is dropped there, leaving id 3 below the scale-shift; the conv
    // takes the Convolution HW entry.
    Builder constantNode = depthwiseScaleShift(true);
    const Proposed split = propose(constantNode);
    EXPECT_EQ(split.activationPoints(), (std::set<std::string>{"nncf_model_input_0", "shift"}));
    EXPECT_EQ(split.idByPoint.at("nncf_model_input_0"), 1);
    EXPECT_EQ(split.idByPoint.at("shift"), 3);
    EXPECT_EQ(strings(split.point("nncf_model_input_0").possibleConfigs), kCpuConvPerformance);
    EXPECT_EQ(split.point("dw[W]").possibleConfigs.front().toString(), "B:8 M:S SGN:S PC:Y NR:Y");
}

TEST(PropagationTest, ImportedModelEndToEnd) {
    // tests/data/models/tiny_residual.onnx: conv_a+relu_a, conv_b, add+relu_s (residual), a
    // depthwise conv, a concat that is a model output, pool, flatten, fc MatMul+bias.
    auto model = onnx::importModel(std::string(QS_TEST_DATA_DIR) + "/models/tiny_residual.onnx");
    ASSERT_TRUE(model.ok()) << model.error().toString();
    auto hw = HWConfig::builtin("npu");
    auto proposal =
        proposeQuantizerSetup(*model, *hw, presetOptions(QuantizationPreset::Performance, 13));
    ASSERT_TRUE(proposal.ok()) << proposal.error().toString();
    std::set<std::string> points;
    for (const auto& [id, point] : proposal->setup.quantizationPoints) {
        points.insert(point.insertionPoint.toString());
    }
    // relu_s also feeds a float model output through the concat, so its consumers keep their
    // quantizers on their own inputs; the fc bias Add is fused into the MatMul.
    EXPECT_EQ(points,
              (std::set<std::string>{"nncf_model_input_0", "relu_a", "conv_b", "dw:0", "pool:0",
                                     "pool", "conv_a[W]", "conv_b[W]", "dw[W]", "fc[W]"}));
    EXPECT_EQ(proposal->setup.unifiedScaleGroups.size(), 1u);
}

TEST(PropagationTest, SelectionByPresetFromAnUnconstrainedProposal) {
    Builder b = residualBlock();
    const Proposed p = propose(b, "cpu", PropagationOptions{});
    EXPECT_EQ(
        strings(p.point("relu").possibleConfigs),
        (std::vector<std::string>{"B:8 M:S SGN:ANY PC:N NR:N", "B:8 M:A SGN:ANY PC:N NR:N",
                                  "B:16 M:S SGN:ANY PC:N NR:N", "B:16 M:A SGN:ANY PC:N NR:N"}));
    const QuantizerConfigChoice mixed = selectByPreset(p.proposal.setup, QuantizationPreset::Mixed);
    EXPECT_EQ(mixed.at(p.idByPoint.at("relu")).mode, QuantizationMode::Asymmetric);
    EXPECT_EQ(mixed.at(p.idByPoint.at("conv_b[W]")).mode, QuantizationMode::Symmetric);
    const QuantizerConfigChoice performance =
        selectByPreset(p.proposal.setup, QuantizationPreset::Performance);
    EXPECT_EQ(performance.at(p.idByPoint.at("relu")).mode, QuantizationMode::Symmetric);
    auto single = finalizeSetup(p.proposal, mixed);
    ASSERT_TRUE(single.ok());
    EXPECT_EQ(single->quantizationPoints.at(p.idByPoint.at("conv_b[W]")).qconfig.signednessToForce,
              true);

    // A config that is no candidate of the point is refused.
    QuantizerConfigChoice bad = mixed;
    bad[p.idByPoint.at("relu")].numBits = 4;
    EXPECT_FALSE(finalizeSetup(p.proposal, bad).ok());
}

TEST(PropagationTest, ReportsRenderTheSetup) {
    Builder b = residualBlock();
    const Proposed p = propose(b, "npu");
    auto single = finalizeSetup(p.proposal, selectFirstConfigs(p.proposal.setup));
    ASSERT_TRUE(single.ok());
    const nlohmann::json state = single->toJson();
    EXPECT_EQ(state["quantization_points"].size(), 7u);
    EXPECT_EQ(state["quantization_points"][std::to_string(p.idByPoint.at("relu"))]["qip_class"],
              "ActivationQuantizationInsertionPoint");
    const std::string table = bitwidthSummaryTable(*single);
    EXPECT_NE(table.find("| Num bits (N) | N-bits WQs / Placed WQs | N-bits AQs / Placed AQs | "
                         "N-bits Qs / Placed Qs |"),
              std::string::npos);
    EXPECT_NE(table.find("100% (3 / 3)"), std::string::npos);
    const std::string dot = quantizerSetupToDot(p.proposal, &*single);
    EXPECT_NE(dot.find("TP: POST HOOK"), std::string::npos);
    EXPECT_NE(dot.find("Unified group"), std::string::npos);
    EXPECT_EQ(proposalToJson(p.proposal.setup)["quantization_points"].size(), 7u);
}

// NNCF's fused patterns (mvn_scale_shift): a LayerNorm spelled out at opset 13 is one operator
// whose only input is its first ReduceMean; nothing inside it is quantized.
TEST(PropagationTest, DecomposedLayerNormIsOneFusedOperator) {
    Builder b;
    const ValueId x = b.input("x");
    const ValueId y = b.conv("conv_a", x);
    const ValueId mean = b.op("ReduceMean", "ln_mean", {y});
    const ValueId centered = b.op("Sub", "ln_sub", {y, mean});
    const ValueId squared = b.op("Pow", "ln_pow", {centered, b.constant("two", {1})});
    const ValueId variance = b.op("ReduceMean", "ln_var", {squared});
    const ValueId shifted = b.op("Add", "ln_eps", {variance, b.constant("eps", {1})});
    const ValueId deviation = b.op("Sqrt", "ln_sqrt", {shifted});
    const ValueId normalized = b.op("Div", "ln_div", {centered, deviation});
    const ValueId scaled = b.op("Mul", "ln_gamma", {normalized, b.constant("gamma", {4})});
    const ValueId shiftedOut = b.op("Add", "ln_beta", {scaled, b.constant("beta", {4})});
    b.output(b.conv("conv_b", shiftedOut));
    const Proposed p = propose(b);
    EXPECT_EQ(p.activationPoints(),
              (std::set<std::string>{"nncf_model_input_0", "conv_a", "ln_beta"}));
    EXPECT_EQ(names(p.point("conv_a").directlyQuantizedOperatorNodeNames),
              (std::set<std::string>{"ln_mean"}));
    const auto& ipg = *p.proposal.graph;
    const int op = ipg.operatorOf(*b.graph().findNode("ln_sub"));
    EXPECT_EQ(op, ipg.operatorOf(*b.graph().findNode("ln_beta")));
    EXPECT_EQ(ipg.node(op).name, "ln_mean");
}

// MatMul -> bias Add -> GELU (Div, Erf, Add, Mul) -> Mul(0.5): NNCF's
// linear_arithmetic_activations_arithmetic, one operator quantized at its input and output only.
TEST(PropagationTest, MatMulBiasGeluIsOneFusedOperator) {
    Builder b;
    const ValueId x = b.input("x");
    const ValueId fc = b.op("MatMul", "fc", {x, b.constant("fc.weight", {4, 4})});
    const ValueId biased = b.op("Add", "fc_bias", {fc, b.constant("fc.bias", {4})});
    const ValueId scaled = b.op("Div", "gelu_div", {biased, b.constant("sqrt2", {1})});
    const ValueId erf = b.op("Erf", "gelu_erf", {scaled});
    const ValueId onePlus = b.op("Add", "gelu_add", {erf, b.constant("one", {1})});
    const ValueId product = b.op("Mul", "gelu_mul", {biased, onePlus});
    const ValueId half = b.op("Mul", "gelu_half", {product, b.constant("half", {1})});
    b.output(b.op("MatMul", "fc2", {half, b.constant("fc2.weight", {4, 4})}));
    const Proposed p = propose(b);
    EXPECT_EQ(p.activationPoints(), (std::set<std::string>{"nncf_model_input_0", "gelu_half"}));
    EXPECT_EQ(names(p.point("gelu_half").directlyQuantizedOperatorNodeNames),
              (std::set<std::string>{"fc2"}));
    EXPECT_TRUE(p.idByPoint.contains("fc[W]"));
    EXPECT_TRUE(p.idByPoint.contains("fc2[W]"));
}

// Conv -> BN -> Relu quantizes after the Relu (linear_batch_norm_activations); Conv -> BN -> Conv
// after the BN (linear_batch_norm).
TEST(PropagationTest, ConvBatchNormActivationQuantizesAfterTheActivation) {
    Builder b;
    auto batchNorm = [&](const std::string& name, ValueId in) {
        return b.op("BatchNormalization", name,
                    {in, b.constant(name + ".scale", {8}), b.constant(name + ".bias", {8}),
                     b.constant(name + ".mean", {8}), b.constant(name + ".var", {8})});
    };
    const ValueId x = b.input("x");
    const ValueId relu = b.op("Relu", "relu_a", {batchNorm("bn_a", b.conv("conv_a", x))});
    const ValueId bnB = batchNorm("bn_b", b.conv("conv_b", relu));
    b.output(b.conv("conv_c", bnB));
    const Proposed p = propose(b);
    EXPECT_EQ(p.activationPoints(),
              (std::set<std::string>{"nncf_model_input_0", "relu_a", "bn_b"}));
    EXPECT_EQ(names(p.point("relu_a").directlyQuantizedOperatorNodeNames),
              (std::set<std::string>{"conv_b"}));
}

// On NPU the Add is a unified-scale op: its lone quantizer forms a group, and when the
// elementwise filter drops it the group stays, empty, in the setup (as in NNCF's setups).
TEST(PropagationTest, UnifiedGroupOfADroppedQuantizerStaysEmpty) {
    Builder b;
    const ValueId x = b.input("x");
    const ValueId relu = b.op("Relu", "relu", {b.conv("conv_a", x)});
    b.output(b.op("Add", "add_const", {relu, b.constant("bias", {1, 8, 1, 1})}));
    const Proposed p = propose(b, "npu");
    EXPECT_EQ(p.activationPoints(), (std::set<std::string>{"nncf_model_input_0"}));
    auto single = finalizeSetup(p.proposal, selectFirstConfigs(p.proposal.setup));
    ASSERT_TRUE(single.ok()) << single.error().toString();
    ASSERT_EQ(single->unifiedScaleGroups.size(), 1u);
    EXPECT_TRUE(single->unifiedScaleGroups.begin()->second.empty());
    EXPECT_EQ(single->toJson()["unified_scale_groups"].size(), 1u);
}

// NPU's config lists Interpolate twice and NNCF keeps the last entry (mode nearest, no configs):
// Resize is a wildcard and takes the symmetric default. Under MIXED the Conv branch wants
// asymmetric configs, so the shared quantizer splits into input-port points on both consumers.
TEST(PropagationTest, ResizeUnderNpuMixedSplitsTheSharedQuantizer) {
    Builder b;
    const ValueId x = b.input("x");
    const ValueId relu = b.op("Relu", "relu", {b.conv("conv_a", x)});
    b.output(b.conv("conv_b", relu));
    const ValueId scales = b.constant("scales", {4});
    const ValueId roi = b.constant("roi", {0});
    const ValueId resized = b.op("Resize", "resize", {relu, roi, scales}, DataType::Float,
                                 {{"mode", std::string("nearest"), {}}});
    b.output(b.conv("conv_c", resized));
    const Proposed mixed = propose(b, "npu", presetOptions(QuantizationPreset::Mixed, 13));
    EXPECT_EQ(mixed.activationPoints(),
              (std::set<std::string>{"nncf_model_input_0", "conv_b:0", "resize:0", "resize"}));
    EXPECT_EQ(mixed.point("conv_b:0").possibleConfigs.front().mode, QuantizationMode::Asymmetric);
    EXPECT_EQ(strings(mixed.point("resize:0").possibleConfigs),
              (std::vector<std::string>{"B:8 M:S SGN:ANY PC:N NR:N"}));
    // Under PERFORMANCE both branches accept 8-bit symmetric: one shared quantizer.
    const Proposed performance = propose(b, "npu");
    EXPECT_EQ(performance.activationPoints(),
              (std::set<std::string>{"nncf_model_input_0", "relu", "resize"}));
}

} // namespace
} // namespace qs::quantization
