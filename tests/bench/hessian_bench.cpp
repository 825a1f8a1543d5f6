// Hessian benchmark: the cost of one Hutchinson iteration (one reverse sweep seeded with a
// Rademacher draw, to every Conv output, on a kept forward trace) divided by one forward pass
// (the fused inference run), at a given batch and thread count; plus the traced forward alone
// (forwardForBackward, what the Hessian service runs, and the full forwardWithTrace).
//
// usage: qs_hessian_bench MODEL [BATCH] [THREADS] [REPEATS]
// prints one JSON line: forward_ms, traced_forward_ms, full_traced_forward_ms, sweep_ms,
// sweep_over_forward, peak_rss_mib, sweep_ms_by_op; with QS_BENCH_PROFILE=nodes, then one line
// per node: its name and its milliseconds per sweep

#include "core/onnx/model_io.h"
#include "core/runtime/batching.h"
#include "core/runtime/packed_gemm.h"
#include "core/runtime/parallel.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <random>
#include <sys/resource.h>

namespace {

using namespace qs;
using Clock = std::chrono::steady_clock;

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

int fail(const Error& error) {
    std::cerr << "qs_hessian_bench: " << error.toString() << '\n';
    return 1;
}

double msSince(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::cerr << "usage: qs_hessian_bench MODEL [BATCH] [THREADS] [REPEATS]\n";
        return 2;
    }
    const std::filesystem::path model = argv[1];
    const int64_t batch = argc > 2 ? std::stoll(argv[2]) : 1;
    const int threads = argc > 3 ? std::stoi(argv[3]) : 1;
    const int repeats = argc > 4 ? std::stoi(argv[4]) : 5;
    runtime::setNumThreads(threads);
    // QS_WIDE_GEMM=0: the AVX2 micro-kernel only, to measure what the AVX-512 one brings.
    if (const char* wide = std::getenv("QS_WIDE_GEMM");
        wide != nullptr && std::string(wide) == "0") {
        runtime::setWideGemmKernel(false);
    }
    auto graph = onnx::importModel(model);
    if (!graph.ok()) {
        return fail(graph.error());
    }
    auto exec = runtime::Executor::create(std::move(*graph));
    if (!exec.ok()) {
        return fail(exec.error());
    }
    const graph::Graph& g = exec->graph();
    auto shape = runtime::concreteInputShape(g.value(exec->inputIds()[0]), batch);
    if (!shape.ok()) {
        return fail(shape.error());
    }
    const runtime::Tensor x = runtime::randomNormal(*shape, 42);
    std::vector<double> forwardMs;
    for (int i = 0; i <= repeats; ++i) {
        const auto start = Clock::now();
        auto out = exec->run(std::span(&x, 1));
        if (!out.ok()) {
            return fail(out.error());
        }
        if (i > 0) {
            forwardMs.push_back(msSince(start));
        }
    }
    std::vector<graph::ValueId> convOutputs;
    for (const graph::NodeId id : g.nodeIds()) {
        if (g.node(id).opType == "Conv") {
            convOutputs.push_back(g.node(id).outputs[0]);
        }
    }
    // The trace the Hessian service sweeps (forwardForBackward: fused chains, their inner
    // values shape-only), and the full one every value of which is kept, for comparison.
    // Each after one untimed run, whose fresh pages the buffer pool then reuses.
    const int tracedRepeats = std::max(2, repeats / 2);
    std::vector<double> fullTracedMs;
    for (int i = 0; i <= tracedRepeats; ++i) {
        const auto start = Clock::now();
        auto traced = exec->forwardWithTrace(std::span(&x, 1));
        if (!traced.ok()) {
            return fail(traced.error());
        }
        if (i > 0) {
            fullTracedMs.push_back(msSince(start));
        }
    }
    std::vector<double> tracedMs;
    runtime::ForwardTrace trace;
    for (int i = 0; i <= tracedRepeats; ++i) {
        trace = runtime::ForwardTrace(); // its buffers back to the pool, as between batches
        const auto start = Clock::now();
        auto traced = exec->forwardForBackward(std::span(&x, 1));
        if (!traced.ok()) {
            return fail(traced.error());
        }
        if (i > 0) {
            tracedMs.push_back(msSince(start));
        }
        trace = std::move(*traced);
    }
    std::mt19937_64 rng(7);
    std::vector<double> sweepMs;
    runtime::RunStats sweepStats; // per op type, summed over the sweeps
    sweepStats.profile = true;
    for (int i = 0; i <= repeats; ++i) {
        std::vector<std::pair<graph::ValueId, runtime::Tensor>> seeds;
        for (const graph::ValueId out : g.outputs()) {
            const runtime::Tensor& y = trace.values[out.index()];
            runtime::Tensor v = runtime::Tensor::allocate(graph::DataType::Float, y.shape());
            for (int64_t j = 0; j < v.numElements(); ++j) {
                v.mutableData<float>()[j] = (rng() & 1U) != 0 ? 1.0F : -1.0F;
            }
            seeds.emplace_back(out, v);
        }
        const auto start = Clock::now();
        auto grads = exec->backward(trace, seeds, convOutputs, &sweepStats);
        if (!grads.ok()) {
            return fail(grads.error());
        }
        if (i > 0) { // the first sweep pays for the first touch of every gradient buffer
            sweepMs.push_back(msSince(start));
        }
    }
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const double fwd = median(forwardMs);
    const double sweep = median(sweepMs);
    std::cout << "{\"model\": \"" << model.stem().string() << "\", \"batch\": " << batch
              << ", \"threads\": " << threads << ", \"forward_ms\": " << fwd
              << ", \"traced_forward_ms\": " << median(tracedMs)
              << ", \"full_traced_forward_ms\": " << median(fullTracedMs)
              << ", \"sweep_ms\": " << sweep << ", \"sweep_over_forward\": " << sweep / fwd
              << ", \"conv_targets\": " << convOutputs.size()
              << ", \"peak_rss_mib\": " << usage.ru_maxrss / 1024 << ", \"sweep_ms_by_op\": {";
    const char* separator = "";
    for (const auto& [opType, seconds] : sweepStats.secondsByOpType) {
        std::cout << separator << '"' << opType << "\": " << seconds * 1000.0 / (repeats + 1);
        separator = ", ";
    }
    std::cout << "}}\n";
    if (const char* nodes = std::getenv("QS_BENCH_PROFILE");
        nodes != nullptr && std::string(nodes) == "nodes") {
        for (const auto& [name, seconds] : sweepStats.secondsByNode) {
            std::cout << name << ' ' << seconds * 1000.0 / (repeats + 1) << '\n';
        }
    }
    return 0;
}
