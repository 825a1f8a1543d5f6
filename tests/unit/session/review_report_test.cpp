// The review report's core workflow on a small conv net built in code: one quantizer table row per
// quantizer (active, requantizer, merged) with its chosen config and state; the CSV and the HTML
// table hold the same rows; a 4-bit weight shows in the bit-width shares (parameters, bytes,
// BitOps as HAWQ counts them); calibration fills ranges, scales and SQNR; the HAWQ, pruning and
// weight-compression sections appear exactly when present; bad inputs (a setup and a session, a
// setup for another model, a session of another model, malformed sections, an unwritable CSV
// folder, a page path in a missing folder) are errors naming the problem; the diff of two
// reports names the point that changed bit width and the pruning section that changed.

#include "core/graph/graph_builder.h"
#include "core/onnx/model_io.h"
#include "core/report/review_diff.h"
#include "core/report/review_report.h"
#include "core/session/review_source.h"
#include "core/session/session_file.h"
#include "core/support/atomic_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace qs::session {
namespace {

using graph::DataType;

std::vector<float> ramp(size_t n, float scale) {
    std::vector<float> values(n);
    for (size_t i = 0; i < n; ++i) {
        values[i] = scale * (static_cast<float>(i % 7) - 3.0F);
    }
    return values;
}

/// x[batch,3,8,8] -> Conv c1 (W1[4,3,3,3], pad 1) -> Relu -> Conv c2 (W2[4,4,1,1]) -> Relu ->
/// GlobalAveragePool -> Flatten -> Gemm fc (Wf[10,4]) -> y[1,10].
graph::Graph smallNet(int64_t batch = 1) {
    graph::GraphBuilder b(13, 8);
    const auto x = b.input("x", {batch, 3, 8, 8});
    const auto w1 = b.weight("W1", {4, 3, 3, 3}, ramp(108, 0.05F));
    const auto w2 = b.weight("W2", {4, 4, 1, 1}, ramp(16, 0.1F));
    const auto wf = b.weight("Wf", {10, 4}, ramp(40, 0.2F));
    const auto c1 = b.op("Conv", "c1", {x, w1}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
    const auto r1 = b.op("Relu", "r1", {c1});
    const auto c2 = b.op("Conv", "c2", {r1, w2});
    const auto r2 = b.op("Relu", "r2", {c2});
    const auto pool = b.op("GlobalAveragePool", "pool", {r2});
    const auto flat = b.op("Flatten", "flat", {pool});
    b.output(b.op("Gemm", "fc", {flat, wf}, {{"transB", int64_t{1}}}), DataType::Float,
             {batch, 10});
    auto bytes = onnx::serializeModel(b.take());
    EXPECT_TRUE(bytes.ok());
    auto graph = onnx::importModelFromBytes(*bytes, {});
    EXPECT_TRUE(graph.ok()) << graph.error().toString();
    return std::move(graph).value();
}

class ReviewReportTest : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir = std::filesystem::temp_directory_path() /
                ("qs_review_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                 "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::create_directories(m_dir);
        m_modelPath = (m_dir / "net.onnx").string();
        ASSERT_TRUE(onnx::exportModel(m_model, m_modelPath).ok());
    }

    void TearDown() override { std::filesystem::remove_all(m_dir); }

    ReviewRequest request() const {
        ReviewRequest r;
        r.modelPath = m_modelPath;
        r.date = "2026-01-01T00:00:00Z";
        return r;
    }

    /// A session of the model whose weight quantizer on `node` got 4 bits.
    std::string sessionWithFourBitWeight(const std::string& node,
                                         std::map<std::string, nlohmann::json> sections = {},
                                         std::optional<SessionView> view = std::nullopt) {
        auto state = quantization::computeQuantization(m_model, {.hw = "npu"});
        EXPECT_TRUE(state.ok()) << state.error().toString();
        for (const auto& [id, point] : state->proposal.setup.quantizationPoints) {
            if (point.insertionPoint.isWeight && point.insertionPoint.targetNodeName == node) {
                const auto choice = quantization::configsWithBitwidth(*state, {id}, 4);
                EXPECT_FALSE(choice.empty());
                EXPECT_TRUE(quantization::chooseConfigs(*state, choice).ok());
            }
        }
        auto hash = hashModelFile(m_modelPath);
        auto file = captureSession(m_modelPath, *hash, *state);
        EXPECT_TRUE(file.ok());
        for (auto& [key, json] : sections) {
            file->sections[key] = json;
        }
        file->view = std::move(view);
        const std::string path = (m_dir / "net.qscope").string();
        EXPECT_TRUE(writeSessionFile(path, *file).ok());
        return path;
    }

    graph::Graph m_model = smallNet();
    std::filesystem::path m_dir;
    std::string m_modelPath;
    NullProgress m_progress;
};

/// The cells of every body row of the HTML table `id`, unescaped.
std::vector<std::vector<std::string>> htmlRows(const std::string& html, const std::string& id) {
    const size_t start = html.find("id=\"table-" + id + "\"");
    EXPECT_NE(start, std::string::npos) << id;
    const size_t body = html.find("<tbody>", start);
    const size_t end = html.find("</tbody>", body);
    const std::string text = html.substr(body, end - body);
    // Plain finds, not <regex>: GCC 12 warns falsely inside <regex> in the sanitizer build.
    std::vector<std::vector<std::string>> rows;
    for (size_t r = text.find("<tr>"); r != std::string::npos; r = text.find("<tr>", r)) {
        const size_t rowEnd = text.find("</tr>", r);
        const std::string cells = text.substr(r + 4, rowEnd - r - 4);
        r = rowEnd;
        std::vector<std::string> out;
        for (size_t c = cells.find("<td"); c != std::string::npos; c = cells.find("<td", c)) {
            const size_t open = cells.find('>', c) + 1;
            const size_t close = cells.find("</td>", open);
            std::string value = cells.substr(open, close - open);
            c = close;
            for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
                     {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&amp;", "&"}}) {
                for (size_t at = value.find(from); at != std::string::npos;
                     at = value.find(from, at + to.size())) {
                    value.replace(at, from.size(), to);
                }
            }
            out.push_back(value);
        }
        rows.push_back(out);
    }
    return rows;
}

/// RFC 4180 rows of `csv` (quoted cells with doubled quotes).
std::vector<std::vector<std::string>> csvRows(const std::string& csv) {
    std::vector<std::vector<std::string>> rows(1);
    std::string cell;
    bool quoted = false;
    for (size_t i = 0; i < csv.size(); ++i) {
        const char c = csv[i];
        if (quoted) {
            if (c == '"' && i + 1 < csv.size() && csv[i + 1] == '"') {
                cell += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                cell += c;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            rows.back().push_back(cell);
            cell.clear();
        } else if (c == '\n') {
            rows.back().push_back(cell);
            cell.clear();
            rows.emplace_back();
        } else {
            cell += c;
        }
    }
    rows.pop_back(); // after the last newline
    return rows;
}

TEST_F(ReviewReportTest, OneRowPerQuantizerWithItsConfigAndState) {
    auto report = gatherReviewReport(m_model, request(), m_progress);
    ASSERT_TRUE(report.ok()) << report.error().toString();
    auto state = quantization::computeQuantization(m_model, {});
    ASSERT_TRUE(state.ok());
    const auto marks = quantization::quantizerMarks(state->setup, &state->proposal.setup);
    ASSERT_EQ(report->quantizers.rows.size(), marks.size());
    const auto& columns = report->quantizers.columns;
    const auto col = [&columns](std::string_view name) {
        return static_cast<size_t>(std::find(columns.begin(), columns.end(), name) -
                                   columns.begin());
    };
    ASSERT_LT(col("SQNR dB"), columns.size());
    int weights = 0;
    for (size_t i = 0; i < marks.size(); ++i) {
        const std::vector<std::string>& row = report->quantizers.rows[i];
        ASSERT_EQ(row.size(), columns.size());
        EXPECT_EQ(row[col("id")], std::to_string(marks[i].id));
        EXPECT_EQ(row[col("insertion point")], marks[i].point.toString());
        EXPECT_EQ(row[col("chosen config")], marks[i].config.toString());
        EXPECT_EQ(row[col("state")], quantization::statusName(marks[i].status));
        EXPECT_EQ(row[col("bits")], std::to_string(marks[i].config.numBits));
        EXPECT_FALSE(row[col("candidate configs")].empty()) << row[col("insertion point")];
        EXPECT_TRUE(row[col("scale")].empty()); // not calibrated
        weights += marks[i].point.isWeight ? 1 : 0;
        if (marks[i].point.isWeight) {
            EXPECT_EQ(row[col("kind")], "weight");
            EXPECT_EQ(row[col("op")], marks[i].point.targetNodeName == "fc" ? "Gemm" : "Conv");
        }
    }
    EXPECT_EQ(weights, 3);
    EXPECT_EQ(report->header.date, "2026-01-01T00:00:00Z");
    EXPECT_EQ(report->header.hw, "cpu");
    EXPECT_EQ(report->header.parameters, 108 + 16 + 40);
    EXPECT_GT(report->header.macs, 0);
    EXPECT_NE(report->nncfTable.find("Num bits (N)"), std::string::npos) << report->nncfTable;
    EXPECT_EQ(report->tables().size(), 3U); // quantizers, bit widths, op types: no sections
}

TEST_F(ReviewReportTest, MacsOfDynamicDimsSayHowTheyWereCounted) {
    auto fixed = gatherReviewReport(m_model, request(), m_progress);
    ASSERT_TRUE(fixed.ok()) << fixed.error().toString();
    EXPECT_FALSE(fixed->header.macsDynamicDimsAsOne);
    EXPECT_EQ(report::reviewHtml(*fixed, {}).find("dynamic dims counted as 1"), std::string::npos);
    auto dynamic = gatherReviewReport(smallNet(-1), request(), m_progress);
    ASSERT_TRUE(dynamic.ok()) << dynamic.error().toString();
    EXPECT_TRUE(dynamic->header.macsDynamicDimsAsOne);
    EXPECT_EQ(dynamic->header.macs, fixed->header.macs);
    EXPECT_NE(report::reviewHtml(*dynamic, {}).find("dynamic dims counted as 1"),
              std::string::npos);
}

TEST_F(ReviewReportTest, CsvAndHtmlHoldTheSameRows) {
    auto report = gatherReviewReport(m_model, request(), m_progress);
    ASSERT_TRUE(report.ok()) << report.error().toString();
    const std::string html = report::reviewHtml(*report, {});
    const std::filesystem::path csvDir = m_dir / "csv";
    ASSERT_TRUE(report::writeReviewCsv(*report, csvDir).ok());
    for (const report::ReviewTable& table : report->tables()) {
        auto csv = readFile(csvDir / (table.id + ".csv"));
        ASSERT_TRUE(csv.ok()) << table.id;
        std::vector<std::vector<std::string>> fromCsv = csvRows(*csv);
        ASSERT_FALSE(fromCsv.empty());
        EXPECT_EQ(fromCsv.front(), table.columns) << table.id;
        fromCsv.erase(fromCsv.begin());
        EXPECT_EQ(fromCsv, table.rows) << table.id;
        EXPECT_EQ(htmlRows(html, table.id), fromCsv) << table.id;
    }
    // Self-contained: no reference to anything outside the page.
    EXPECT_EQ(html.find("src=\"http"), std::string::npos);
    EXPECT_EQ(html.find("href=\"http"), std::string::npos);
    EXPECT_EQ(html.find("<link"), std::string::npos);
    EXPECT_NE(html.find("<![CDATA["), std::string::npos);
}

TEST_F(ReviewReportTest, TheSessionsOpenGroupsGoToTheGraph) {
    ReviewRequest asked = request();
    asked.sessionPath = sessionWithFourBitWeight("c1");
    auto report = gatherReviewReport(m_model, asked, m_progress);
    ASSERT_TRUE(report.ok()) << report.error().toString();
    EXPECT_FALSE(report->expandedGroups); // no view saved: the GUI's first view
    asked.sessionPath = sessionWithFourBitWeight(
        "c1", {}, SessionView{.zoom = 1, .centerX = 0, .centerY = 0, .expandedGroups = {"/a"}});
    report = gatherReviewReport(m_model, asked, m_progress);
    ASSERT_TRUE(report.ok()) << report.error().toString();
    EXPECT_EQ(report->expandedGroups, std::optional<std::vector<std::string>>({"/a"}));
}

TEST_F(ReviewReportTest, AFourBitWeightShowsInTheSharesAndTheBitOpsRatio) {
    ReviewRequest asked = request();
    asked.sessionPath = sessionWithFourBitWeight("c1");
    auto report = gatherReviewReport(m_model, asked, m_progress);
    ASSERT_TRUE(report.ok()) << report.error().toString();
    const auto& byBits = report->bitwidths.byBits;
    ASSERT_TRUE(byBits.contains(4));
    const report::BitwidthShare& four = byBits.at(4);
    EXPECT_EQ(four.weightQuantizers, 1);
    EXPECT_EQ(four.weightParameters, 108);
    EXPECT_EQ(four.weightBytes, 54);
    // HAWQ's BitOps: MACs x max(weight bits, input bits); c1's input stays 8-bit.
    EXPECT_DOUBLE_EQ(four.bitOps, 4.0 * 3 * 3 * 3 * 8 * 8 * 8);
    ASSERT_TRUE(byBits.contains(8));
    EXPECT_EQ(byBits.at(8).weightParameters, 16 + 40);
    EXPECT_EQ(byBits.at(8).weightBytes, 16 + 40);
    EXPECT_DOUBLE_EQ(report->header.bitOpsRatio, 1.0);
    EXPECT_EQ(report->header.floatBytes, 4 * (108 + 16 + 40));
    EXPECT_EQ(report->header.compressedBytes, 54 + 16 + 40);
    EXPECT_EQ(report->bitwidths.byOpType.at("Conv").at(4), 1);
    EXPECT_EQ(report->header.source, "session " + asked.sessionPath);
    EXPECT_EQ(report->header.hw, "npu");
    const std::string html = report::reviewHtml(*report, {});
    EXPECT_NE(html.find("#d62728"), std::string::npos); // the 4-bit colour
}

TEST_F(ReviewReportTest, CalibrationFillsRangesScalesAndSqnr) {
    ReviewRequest asked = request();
    asked.dataset.randomSamples = 4;
    auto report = gatherReviewReport(m_model, asked, m_progress);
    ASSERT_TRUE(report.ok()) << report.error().toString();
    const auto& columns = report->quantizers.columns;
    const auto col = [&columns](std::string_view name) {
        return static_cast<size_t>(std::find(columns.begin(), columns.end(), name) -
                                   columns.begin());
    };
    int calibrated = 0;
    for (const std::vector<std::string>& row : report->quantizers.rows) {
        if (row[col("state")] == "merged") {
            continue;
        }
        EXPECT_FALSE(row[col("scale")].empty()) << row[col("insertion point")];
        EXPECT_FALSE(row[col("range high")].empty());
        calibrated += row[col("SQNR dB")].empty() ? 0 : 1;
    }
    EXPECT_GT(calibrated, 0);
    ASSERT_EQ(report->header.outputs.size(), 1U);
    EXPECT_GT(report->header.outputs.front().meanCosine, 0.5);
    EXPECT_NE(report->header.dataset.find("random"), std::string::npos);
    EXPECT_FALSE(report->header.accuracy.has_value()); // no labels
}

TEST_F(ReviewReportTest, SectionsAppearExactlyWhenPresent) {
    const nlohmann::json plan = {{"options", {{"mode", "int4_sym"}}},
                                 {"weights",
                                  {{{"weight", "W1"},
                                    {"node", "c1"},
                                    {"op_type", "Conv"},
                                    {"num_parameters", 108},
                                    {"mode", "int4_sym"}},
                                   {{"weight", "Wf"},
                                    {"node", "fc"},
                                    {"op_type", "Gemm"},
                                    {"num_parameters", 40},
                                    {"mode", "int8_asym"}}}}};
    ReviewRequest asked = request();
    asked.sessionPath = sessionWithFourBitWeight("c2", {{"compression", plan}});
    auto report = gatherReviewReport(m_model, asked, m_progress);
    ASSERT_TRUE(report.ok()) << report.error().toString();
    EXPECT_FALSE(report->hawq.has_value());
    EXPECT_FALSE(report->pruning.has_value());
    ASSERT_TRUE(report->compressionPlan.has_value());
    const std::vector<report::ReviewTable> tables = report->tables();
    ASSERT_EQ(tables.size(), 4U);
    EXPECT_EQ(tables.back().id, "weight_compression");
    ASSERT_EQ(tables.back().rows.size(), 2U);
    EXPECT_EQ(tables.back().rows[0].back(), "54"); // 108 4-bit codes
    EXPECT_EQ(tables.back().rows[1].back(), "40");

    // HAWQ and pruning results, as the GUI hands them over.
    report::ReviewInputs inputs;
    inputs.modelPath = m_modelPath;
    auto state = quantization::computeQuantization(m_model, {});
    ASSERT_TRUE(state.ok());
    inputs.setup = state->setup;
    inputs.hawq = report::ReviewHawq{
        .target = 1.2,
        .mode = "liberal",
        .search = "pareto",
        .bits = {4, 8},
        .samples = 4,
        .iterations = 5,
        .ratio = 1.3,
        .metric = 0.5,
        .layers = {{.node = "c1",
                    .avgTrace = 12.5,
                    .weightBits = 4,
                    .macs = 6912,
                    .perturbation = {{4, 0.3}, {8, 0.001}}},
                   {.node = "c2",
                    .avgTrace = 0.02,
                    .weightBits = 8,
                    .macs = 1024,
                    .perturbation = {{4, 0.2}, {8, 0.002}}}},
        .candidates = {{{8, 8}, {}, 1.0, 0.003}, {{4, 8}, {}, 1.3, 0.5}, {{4, 4}, {}, 2.0, 0.7}},
        .pareto = {0, 1, 2},
        .chosen = 1};
    inputs.pruning = report::ReviewPruning{
        .hw = "cpu",
        .simd = 1,
        .simdPadding = false,
        .importance = "lfh",
        .targetBytes = 400,
        .denseBytes = 656,
        .prunedBytes = 390,
        .minimumBytes = 100,
        .sections = {
            {.entry = "c1", .exit = "c2", .channels = 4, .kept = 2, .constraint = "free"}}};
    auto full = report::buildReviewReport(m_model, inputs);
    ASSERT_TRUE(full.ok()) << full.error().toString();
    const std::vector<report::ReviewTable> all = full->tables();
    ASSERT_EQ(all.size(), 5U);
    EXPECT_EQ(all[3].id, "hawq_layers");
    EXPECT_EQ(all[3].rows.size(), 2U);
    EXPECT_EQ(all[3].rows[0][3], "4");
    EXPECT_EQ(all[4].id, "pruning_sections");
    EXPECT_EQ(all[4].rows[0][4], "50.0");
    const std::string html = report::reviewHtml(*full, {});
    EXPECT_NE(html.find("id=\"hawq\""), std::string::npos);
    EXPECT_NE(html.find("<polyline"), std::string::npos); // the front
    EXPECT_NE(html.find("4 -&gt; 2"), std::string::npos); // the pruning bar's label
    EXPECT_EQ(html.find("id=\"weight-compression\""), std::string::npos);
    const std::string plain = report::reviewHtml(*report, {});
    EXPECT_EQ(plain.find("id=\"hawq\""), std::string::npos);
    EXPECT_EQ(plain.find("id=\"pruning\""), std::string::npos);
    EXPECT_NE(plain.find("id=\"weight-compression\""), std::string::npos);
}

TEST_F(ReviewReportTest, TheDiffNamesTheChangedPointsAndSections) {
    ReviewRequest eight = request();
    eight.hw = "npu";
    auto a = gatherReviewReport(m_model, eight, m_progress);
    ASSERT_TRUE(a.ok()) << a.error().toString();
    ReviewRequest four = request();
    four.sessionPath = sessionWithFourBitWeight("c2");
    auto b = gatherReviewReport(m_model, four, m_progress);
    ASSERT_TRUE(b.ok()) << b.error().toString();
    b->pruning = report::ReviewPruning{
        .sections = {
            {.entry = "c1", .exit = "c2", .channels = 4, .kept = 3, .constraint = "free"}}};
    const report::ReviewDiff diff = report::diffReviews(*a, *b, "A", "B");
    ASSERT_EQ(diff.quantizers.rows.size(), 1U);
    EXPECT_EQ(diff.quantizers.rows[0][0], "c2[W]");
    EXPECT_EQ(diff.quantizers.rows[0][3], "bit width");
    EXPECT_EQ(diff.quantizers.rows[0][4], "8");
    EXPECT_EQ(diff.quantizers.rows[0][5], "4");
    EXPECT_EQ(diff.unchanged + 1, static_cast<int>(b->quantizers.rows.size()));
    ASSERT_EQ(diff.pruning.rows.size(), 1U); // A keeps all 4 channels, B 3
    EXPECT_EQ(diff.pruning.rows[0], (std::vector<std::string>{"c1", "4", "4", "3"}));
    const std::string html = report::reviewDiffHtml(diff, "");
    EXPECT_EQ(htmlRows(html, "changed_quantizers"), diff.quantizers.rows);
    EXPECT_EQ(report::diffReviews(*a, *a, "A", "A").quantizers.rows.size(), 0U);
}

TEST_F(ReviewReportTest, BadInputsAreErrorsNamingTheProblem) {
    ReviewRequest both = request();
    both.setupPath = (m_dir / "setup.json").string();
    both.sessionPath = (m_dir / "s.qscope").string();
    auto result = gatherReviewReport(m_model, both, m_progress);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().code(), Errc::Usage);

    // A setup whose point names a node this model does not have.
    auto state = quantization::computeQuantization(m_model, {});
    ASSERT_TRUE(state.ok());
    nlohmann::json setup = state->setup.toJson();
    setup["quantization_points"].begin()->at("qip")["target_node_name"] = "no_such_node";
    ASSERT_TRUE(writeFileAtomically(m_dir / "setup.json", setup.dump()).ok());
    ReviewRequest bad = request();
    bad.setupPath = (m_dir / "setup.json").string();
    result = gatherReviewReport(m_model, bad, m_progress);
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.error().toString().find("no_such_node"), std::string::npos)
        << result.error().toString();

