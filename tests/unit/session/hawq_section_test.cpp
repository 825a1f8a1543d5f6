// The HAWQ section with its analysis: a run on the tiny residual model (NPU, pareto search) is
// summarized, written and read back equal, and restored into an outcome identical to the run's
// (traces, perturbations, candidates, front, chosen setup) without recomputing anything; a section
// that does not match the model's quantizers is an error naming the difference.

#include "core/mixed_precision/hawq_workflow.h"
#include "core/onnx/model_io.h"
#include "core/session/hawq_section.h"
#include "core/support/progress.h"

#include <gtest/gtest.h>

namespace qs::session {
namespace {

graph::Graph tinyModel() {
    onnx::ImportOptions options;
    options.inputShapes.push_back({"input", {-1, 3, 8, 8}});
    auto model = onnx::importModel(QS_TEST_DATA_DIR "/models/tiny_residual.onnx", options);
    EXPECT_TRUE(model.ok());
    return std::move(model).value();
}

mixed_precision::HawqRequest paretoRequest() {
    mixed_precision::HawqRequest request;
    request.settings.hw = "npu";
    request.dataset.randomSamples = 4;
    request.samples = 4;
    request.iterations = 5;
    request.compressionRatio = 1.2;
    request.search = mixed_precision::HawqSearch::Pareto;
    return request;
}

TEST(HawqSectionAnalysis, RoundTripsAndRestoresTheOutcomeWithoutRecomputing) {
    const graph::Graph model = tinyModel();
    const mixed_precision::HawqRequest request = paretoRequest();
    NullProgress none;
    auto run = mixed_precision::runHawq(model, request, none);
    ASSERT_TRUE(run.ok()) << run.error().toString();
    const size_t selected = run->analysis.pareto.back();
    const HawqSummary summary = summarize(*run, request, "fnv1a64:0123", selected);
    ASSERT_TRUE(summary.restorable());
    EXPECT_EQ(summary.selected, selected);
    EXPECT_EQ(summary.chosen, run->chosen);

    auto back = hawqSummaryFromJson(nlohmann::json::parse(toJson(summary).dump()));
    ASSERT_TRUE(back.ok()) << back.error().toString();
    EXPECT_EQ(*back, summary);

    auto restored = restoreHawqOutcome(model, *back);
    ASSERT_TRUE(restored.ok()) << restored.error().toString();
    const mixed_precision::HawqAnalysis& a = run->analysis;
    const mixed_precision::HawqAnalysis& b = restored->analysis;
    EXPECT_EQ(b.avgTraces, a.avgTraces);
    EXPECT_EQ(b.perturbations, a.perturbations);
    EXPECT_EQ(b.candidates, a.candidates);
    EXPECT_EQ(b.traceOrder, a.traceOrder);
    EXPECT_EQ(b.pareto, a.pareto);
    EXPECT_EQ(b.search, a.search);
    EXPECT_EQ(restored->chosen, run->chosen);
    EXPECT_EQ(restored->target, run->target);
    ASSERT_EQ(b.problem.layers.size(), a.problem.layers.size());
    for (size_t l = 0; l < a.problem.layers.size(); ++l) {
        EXPECT_EQ(b.problem.layers[l].macs, a.problem.layers[l].macs);
        EXPECT_EQ(b.problem.layers[l].group, a.problem.layers[l].group);
    }
    EXPECT_EQ(restored->state.setup.toJson(), run->state.setup.toJson());
    // Re-selection works on the restored analysis as on the run's.
    auto again = mixed_precision::selectHawqCandidate(b, request.compressionRatio);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, run->chosen);
    const mixed_precision::HawqRequest asked = requestOf(*back);
    EXPECT_EQ(asked.settings, request.settings);
    EXPECT_EQ(asked.samples, request.samples);
    EXPECT_EQ(asked.iterations, request.iterations);
    EXPECT_EQ(asked.search, request.search);
    // The dataset comes back too, so running HAWQ again on the same data reuses the traces.
    ASSERT_TRUE(back->dataset.has_value());
    EXPECT_EQ(asked.dataset.describe(), request.dataset.describe());
    EXPECT_EQ(asked.dataset.randomSamples, 4);
}

TEST(HawqSectionAnalysis, MismatchesAndBadIndicesAreErrors) {
    const graph::Graph model = tinyModel();
    const mixed_precision::HawqRequest request = paretoRequest();
    NullProgress none;
    auto run = mixed_precision::runHawq(model, request, none);
    ASSERT_TRUE(run.ok()) << run.error().toString();
    const HawqSummary summary = summarize(*run, request, "fnv1a64:0123");

    HawqSummary renamed = summary;
    renamed.layers.front().node = "not_a_conv";
    auto wrong = restoreHawqOutcome(model, renamed);
    ASSERT_FALSE(wrong.ok());
    EXPECT_NE(wrong.error().message().find("not_a_conv"), std::string::npos)
        << wrong.error().message();

    // A layer not saved is one HAWQ kept out of the search (no trace): it stays fixed.
    HawqSummary fewer = summary;
    fewer.layers.pop_back();
    for (auto& candidate : fewer.candidates) {
        candidate.weightBits.pop_back();
    }
    auto restoredFewer = restoreHawqOutcome(model, fewer);
    ASSERT_TRUE(restoredFewer.ok()) << restoredFewer.error().toString();
    EXPECT_EQ(restoredFewer->analysis.problem.layers.size(), summary.layers.size() - 1);

    // Every field is checked before converting, and the message names its JSON path.
    const auto errorOf = [](const nlohmann::json& json) {
        auto read = hawqSummaryFromJson(json);
        return read.ok() ? std::string("accepted") : read.error().message();
    };
    nlohmann::json bad = toJson(summary);
    EXPECT_EQ(errorOf(bad), "accepted");
    bad["chosen"] = summary.candidates.size();
    EXPECT_EQ(errorOf(bad), "sections.hawq.chosen: " + std::to_string(summary.candidates.size()) +
                                " is out of range 0.." +
                                std::to_string(summary.candidates.size() - 1));
    bad["chosen"] = -1;
    EXPECT_NE(errorOf(bad).find("sections.hawq.chosen: -1 is out of range"), std::string::npos);
    bad = toJson(summary);
    bad.erase("traces");
    EXPECT_EQ(errorOf(bad), "sections.hawq.traces: missing");
    bad = toJson(summary);
    bad["settings"]["preset"] = "fastest";
    EXPECT_EQ(errorOf(bad),
              "sections.hawq.settings.preset: unknown preset 'fastest' (performance, mixed)");
    bad = toJson(summary);
    bad["layers"][0]["weight_bits"] = 1e30;
    EXPECT_EQ(errorOf(bad),
              "sections.hawq.layers[0].weight_bits: expected an integer in 2..16, got 1e+30");
    bad = toJson(summary);
    bad["candidates"][0]["activation_bits"][0] = 99;
    EXPECT_EQ(errorOf(bad),
              "sections.hawq.candidates[0].activation_bits[0]: 99 is no bit width (2..16)");
    bad = toJson(summary);
    bad["trace_order"][0] = 0.5;
    EXPECT_NE(errorOf(bad).find("sections.hawq.trace_order[0]: expected an integer"),
              std::string::npos);
    bad = toJson(summary);
    bad["iterations"] = "many";
    EXPECT_NE(errorOf(bad).find("sections.hawq.iterations: expected an integer"),
              std::string::npos);
    bad = toJson(summary);
    bad["layers"][0]["perturbation"]["08"] = 0.5;
    EXPECT_NE(errorOf(bad).find("sections.hawq.layers[0].perturbation"), std::string::npos);
    bad = toJson(summary);
    bad["extra"] = 1;
    EXPECT_NE(errorOf(bad).find("sections.hawq.extra: unknown field"), std::string::npos);
    EXPECT_NE(errorOf(nlohmann::json::array()).find("sections.hawq: expected an object"),
              std::string::npos);

    HawqSummary summaryOnly = summary;
    summaryOnly.candidates.clear();
    auto readOnly = hawqSummaryFromJson(toJson(summaryOnly));
    ASSERT_TRUE(readOnly.ok());
    EXPECT_FALSE(readOnly->restorable());
    EXPECT_FALSE(restoreHawqOutcome(model, *readOnly).ok());
}

} // namespace
} // namespace qs::session
