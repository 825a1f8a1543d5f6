// The feature registry as the window builds it: every registered feature has a unique key, its
// actions come from Actions (named "<key>.<verb>", listed in exactly one menu), File ▸ Export is
// one submenu holding every model export, and feature docks sit in their area with a View toggle.

#include "ui/actions.h"
#include "ui/feature.h"
#include "ui/features/calibration/calibration_controller.h"
#include "ui/features/compare/compare_feature.h"
#include "ui/features/fp16_export/fp16_export_feature.h"
#include "ui/features/hessian/hessian_controller.h"
#include "ui/features/pruning/pruning_controller.h"
#include "ui/features/review_report/review_report_feature.h"
#include "ui/features/sqnr_overlay/sqnr_overlay_feature.h"
#include "ui/features/weight_compression/weight_compression_controller.h"
#include "ui/main_window.h"
#include "ui/settings.h"

#include <QAction>
#include <QDockWidget>
#include <QMenu>
#include <QSet>
#include <QTemporaryDir>
#include <gtest/gtest.h>

#include <algorithm>

namespace qs::ui {
namespace {

class FeatureRegistryTest : public ::testing::Test {
protected:
    FeatureRegistryTest()
        : m_settings(m_dir.filePath(QStringLiteral("settings.ini")))
        , m_window(m_settings) {}

    /// The names of the actions `menu` lists directly.
    static QStringList names(const QMenu& menu) {
        QStringList out;
        for (const QAction* action : menu.actions()) {
            if (!action->isSeparator() && !action->objectName().isEmpty()) {
                out.push_back(action->objectName());
            }
        }
        return out;
    }

