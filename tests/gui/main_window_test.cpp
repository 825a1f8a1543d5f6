#include "tests/gui/recording_reporter.h"
#include "tests/gui/test_models.h"
#include "ui/actions.h"
#include "ui/graph_document.h"
#include "ui/graph_legend.h"
#include "ui/graph_page.h"
#include "ui/graph_view.h"
#include "ui/job_runner.h"
#include "ui/job_status_indicator.h"
#include "ui/main_window.h"
#include "ui/model_info_panel.h"
#include "ui/session.h"
#include "ui/settings.h"
#include "ui/welcome_page.h"

#include <QAction>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QMimeData>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QTreeWidget>
#include <QUndoCommand>
#include <QUrl>
#include <gtest/gtest.h>

#include <memory>

namespace qs::ui {
namespace {

constexpr int kTimeoutMs = 20000;

using test::Messages;
using test::RecordingReporter;

class MainWindowTest : public ::testing::Test {
protected:
    MainWindowTest()
        : m_settings(m_dir.filePath(QStringLiteral("settings.ini")))
        , m_window(m_settings, std::make_unique<RecordingReporter>(m_messages)) {}

    /// Opens `path` and waits until the window has handled the result.
    void openAndWait(const QString& path) {
        m_window.openModel(path);
        ASSERT_TRUE(m_window.session().isOpening());
        ASSERT_TRUE(
            QTest::qWaitFor([this] { return !m_window.session().isOpening(); }, kTimeoutMs));
    }

    QString documentPath() const {
        const GraphDocument* document = m_window.session().document();
        return document == nullptr ? QString() : document->filePath();
    }

    QString shownNodeCount() const {
        return m_window.infoPanel().summaryValue(ModelInfoPanel::Field::Nodes);
    }

