// Sessions in the real main window (offscreen): a saved `.qscope` restores the same choices and
// HW config; a session whose model changed, or a corrupt one, is refused with a clear error and
// leaves the open document alone; the autosave is written after a change, is not offered while
// its instance lives, is offered once its lock is gone and is removed on a clean exit; a HW config
// file is validated before it replaces the quantizers; a refused setup, HW config or session
// shows the CLI's message and changes nothing, and a good setup imports as one undo step.

#include "core/quantization/hw_config.h"
#include "core/quantization/setup_reader.h"
#include "tests/gui/recording_reporter.h"
#include "tests/gui/test_models.h"
#include "ui/actions.h"
#include "ui/autosave.h"
#include "ui/graph_document.h"
#include "ui/graph_items.h"
#include "ui/graph_page.h"
#include "ui/graph_scene.h"
#include "ui/graph_view.h"
#include "ui/main_window.h"
#include "ui/quantizer_commands.h"
#include "ui/session.h"
#include "ui/session_controller.h"
#include "ui/settings.h"

#include <QFile>
#include <QFileInfo>
#include <QGraphicsItem>
#include <QLockFile>
#include <QSysInfo>
#include <QTemporaryDir>
#include <QTest>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace qs::ui {
namespace {

constexpr int kTimeoutMs = 30000;
constexpr qint64 kDeadPid = 4194305; ///< above Linux's PID_MAX_LIMIT (2^22): no process has it
const QString kDemoModel = QStringLiteral(QS_SOURCE_DIR "/resources/models/demo_cnn.onnx");

class SessionTest : public ::testing::Test {
protected:
    SessionTest()
        : m_settings(m_dir.filePath(QStringLiteral("settings.ini")))
        , m_window(m_settings, std::make_unique<test::RecordingReporter>(m_messages)) {
        m_window.sessions().autosaver().setDirectory(m_dir.filePath(QStringLiteral("autosave")));
    }

    ~SessionTest() override { m_window.sessions().autosaver().discard(); }

    void openAndWait(const QString& path) {
        m_window.openModel(path);
        ASSERT_TRUE(m_window.session().isOpening());
        ASSERT_TRUE(
            QTest::qWaitFor([this] { return !m_window.session().isOpening(); }, kTimeoutMs));
    }

    GraphDocument& document() const { return *m_window.session().document(); }

    /// Switches the open document to NPU and picks 4 bits at the first point offering them.
    void makeNpuFourBitChoice() {
        quantization::QuantizationSettings npu = document().quantization()->settings;
        npu.hw = "npu";
        document().undoStack().push(new ChangeQuantizationSettingsCommand(document(), npu));
        const auto& state = *document().quantization();
        for (const auto& [id, point] : state.proposal.setup.quantizationPoints) {
            for (const auto& config : point.possibleConfigs) {
                if (config.numBits == 4 && state.setup.quantizationPoints.contains(id)) {
                    document().undoStack().push(
                        new ChooseQuantizerConfigCommand(document(), id, config));
                    return;
                }
            }
        }
        FAIL() << "the demo model has no 4-bit candidate with the NPU config";
    }

