// Actions: every QAction of the main window, created in one place with its text, shortcut and
// status tip, plus the menus that show them. The Open Recent menu follows Settings; the owner
// connects the actions' triggered signals to what they do.
#pragma once

#include <QObject>
#include <QStringList>

#include <memory>

class QAction;
class QMenu;
class QMenuBar;
class QUndoGroup;

namespace qs::ui {

class Settings;

/// The application's actions and menus.
class Actions : public QObject {
    Q_OBJECT

public:
    /// Undo and Redo act on the active stack of `undoGroup`.
    Actions(Settings& settings, QUndoGroup& undoGroup, QObject* parent = nullptr);

    QAction* open() const { return m_open; }

    QAction* reload() const { return m_reload; }

    QAction* clearRecent() const { return m_clearRecent; }

    QAction* undo() const { return m_undo; }

    QAction* redo() const { return m_redo; }

    QAction* quit() const { return m_quit; }

    QAction* about() const { return m_about; }

    ~Actions() override;

    /// The File ▸ Open Recent submenu.
    QMenu* recentMenu() const { return m_recentMenu.get(); }

    /// Adds the File, Edit and Help menus to `menuBar`.
    void populate(QMenuBar& menuBar);

Q_SIGNALS:
    /// An entry of Open Recent was chosen.
    void recentFileTriggered(const QString& path);

private:
    QAction* makeAction(const QString& text, const QString& statusTip);

    void rebuildRecentMenu();

    Settings& m_settings;
    QAction* m_open;
    QAction* m_reload;
    QAction* m_clearRecent;
    QAction* m_undo;
    QAction* m_redo;
    QAction* m_quit;
    QAction* m_about;
    std::unique_ptr<QMenu> m_recentMenu;
};

} // namespace qs::ui
