#include "ui/theme.h"

#include <QApplication>
#include <QPalette>
#include <QStyle>
#include <QStyleFactory>

namespace qs::ui {

namespace {
constexpr int kDarkLightness = 128;

QPalette darkPalette() {
    QPalette palette;
    const QColor window(0x2b, 0x2e, 0x33);
    const QColor base(0x1e, 0x21, 0x26);
    const QColor text(0xe3, 0xe6, 0xea);
    const QColor disabled(0x7a, 0x80, 0x88);
    const QColor accent(0x3d, 0x8b, 0xfd);
    palette.setColor(QPalette::Window, window);
    palette.setColor(QPalette::WindowText, text);
    palette.setColor(QPalette::Base, base);
    palette.setColor(QPalette::AlternateBase, window);
    palette.setColor(QPalette::ToolTipBase, QColor(0x33, 0x37, 0x3d));
    palette.setColor(QPalette::ToolTipText, text);
    palette.setColor(QPalette::PlaceholderText, disabled);
    palette.setColor(QPalette::Text, text);
    palette.setColor(QPalette::Button, window);
    palette.setColor(QPalette::ButtonText, text);
    palette.setColor(QPalette::BrightText, Qt::white);
    palette.setColor(QPalette::Link, accent);
    palette.setColor(QPalette::Highlight, accent);
    palette.setColor(QPalette::HighlightedText, Qt::white);
    palette.setColor(QPalette::Light, QColor(0x3a, 0x3e, 0x44));
    palette.setColor(QPalette::Mid, QColor(0x24, 0x27, 0x2b));
    palette.setColor(QPalette::Dark, QColor(0x19, 0x1b, 0x1f));
    palette.setColor(QPalette::Shadow, Qt::black);
    for (QPalette::ColorRole role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText}) {
        palette.setColor(QPalette::Disabled, role, disabled);
    }
    return palette;
}
} // namespace

QString themeName(ThemeChoice choice) {
    switch (choice) {
    case ThemeChoice::Light:
        return QStringLiteral("light");
    case ThemeChoice::Dark:
        return QStringLiteral("dark");
    case ThemeChoice::System:
        break;
    }
    return QStringLiteral("system");
}

ThemeChoice themeFromName(const QString& name) {
    if (name == QLatin1String("light")) {
        return ThemeChoice::Light;
    }
    if (name == QLatin1String("dark")) {
        return ThemeChoice::Dark;
    }
    return ThemeChoice::System;
}

bool applyTheme(ThemeChoice choice) {
    if (choice != ThemeChoice::System) {
        QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    }
    switch (choice) {
    case ThemeChoice::Dark:
        QApplication::setPalette(darkPalette());
        break;
    case ThemeChoice::Light:
    case ThemeChoice::System:
        QApplication::setPalette(QApplication::style()->standardPalette());
        break;
    }
    return QApplication::palette().color(QPalette::Window).lightness() < kDarkLightness;
}

GraphTheme graphThemeFor(bool dark) {
    return dark ? GraphTheme::dark() : GraphTheme::light();
}

} // namespace qs::ui
