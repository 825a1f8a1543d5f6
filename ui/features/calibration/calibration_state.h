// CalibrationState: the calibration a GraphDocument keeps under the calibration feature's key —
// the last CalibrationResult and whether the setup changed since it ran (a config or settings
// change makes it stale; an undo back to its setup makes it fresh again). The free functions are
// how views (Quantizers table, SQNR overlay, export) read it.
#pragma once

#include "ui/features/calibration/calibration.h"
#include "ui/graph_document.h"

#include <QLatin1String>

namespace qs::ui {

/// The calibration feature's key: its document state (and its session section).
inline constexpr QLatin1String kCalibrationKey("calibration");

/// A calibration and its staleness against the document's current setup.
class CalibrationState final : public DocumentState {
public:
    CalibrationState(CalibrationResult result, const GraphDocument& document);

    const CalibrationResult& result() const { return m_result; }

    bool isStale() const { return m_stale; }

    bool followQuantization(const GraphDocument& document) override;

private:
    CalibrationResult m_result;
    bool m_stale = false;
};

/// The last calibration of `document`, fresh or stale, or nullptr.
const CalibrationResult* calibration(const GraphDocument& document);

/// The last calibration when it was made for the current setup, else nullptr.
const CalibrationResult* freshCalibration(const GraphDocument& document);

/// True when there is a calibration but the setup changed since (recalibrate).
bool isCalibrationStale(const GraphDocument& document);

/// Keeps `result` (computed for the setup its fingerprint names) as `document`'s calibration.
void storeCalibration(GraphDocument& document, CalibrationResult result);

} // namespace qs::ui
