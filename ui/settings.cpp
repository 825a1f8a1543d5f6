#include "ui/settings.h"

#include <QFileInfo>
#include <QSettings>

namespace qs::ui {

namespace {
const QString kRecentFilesKey = QStringLiteral("recentFiles");
const QString kGeometryKey = QStringLiteral("mainWindow/geometry");
const QString kStateKey = QStringLiteral("mainWindow/state");
const QString kThemeKey = QStringLiteral("appearance/theme");
const QString kColorBlindKey = QStringLiteral("appearance/colorBlindPalette");
const QString kShowLegendKey = QStringLiteral("appearance/showLegend");

QString absolutePath(const QString& path) {
    return QFileInfo(path).absoluteFilePath();
}
} // namespace

Settings::Settings(QObject* parent)
    : QObject(parent)
    , m_store(std::make_unique<QSettings>()) {}

Settings::Settings(const QString& iniPath, QObject* parent)
    : QObject(parent)
    , m_store(std::make_unique<QSettings>(iniPath, QSettings::IniFormat)) {}

Settings::~Settings() = default;

QStringList Settings::recentFiles() const {
    QStringList files = m_store->value(kRecentFilesKey).toStringList();
    files.removeDuplicates();
    return files.mid(0, kMaxRecentFiles);
}

void Settings::addRecentFile(const QString& path) {
    const QString absolute = absolutePath(path);
    QStringList files = recentFiles();
    files.removeAll(absolute);
    files.prepend(absolute);
    setRecentFiles(files.mid(0, kMaxRecentFiles));
}

void Settings::removeRecentFile(const QString& path) {
    QStringList files = recentFiles();
    if (files.removeAll(absolutePath(path)) > 0) {
        setRecentFiles(files);
    }
}

void Settings::clearRecentFiles() {
    setRecentFiles({});
}

QByteArray Settings::windowGeometry() const {
    return m_store->value(kGeometryKey).toByteArray();
}

QByteArray Settings::windowState() const {
    return m_store->value(kStateKey).toByteArray();
}

void Settings::setWindowGeometry(const QByteArray& geometry) {
    m_store->setValue(kGeometryKey, geometry);
}

void Settings::setWindowState(const QByteArray& state) {
    m_store->setValue(kStateKey, state);
}

ThemeChoice Settings::theme() const {
    return themeFromName(m_store->value(kThemeKey).toString());
}

void Settings::setTheme(ThemeChoice theme) {
    if (theme == this->theme() && m_store->contains(kThemeKey)) {
        return;
    }
    m_store->setValue(kThemeKey, themeName(theme));
    Q_EMIT themeChanged(theme);
}

void Settings::setRecentFiles(const QStringList& files) {
    m_store->setValue(kRecentFilesKey, files);
    Q_EMIT recentFilesChanged();
}

bool Settings::colorBlindPalette() const {
    return m_store->value(kColorBlindKey, false).toBool();
}

void Settings::setColorBlindPalette(bool on) {
    m_store->setValue(kColorBlindKey, on);
}

bool Settings::showLegend() const {
    return m_store->value(kShowLegendKey, true).toBool();
}

void Settings::setShowLegend(bool on) {
    m_store->setValue(kShowLegendKey, on);
}

} // namespace qs::ui
