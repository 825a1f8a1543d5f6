// The point of HAWQ on a trained model: on the digits CNN (resources/models, 98.3 % float top-1 on
// its 360 held-out samples) under the NPU config, the bits HAWQ chooses at a BitOps ratio keep a
// higher top-1 than the reverse assignment at the same ratio — the non-decreasing sequences over
// the layers ordered by trace *descending* (high bits where traces are low), the one nearest the
// target ratio; HAWQ chooses at exactly that ratio. Both are calibrated on the calibration split
// and simulated with fake-quant; the test prints both accuracies.

#include "core/mixed_precision/hawq_workflow.h"
#include "core/mixed_precision/trace_order_candidates.h"
#include "core/onnx/model_io.h"
#include "core/quantization/calibration.h"
#include "core/quantization/fake_quantize.h"
#include "core/report/accuracy.h"
#include "core/runtime/executor.h"
#include "core/runtime/npy.h"
#include "core/runtime/probe_runner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

namespace qs::mixed_precision {
namespace {

#define DIGITS QS_RESOURCES_DIR "/models/digits_"

/// Top-1 of `state`'s setup on the test split, calibrated on `calibration`.
double quantizedTop1(const graph::Graph& model, const quantization::QuantizationState& state,
                     const runtime::Dataset& calibration, const runtime::Dataset& test,
                     const std::vector<int64_t>& labels) {
    NullProgress none;
    auto parameters = quantization::calibrate(model, state.setup, calibration, {}, none);
    EXPECT_TRUE(parameters.ok()) << parameters.error().toString();
    auto fake = quantization::insertFakeQuantizers(model, state.setup, *parameters);
    EXPECT_TRUE(fake.ok()) << fake.error().toString();
    auto executor = runtime::Executor::create(std::move(fake->graph));
    EXPECT_TRUE(executor.ok()) << executor.error().toString();
    auto outputs = runtime::runBatched(*executor, test, none);
    EXPECT_TRUE(outputs.ok()) << outputs.error().toString();
    auto accuracy = report::computeAccuracy((*outputs)[0], labels);
    EXPECT_TRUE(accuracy.ok()) << accuracy.error().toString();
    return accuracy->top1();
}

TEST(HawqAccuracy, HawqBeatsTheReverseAssignmentOnTheTrainedDigitsModel) {
    auto model = onnx::importModel(DIGITS "cnn.onnx");
    ASSERT_TRUE(model.ok()) << model.error().toString();
    auto calibInputs = runtime::readNpy(DIGITS "calib_inputs.npy");
    auto testInputs = runtime::readNpy(DIGITS "test_inputs.npy");
    auto labels = report::readLabelsNpy(DIGITS "test_labels.npy");
    ASSERT_TRUE(calibInputs.ok() && testInputs.ok() && labels.ok());
    const runtime::Dataset calibration{.inputs = {*calibInputs}, .batchSize = 64};
    const runtime::Dataset test{.inputs = {*testInputs}, .batchSize = 64};

    HawqRequest request;
    request.settings.hw = "npu";
    request.dataset.npyFiles = {DIGITS "calib_inputs.npy"};
    request.samples = 32;
    request.iterations = 100;
    request.compressionRatio = 1.6;
    NullProgress none;
    auto outcome = runHawq(*model, request, none);
    ASSERT_TRUE(outcome.ok()) << outcome.error().toString();
    const HawqAnalysis& analysis = outcome->analysis;

    // The reverse: NNCF's enumeration over the layers ordered by trace descending; the candidate
    // whose ratio is nearest the target. HAWQ then chooses at exactly that ratio, so it
    // compresses at least as much as the reverse does.
    std::vector<double> negated;
    for (const double trace : analysis.avgTraces) {
        negated.push_back(-trace);
    }
    std::optional<HawqCandidate> reverse;
    for (auto& bits : traceOrderCandidates(analysis.problem, negated)) {
        auto candidate =
            evaluateCandidate(analysis.problem, analysis.avgTraces, analysis.perturbations, bits);
        ASSERT_TRUE(candidate.ok());
        if (!reverse || std::abs(candidate->ratio - request.compressionRatio) <
                            std::abs(reverse->ratio - request.compressionRatio)) {
            reverse = *candidate;
        }
    }
    ASSERT_TRUE(reverse);
    auto chosen = selectHawqCandidate(analysis, reverse->ratio);
    ASSERT_TRUE(chosen.ok()) << chosen.error().toString();
    const HawqCandidate& hawq = analysis.candidates[*chosen];
    EXPECT_GE(hawq.ratio, reverse->ratio);
    EXPECT_LT(hawq.metric, reverse->metric);
    quantization::QuantizationState hawqState = outcome->state;
    ASSERT_TRUE(applyHawqCandidate(hawqState, analysis.problem, hawq).ok());

    quantization::QuantizationState reversed = outcome->state;
    ASSERT_TRUE(applyHawqCandidate(reversed, analysis.problem, *reverse).ok());
    const double hawqTop1 = quantizedTop1(*model, hawqState, calibration, test, *labels);
    const double reverseTop1 = quantizedTop1(*model, reversed, calibration, test, *labels);
    std::printf("digits_cnn, NPU, near ratio %.2f: HAWQ ratio %.3f metric %.4g top-1 %.2f %%; "
                "reverse ratio %.3f metric %.4g top-1 %.2f %% (float 98.33 %%)\n",
                request.compressionRatio, hawq.ratio, hawq.metric, 100.0 * hawqTop1, reverse->ratio,
                reverse->metric, 100.0 * reverseTop1);
    EXPECT_GT(hawqTop1, reverseTop1);
}

} // namespace
} // namespace qs::mixed_precision