    QTemporaryDir m_dir;
    Settings m_settings;
    MainWindow m_window;
};

TEST_F(FeatureRegistryTest, EveryFeatureIsRegisteredOnceWithAUniqueKey) {
    QStringList keys;
    for (const Feature* feature : m_window.features()) {
        keys.push_back(feature->key());
    }
    EXPECT_EQ(keys, QStringList({QStringLiteral("weight_compression"),
                                 QStringLiteral("fp16_export"), QStringLiteral("calibration"),
                                 QStringLiteral("hawq"), QStringLiteral("sqnr_overlay"),
                                 QStringLiteral("compare"), QStringLiteral("hessian"),
                                 QStringLiteral("pruning"), QStringLiteral("review_report")}));
    EXPECT_EQ(QSet<QString>(keys.begin(), keys.end()).size(), keys.size());
    // Each one is reachable by its type.
    EXPECT_EQ(m_window.feature<CalibrationController>().key(), QStringLiteral("calibration"));
    EXPECT_EQ(m_window.feature<WeightCompressionController>().key(),
              QStringLiteral("weight_compression"));
    EXPECT_EQ(m_window.feature<Fp16ExportFeature>().key(), QStringLiteral("fp16_export"));
    EXPECT_EQ(m_window.feature<SqnrOverlayFeature>().key(), QStringLiteral("sqnr_overlay"));
    EXPECT_EQ(m_window.feature<HessianController>().key(), QStringLiteral("hessian"));
    EXPECT_EQ(m_window.feature<PruningController>().key(), QStringLiteral("pruning"));
    EXPECT_EQ(m_window.feature<ReviewReportFeature>().key(), QStringLiteral("review_report"));
    EXPECT_EQ(m_window.feature<CompareFeature>().key(), QStringLiteral("compare"));
}

TEST_F(FeatureRegistryTest, ActionsComeFromActionsAndSitInOneMenu) {
    const Actions& actions = m_window.actions();
    ASSERT_EQ(actions.featureActions().size(), 17);
    QStringList keys;
    for (const Feature* feature : m_window.features()) {
        keys.push_back(feature->key());
    }
    const QStringList quantize = names(*actions.quantizeMenu());
    const QStringList view = names(*actions.viewMenu());
    const QStringList exports = names(*actions.exportMenu());
    const QStringList compress = names(*actions.compressMenu());
    for (const QAction* action : actions.featureActions()) {
        EXPECT_EQ(action->parent(), &actions) << action->objectName().toStdString();
        const QString key = action->objectName().section(QLatin1Char('.'), 0, 0);
        EXPECT_TRUE(keys.contains(key)) << action->objectName().toStdString();
        const int listed = static_cast<int>(quantize.contains(action->objectName())) +
                           static_cast<int>(view.contains(action->objectName())) +
                           static_cast<int>(exports.contains(action->objectName())) +
                           static_cast<int>(compress.contains(action->objectName()));
        EXPECT_EQ(listed, 1) << action->objectName().toStdString();
    }
    EXPECT_EQ(exports, QStringList({QStringLiteral("weight_compression.export"),
                                    QStringLiteral("fp16_export.export"),
                                    QStringLiteral("calibration.exportQuantized"),
                                    QStringLiteral("pruning.export"),
                                    QStringLiteral("review_report.export")}));
    EXPECT_EQ(compress,
              QStringList({QStringLiteral("pruning.prune"), QStringLiteral("pruning.apply"),
                           QStringLiteral("pruning.revert")}));
    EXPECT_TRUE(view.contains(QStringLiteral("pruning.overlay")));
    EXPECT_TRUE(quantize.contains(QStringLiteral("weight_compression.compress")));
    EXPECT_TRUE(quantize.contains(QStringLiteral("calibration.calibrate")));
    EXPECT_TRUE(quantize.contains(QStringLiteral("hawq.run")));
    EXPECT_TRUE(view.contains(QStringLiteral("sqnr_overlay.toggle")));
    EXPECT_TRUE(quantize.contains(QStringLiteral("compare.open")));
    EXPECT_TRUE(quantize.contains(QStringLiteral("compare.clear")));
    EXPECT_TRUE(quantize.contains(QStringLiteral("hessian.compute")));
    EXPECT_TRUE(view.contains(QStringLiteral("hessian.overlay")));
    // A separator opens each feature's section of the Quantize menu.
    const QList<QAction*> entries = actions.quantizeMenu()->actions();
    for (const QString& name :
         {QStringLiteral("weight_compression.compress"), QStringLiteral("calibration.calibrate")}) {
        const auto found = std::find_if(entries.begin(), entries.end(),
                                        [&](const QAction* a) { return a->objectName() == name; });
        ASSERT_NE(found, entries.end());
        ASSERT_NE(found, entries.begin());
        EXPECT_TRUE((*(found - 1))->isSeparator()) << name.toStdString();
    }
}

TEST_F(FeatureRegistryTest, FileHoldsOneExportSubmenuAfterExportImage) {
    const QList<QMenu*> menus = m_window.findChildren<QMenu*>(QStringLiteral("exportMenu"));
    ASSERT_EQ(menus.size(), 1);
    const QList<QAction*> file = m_window.actions().fileMenu()->actions();
    const qsizetype image = file.indexOf(m_window.actions().exportImage());
    ASSERT_GE(image, 0);
    ASSERT_LT(image + 1, file.size());
    EXPECT_EQ(file[image + 1]->menu(), menus.front());
    EXPECT_TRUE(menus.front()->isEnabled());
}

TEST_F(FeatureRegistryTest, FeatureDocksArePlacedWithAViewToggle) {
    int docks = 0;
    for (const Feature* feature : m_window.features()) {
        QDockWidget* dock = feature->dock();
        if (dock == nullptr) {
            continue;
        }
        ++docks;
        EXPECT_EQ(dock->parent(), &m_window);
        EXPECT_EQ(m_window.dockWidgetArea(dock), feature->dockArea());
        EXPECT_TRUE(m_window.actions().viewMenu()->actions().contains(dock->toggleViewAction()));
        EXPECT_FALSE(dock->objectName().isEmpty()); // window state restores it by name
        EXPECT_TRUE(dock->isHidden());
    }
    // Weight Compression, in the Quantizers' area; HAWQ's Pareto Explorer; Sensitivity; Pruning
    EXPECT_EQ(docks, 4);
    EXPECT_EQ(m_window.dockWidgetArea(m_window.feature<WeightCompressionController>().dock()),
              m_window.dockWidgetArea(&m_window.quantizerDock()));
}

} // namespace
} // namespace qs::ui
