#include "ui/features/sqnr_overlay/sqnr_overlay_feature.h"

#include "ui/actions.h"
#include "ui/features/sqnr_overlay/sqnr_overlay.h"
#include "ui/session.h"

#include <QAction>

namespace qs::ui {

SqnrOverlayFeature::SqnrOverlayFeature(const FeatureContext& context)
    : Feature(&context.window)
    , m_overlay(new SqnrOverlay(context.page, this)) {
    connect(&context.session, &Session::documentChanged, m_overlay, &SqnrOverlay::setDocument);
}

SqnrOverlayFeature::~SqnrOverlayFeature() = default;

QString SqnrOverlayFeature::key() const {
    return QStringLiteral("sqnr_overlay");
}

void SqnrOverlayFeature::createActions(Actions& actions) {
    m_toggle = actions.addFeatureAction(
        key(), FeatureMenu::View,
        {QStringLiteral("sqnr_overlay.toggle"),
         tr("&SQNR Overlay"),
         tr("Colour quantizer badges by SQNR, from red (noisy) to green (faithful)"),
         {},
         true});
    m_toggle->setEnabled(true); // it says itself when there is nothing to show
    connect(m_toggle, &QAction::toggled, m_overlay, &SqnrOverlay::setEnabled);
}

} // namespace qs::ui
