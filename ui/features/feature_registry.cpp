#include "ui/features/feature_registry.h"

#include "ui/features/calibration/calibration_controller.h"
#include "ui/features/compare/compare_feature.h"
#include "ui/features/fp16_export/fp16_export_feature.h"
#include "ui/features/hawq/hawq_controller.h"
#include "ui/features/hessian/hessian_controller.h"
#include "ui/features/pruning/pruning_controller.h"
#include "ui/features/review_report/review_report_feature.h"
#include "ui/features/sqnr_overlay/sqnr_overlay_feature.h"
#include "ui/features/weight_compression/weight_compression_controller.h"

namespace qs::ui {

QList<Feature*> createFeatures(const FeatureContext& context) {
    // One feature per line (the order is their place in the menus).
    // clang-format off
    return {
        new WeightCompressionController(context),
        new Fp16ExportFeature(context),
        new CalibrationController(context),
        new HawqController(context),
        new SqnrOverlayFeature(context),
        new CompareFeature(context),
        new HessianController(context),
        new PruningController(context),
        new ReviewReportFeature(context),
    };
    // clang-format on
}

} // namespace qs::ui
