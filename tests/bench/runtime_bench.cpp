// Executor benchmark: median latency of one forward pass (batch 1, one thread by default), the
// cost of one forward + VJP to every Conv output relative to one forward, and peak RSS. Writes
// the input and output as .npy so ort_bench.js can time ONNX Runtime on the same input and
// compare outputs.
//
// usage: qs_runtime_bench MODEL OUT_DIR [REPEATS] [THREADS]

#include "core/onnx/model_io.h"
#include "core/runtime/batching.h"
#include "core/runtime/npy.h"
#include "core/runtime/parallel.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sys/resource.h>

namespace {

using namespace qs;
using Clock = std::chrono::steady_clock;

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
    runtime::setNumThreads(argc > 4 ? std::stoi(argv[4]) : 1);

    std::filesystem::create_directories(outDir);
    auto graph = onnx::importModel(model);
    if (!graph.ok()) {
        return fail(graph.error());
    }
    auto exec = runtime::Executor::create(std::move(*graph));
    if (!exec.ok()) {
        return fail(exec.error());
    }
    const graph::Value& input = exec->graph().value(exec->inputIds()[0]);
    auto shape = runtime::concreteInputShape(input, 1);
    if (!shape.ok()) {
        return fail(shape.error());
    }
    const runtime::Tensor x = runtime::randomNormal(*shape, 42);
    std::vector<double> forwardMs;
    runtime::RunStats stats;
    std::vector<runtime::Tensor> outputs;
    for (int i = 0; i < repeats + 1; ++i) {
        const auto start = Clock::now();
        auto out = exec->run(std::span(&x, 1), &stats);
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
        if (!out.ok()) {
            return fail(out.error());
        }
        outputs = std::move(*out);
        if (i > 0) { // the first run warms caches and the allocator
            forwardMs.push_back(ms);
        }
    }
    // Forward + VJP to every Conv output: seed the final output with ones and back-propagate;
    // the backward pass computes activation gradients at every Conv output on the way.
    std::vector<double> vjpMs;
    std::vector<graph::ValueId> convOutputs;
    for (const graph::NodeId id : exec->graph().nodeIds()) {
        if (exec->graph().node(id).opType == "Conv") {
            convOutputs.push_back(exec->graph().node(id).outputs[0]);
        }
    }
    const int vjpRepeats = std::max(1, repeats / 3);
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
        runtime::RunStats profile;
        profile.profile = true;
        (void)exec->run(std::span(&x, 1), &profile);
        for (const auto& [op, seconds] : profile.secondsByOpType) {
            std::cerr << op << ": " << seconds * 1000.0 << " ms\n";
        }
    }
    auto wroteIn = runtime::writeNpy(x, outDir / "input.npy");
    auto wroteOut = runtime::writeNpy(outputs[0], outDir / "output.npy");
    if (!wroteIn.ok() || !wroteOut.ok()) {
        return fail(wroteIn.ok() ? wroteOut.error() : wroteIn.error());
    }
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const double fwd = median(forwardMs);
    const double fwdVjp = median(vjpMs);
    std::cout << "{\"model\": \"" << model.stem().string() << "\", \"forward_ms\": " << fwd
              << ", \"forward_min_ms\": " << *std::min_element(forwardMs.begin(), forwardMs.end())
              << ", \"forward_vjp_ms\": " << fwdVjp << ", \"vjp_ratio\": " << fwdVjp / fwd
              << ", \"peak_activation_kib\": " << stats.peakActivationBytes / 1024
              << ", \"peak_rss_mib\": " << usage.ru_maxrss / 1024 << "}\n";
    return 0;
}
