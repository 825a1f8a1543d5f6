#include "ui/feature.h"

namespace qs::ui {

Feature::Feature(QObject* parent)
    : QObject(parent) {}

Feature::~Feature() = default;

} // namespace qs::ui
