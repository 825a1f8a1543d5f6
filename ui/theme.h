// Theme: the light/dark choice of the whole application. Applying it sets the Fusion style's
// palette (or the platform's own for "system") and tells whether the result is dark, so the
// graph scene can pick the matching GraphTheme.
#pragma once

#include "ui/graph_theme.h"

#include <QString>

namespace qs::ui {

enum class ThemeChoice { System, Light, Dark };

/// "system", "light", "dark": the persisted names.
QString themeName(ThemeChoice choice);

/// The choice named `name`; unknown names mean System.
ThemeChoice themeFromName(const QString& name);

/// Applies `choice` to the running QApplication; returns true when the palette is dark.
bool applyTheme(ThemeChoice choice);

/// The graph colours matching a dark or light palette.
GraphTheme graphThemeFor(bool dark);

} // namespace qs::ui
