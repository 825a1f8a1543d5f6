// The Qt the CLI's drawing commands (render, report, diff) need: an application on the offscreen
// platform, so they run without a display, with a fixed hash seed, so Qt's PDF engine, which walks
// its fonts in hash order, writes the same bytes every run.
#pragma once

#include <QApplication>

#include <memory>

namespace qs::cli {

/// The application; keep it alive while drawing.
std::unique_ptr<QApplication> startOffscreenQt();

} // namespace qs::cli
