// Executor benchmark: median latency of one forward pass (batch 1, one thread by default), the
// cost of one forward + VJP to every Conv output (MatMul and Gemm outputs in a model without
// Conv) relative to one forward, and peak RSS. Writes the input and output as .npy so
// ort_bench.js can time ONNX Runtime on the same input and compare outputs, and the inputs of 1
// and of K batches (run_1.npy, run_K.npy; K - 1 batches take about two seconds, 5 <= K <= 41
// or as many as 256 MiB of samples hold) for the whole-process `quantscope-cli run` figure. Peak
// RSS is taken after the forward runs, before the VJP keeps every activation (reported apart).
// Float inputs are random-normal, integer inputs (token ids) uniform in [0, 100).
//
// usage: qs_runtime_bench MODEL OUT_DIR [REPEATS] [THREADS] [BATCH] [DIMS]
//   DIMS: the first input's dims after the batch, e.g. 3,640,640 for a model whose spatial
//   dims are dynamic (default: the model's, dynamic ones 1)

#include "core/onnx/model_io.h"
#include "core/runtime/batching.h"
#include "core/runtime/npy.h"
#include "core/runtime/packed_gemm.h"
#include "core/runtime/parallel.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <random>
#include <sstream>
#include <string_view>
#include <sys/resource.h>

namespace {

using namespace qs;
using Clock = std::chrono::steady_clock;

/// `count` samples of `input`'s shape (batch first): random-normal floats, or for integer inputs
/// (token ids) seeded values in [0, 100).
runtime::Tensor sampleInput(const graph::Value& input, runtime::Shape shape, uint64_t seed) {
    if (input.dtype != graph::DataType::Int64) {
        return runtime::randomNormal(std::move(shape), seed);
    }
    runtime::Tensor ids = runtime::Tensor::allocate(graph::DataType::Int64, std::move(shape));
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int64_t> token(0, 99);
    for (int64_t i = 0; i < ids.numElements(); ++i) {
        ids.mutableData<int64_t>()[i] = token(rng);
    }
    return ids;
}

/// "3,640,640" -> {3, 640, 640}.
std::vector<int64_t> parseDims(const std::string& text) {
    std::vector<int64_t> dims;
    std::stringstream stream(text);
    for (std::string part; std::getline(stream, part, ',');) {
        dims.push_back(std::stoll(part));
    }
    return dims;
}

/// The forward is timed for at least this long (and kMostRuns runs at most).
constexpr double kMinMeasuredMs = 250.0;
constexpr int kMostRuns = 2000;

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

int fail(const Error& error) {
    std::cerr << "qs_runtime_bench: " << error.toString() << '\n';
    return 1;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::cerr << "usage: qs_runtime_bench MODEL OUT_DIR [REPEATS] [THREADS]\n";
        return 2;
    }
    const std::filesystem::path model = argv[1];
    const std::filesystem::path outDir = argv[2];
    const int repeats = argc > 3 ? std::stoi(argv[3]) : 10;
    const int threads = argc > 4 ? std::stoi(argv[4]) : 1;
    runtime::setNumThreads(threads);
    // QS_WIDE_GEMM=0: the AVX2 micro-kernel only, to measure what the AVX-512 one brings.
    if (const char* wide = std::getenv("QS_WIDE_GEMM");
        wide != nullptr && std::string(wide) == "0") {
        runtime::setWideGemmKernel(false);
    }
    const int64_t batch = argc > 5 ? std::stoll(argv[5]) : 1;
    const std::vector<int64_t> dims = argc > 6 ? parseDims(argv[6]) : std::vector<int64_t>{};

