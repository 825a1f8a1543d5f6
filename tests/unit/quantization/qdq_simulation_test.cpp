// The exported QDQ model, run by our executor, equals the fake-quant simulation
// (insertFakeQuantizers) within 1e-5 on committed models: the demo CNN with 8-bit CPU quantizers,
// the demo CNN with mixed 8/6/4/3/16-bit choices, and the demo CNN with requantizers (NPU,
// merge_with_potential_requantization, two 4-bit choices below 8-bit parents).

#include "core/onnx/model_io.h"
#include "core/quantization/calibration.h"
#include "core/quantization/fake_quantize.h"
#include "core/quantization/finalize_setup.h"
#include "core/quantization/qdq_export.h"
#include "core/quantization/quantization_state.h"
#include "core/runtime/dataset_request.h"
#include "core/runtime/executor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <vector>

namespace qs::quantization {
namespace {

using graph::Graph;
using runtime::Tensor;

Graph load(const char* path) {
    auto model = onnx::importModel(path);
    EXPECT_TRUE(model.ok()) << model.error().toString();
    return std::move(model).value();
}

std::vector<Tensor> randomSamples(const Graph& model, int64_t count) {
    runtime::DatasetRequest source = runtime::calibrationRequest();
    source.randomSamples = count;
    source.seed = 3;
    auto data = runtime::loadDataset(model, source);
    EXPECT_TRUE(data.ok()) << data.error().toString();
    return std::move(data).value().inputs;
}

std::vector<Tensor> runOrDie(const Graph& graph, const std::vector<Tensor>& inputs) {
    auto executor = runtime::Executor::create(graph);
    EXPECT_TRUE(executor.ok()) << executor.error().toString();
    if (!executor.ok()) {
        return {};
    }
    auto outputs = executor->run(inputs);
    EXPECT_TRUE(outputs.ok()) << outputs.error().toString();
    return outputs.ok() ? std::move(outputs).value() : std::vector<Tensor>{};
}

/// Calibrates `setup` on `samples`, then runs the simulation and the QDQ export on them; returns
/// the largest absolute output difference.
double qdqVsSimulation(const Graph& model, const SingleConfigQuantizerSetup& setup,
                       const std::vector<Tensor>& samples, QdqExportSummary& summary) {
    NullProgress quiet;
    auto params = calibrate(model, setup, runtime::Dataset{.inputs = samples}, {}, quiet);
    EXPECT_TRUE(params.ok()) << params.error().toString();
    auto simulated = insertFakeQuantizers(model, setup, *params);
    EXPECT_TRUE(simulated.ok()) << simulated.error().toString();
    auto qdq = insertQdqNodes(model, setup, *params, {}, &summary);
    EXPECT_TRUE(qdq.ok()) << qdq.error().toString();
    if (!simulated.ok() || !qdq.ok()) {
        return INFINITY;
    }
    const std::vector<Tensor> expected = runOrDie(simulated->graph, samples);
    const std::vector<Tensor> got = runOrDie(*qdq, samples);
    EXPECT_EQ(expected.size(), model.outputs().size());
    EXPECT_EQ(got.size(), expected.size());
    double maxDiff = expected.empty() ? INFINITY : 0.0;
    for (size_t o = 0; o < std::min(expected.size(), got.size()); ++o) {
        const auto a = expected[o].values<float>();
        const auto b = got[o].values<float>();
        EXPECT_EQ(a.size(), b.size());
        for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
            maxDiff = std::max(maxDiff, static_cast<double>(std::fabs(a[i] - b[i])));
        }
    }
    return maxDiff;
}

TEST(QdqVsSimulation, DemoModelEightBitCpu) {
    const Graph model = load(QS_DEMO_MODEL);
    auto state = computeQuantization(model, {});
    ASSERT_TRUE(state.ok()) << state.error().toString();
    QdqExportSummary summary;
    const double diff = qdqVsSimulation(model, state->setup, randomSamples(model, 4), summary);
    EXPECT_LE(diff, 1e-5);
    std::cout << "max |QDQ - simulation| = " << diff << "\n";
    EXPECT_GT(summary.activationPairs, 5);
    EXPECT_GT(summary.weightDequantizers, 5);
    EXPECT_EQ(summary.opset, 13);
}

TEST(QdqVsSimulation, DemoModelMixedBitwidths) {
    const Graph model = load(QS_DEMO_MODEL);
    auto state = computeQuantization(model, {});
    ASSERT_TRUE(state.ok()) << state.error().toString();
    SingleConfigQuantizerSetup setup = state->setup;
    // Bits by unified group (members must agree), else by id: 8, 6, 4, 3, 16 in turn.
    std::map<int, int> representative;
    for (const auto& [gid, members] : setup.unifiedScaleGroups) {
        for (const int member : members) {
            representative[member] = members.front();
        }
    }
    const std::vector<int> bits = {8, 6, 4, 3, 16};
    for (auto& [id, point] : setup.quantizationPoints) {
        const int key = representative.contains(id) ? representative[id] : id;
        point.qconfig.numBits = bits[static_cast<size_t>(key) % bits.size()];
    }
    QdqExportSummary summary;
    const double diff = qdqVsSimulation(model, setup, randomSamples(model, 4), summary);
    EXPECT_LE(diff, 1e-5);
    std::cout << "max |QDQ - simulation| = " << diff << "\n";
    EXPECT_EQ(summary.opset, 21);
    EXPECT_GT(summary.clippedGrids, 0);
}

TEST(QdqVsSimulation, DemoModelWithRequantizers) {
    const Graph model = load(QS_DEMO_MODEL);
    QuantizationSettings settings;
    settings.hw = "npu";
    settings.rule = QuantizerPropagationRule::MergeWithPotentialRequantization;
    auto state = computeQuantization(model, settings);
    ASSERT_TRUE(state.ok()) << state.error().toString();
    // 4-bit below an 8-bit parent: these two stay as requantizers.
    QuantizerConfigChoice choice = state->choice;
    ASSERT_TRUE(applyBitwidthChoice(state->proposal.setup, "/block1/Add:0=4", choice).ok());
    ASSERT_TRUE(applyBitwidthChoice(state->proposal.setup, "/se/Mul:0=4", choice).ok());
    ASSERT_TRUE(chooseConfigs(*state, choice).ok());
    ASSERT_EQ(state->setup.requantizationParents.size(), 2U);
    QdqExportSummary summary;
    const double diff = qdqVsSimulation(model, state->setup, randomSamples(model, 4), summary);
    EXPECT_LE(diff, 1e-5);
    std::cout << "max |QDQ - simulation| = " << diff << "\n";
    EXPECT_EQ(summary.opset, 21);
}

/// Every zoo model ($QS_ZOO_DIR; skipped when absent, failed when $QS_REQUIRE_ZOO=1 as in
/// packaging/test.sh), 8-bit CPU, one sample.
TEST(QdqVsSimulation, ZooModels) {
    const char* env = std::getenv("QS_ZOO_DIR");
    const char* required = std::getenv("QS_REQUIRE_ZOO");
    const std::filesystem::path zoo = env != nullptr ? env : "";
    if (zoo.empty() || !std::filesystem::exists(zoo / "resnet18.onnx")) {
        ASSERT_FALSE(required != nullptr && std::string_view(required) == "1")
            << "no zoo models in '" << zoo << "' and QS_REQUIRE_ZOO=1";
        GTEST_SKIP() << "no zoo models in '" << zoo << "' (set QS_ZOO_DIR)";
    }
    for (const char* name : {"squeezenet1_1", "resnet18", "mobilenet_v2", "efficientnet_b0",
                             "shufflenet_v2_x1_0", "resnet50"}) {
        const std::filesystem::path path = zoo / (std::string(name) + ".onnx");
        if (!std::filesystem::exists(path)) {
            continue;
        }
        const Graph model = load(path.c_str());
        auto state = computeQuantization(model, {});
        ASSERT_TRUE(state.ok()) << name << ": " << state.error().toString();
        QdqExportSummary summary;
        const double diff = qdqVsSimulation(model, state->setup, randomSamples(model, 1), summary);
        EXPECT_LE(diff, 1e-5) << name;
        std::cout << name << ": max |QDQ - simulation| = " << diff << "\n";
    }
}

} // namespace
} // namespace qs::quantization
