// qs_hawq_bench MODEL TRACES.json BITS SEARCH: HAWQ on saved traces (a `hessian --mode weights
// --granularity per-tensor` JSON, e.g. `hawq --traces-out`), NPU config. Prints one JSON line:
// the perturbation and search seconds, the candidate and front sizes, and the re-selection time
// after moving the target ratio (select + apply to the quantization state, traces and
// perturbations reused; goal <= 50 ms), averaged over 20 targets across the candidates' range.

#include "core/mixed_precision/hawq_workflow.h"
#include "core/onnx/model_io.h"
#include "core/report/hessian_report.h"
#include "core/support/atomic_file.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>

using namespace qs;

namespace {

std::vector<int> parseBits(const std::string& text) {
    std::vector<int> bits;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ',')) {
        bits.push_back(std::stoi(item));
    }
    return bits;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 5) {
        std::cerr << "usage: qs_hawq_bench MODEL TRACES.json BITS trace-order|pareto\n";
        return 2;
    }
    auto model = onnx::importModel(argv[1]);
    auto text = readFile(argv[2]);
    if (!model.ok() || !text.ok()) {
        std::cerr << (model.ok() ? text.error() : model.error()).toString() << '\n';
        return 1;
    }
    auto traces = report::hessianScoresFromJson(nlohmann::json::parse(*text), ".");
    auto search = mixed_precision::parseSearch(argv[4]);
    if (!traces.ok() || !search.ok()) {
        std::cerr << "bad traces or search\n";
        return 1;
    }
    mixed_precision::HawqRequest request;
    request.settings.hw = "npu";
    request.bits = parseBits(argv[3]);
    request.search = *search;
    request.traces = *traces;
    request.compressionRatio = 1.0;
    NullProgress none;
    auto outcome = mixed_precision::runHawq(*model, request, none);
    if (!outcome.ok()) {
        std::cerr << outcome.error().toString() << '\n';
        return 1;
    }
    const mixed_precision::HawqAnalysis& analysis = outcome->analysis;
    double low = 1e300;
    double high = 0.0;
    for (const auto& candidate : analysis.candidates) {
        low = std::min(low, candidate.ratio);
        high = std::max(high, candidate.ratio);
    }
    constexpr int kTargets = 20;
    quantization::QuantizationState state = outcome->state;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kTargets; ++i) {
        const double target = low + (high - low) * i / (kTargets - 1);
        auto chosen = mixed_precision::selectHawqCandidate(analysis, target);
        if (!chosen.ok() || !mixed_precision::applyHawqCandidate(state, analysis.problem,
                                                                 analysis.candidates[*chosen])
                                 .ok()) {
            std::cerr << "re-selection failed at " << target << '\n';
            return 1;
        }
    }
    const double reselectMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count() /
        kTargets;
    const nlohmann::json json = {{"model", argv[1]},
                                 {"bits", request.bits},
                                 {"search", argv[4]},
                                 {"layers", analysis.problem.layers.size()},
                                 {"groups", analysis.problem.groups.size()},
                                 {"candidates", analysis.candidates.size()},
                                 {"front", analysis.pareto.size()},
                                 {"perturbation_s", outcome->timings.perturbationSeconds},
                                 {"search_s", outcome->timings.searchSeconds},
                                 {"reselect_ms", reselectMs}};
    std::cout << json.dump() << '\n';
    return 0;
}
