// GEMM benchmark: the packed GEMM behind Conv and MatMul on the shapes of the zoo's layers, warm
// (one A, B and C reused, all in cache) or as a batch runs them (B and C rotating over IMAGES
// images, so that they come from memory as a large layer's do). gemm_bench.sh runs it against
// ONNX Runtime (MLAS) on the same shapes and threads.
//
// usage: qs_gemm_bench [THREADS] [IMAGES]
// prints one JSON line per shape: m, k, n, b (packed: B packed into strips per call as im2col
// does; in_place: B read where it lies, as a pointwise convolution's input), images, ms (median
// of 7 timings), gflops

#include "core/runtime/packed_gemm.h"
#include "core/runtime/parallel.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace {

using namespace qs::runtime;
using Clock = std::chrono::steady_clock;

struct Shape {
    int64_t m, k, n;
    bool inPlace;
    const char* layer; ///< where the zoo has it
};

// NOLINTNEXTLINE(*-avoid-c-arrays)
const Shape kShapes[] = {
    {64, 147, 12544, false, "resnet 7x7 stem"},
    {64, 27, 12321, false, "squeezenet 3x3 stem"},
    {64, 64, 3136, true, "resnet50 layer1 1x1 64->64"},
    {256, 64, 3136, true, "resnet50 layer1 1x1 64->256"},
    {64, 256, 3136, true, "resnet50 layer1 1x1 256->64"},
    {128, 576, 784, false, "resnet18 layer2.0 3x3 stride 2"},
    {256, 1152, 196, false, "resnet18 layer3.0 3x3 stride 2"},
    {512, 128, 784, true, "resnet50 layer2 1x1 128->512"},
    {1000, 512, 169, true, "squeezenet classifier"},
    {256, 128, 384, false, "tiny_bert qkv at batch 8"},
};

double medianOf(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

void run(const Shape& s, int64_t images) {
    std::mt19937 rng(1);
    std::normal_distribution<float> normal;
    std::vector<float> a(static_cast<size_t>(s.m * s.k));
    std::vector<float> b(static_cast<size_t>(s.k * s.n * images));
    std::vector<float> c(static_cast<size_t>(s.m * s.n * images));
    for (float& v : a) {
        v = normal(rng);
    }
    for (float& v : b) {
        v = normal(rng);
    }
    std::vector<float> packedA(static_cast<size_t>(packedWeightsSize(s.m, s.k)));
    packWeights(a.data(), s.m, s.k, s.k, packedA.data());
    const ConvEpilogue epilogue;
    const auto product = [&](int64_t image) {
        const float* bi = b.data() + image * s.k * s.n;
        const GemmOutput out{c.data() + image * s.m * s.n, s.n};
        if (s.inPlace) {
            packedGemmRowMajorB(s.m, s.n, s.k, packedA.data(), bi, s.n, out, epilogue);
            return;
        }
        const PackColumns pack = [&](int64_t j0, int64_t count, float* strips) {
            packRowMajorStrips(bi + j0, s.n, s.k, count, strips);
        };
        packedGemm(s.m, s.n, s.k, packedA.data(), pack, out, epilogue);
    };
    const double flop = 2.0 * static_cast<double>(s.m * s.k * s.n);
    // About 0.2 s per timing, whole rounds over the images.
    const int64_t rounds = std::max<int64_t>(1, static_cast<int64_t>(4e9 / flop / images / 20));
    for (int64_t i = 0; i < images; ++i) {
        product(i);
    }
    std::vector<double> ms;
    for (int t = 0; t < 7; ++t) {
        const auto start = Clock::now();
        for (int64_t r = 0; r < rounds; ++r) {
            for (int64_t i = 0; i < images; ++i) {
                product(i);
            }
        }
        ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count() /
                     static_cast<double>(rounds * images));
    }
    const double perProduct = medianOf(ms);
    std::printf("{\"m\": %lld, \"k\": %lld, \"n\": %lld, \"b\": \"%s\", \"layer\": \"%s\", "
                "\"images\": %lld, \"ms\": %.4f, \"gflops\": %.1f}\n",
                static_cast<long long>(s.m), static_cast<long long>(s.k),
                static_cast<long long>(s.n), s.inPlace ? "in_place" : "packed", s.layer,
                static_cast<long long>(images), perProduct, flop / perProduct / 1e6);
}

} // namespace

int main(int argc, char** argv) {
    const int threads = argc > 1 ? std::atoi(argv[1]) : 1;
    const int64_t images = argc > 2 ? std::atoll(argv[2]) : 1;
    if (threads < 1 || images < 1) {
        std::fprintf(stderr, "usage: qs_gemm_bench [THREADS >= 1] [IMAGES >= 1]\n");
        return 2;
    }
    setNumThreads(threads);
    for (const Shape& s : kShapes) {
        run(s, images);
    }
    return 0;
}
