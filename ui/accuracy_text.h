// The one-line accuracy summary the GUI shows after a run on labelled data (calibration's dock
// header and status line, a weight-compressed export's status message): the words of the CLI's
// report (core/report/accuracy.h), shortened to fit a status bar.
#pragma once

#include "core/report/accuracy.h"

#include <QString>

namespace qs::ui {

/// "top-1 accuracy: float 98.33 %, quantized 98.06 % (360 labelled)".
QString accuracySummary(const report::AccuracyComparison& accuracy, const QString& compressedName);

} // namespace qs::ui
