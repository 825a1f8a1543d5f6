// Settings: the one typed wrapper over QSettings. Every persisted preference of the GUI (recent
// model files, window geometry and dock state, the light/dark theme) is read and written here, so
// keys and defaults live in one place.
#pragma once

#include "ui/theme.h"

#include <QByteArray>
#include <QObject>
#include <QStringList>

#include <memory>

class QSettings;

namespace qs::ui {

/// Typed access to the persisted GUI preferences.
class Settings : public QObject {
    Q_OBJECT

public:
    /// How many recent model files are remembered.
    static constexpr int kMaxRecentFiles = 10;

    /// Uses the platform store under the application's organization and name.
    explicit Settings(QObject* parent = nullptr);

    /// Uses an INI file at `iniPath` (tests, portable setups).
    explicit Settings(const QString& iniPath, QObject* parent = nullptr);

    ~Settings() override;

    /// Absolute paths, most recent first, without duplicates, at most kMaxRecentFiles.
    QStringList recentFiles() const;

    /// Moves `path` (made absolute) to the front of the recent files.
    void addRecentFile(const QString& path);

    void removeRecentFile(const QString& path);

    void clearRecentFiles();

    QByteArray windowGeometry() const;

    QByteArray windowState() const;

    void setWindowGeometry(const QByteArray& geometry);

    void setWindowState(const QByteArray& state);

    /// The chosen theme; System by default.
    ThemeChoice theme() const;

    void setTheme(ThemeChoice theme);

    /// True when bit widths use the colour-blind-safe palette; false by default.
    bool colorBlindPalette() const;

    void setColorBlindPalette(bool on);

    /// The graph legend over the view's corner (shown by default).
    bool showLegend() const;

    void setShowLegend(bool on);

Q_SIGNALS:
    void recentFilesChanged();

    void themeChanged(qs::ui::ThemeChoice theme);

private:
    void setRecentFiles(const QStringList& files);

    std::unique_ptr<QSettings> m_store;
};

} // namespace qs::ui
