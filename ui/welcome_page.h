// WelcomePage: the central page while no model is open — a short line on what Quantscope does,
// an "Open Model…" button and the recent model files, each one click away.
#pragma once

#include <QStringList>
#include <QWidget>

class QLabel;
class QPushButton;
class QTreeWidget;

namespace qs::ui {

/// The start page with the open button and the recent files.
class WelcomePage : public QWidget {
    Q_OBJECT

public:
    explicit WelcomePage(QWidget* parent = nullptr);

    /// Shows `files` (absolute paths, most recent first).
    void setRecentFiles(const QStringList& files);

    /// The list of recent files; one row per file, the path in Qt::UserRole.
    QTreeWidget* recentList() const { return m_recentList; }

Q_SIGNALS:
    /// The user asked to pick a model file.
    void openRequested();

    /// The user clicked a recent file.
    void recentFileActivated(const QString& path);

private:
    QWidget* makeHeader();

    QPushButton* m_openButton;
    QLabel* m_recentTitle;
    QTreeWidget* m_recentList;
    QLabel* m_noRecent;
};

} // namespace qs::ui