    QTemporaryDir m_dir;
    test::Messages m_messages;
    Settings m_settings;
    MainWindow m_window;
};

TEST_F(SessionTest, SavedSessionRestoresChoicesAndHwConfig) {
    openAndWait(kDemoModel);
    ASSERT_NE(document().quantization(), nullptr);
    makeNpuFourBitChoice();
    const quantization::QuantizerConfigChoice chosen = document().quantization()->choice;
    const std::string setup = document().quantization()->setup.toJson().dump();
    const QString path = m_dir.filePath(QStringLiteral("demo.qscope"));
    ASSERT_TRUE(m_window.sessions().saveSessionTo(path))
        << m_messages.errors.join(QLatin1Char('\n')).toStdString();
    EXPECT_TRUE(document().undoStack().isClean());
    EXPECT_TRUE(m_window.windowTitle().contains(QStringLiteral("demo.qscope")));

    // Another model replaces it, then the session brings the choices back.
    openAndWait(test::writeConvReluModel(m_dir.path()));
    EXPECT_EQ(m_window.session().sessionPath(), QString());
    openAndWait(path);
    ASSERT_TRUE(m_messages.errors.isEmpty())
        << m_messages.errors.join(QLatin1Char('\n')).toStdString();
    EXPECT_EQ(document().filePath(), QFileInfo(kDemoModel).absoluteFilePath());
    EXPECT_EQ(document().quantization()->settings.hw, "npu");
    EXPECT_EQ(document().quantization()->choice, chosen);
    EXPECT_EQ(document().quantization()->setup.toJson().dump(), setup);
    EXPECT_EQ(m_window.session().sessionPath(), path);
    EXPECT_EQ(m_settings.recentFiles().front(), path);

    // The recent-files entry opens the session too.
    openAndWait(test::writeConvReluModel(m_dir.path()));
    m_window.openRecentModel(path);
    ASSERT_TRUE(QTest::qWaitFor([this] { return !m_window.session().isOpening(); }, kTimeoutMs));
    EXPECT_EQ(m_window.session().sessionPath(), path);
    EXPECT_EQ(document().quantization()->choice, chosen);
}

TEST_F(SessionTest, SessionRestoresTheViewAfterLayout) {
    m_window.resize(1280, 820);
    m_window.show();
    const auto laidOut = [this] {
        return QTest::qWaitFor([this] { return !m_window.graphPage().isLayingOut(); }, kTimeoutMs);
    };
    openAndWait(kDemoModel);
    ASSERT_TRUE(laidOut());
    GraphView& view = *m_window.graphPage().view();
    view.zoomBy(1.7 / view.zoom()); // 1.7x, then a point low in the graph
    view.centerOn(view.sceneRect().center().x(), view.sceneRect().bottom() - 300);
    const std::optional<session::SessionView> saved = m_window.sessions().viewState();
    ASSERT_TRUE(saved);
    const QString path = m_dir.filePath(QStringLiteral("view.qscope"));
    ASSERT_TRUE(m_window.sessions().saveSessionTo(path));
    view.fitGraph();
    ASSERT_GT(std::abs(view.zoom() - saved->zoom), 0.1);
    openAndWait(path);
    ASSERT_TRUE(laidOut());
    const std::optional<session::SessionView> restored = m_window.sessions().viewState();
    ASSERT_TRUE(restored);
    EXPECT_NEAR(restored->zoom, saved->zoom, 1e-6);
    EXPECT_NEAR(restored->centerY, saved->centerY, 2.0);
}

TEST_F(SessionTest, SessionRestoresWhichGroupsWereOpen) {
    const auto laidOut = [this] {
        return QTest::qWaitFor([this] { return !m_window.graphPage().isLayingOut(); }, kTimeoutMs);
    };
    openAndWait(QStringLiteral(QS_SOURCE_DIR "/resources/models/digits_cnn.onnx"));
    ASSERT_TRUE(laidOut());
    GraphPage& page = m_window.graphPage();
    page.expandAllGroups(false);
    ASSERT_TRUE(laidOut());
    ASSERT_TRUE(page.expandedGroupKeys().empty());
    ASSERT_TRUE(page.expandScopes({QStringLiteral("/block2")}));
    ASSERT_TRUE(laidOut());
    const std::vector<std::string> saved = page.expandedGroupKeys();
    ASSERT_EQ(saved, std::vector<std::string>{"/block2"});
    const QString path = m_dir.filePath(QStringLiteral("groups.qscope"));
    ASSERT_TRUE(m_window.sessions().saveSessionTo(path));

    page.expandAllGroups(true);
    ASSERT_TRUE(laidOut());
    ASSERT_GT(page.expandedGroupKeys().size(), saved.size());
    openAndWait(path);
    ASSERT_TRUE(laidOut());
    EXPECT_EQ(page.expandedGroupKeys(), saved);
    // Drawn as saved: /block2's frame is on the scene, the other groups are closed boxes.
    int frames = 0;
    for (const QGraphicsItem* item : page.scene()->items()) {
        frames += dynamic_cast<const GroupFrameItem*>(item) != nullptr ? 1 : 0;
    }
    EXPECT_EQ(frames, 1);
}

TEST_F(SessionTest, SessionOfAChangedModelIsRefused) {
    const QString model = m_dir.filePath(QStringLiteral("copy.onnx"));
    ASSERT_TRUE(QFile::copy(kDemoModel, model));
    openAndWait(model);
    const QString path = m_dir.filePath(QStringLiteral("copy.qscope"));
    ASSERT_TRUE(m_window.sessions().saveSessionTo(path));
    {
        QFile file(model);
        ASSERT_TRUE(file.open(QIODevice::Append));
        file.write("\n");
    }
    openAndWait(test::writeConvReluModel(m_dir.path()));
    openAndWait(path);
    ASSERT_EQ(m_messages.errors.size(), 1);
    EXPECT_TRUE(
        m_messages.errors.front().contains(QStringLiteral("changed since the session was saved")))
        << m_messages.errors.front().toStdString();
    EXPECT_TRUE(document().filePath().endsWith(QStringLiteral("model.onnx")));
}

TEST_F(SessionTest, CorruptSessionGivesAClearError) {
    const QString path = test::writeFile(m_dir.path(), QStringLiteral("broken.qscope"),
                                         QByteArrayLiteral("{\"quantscope_session\": 1, \"model"));
    openAndWait(path);
    ASSERT_EQ(m_messages.errors.size(), 1);
    EXPECT_TRUE(m_messages.errors.front().contains(QStringLiteral("not valid JSON")));
    EXPECT_TRUE(m_messages.errors.front().contains(QStringLiteral("broken.qscope")));
    EXPECT_TRUE(m_window.isShowingWelcome());

    const QString wrong = test::writeFile(m_dir.path(), QStringLiteral("wrong.qscope"),
                                          QByteArrayLiteral("{\"quantization_points\": {}}"));
    openAndWait(wrong);
    ASSERT_EQ(m_messages.errors.size(), 2);
    EXPECT_TRUE(m_messages.errors.back().contains(QStringLiteral("not a Quantscope session")));
    EXPECT_EQ(m_window.session().document(), nullptr);
}

TEST_F(SessionTest, AutosaveAfterAChangeIsRecoverableOnlyWithoutItsInstance) {
    Autosaver& autosaver = m_window.sessions().autosaver();
    const QString folder = autosaver.directory();
    autosaver.setInterval(20);
    openAndWait(kDemoModel);
    EXPECT_FALSE(autosaver.isPending());
    makeNpuFourBitChoice();
    EXPECT_TRUE(autosaver.isPending());
    ASSERT_TRUE(QTest::qWaitFor([&] { return QFile::exists(autosaver.filePath()); }, kTimeoutMs));
    EXPECT_TRUE(Autosaver::recoverableSessions(folder).isEmpty()); // this instance holds it

    // What a crashed instance leaves: the same file with no live lock.
    const QString leftover = folder + QStringLiteral("/autosave-1-2.qscope");
    ASSERT_TRUE(QFile::copy(autosaver.filePath(), leftover));
    EXPECT_EQ(Autosaver::recoverableSessions(folder), QStringList{leftover});
    {
        QLockFile held(leftover + QStringLiteral(".lock"));
        ASSERT_TRUE(held.tryLock(0));
        EXPECT_TRUE(Autosaver::recoverableSessions(folder).isEmpty());
    }
    // A lock left by a process that is gone (a crash) does not keep it from being offered.
    test::writeFile(folder, QStringLiteral("autosave-1-2.qscope.lock"),
                    QStringLiteral("%1\nqs_gui_tests\n%2\n")
                        .arg(kDeadPid)
                        .arg(QSysInfo::machineHostName())
                        .toUtf8());
    EXPECT_EQ(Autosaver::recoverableSessions(folder), QStringList{leftover});

    // Restoring it gives the autosaved choices back.
    const quantization::QuantizerConfigChoice chosen = document().quantization()->choice;
    openAndWait(test::writeConvReluModel(m_dir.path()));
    openAndWait(leftover);
    ASSERT_TRUE(m_messages.errors.isEmpty())
        << m_messages.errors.join(QLatin1Char('\n')).toStdString();
    EXPECT_EQ(document().quantization()->choice, chosen);
    // The title names the model, not the autosave file it came back from.
    EXPECT_TRUE(m_window.windowTitle().startsWith(QStringLiteral("demo_cnn.onnx (recovered")))
        << m_window.windowTitle().toStdString();
    EXPECT_FALSE(m_window.windowTitle().contains(QStringLiteral("autosave")));
    Autosaver::removeAutosave(leftover);
    EXPECT_TRUE(Autosaver::recoverableSessions(folder).isEmpty());

    // A clean exit removes this instance's autosave.
    m_window.close();
    EXPECT_FALSE(QFile::exists(autosaver.filePath()));
    EXPECT_TRUE(QDir(folder).entryList(QDir::Files).isEmpty());
}

TEST_F(SessionTest, HwConfigFileIsValidatedBeforeUse) {
    openAndWait(kDemoModel);
    const QString bad = test::writeFile(m_dir.path(), QStringLiteral("bad_hw.json"),
                                        QByteArrayLiteral("{\"target_device\": \"CPU\""));
    EXPECT_FALSE(m_window.sessions().loadHwConfigFile(bad));
    ASSERT_EQ(m_messages.errors.size(), 1);
    EXPECT_TRUE(m_messages.errors.front().contains(QStringLiteral("bad_hw.json")))
        << m_messages.errors.front().toStdString();
    EXPECT_EQ(document().quantization()->settings.hw, "cpu");
    EXPECT_FALSE(
        m_window.sessions().loadHwConfigFile(m_dir.filePath(QStringLiteral("missing.json"))));
    EXPECT_EQ(m_messages.errors.size(), 2);

    const QString npu = QStringLiteral(QS_SOURCE_DIR "/resources/hw_configs/npu.json");
    ASSERT_TRUE(m_window.sessions().loadHwConfigFile(npu));
    EXPECT_EQ(QString::fromStdString(document().quantization()->settings.hw),
              QFileInfo(npu).absoluteFilePath());
    document().undoStack().undo();
    EXPECT_EQ(document().quantization()->settings.hw, "cpu");
}

TEST_F(SessionTest, RefusedFilesGiveTheCliMessageAndChangeNothing) {
    openAndWait(kDemoModel);
    makeNpuFourBitChoice();
    GraphDocument& doc = document();
    const quantization::QuantizationState before = *doc.quantization();
    const int steps = doc.undoStack().count();
    const auto unchanged = [&] {
        EXPECT_EQ(doc.quantization()->settings, before.settings);
        EXPECT_EQ(doc.quantization()->choice, before.choice);
        EXPECT_EQ(doc.undoStack().count(), steps);
        EXPECT_EQ(&document(), &doc);
    };
    const auto absolute = [](const QString& path) {
        return QFile::encodeName(QFileInfo(path).absoluteFilePath()).toStdString();
    };

    // A setup with a port the node does not have: the message quantize --setup-in prints.
    nlohmann::json setup = before.setup.toJson();
    std::string node;
    for (const auto& [id, point] : before.setup.quantizationPoints) {
        if (point.insertionPoint.isWeight) {
            node = point.insertionPoint.targetNodeName;
        }
    }
    ASSERT_FALSE(node.empty());
    for (auto& [id, point] : setup["quantization_points"].items()) {
        if (point["qip_class"] == "ActivationQuantizationInsertionPoint") {
            point["qip"] = {{"target_node_name", node}, {"input_port_id", 77}};
            break;
        }
    }
    const QString badSetup = test::writeFile(m_dir.path(), QStringLiteral("bad_port.json"),
                                             QByteArray::fromStdString(setup.dump(2)));
    EXPECT_FALSE(m_window.sessions().importSetupFile(badSetup));
    ASSERT_EQ(m_messages.errors.size(), 1);
    const auto cli = quantization::readSetupFile(absolute(badSetup), doc.graph());
    ASSERT_FALSE(cli.ok());
    EXPECT_EQ(m_messages.errors.back().toStdString(), cli.error().toString());
    EXPECT_NE(cli.error().toString().find("input_port_id: node '" + node + "'"), std::string::npos)
        << cli.error().toString();
    unchanged();

    // A HW config whose bit width is no integer.
    QFile npu(QStringLiteral(QS_SOURCE_DIR "/resources/hw_configs/npu.json"));
    ASSERT_TRUE(npu.open(QIODevice::ReadOnly));
    QByteArray hw = npu.readAll();
    hw.replace("\"bits\": 8", "\"bits\": 1e30");
    const QString badHw = test::writeFile(m_dir.path(), QStringLiteral("bad_bits.json"), hw);
    EXPECT_FALSE(m_window.sessions().loadHwConfigFile(badHw));
    ASSERT_EQ(m_messages.errors.size(), 2);
    const auto load = quantization::HWConfig::load(absolute(badHw));
    ASSERT_FALSE(load.ok());
    EXPECT_EQ(m_messages.errors.back().toStdString(), load.error().toString());
    EXPECT_TRUE(m_messages.errors.back().contains(QStringLiteral("bad_bits.json")));
    unchanged();

    // A session whose view has a negative zoom: refused whole, the open document stays.
    const QString good = m_dir.filePath(QStringLiteral("good.qscope"));
    ASSERT_TRUE(m_window.sessions().saveSessionTo(good));
    QFile saved(good);
    ASSERT_TRUE(saved.open(QIODevice::ReadOnly));
    nlohmann::json session = nlohmann::json::parse(saved.readAll().toStdString());
    session["view"] = {{"zoom", -1}, {"center_x", 0}, {"center_y", 0}};
    const QString badSession = test::writeFile(m_dir.path(), QStringLiteral("bad_zoom.qscope"),
                                               QByteArray::fromStdString(session.dump(2)));
    openAndWait(badSession);
    ASSERT_EQ(m_messages.errors.size(), 3);
    EXPECT_TRUE(m_messages.errors.back().contains(QStringLiteral("view.zoom: must be positive")))
        << m_messages.errors.back().toStdString();
    EXPECT_TRUE(m_messages.errors.back().contains(QStringLiteral("bad_zoom.qscope")));
    unchanged();

    // The good setup imports onto the default choices as one undo step, and undoes.
    const QString goodSetup =
        test::writeFile(m_dir.path(), QStringLiteral("good.json"),
                        QByteArray::fromStdString(before.setup.toJson().dump()));
    document().undoStack().undo(); // back to the first config of every point
    ASSERT_NE(document().quantization()->choice, before.choice);
    ASSERT_TRUE(m_window.sessions().importSetupFile(goodSetup))
        << m_messages.errors.join(QLatin1Char('\n')).toStdString();
    EXPECT_EQ(document().quantization()->setup.toJson(), before.setup.toJson());
    document().undoStack().undo();
    EXPECT_NE(document().quantization()->setup.toJson(), before.setup.toJson());
    EXPECT_EQ(m_messages.errors.size(), 3);
}

} // namespace
} // namespace qs::ui
