// File ▸ Export ▸ Review Report… on the demo model: the action is enabled once a model is open,
// the page is written with one quantizer row per mark of the document (the same core workflow as
// `quantscope-cli report`), the graph and the bit-width charts inline as SVG; a 4-bit choice made
// in the GUI shows in the page; an unwritable path is an error dialog and leaves nothing behind.

#include "tests/gui/recording_reporter.h"
#include "tests/gui/test_models.h"
#include "ui/actions.h"
#include "ui/features/review_report/review_report_feature.h"
#include "ui/features/review_report/review_report_writer.h"
#include "ui/graph_document.h"
#include "ui/graph_page.h"
#include "ui/graph_scene.h"
#include "ui/main_window.h"
#include "ui/session.h"
#include "ui/settings.h"

#include <QAction>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <gtest/gtest.h>

namespace qs::ui {
namespace {

constexpr int kTimeoutMs = 60000;

class ReviewReportGuiTest : public ::testing::Test {
protected:
    ReviewReportGuiTest()
        : m_settings(m_dir.filePath(QStringLiteral("settings.ini")))
        , m_window(m_settings, std::make_unique<test::RecordingReporter>(m_messages)) {}

    ReviewReportFeature& feature() { return m_window.feature<ReviewReportFeature>(); }

    void openDemo() {
        ASSERT_TRUE(test::openAndLayOut(
            m_window, QStringLiteral(QS_SOURCE_DIR "/resources/models/digits_cnn.onnx"),
            kTimeoutMs));
    }

    QString read(const QString& path) {
        QFile file(path);
        EXPECT_TRUE(file.open(QIODevice::ReadOnly)) << path.toStdString();
        return QString::fromUtf8(file.readAll());
    }

