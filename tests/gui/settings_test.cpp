#include "ui/actions.h"
#include "ui/settings.h"

#include <QAction>
#include <QDir>
#include <QMenu>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QUndoGroup>
#include <gtest/gtest.h>

namespace qs::ui {
namespace {

class SettingsTest : public ::testing::Test {
protected:
    QString file(int i) const { return m_dir.filePath(QStringLiteral("m%1.onnx").arg(i)); }

    QTemporaryDir m_dir;
    Settings m_settings{m_dir.filePath(QStringLiteral("settings.ini"))};
};

TEST_F(SettingsTest, RecentFilesAreMostRecentFirstAndCapped) {
    for (int i = 0; i < Settings::kMaxRecentFiles + 3; ++i) {
        m_settings.addRecentFile(file(i));
    }
    const QStringList recent = m_settings.recentFiles();
    ASSERT_EQ(recent.size(), Settings::kMaxRecentFiles);
    EXPECT_EQ(recent.front(), file(Settings::kMaxRecentFiles + 2));
    EXPECT_EQ(recent.back(), file(3));
}

TEST_F(SettingsTest, AddingAgainMovesToFrontWithoutDuplicates) {
    m_settings.addRecentFile(file(1));
    m_settings.addRecentFile(file(2));
    m_settings.addRecentFile(file(1));
    EXPECT_EQ(m_settings.recentFiles(), QStringList({file(1), file(2)}));
}

TEST_F(SettingsTest, RelativePathsAreStoredAbsolute) {
    const QString relative = QDir::current().relativeFilePath(file(7));
    m_settings.addRecentFile(relative);
    m_settings.addRecentFile(file(7));
    EXPECT_EQ(m_settings.recentFiles(), QStringList({file(7)}));
}

TEST_F(SettingsTest, RemoveAndClearNotify) {
    QSignalSpy changed(&m_settings, &Settings::recentFilesChanged);
    m_settings.addRecentFile(file(1));
    m_settings.addRecentFile(file(2));
    m_settings.removeRecentFile(file(1));
    EXPECT_EQ(m_settings.recentFiles(), QStringList({file(2)}));
    m_settings.clearRecentFiles();
    EXPECT_TRUE(m_settings.recentFiles().isEmpty());
    EXPECT_EQ(changed.count(), 4);
}

TEST_F(SettingsTest, PersistsAcrossInstances) {
    m_settings.addRecentFile(file(1));
    m_settings.setWindowGeometry(QByteArray("geometry"));
    const Settings reopened(m_dir.filePath(QStringLiteral("settings.ini")));
    EXPECT_EQ(reopened.recentFiles(), QStringList({file(1)}));
    EXPECT_EQ(reopened.windowGeometry(), QByteArray("geometry"));
}

TEST_F(SettingsTest, RecentMenuFollowsSettings) {
    QUndoGroup undoGroup;
    Actions actions(m_settings, undoGroup);
    EXPECT_FALSE(actions.recentMenu()->isEnabled());
    for (int i = 0; i < Settings::kMaxRecentFiles + 2; ++i) {
        m_settings.addRecentFile(file(i));
    }
    EXPECT_TRUE(actions.recentMenu()->isEnabled());
    int entries = 0;
    for (QAction* action : actions.recentMenu()->actions()) {
        entries += action->isSeparator() || action == actions.clearRecent() ? 0 : 1;
    }
    EXPECT_EQ(entries, Settings::kMaxRecentFiles);
    QSignalSpy triggered(&actions, &Actions::recentFileTriggered);
    actions.recentMenu()->actions().front()->trigger();
    ASSERT_EQ(triggered.count(), 1);
    EXPECT_EQ(triggered.front().front().toString(), file(Settings::kMaxRecentFiles + 1));
    actions.clearRecent()->trigger();
    EXPECT_TRUE(m_settings.recentFiles().isEmpty());
    EXPECT_FALSE(actions.recentMenu()->isEnabled());
}

} // namespace
} // namespace qs::ui
