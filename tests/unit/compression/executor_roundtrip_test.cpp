// Compressed models run on our executor: the tiny LLM compressed in every mode (int4 blocked
// DequantizeLinear at opset 21, int8 per axis at 13), written and read back as ONNX, computes the
// same outputs as the float model with quantize-dequantized weights.

#include "core/compression/weight_compression.h"
#include "core/onnx/model_io.h"
#include "core/runtime/executor.h"
#include "tests/unit/compression/tiny_llm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <vector>

namespace qs::compression {
namespace {

runtime::Tensor runOrDie(graph::Graph graph, const runtime::Tensor& ids) {
    auto executor = runtime::Executor::create(std::move(graph));
    EXPECT_TRUE(executor.ok()) << executor.error().toString();
    auto outputs = executor.value().run(std::span<const runtime::Tensor>(&ids, 1));
    EXPECT_TRUE(outputs.ok()) << outputs.error().toString();
    return outputs.value().front();
}

double relativeDifference(const runtime::Tensor& a, const runtime::Tensor& b) {
    double largest = 0.0;
    double difference = 0.0;
    for (int64_t i = 0; i < a.numElements(); ++i) {
        largest = std::max(largest, std::abs(b.elementAsDouble(i)));
        difference = std::max(difference, std::abs(a.elementAsDouble(i) - b.elementAsDouble(i)));
    }
    return largest > 0 ? difference / largest : difference;
}

TEST(CompressedModelOnExecutor, MatchesTheDequantizedSimulationInEveryMode) {
    const graph::Graph model = testing::makeTinyLlm();
    std::vector<int64_t> tokens(8);
    for (size_t i = 0; i < tokens.size(); ++i) {
        tokens[i] = static_cast<int64_t>((i * 13 + 5) % 64);
    }
    const runtime::Tensor ids = runtime::Tensor::fromVector<int64_t>({1, 8}, tokens);
    const runtime::Tensor floatOut = runOrDie(model, ids);
    const std::filesystem::path file =
        std::filesystem::path(::testing::TempDir()) / "qs_compressed_tiny_llm.onnx";
    for (const CompressionMode mode : {CompressionMode::Int4Asym, CompressionMode::Int4Sym,
                                       CompressionMode::Int8Asym, CompressionMode::Int8Sym}) {
        WeightCompressionOptions options;
        options.mode = mode;
        options.ratio = modeBits(mode) == 4 ? 0.6 : 1.0;
        NullProgress progress;
        auto plan = planWeightCompression(model, options, progress);
        ASSERT_TRUE(plan.ok()) << plan.error().toString();
        graph::Graph simulated = model;
        ASSERT_TRUE(applyDequantizedWeights(simulated, plan.value()).ok());
        graph::Graph compressed = model;
        ASSERT_TRUE(applyWeightCompression(compressed, plan.value(), progress).ok());
        ASSERT_TRUE(onnx::exportModel(compressed, file).ok());
        auto reread = onnx::importModel(file);
        ASSERT_TRUE(reread.ok()) << reread.error().toString();
        const runtime::Tensor expected = runOrDie(std::move(simulated), ids);
        const runtime::Tensor got = runOrDie(std::move(reread).value(), ids);
        EXPECT_LE(relativeDifference(got, expected), 1e-5) << modeName(mode);
        // Compression changes the output, but not beyond recognition.
        EXPECT_GT(relativeDifference(got, floatOut), 0.0) << modeName(mode);
        EXPECT_LT(relativeDifference(got, floatOut), 0.5) << modeName(mode);
    }
    std::filesystem::remove(file);
}

} // namespace
} // namespace qs::compression
