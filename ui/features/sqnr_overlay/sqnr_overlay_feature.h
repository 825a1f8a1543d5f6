// SqnrOverlayFeature: View ▸ SQNR Overlay — a checkable entry that turns the SqnrOverlay of the
// graph page on and off; the overlay itself follows the open document's calibration
// (CalibrationState) and says when there is none or it is stale.
#pragma once

#include "ui/feature.h"

class QAction;

namespace qs::ui {

class SqnrOverlay;

/// The SQNR overlay and its View entry.
class SqnrOverlayFeature : public Feature {
    Q_OBJECT

public:
    explicit SqnrOverlayFeature(const FeatureContext& context);

    ~SqnrOverlayFeature() override;

    QString key() const override;

    void createActions(Actions& actions) override;

    /// View ▸ SQNR Overlay (checkable; always enabled, the legend says what is missing).
    QAction* overlayAction() const { return m_toggle; }

    SqnrOverlay& overlay() const { return *m_overlay; }

private:
    SqnrOverlay* m_overlay;
    QAction* m_toggle = nullptr;
};

} // namespace qs::ui
