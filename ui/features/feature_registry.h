// The registry of GUI features: the one place that lists them, in menu order. Adding a feature is
// one folder under ui/features/ and one line in createFeatures() (see ui/README.md).
#pragma once

#include "ui/feature.h"

#include <QList>

namespace qs::ui {

/// Creates every feature (parented to `context.window`), in menu order.
QList<Feature*> createFeatures(const FeatureContext& context);

} // namespace qs::ui
