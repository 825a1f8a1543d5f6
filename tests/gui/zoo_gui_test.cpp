// Every model of the zoo (shared/models/make_zoo.py; $QS_ZOO_DIR, exported by packaging/test.sh) in
// the real main window, offscreen: it opens, is laid out without overlapping boxes, and shows one
// badge per quantizer (active ones as many as the finalized setup has points). Skips when the zoo
// is absent.

#include "ui/graph_document.h"
#include "ui/graph_items.h"
#include "ui/graph_page.h"
#include "ui/graph_scene.h"
#include "ui/main_window.h"
#include "ui/session.h"
#include "ui/settings.h"

#include <QDir>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace qs::ui {
namespace {

constexpr int kTimeoutMs = 240000;

QString zooPath(const char* name) {
    const QByteArray dir = qgetenv("QS_ZOO_DIR");
    if (dir.isEmpty()) {
        return {};
    }
    return QDir(QString::fromLocal8Bit(dir))
        .filePath(QString::fromLatin1(name) + QStringLiteral(".onnx"));
}

class ZooGuiTest : public ::testing::TestWithParam<const char*> {};

TEST_P(ZooGuiTest, OpensLaysOutAndShowsEveryQuantizer) {
    const QString path = zooPath(GetParam());
    if (path.isEmpty() || !QFileInfo::exists(path)) {
        ASSERT_NE(qgetenv("QS_REQUIRE_ZOO"), QByteArray("1"))
            << "'" << path.toStdString() << "' is absent and QS_REQUIRE_ZOO=1";
        GTEST_SKIP() << "'" << path.toStdString() << "' is absent (set QS_ZOO_DIR)";
    }
    QTemporaryDir dir;
    Settings settings(dir.filePath(QStringLiteral("settings.ini")));
    MainWindow window(settings);
    window.resize(1280, 820);
    window.show();
    window.openModel(path);
    ASSERT_TRUE(QTest::qWaitFor(
        [&window] {
            return !window.session().isOpening() && window.session().document() != nullptr &&
                   !window.graphPage().isLayingOut();
        },
        kTimeoutMs));
    const GraphDocument& document = *window.session().document();
    // Every group open, so every box and badge is drawn.
    bool expanded = false;
    const auto connection = QObject::connect(&window.graphPage(), &GraphPage::layoutFinished,
                                             [&](bool ok, const QString&) { expanded = ok; });
    window.graphPage().expandAllGroups(true);
    ASSERT_TRUE(QTest::qWaitFor([&] { return expanded; }, kTimeoutMs));
    QObject::disconnect(connection);
    const GraphScene& scene = *window.graphPage().scene();
    ASSERT_NE(document.quantization(), nullptr) << document.quantizationError().toStdString();
    // Ops (constant-only ones folded) plus inputs and outputs, each drawn.
    EXPECT_EQ(scene.nodeItems().size(), window.graphPage().layoutModel().items.size());
    EXPECT_EQ(scene.badgeItems().size(), document.quantizerMarks().size());
    size_t active = 0;
    for (const QuantizerBadgeItem* badge : scene.badgeItems()) {
        active += badge->content().merged ? 0 : 1;
    }
    EXPECT_EQ(active, document.quantization()->setup.quantizationPoints.size());
    EXPECT_FALSE(document.quantization()->setup.quantizationPoints.empty());
    // No two boxes overlap.
    std::vector<QRectF> boxes;
    for (const NodeItem* node : scene.nodeItems()) {
        boxes.push_back(node->sceneBox());
    }
    std::sort(boxes.begin(), boxes.end(),
              [](const QRectF& a, const QRectF& b) { return a.top() < b.top(); });
    for (size_t i = 0; i < boxes.size(); ++i) {
        for (size_t j = i + 1; j < boxes.size() && boxes[j].top() < boxes[i].bottom(); ++j) {
            EXPECT_FALSE(
                boxes[i].adjusted(1, 1, -1, -1).intersects(boxes[j].adjusted(1, 1, -1, -1)))
                << "boxes " << i << " and " << j << " overlap";
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Zoo, ZooGuiTest,
                         ::testing::Values("squeezenet1_1", "resnet18", "mobilenet_v2",
                                           "efficientnet_b0", "shufflenet_v2_x1_0", "resnet50"));

} // namespace
} // namespace qs::ui