    QTemporaryDir m_dir;
    Messages m_messages;
    Settings m_settings;
    MainWindow m_window;
};

TEST_F(MainWindowTest, StartsOnTheWelcomePage) {
    EXPECT_TRUE(m_window.isShowingWelcome());
    EXPECT_EQ(m_window.windowTitle(), QStringLiteral("Quantscope"));
    EXPECT_FALSE(m_window.actions().reload()->isEnabled());
}

TEST_F(MainWindowTest, OpeningAModelFillsTheInfoPanel) {
    const QString path = test::writeConvReluModel(m_dir.path());
    openAndWait(path);
    EXPECT_TRUE(m_messages.errors.isEmpty())
        << m_messages.errors.join(QLatin1Char('\n')).toStdString();
    EXPECT_FALSE(m_window.isShowingWelcome());
    EXPECT_EQ(documentPath(), path);
    EXPECT_EQ(m_window.windowTitle(), QStringLiteral("model.onnx[*] — Quantscope"));
    EXPECT_TRUE(m_window.actions().reload()->isEnabled());

    const ModelInfoPanel& panel = m_window.infoPanel();
    EXPECT_EQ(shownNodeCount(), QStringLiteral("2"));
    EXPECT_EQ(panel.summaryValue(ModelInfoPanel::Field::Producer), QStringLiteral("gui-test"));
    EXPECT_EQ(panel.summaryValue(ModelInfoPanel::Field::Opsets), QStringLiteral("ai.onnx 13"));
    EXPECT_EQ(panel.summaryValue(ModelInfoPanel::Field::Initializers), QStringLiteral("1"));
    EXPECT_TRUE(
        panel.summaryValue(ModelInfoPanel::Field::Parameters).startsWith(QStringLiteral("108")));
    ASSERT_EQ(panel.inputs()->topLevelItemCount(), 1);
    const QTreeWidgetItem* input = panel.inputs()->topLevelItem(0);
    EXPECT_EQ(input->text(0), QStringLiteral("input"));
    EXPECT_EQ(input->text(1), QStringLiteral("float"));
    EXPECT_EQ(input->text(2), QStringLiteral("1x3x8x8"));
    ASSERT_EQ(panel.outputs()->topLevelItemCount(), 1);
    EXPECT_EQ(panel.outputs()->topLevelItem(0)->text(0), QStringLiteral("output"));
    EXPECT_EQ(panel.opTypes()->topLevelItemCount(), 2);
    EXPECT_EQ(panel.opaqueOps()->topLevelItemCount(), 0);
    EXPECT_EQ(m_settings.recentFiles(), QStringList({path}));
}

TEST_F(MainWindowTest, LegendExplainsTheMarksAndFollowsViewLegend) {
    openAndWait(test::writeConvReluModel(m_dir.path()));
    GraphLegend* legend = m_window.graphPage().view()->legend();
    ASSERT_NE(legend, nullptr);
    EXPECT_TRUE(m_window.actions().showLegend()->isChecked()); // shown by default
    EXPECT_FALSE(legend->isHidden());
    const QStringList rows = GraphLegend::rowTexts();
    EXPECT_TRUE(rows.contains(QStringLiteral("3 = candidate configs to choose from")));
    EXPECT_EQ(rows.filter(QStringLiteral("requantizer")).size(), 1);
    EXPECT_EQ(rows.filter(QStringLiteral("unified-scale")).size(), 1);
    EXPECT_TRUE(legend->isFolded()); // one line until asked, so it hides no nodes
    const int folded = legend->height();
    QTest::mouseClick(legend, Qt::LeftButton);
    EXPECT_FALSE(legend->isFolded());
    EXPECT_GT(legend->height(), 4 * folded);
    QTest::mouseClick(legend, Qt::LeftButton);
    EXPECT_TRUE(legend->isFolded());
    m_window.actions().showLegend()->trigger();
    EXPECT_TRUE(legend->isHidden());
    EXPECT_FALSE(m_settings.showLegend()); // remembered
}

TEST_F(MainWindowTest, OpaqueOpsAreListed) {
    openAndWait(test::writeCustomOpModel(m_dir.path()));
    ASSERT_TRUE(m_messages.errors.isEmpty()) << m_messages.errors.front().toStdString();
    const QTreeWidget* opaque = m_window.infoPanel().opaqueOps();
    ASSERT_EQ(opaque->topLevelItemCount(), 1);
    EXPECT_EQ(opaque->topLevelItem(0)->text(0), QStringLiteral("frob"));
    EXPECT_EQ(opaque->topLevelItem(0)->text(1), QStringLiteral("com.example.Frobnicate"));
    EXPECT_FALSE(opaque->isHidden());
}

TEST_F(MainWindowTest, BadFilesReportAnErrorAndKeepTheOpenModel) {
    const QString good = test::writeConvReluModel(m_dir.path());
    openAndWait(good);
    const QString empty = test::writeFile(m_dir.path(), QStringLiteral("empty.onnx"), {});
    static constexpr char kNoise[] = "\x08\xff\x12\x99garbage\x00\x01\xfe";
    const QString noise = test::writeFile(m_dir.path(), QStringLiteral("noise.onnx"),
                                          QByteArray(kNoise, sizeof kNoise - 1));
    const QString missing = m_dir.filePath(QStringLiteral("missing.onnx"));
    for (const QString& bad : {empty, noise, missing}) {
        SCOPED_TRACE(bad.toStdString());
        const qsizetype errorsBefore = m_messages.errors.size();
        openAndWait(bad);
        ASSERT_EQ(m_messages.errors.size(), errorsBefore + 1);
        EXPECT_FALSE(m_messages.errors.back().isEmpty());
        EXPECT_FALSE(m_messages.errors.back().contains(QLatin1Char('\n')));
        EXPECT_EQ(documentPath(), good);
        EXPECT_EQ(shownNodeCount(), QStringLiteral("2"));
        EXPECT_EQ(m_window.windowTitle(), QStringLiteral("model.onnx[*] — Quantscope"));
    }
    EXPECT_EQ(m_settings.recentFiles(), QStringList({good}));
}

TEST_F(MainWindowTest, ABadFileBeforeAnyModelStaysOnTheWelcomePage) {
    openAndWait(test::writeFile(m_dir.path(), QStringLiteral("empty.onnx"), {}));
    EXPECT_EQ(m_messages.errors.size(), 1);
    EXPECT_TRUE(m_window.isShowingWelcome());
    EXPECT_EQ(m_window.session().document(), nullptr);
}

TEST_F(MainWindowTest, StatusBarShowsTheImportWhileItRuns) {
    const auto* indicator = m_window.findChild<JobStatusIndicator*>();
    ASSERT_NE(indicator, nullptr);
    EXPECT_TRUE(indicator->isHidden());
    m_window.openModel(test::writeConvReluModel(m_dir.path()));
    EXPECT_FALSE(indicator->isHidden());
    // The import is followed by the graph layout, another job; the indicator goes when both end.
    ASSERT_TRUE(QTest::qWaitFor(
        [this] { return !m_window.session().isOpening() && !m_window.graphPage().isLayingOut(); },
        kTimeoutMs));
    EXPECT_TRUE(indicator->isHidden());
}

TEST_F(MainWindowTest, CancellingAnImportKeepsTheWindowAsItWas) {
    auto* cancel = m_window.findChild<JobStatusIndicator*>()->findChild<QToolButton*>();
    ASSERT_NE(cancel, nullptr);
    m_window.openModel(test::writeConvReluModel(m_dir.path()));
    cancel->click();
    ASSERT_TRUE(QTest::qWaitFor([this] { return !m_window.session().isOpening(); }, kTimeoutMs));
    EXPECT_TRUE(m_messages.errors.isEmpty());
    EXPECT_EQ(m_window.session().document(), nullptr);
    EXPECT_TRUE(m_window.isShowingWelcome());
    EXPECT_TRUE(m_settings.recentFiles().isEmpty());
}

TEST_F(MainWindowTest, ClosingSavesTheWindowGeometry) {
    m_window.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&m_window));
    m_window.close();
    EXPECT_FALSE(m_settings.windowGeometry().isEmpty());
    EXPECT_FALSE(m_settings.windowState().isEmpty());
}