    QTemporaryDir m_dir;
    Settings m_settings;
    test::Messages m_messages;
    MainWindow m_window;
};

TEST_F(ReviewReportGuiTest, ExportsThePageOfTheOpenDocument) {
    ASSERT_NE(feature().exportAction(), nullptr);
    EXPECT_FALSE(feature().exportAction()->isEnabled());
    openDemo();
    EXPECT_TRUE(feature().exportAction()->isEnabled());
    GraphDocument& document = *m_window.session().document();
    const QString path = m_dir.filePath(QStringLiteral("review.html"));
    ASSERT_TRUE(feature().exportReport(path)) << m_messages.errors.join(u'\n').toStdString();
    EXPECT_TRUE(m_messages.errors.isEmpty());
    const QString html = read(path);
    EXPECT_TRUE(html.startsWith(QStringLiteral("<!DOCTYPE html>")));
    EXPECT_TRUE(html.contains(QStringLiteral("id=\"graph-view\"")));
    EXPECT_TRUE(html.contains(QStringLiteral("/fc/Gemm")));
    EXPECT_GE(html.count(QStringLiteral("<svg")), 3); // graph, distribution, op types
    const qsizetype table = html.indexOf(QStringLiteral("id=\"table-quantizers\""));
    ASSERT_GE(table, 0);
    const qsizetype end = html.indexOf(QStringLiteral("</table>"), table);
    const QString rows = html.mid(table, end - table);
    EXPECT_EQ(rows.count(QStringLiteral("<tr>")),
              static_cast<qsizetype>(document.quantizerMarks().size()) + 1);

    // A 4-bit choice in the document is in the next page.
    auto report = ReviewReportFeature::reportOf(document);
    ASSERT_TRUE(report.ok()) << report.error().toString();
    EXPECT_FALSE(report->bitwidths.byBits.contains(4));
    ASSERT_TRUE(document.setQuantizationSettings({.hw = "npu"}).ok()); // NPU offers 4 bits
    const auto& state = *document.quantization();
    quantization::QuantizerConfigChoice choice;
    for (const auto& [id, point] : state.proposal.setup.quantizationPoints) {
        if (point.insertionPoint.isWeight && point.insertionPoint.targetNodeName == "/fc/Gemm") {
            choice = quantization::configsWithBitwidth(state, {id}, 4);
        }
    }
    ASSERT_FALSE(choice.empty());
    ASSERT_TRUE(document.chooseQuantizerConfigs(choice).ok());
    report = ReviewReportFeature::reportOf(document);
    ASSERT_TRUE(report.ok());
    EXPECT_TRUE(report->bitwidths.byBits.contains(4));
    EXPECT_EQ(report->header.hw, "npu");
}

TEST_F(ReviewReportGuiTest, TheGraphShowsPruningBarsAndTheOpenGroups) {
    openDemo();
    auto review = ReviewReportFeature::reportOf(*m_window.session().document());
    ASSERT_TRUE(review.ok()) << review.error().toString();
    report::ReviewPruning pruning;
    pruning.sections.push_back({.entry = "/head/head.0/Conv",
                                .exit = "/fc/Gemm",
                                .channels = 64,
                                .kept = 22,
                                .constraint = "free"});
    review->pruning = pruning;
    const GraphTheme& theme = m_window.graphPage().scene()->theme();
    NullProgress progress;
    auto svgOf = [&](const report::ReviewReport& r) {
        auto graphics =
            drawReviewGraphics(m_window.session().document()->graph(), r, theme, false, progress);
        EXPECT_TRUE(graphics.ok()) << graphics.error().toString();
        return QString::fromStdString(graphics->graphSvg);
    };
    // The GUI's first view opens the demo's groups: the entry's box carries "64 → 22".
    QString svg = svgOf(*review);
    EXPECT_TRUE(svg.contains(QStringLiteral("64 → 22"))) << "no pruning bar label";
    EXPECT_TRUE(svg.contains(QStringLiteral("/stem/stem.0/Conv")));
    // Only /stem open, as a session may have saved it: its ops are drawn, /head's are not.
    review->expandedGroups = std::vector<std::string>{"/stem"};
    svg = svgOf(*review);
    EXPECT_TRUE(svg.contains(QStringLiteral("/stem/stem.0/Conv")));
    EXPECT_FALSE(svg.contains(QStringLiteral("/head/head.0/Conv")));
    EXPECT_FALSE(svg.contains(QStringLiteral("64 → 22")));
}

TEST_F(ReviewReportGuiTest, ThePageShowsTheGraphAsTheUserLeftIt) {
    openDemo();
    bool laidOut = false;
    m_window.graphPage().showExpandedGroups({"/stem"}, [&laidOut] { laidOut = true; });
    ASSERT_TRUE(QTest::qWaitFor([&] { return laidOut; }, kTimeoutMs));
    const QString path = m_dir.filePath(QStringLiteral("as_seen.html"));
    ASSERT_TRUE(feature().exportReport(path)) << m_messages.errors.join(u'\n').toStdString();
    const QString html = read(path);
    const qsizetype start = html.indexOf(QStringLiteral("<svg"));
    const QString graph = html.mid(start, html.indexOf(QStringLiteral("</svg>"), start) - start);
    EXPECT_TRUE(graph.contains(QStringLiteral("/stem/stem.0/Conv")));
    EXPECT_FALSE(graph.contains(QStringLiteral("/head/head.0/Conv"))); // inside a closed group
}

TEST_F(ReviewReportGuiTest, AnUnwritablePathIsAnErrorDialog) {
    openDemo();
    const QString path = m_dir.filePath(QStringLiteral("missing/folder/review.html"));
    EXPECT_FALSE(feature().exportReport(path));
    ASSERT_EQ(m_messages.errors.size(), 1);
    EXPECT_TRUE(m_messages.errors.front().contains(QStringLiteral("review.html")))
        << m_messages.errors.front().toStdString();
    EXPECT_FALSE(QFile::exists(path));
}

} // namespace
} // namespace qs::ui
