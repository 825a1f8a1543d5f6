// Weight compression speed on one core: INT4_ASYM group 128 and INT8_ASYM per channel over
// 6 x [4096, 4096] random float32 MatMul weights (~10^8 weights, 403 MB), against a plain memcpy
// of the same bytes (the memory-bandwidth limit). compression_bench.sh runs this and the numpy
// reference (tests/unit/compression/numpy_reference.py bench) in the same run and prints the
// ratio of median times.
//
//   qs_compression_bench [--benchmark_repetitions=5] [--benchmark_format=json]

#include "core/compression/integer_quantizer.h"

#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <vector>

namespace {
using namespace qs::compression;

constexpr int64_t kRows = 4096;
constexpr int64_t kCols = 4096;
constexpr int kMatrices = 6;
constexpr int64_t kPerMatrix = kRows * kCols;

const std::vector<float>& weights() {
    static const std::vector<float> kWeights = [] {
        std::vector<float> values(static_cast<size_t>(kPerMatrix * kMatrices));
        std::mt19937 rng(7);
        std::normal_distribution<float> normal;
        for (float& value : values) {
            value = normal(rng);
        }
        return values;
    }();
    return kWeights;
}

void quantizeAll(benchmark::State& state, CompressionMode mode, int64_t groupSize) {
    const std::vector<float>& all = weights();
    const WeightLayout layout = makeWeightLayout({kRows, kCols}, 1).value();
    for (auto _ : state) {
        for (int m = 0; m < kMatrices; ++m) {
            const std::span<const float> matrix(all.data() + m * kPerMatrix,
                                                static_cast<size_t>(kPerMatrix));
            auto quantized = quantizeWeight(matrix, layout, mode, groupSize);
            benchmark::DoNotOptimize(quantized);
        }
    }
    state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(all.size() * sizeof(float)));
    state.counters["weights"] = static_cast<double>(all.size());
}

void BM_Int4AsymGroup128(benchmark::State& state) {
    quantizeAll(state, CompressionMode::Int4Asym, 128);
}

void BM_Int8AsymPerChannel(benchmark::State& state) {
    quantizeAll(state, CompressionMode::Int8Asym, -1);
}

void BM_Memcpy(benchmark::State& state) {
    const std::vector<float>& all = weights();
    std::vector<float> copy(all.size());
    for (auto _ : state) {
        std::memcpy(copy.data(), all.data(), all.size() * sizeof(float));
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(all.size() * sizeof(float)));
}

BENCHMARK(BM_Memcpy)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
BENCHMARK(BM_Int4AsymGroup128)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
BENCHMARK(BM_Int8AsymPerChannel)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
} // namespace

BENCHMARK_MAIN();