TEST_F(MainWindowTest, UndoFollowsTheOpenDocument) {
    EXPECT_FALSE(m_window.actions().undo()->isEnabled());
    openAndWait(test::writeConvReluModel(m_dir.path()));
    GraphDocument* document = m_window.session().document();
    ASSERT_NE(document, nullptr);
    EXPECT_EQ(m_window.session().undoGroup().activeStack(), &document->undoStack());
    EXPECT_FALSE(m_window.actions().undo()->isEnabled());
    document->undoStack().push(new QUndoCommand(QStringLiteral("edit")));
    EXPECT_TRUE(m_window.actions().undo()->isEnabled());
}

TEST_F(MainWindowTest, ReloadReadsTheFileAgain) {
    const QString path = test::writeConvReluModel(m_dir.path());
    openAndWait(path);
    GraphDocument* first = m_window.session().document();
    m_window.actions().reload()->trigger();
    ASSERT_TRUE(QTest::qWaitFor([this] { return !m_window.session().isOpening(); }, kTimeoutMs));
    EXPECT_NE(m_window.session().document(), first);
    EXPECT_EQ(documentPath(), path);
}

TEST_F(MainWindowTest, MissingRecentFileIsRemovedWithANotice) {
    const QString good = test::writeConvReluModel(m_dir.path());
    const QString gone = m_dir.filePath(QStringLiteral("gone.onnx"));
    m_settings.addRecentFile(good);
    m_settings.addRecentFile(gone);
    m_window.openRecentModel(gone);
    EXPECT_EQ(m_messages.notices.size(), 1);
    EXPECT_TRUE(m_messages.notices.front().contains(QStringLiteral("gone.onnx")));
    EXPECT_EQ(m_settings.recentFiles(), QStringList({good}));
    EXPECT_FALSE(m_window.session().isOpening());
}

TEST_F(MainWindowTest, ClickingARecentFileOnTheWelcomePageOpensIt) {
    const QString path = test::writeConvReluModel(m_dir.path());
    m_settings.addRecentFile(path);
    m_window.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&m_window));
    QTreeWidget* list = m_window.welcomePage().recentList();
    ASSERT_EQ(list->topLevelItemCount(), 1);
    const QRect row = list->visualItemRect(list->topLevelItem(0));
    QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, row.center());
    ASSERT_TRUE(m_window.session().isOpening());
    ASSERT_TRUE(QTest::qWaitFor([this] { return !m_window.session().isOpening(); }, kTimeoutMs));
    EXPECT_EQ(documentPath(), path);
}

TEST_F(MainWindowTest, DroppingAnOnnxFileOpensIt) {
    const QString path = test::writeConvReluModel(m_dir.path(), QStringLiteral("dropped.onnx"));
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(path)});
    QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(&m_window, &enter);
    EXPECT_TRUE(enter.isAccepted());
    QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(&m_window, &drop);
    EXPECT_TRUE(drop.isAccepted());
    ASSERT_TRUE(QTest::qWaitFor([this] { return !m_window.session().isOpening(); }, kTimeoutMs));
    EXPECT_EQ(documentPath(), path);
    EXPECT_EQ(m_window.windowTitle(), QStringLiteral("dropped.onnx[*] — Quantscope"));
}

TEST_F(MainWindowTest, DraggingOtherFilesIsRefused) {
    const QString text = test::writeFile(m_dir.path(), QStringLiteral("notes.txt"), "hello");
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(text)});
    QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    enter.ignore();
    QCoreApplication::sendEvent(&m_window, &enter);
    EXPECT_FALSE(enter.isAccepted());
    QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    drop.ignore();
    QCoreApplication::sendEvent(&m_window, &drop);
    EXPECT_FALSE(drop.isAccepted());
    EXPECT_FALSE(m_window.session().isOpening());
}

TEST_F(MainWindowTest, TheNewestOpenWins) {
    const QString first = test::writeConvReluModel(m_dir.path(), QStringLiteral("first.onnx"));
    const QString second = test::writeConvReluModel(m_dir.path(), QStringLiteral("second.onnx"));
    m_window.openModel(first);
    m_window.openModel(second);
    ASSERT_TRUE(QTest::qWaitFor([this] { return !m_window.session().isOpening(); }, kTimeoutMs));
    EXPECT_EQ(documentPath(), second);
    EXPECT_EQ(m_settings.recentFiles(), QStringList({second}));
}

} // namespace
} // namespace qs::ui