    std::filesystem::create_directories(outDir);
    auto graph = onnx::importModel(model);
    if (!graph.ok()) {
        return fail(graph.error());
    }
    // As `quantscope-cli run` creates it: Conv weights released once packed.
    auto created = runtime::Executor::create(std::move(*graph), {.releasePackedWeights = true});
    if (!created.ok()) {
        return fail(created.error());
    }
    std::optional<runtime::Executor> exec(std::move(*created));
    // A copy: the executor is replaced before the VJP.
    const graph::Value input = exec->graph().value(exec->inputIds()[0]);
    auto shape = runtime::concreteInputShape(input, batch);
    if (!shape.ok()) {
        return fail(shape.error());
    }
    if (!dims.empty()) {
        shape->resize(1);
        shape->insert(shape->end(), dims.begin(), dims.end());
    }
    const runtime::Tensor x = sampleInput(input, *shape, 42);
    std::vector<double> forwardMs;
    runtime::RunStats stats;
    std::vector<runtime::Tensor> outputs;
    // At least `repeats` runs and kMinMeasuredMs of them: a sub-millisecond model (tiny_bert)
    // timed 5 times gave medians 30 % apart between rounds. ort_bench.js applies the same rule.
    double measuredMs = 0.0;
    for (int i = 0; i < repeats + 1 || (measuredMs < kMinMeasuredMs && i < kMostRuns); ++i) {
        const auto start = Clock::now();
        auto out = exec->run(std::span(&x, 1), &stats);
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
        if (!out.ok()) {
            return fail(out.error());
        }
        outputs = std::move(*out);
        if (i > 0) { // the first run warms caches and the allocator
            forwardMs.push_back(ms);
            measuredMs += ms;
        }
    }
    rusage forwardUsage{};
    getrusage(RUSAGE_SELF, &forwardUsage);
    // QS_BENCH_SKIP_VJP=1 times the forward alone (for perf record on the forward).
    const bool skipVjp = std::getenv("QS_BENCH_SKIP_VJP") != nullptr;
    if (!skipVjp || std::getenv("QS_BENCH_PROFILE") != nullptr) {
        // Gradients need the weights the forward executor released: one that keeps them.
        exec.reset();
        auto kept = onnx::importModel(model);
        if (!kept.ok()) {
            return fail(kept.error());
        }
        auto keeping = runtime::Executor::create(std::move(*kept));
        if (!keeping.ok()) {
            return fail(keeping.error());
        }
        exec.emplace(std::move(*keeping));
    }
    // Forward + VJP to every Conv output: seed the final output with ones and back-propagate;
    // the backward pass computes activation gradients at every Conv output on the way.
    std::vector<double> vjpMs;
    std::vector<graph::ValueId> convOutputs;
    for (const char* type : {"Conv", "MatMul"}) {
        for (const graph::NodeId id : exec->graph().nodeIds()) {
            const std::string& op = exec->graph().node(id).opType;
            if (op == type || (std::string_view(type) == "MatMul" && op == "Gemm")) {
                convOutputs.push_back(exec->graph().node(id).outputs[0]);
            }
        }
        if (!convOutputs.empty()) {
            break;
        }
    }
    const int vjpRepeats = skipVjp ? 0 : std::max(1, repeats / 3);
    for (int i = 0; i < vjpRepeats; ++i) {
        const auto start = Clock::now();
        auto trace = exec->forwardWithTrace(std::span(&x, 1));
        if (!trace.ok()) {
            return fail(trace.error());
        }
        runtime::Tensor seed =
            runtime::Tensor::allocate(graph::DataType::Float, outputs[0].shape());
        std::fill_n(seed.mutableData<float>(), seed.numElements(), 1.0F);
        const std::pair<graph::ValueId, runtime::Tensor> seeds{exec->graph().outputs()[0], seed};
        runtime::RunStats backwardStats;
        // The last pass: the first one also pays for the first touch of every gradient buffer.
        backwardStats.profile = std::getenv("QS_BENCH_PROFILE") != nullptr && i == vjpRepeats - 1;
        auto grads = exec->backward(*trace, std::span(&seeds, 1), convOutputs, &backwardStats);
        for (const auto& [op, seconds] : backwardStats.secondsByOpType) {
            std::cerr << "vjp " << op << ": " << seconds * 1000.0 << " ms\n";
        }
        if (!grads.ok()) {
            return fail(grads.error());
        }
        vjpMs.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    }
    if (std::getenv("QS_BENCH_PROFILE") != nullptr) {
        // The mean of several profiled runs: one run of a 1 ms model is mostly noise.
        const int profileRuns = std::clamp(repeats, 1, 50);
        runtime::RunStats profile;
        profile.profile = true;
        for (int i = 0; i < profileRuns; ++i) {
            (void)exec->run(std::span(&x, 1), &profile);
        }
        // QS_BENCH_PROFILE=nodes: one line per node instead, tab-separated (profile_vs_ort.py
        // reads them).
        if (std::string_view(std::getenv("QS_BENCH_PROFILE")) == "nodes") {
            for (const auto& [name, seconds] : profile.secondsByNode) {
                std::cerr << "node\t" << name << '\t' << seconds * 1000.0 / profileRuns << '\n';
            }
        } else {
            for (const auto& [op, seconds] : profile.secondsByOpType) {
                std::cerr << op << ": " << seconds * 1000.0 / profileRuns << " ms\n";
            }
        }
    }
    auto wroteIn = runtime::writeNpy(x, outDir / "input.npy");
    auto wroteOut = runtime::writeNpy(outputs[0], outDir / "output.npy");
    if (!wroteIn.ok() || !wroteOut.ok()) {
        return fail(wroteIn.ok() ? wroteOut.error() : wroteIn.error());
    }
    const double fwd = median(forwardMs);
    constexpr double kRunFigureMs = 2000.0;
    // Enough batches that a process's start-up noise (a few ms) stays small against them: a
    // 0.2 ms transformer forward needs thousands. At most 41, or as many as 256 MiB of samples
    // hold where that is more (the file of samples is written and read every round).
    constexpr int64_t kRunFigureBytes = int64_t{256} << 20;
    const auto batchBytes = std::max<int64_t>(static_cast<int64_t>(x.byteSize()), 1);
    const int64_t runBatches =
        std::clamp<int64_t>(1 + static_cast<int64_t>(std::ceil(kRunFigureMs / std::max(fwd, 1e-3))),
                            5, std::max<int64_t>(41, kRunFigureBytes / batchBytes));
    runtime::Tensor runSamples;
    for (const int64_t batches : {int64_t{1}, runBatches}) {
        runtime::Shape many = *shape;
        many[0] = batch * batches;
        const std::string name = batches == 1 ? "run_1.npy" : "run_k.npy";
        runSamples = sampleInput(input, many, 7);
        if (auto wrote = runtime::writeNpy(runSamples, outDir / name); !wrote.ok()) {
            return fail(wrote.error());
        }
    }
    // The in-process twin of the `run` figure: the same K batches back to back, sliced from the
    // same samples, and the whole loop's time per sample (a mean, as a process's time is, where
    // forward_ms is the median of single runs): what the process adds is run / loop.
    const auto loopStart = Clock::now();
    for (int64_t b = 0; b < runBatches; ++b) {
        const runtime::Tensor slice = runtime::sliceBatch(runSamples, b * batch, (b + 1) * batch);
        if (auto out = exec->run(std::span(&slice, 1)); !out.ok()) {
            return fail(out.error());
        }
    }
    const double loopMsPerSample =
        std::chrono::duration<double, std::milli>(Clock::now() - loopStart).count() /
        static_cast<double>(runBatches * batch);
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const double fwdVjp = vjpMs.empty() ? 0.0 : median(vjpMs);
    std::cout << "{\"model\": \"" << model.stem().string() << "\", \"threads\": " << threads
              << ", \"batch\": " << batch << ", \"forward_ms\": " << fwd
              << ", \"forward_min_ms\": " << *std::min_element(forwardMs.begin(), forwardMs.end())
              << ", \"forward_vjp_ms\": " << fwdVjp << ", \"vjp_ratio\": " << fwdVjp / fwd
              << ", \"peak_activation_kib\": " << stats.peakActivationBytes / 1024
              << ", \"peak_rss_mib\": " << forwardUsage.ru_maxrss / 1024
              << ", \"vjp_peak_rss_mib\": " << usage.ru_maxrss / 1024
              << ", \"run_batches\": " << runBatches
              << ", \"loop_ms_per_sample\": " << loopMsPerSample << "}\n";
    return 0;
}