    // A session saved for another model file.
    ReviewRequest other = request();
    other.sessionPath = sessionWithFourBitWeight("c1");
    graph::Graph changed = smallNet();
    const std::string otherModel = (m_dir / "other.onnx").string();
    changed.metadata().producerName = "someone else";
    ASSERT_TRUE(onnx::exportModel(changed, otherModel).ok());
    other.modelPath = otherModel;
    result = gatherReviewReport(changed, other, m_progress);
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.error().toString().find(other.sessionPath), std::string::npos)
        << result.error().toString();

    // Malformed sections.
    ReviewRequest malformed = request();
    malformed.sessionPath = sessionWithFourBitWeight(
        "c1", {{"compression", {{"weights", {{{"node", "c1"}, {"num_parameters", 3}}}}}}});
    result = gatherReviewReport(m_model, malformed, m_progress);
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.error().toString().find("sections.compression.weights[0].mode"),
              std::string::npos)
        << result.error().toString();
    malformed.sessionPath = sessionWithFourBitWeight("c1", {{"hawq", {{"mode", 3}}}});
    result = gatherReviewReport(m_model, malformed, m_progress);
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.error().toString().find("sections.hawq"), std::string::npos)
        << result.error().toString();

    // A CSV folder that cannot be created: a file stands in its way.
    auto report = gatherReviewReport(m_model, request(), m_progress);
    ASSERT_TRUE(report.ok());
    ASSERT_TRUE(writeFileAtomically(m_dir / "file", "x").ok());
    const Result<void> csv = report::writeReviewCsv(*report, m_dir / "file" / "csv");
    ASSERT_FALSE(csv.ok());
    EXPECT_NE(csv.error().toString().find("file"), std::string::npos);
    // The CLI's check before any work: a missing folder, a folder as the page, a file as CSV dir.
    const Result<void> missing = report::checkReportOutputs(m_dir / "no" / "page.html");
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().toString().find("does not exist"), std::string::npos);
    EXPECT_FALSE(report::checkReportOutputs(m_dir).ok());
    EXPECT_FALSE(report::checkReportOutputs(m_dir / "page.html", m_dir / "file").ok());
    EXPECT_TRUE(report::checkReportOutputs(m_dir / "page.html", m_dir / "csv").ok());
}

} // namespace
} // namespace qs::session
