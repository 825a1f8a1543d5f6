// Quantizer propagation speed: insertion point graph + propagation + finalize on zoo models
// (resnet50, efficientnet_b0; import excluded), and re-finalising a 500-node model after one
// changed choice. Run: qs_quantization_bench [--benchmark_filter=...]; models from $QS_ZOO_DIR
// (vit_b_16 is not part of make_zoo.py: export it with torchvision the same way to include it).

#include "core/layout/synthetic_graph.h"
#include "core/onnx/model_io.h"
#include "core/quantization/finalize_setup.h"
#include "core/quantization/quantization_state.h"
#include "core/quantization/quantizer_propagation_solver.h"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>

namespace {
using namespace qs;
using namespace qs::quantization;

const graph::Graph* zooModel(const std::string& name) {
    static std::map<std::string, std::unique_ptr<graph::Graph>> cache;
    auto& slot = cache[name];
    if (!slot) {
        const char* env = std::getenv("QS_ZOO_DIR");
        const std::filesystem::path dir = env != nullptr ? env : "";
        auto model = onnx::importModel(dir / (name + ".onnx"));
        if (!model.ok()) {
            return nullptr;
        }
        slot = std::make_unique<graph::Graph>(std::move(model).value());
    }
    return slot.get();
}

void propagateAndFinalize(benchmark::State& state, const graph::Graph& model,
                          std::string_view device) {
    const HWConfig hw = HWConfig::builtin(device).value();
    const PropagationOptions options =
        presetOptions(QuantizationPreset::Performance, model.opsetVersion());
    size_t points = 0;
    for (auto _ : state) {
        auto proposal = proposeQuantizerSetup(model, hw, options);
        auto setup = finalizeSetup(*proposal, selectFirstConfigs(proposal->setup));
        points = setup->quantizationPoints.size();
        benchmark::DoNotOptimize(setup);
    }
    state.counters["quantizers"] = static_cast<double>(points);
    state.counters["nodes"] = static_cast<double>(model.numNodes());
}

void BM_PropagationZoo(benchmark::State& state, const std::string& name, std::string_view device) {
    const graph::Graph* model = zooModel(name);
    if (model == nullptr) {
        state.SkipWithError(("model " + name + " not in $QS_ZOO_DIR").c_str());
        return;
    }
    propagateAndFinalize(state, *model, device);
}

/// A chain of residual blocks: conv+relu, conv, add+relu; 4 nodes per block plus the stem.
graph::Graph residualChain(int blocks) {
    graph::Graph g;
    g.metadata().opsetImports = {{"", 13}};
    const graph::ValueId x =
        g.addValue("x", graph::DataType::Float, graph::TensorShape::ofDims({1, 8, 8, 8}));
    g.addInput(x);
    std::vector<float> weights(64, 0.1F);
    int counter = 0;
    auto conv = [&](graph::ValueId in) {
        const std::string name = "conv" + std::to_string(counter++);
        const graph::ValueId w = g.addInitializer(
            name + ".w",
            graph::TensorData::fromValues<float>(graph::DataType::Float, {8, 8, 1, 1}, weights));
        const graph::ValueId out = g.addValue(name + "_out", graph::DataType::Float);
        g.addNode(name, "Conv", {in, w}, {out});
        return out;
    };
    auto unary = [&](const std::string& type, std::vector<graph::ValueId> in) {
        const std::string name = type + std::to_string(counter++);
        const graph::ValueId out = g.addValue(name + "_out", graph::DataType::Float);
        g.addNode(name, type, std::move(in), {out});
        return out;
    };
    graph::ValueId current = unary("Relu", {conv(x)});
    for (int i = 0; i < blocks; ++i) {
        const graph::ValueId inner = conv(unary("Relu", {conv(current)}));
        current = unary("Relu", {unary("Add", {inner, current})});
    }
    g.addOutput(current);
    return g;
}

void BM_PropagationResidualChain500(benchmark::State& state) {
    const graph::Graph model = residualChain(100);
    propagateAndFinalize(state, model, "npu");
}

void BM_RefinalizeAfterOneChoice500(benchmark::State& state) {
    const graph::Graph model = residualChain(100);
    const HWConfig hw = HWConfig::builtin("npu").value();
    auto proposal =
        proposeQuantizerSetup(model, hw, presetOptions(QuantizationPreset::Performance, 13))
            .value();
    QuantizerConfigChoice choice = selectFirstConfigs(proposal.setup);
    // Flip one activation quantizer between its first two candidates on every iteration.
    int target = -1;
    for (const auto& [id, point] : proposal.setup.quantizationPoints) {
        if (!point.insertionPoint.isWeight && point.possibleConfigs.size() > 1) {
            target = id;
            break;
        }
    }
    bool flip = false;
    for (auto _ : state) {
        flip = !flip;
        choice[target] = proposal.setup.quantizationPoints.at(target).possibleConfigs[flip ? 1 : 0];
        auto setup = finalizeSetup(proposal, choice);
        benchmark::DoNotOptimize(setup);
    }
    state.counters["nodes"] = static_cast<double>(model.numNodes());
}

/// One GUI edit on the skip chain of state.range(0) ops (layout's synthetic graph, NPU config):
/// chooseConfig (re-finalize) plus the quantizer marks the badges and the table are drawn from.
void BM_EditSkipChain(benchmark::State& state) {
    const graph::Graph model = layout::makeSkipChainGraph(static_cast<size_t>(state.range(0)));
    QuantizationSettings settings;
    settings.hw = "npu";
    QuantizationState quantization = computeQuantization(model, settings).value();
    std::vector<std::pair<int, QuantizerConfig>> edits;
    for (const auto& [id, point] : quantization.proposal.setup.quantizationPoints) {
        if (point.possibleConfigs.size() > 1) {
            edits.emplace_back(id, point.possibleConfigs[1]);
        }
    }
    if (edits.empty()) {
        state.SkipWithError("no multi-config point");
        return;
    }
    size_t run = 0;
    for (auto _ : state) {
        const auto& [id, config] = edits[run++ % edits.size()];
        if (!chooseConfig(quantization, id, config).ok()) {
            state.SkipWithError("chooseConfig failed");
            return;
        }
        auto marks = quantizerMarks(quantization.setup, &quantization.proposal.setup);
        benchmark::DoNotOptimize(marks);
    }
    state.counters["quantizers"] =
        static_cast<double>(quantization.setup.quantizationPoints.size());
}
} // namespace

BENCHMARK(BM_EditSkipChain)->Arg(500)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PropagationZoo, resnet50_cpu, std::string("resnet50"), "cpu")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PropagationZoo, resnet50_npu, std::string("resnet50"), "npu")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PropagationZoo, efficientnet_b0_cpu, std::string("efficientnet_b0"), "cpu")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PropagationZoo, efficientnet_b0_npu, std::string("efficientnet_b0"), "npu")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PropagationZoo, shufflenet_v2_x1_0_cpu, std::string("shufflenet_v2_x1_0"),
                  "cpu")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PropagationZoo, vit_b_16_cpu, std::string("vit_b_16"), "cpu")
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PropagationResidualChain500)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RefinalizeAfterOneChoice500)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
