// quantscope: the desktop workbench. Sets up the application identity, parses the command line
// (--help, --version, an optional MODEL to open) and shows the main window. --help and --version
// answer without a display.

#include "ui/features/calibration/calibration_controller.h"
#include "ui/features/compare/compare_feature.h"
#include "ui/features/hawq/hawq_controller.h"
#include "ui/features/hessian/hessian_controller.h"
#include "ui/features/pruning/pruning_controller.h"
#include "ui/features/sqnr_overlay/sqnr_overlay_feature.h"
#include "ui/features/weight_compression/weight_compression_controller.h"
#include "ui/graph_page.h"
#include "ui/main_window.h"
#include "ui/session.h"
#include "ui/session_controller.h"
#include "ui/settings.h"

#include <QAction>
#include <QApplication>
#include <QCommandLineParser>

#include <cstdio>
#include <optional>
#include <string_view>

namespace {

void setIdentity() {
    QCoreApplication::setOrganizationName(QStringLiteral("Quantscope"));
    QCoreApplication::setApplicationName(QStringLiteral("Quantscope"));
    QGuiApplication::setDesktopFileName(QStringLiteral("io.quantscope.Quantscope"));
    QCoreApplication::setApplicationVersion(QString::fromLatin1(QS_VERSION));
}

void describeCommandLine(QCommandLineParser& parser) {
    parser.setApplicationDescription(QCoreApplication::translate(
        "main", "Quantscope: see where quantizers go, choose bitwidths, export compressed ONNX "
                "models."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("MODEL"),
                                 QCoreApplication::translate("main", "ONNX model to open."),
                                 QStringLiteral("[MODEL]"));
    parser.addOption(QCommandLineOption(
        QStringLiteral("hw"),
        QCoreApplication::translate("main", "HW config to place quantizers for: cpu (default), "
                                            "gpu, npu or a JSON file."),
        QStringLiteral("HW"), QStringLiteral("cpu")));
    parser.addOption(
        QCommandLineOption(QStringLiteral("preset"),
                           QCoreApplication::translate("main", "performance (default) or mixed."),
                           QStringLiteral("PRESET"), QStringLiteral("performance")));
    parser.addOption(QCommandLineOption(
        QStringLiteral("rule"),
        QCoreApplication::translate("main", "Propagation rule, e.g. merge_all_in_one (default) "
                                            "or merge_with_potential_requantization."),
        QStringLiteral("RULE"), QStringLiteral("merge_all_in_one")));
    parser.addOption(QCommandLineOption(
        QStringLiteral("set"),
        QCoreApplication::translate("main", "Choose a bit width as quantize --set does "
                                            "(repeatable; one undo step)."),
        QStringLiteral("NODE[:PORT]=BITS")));
    parser.addOption(QCommandLineOption(
        QStringLiteral("compress-weights"),
        QCoreApplication::translate("main", "Compress the opened model's weights, e.g. int4_asym "
                                            "or int4_asym:0.6 (mode and ratio; one undo step)."),
        QStringLiteral("MODE[:RATIO]")));
    parser.addOption(QCommandLineOption(
        QStringLiteral("expand"),
        QCoreApplication::translate("main", "Open the graph group of this name scope once the "
                                            "graph is shown, e.g. /features/denseblock2 "
                                            "(repeatable)."),
        QStringLiteral("SCOPE")));
    parser.addOption(QCommandLineOption(
        QStringLiteral("compare"),
        QCoreApplication::translate("main", "Lay this setup JSON, .qscope session or compressed "
                                            "export of the opened model over its graph "
                                            "(Quantize ▸ Compare With…)."),
        QStringLiteral("FILE")));
    parser.addOption(QCommandLineOption(
        QStringLiteral("calibrate-random"),
        QCoreApplication::translate("main", "Calibrate the opened model on N random samples and "
                                            "show the SQNR overlay."),
        QStringLiteral("N")));
    parser.addOption(QCommandLineOption(
        QStringLiteral("hawq-ratio"),
        QCoreApplication::translate("main", "Run HAWQ (NPU, 8 random samples, 10 iterations) on "
                                            "the opened model at this BitOps ratio and show "
                                            "the Pareto explorer."),
        QStringLiteral("R")));
    parser.addOption(QCommandLineOption(
        QStringLiteral("hessian-random"),
        QCoreApplication::translate("main", "Compute the opened model's Hessian scores on N "
                                            "random samples (10 iterations) and show the "
                                            "sensitivity overlay and dock."),
        QStringLiteral("N")));
    parser.addOption(QCommandLineOption(
        QStringLiteral("prune-target"),
        QCoreApplication::translate("main", "Prune the opened model to this weight memory (50% "
                                            "or bytes) and show the Pruning dock."),
        QStringLiteral("TARGET")));
    parser.addOption(QCommandLineOption(
        QStringLiteral("prune-importance"),
        QCoreApplication::translate("main", "Channel importance of --prune-target: lfh "
                                            "(default), l2 or random."),
        QStringLiteral("METRIC"), QStringLiteral("lfh")));
    parser.addOption(QCommandLineOption(
        QStringLiteral("prune-random"),
        QCoreApplication::translate("main", "LFH scores of --prune-target on N random samples "
                                            "(default 8; 10 iterations)."),
        QStringLiteral("N"), QStringLiteral("8")));
    parser.addOption(QCommandLineOption(
        QStringLiteral("prune-simd"),
        QCoreApplication::translate("main", "SIMD size of --prune-target (default: the HW "
                                            "config's)."),
        QStringLiteral("N"), QStringLiteral("0")));
}

/// The --prune-* request, or nullopt without --prune-target; errors name the problem.
qs::Result<std::optional<qs::pruning::PruningRequest>>
pruningRequest(const QCommandLineParser& parser) {
    if (!parser.isSet(QStringLiteral("prune-target"))) {
        return std::optional<qs::pruning::PruningRequest>();
    }
    qs::pruning::PruningRequest request;
    QS_ASSIGN_OR_RETURN(
        request.target,
        qs::pruning::parseTargetMemory(parser.value(QStringLiteral("prune-target")).toStdString()));
    QS_ASSIGN_OR_RETURN(
        request.importance,
        qs::pruning::parseImportance(parser.value(QStringLiteral("prune-importance")).toStdString())
            .context("--prune-importance"));
    bool ok = false;
    const qint64 samples = parser.value(QStringLiteral("prune-random")).toLongLong(&ok);
    if (!ok || samples <= 0) {
        return qs::Error(qs::Errc::InvalidArgument,
                         "--prune-random needs a positive number of samples");
    }
    const qint64 simd = parser.value(QStringLiteral("prune-simd")).toLongLong(&ok);
    if (!ok || simd < 0) {
        return qs::Error(qs::Errc::InvalidArgument, "--prune-simd needs a SIMD size (0: the HW "
                                                    "config's)");
    }
    constexpr int kQuickIterations = 10;
    request.simd = simd;
    request.samples = samples;
    request.iterations = kQuickIterations;
    request.hw = parser.value(QStringLiteral("hw")).toStdString();
    if (request.importance == qs::pruning::ImportanceMetric::Lfh) {
        request.dataset.randomSamples = samples;
    }
    return std::optional<qs::pruning::PruningRequest>(request);
}

/// The --compress-weights request, or nullopt without the option; errors name the problem.
qs::Result<std::optional<qs::ui::WeightCompressionRequest>>
compressionRequest(const QCommandLineParser& parser) {
    const QString value = parser.value(QStringLiteral("compress-weights"));
    if (value.isEmpty()) {
        return std::optional<qs::ui::WeightCompressionRequest>();
    }
    qs::ui::WeightCompressionRequest request;
    const QStringList parts = value.split(QLatin1Char(':'));
    QS_ASSIGN_OR_RETURN(request.options.mode,
                        qs::compression::parseMode(parts.front().toStdString()));
    if (parts.size() > 1) {
        bool ok = false;
        request.options.ratio = parts[1].toDouble(&ok);
        if (!ok) {
            return qs::Error(qs::Errc::InvalidArgument, "--compress-weights ratio '" +
                                                            parts[1].toStdString() +
                                                            "' is not a number");
        }
    }
    QS_TRY(qs::compression::validateOptions(request.options));
    return std::optional<qs::ui::WeightCompressionRequest>(request);
}

/// The quantization settings the command line asks for; unknown rules keep the default.
qs::quantization::QuantizationSettings quantizationSettings(const QCommandLineParser& parser) {
    qs::quantization::QuantizationSettings settings;
    settings.hw = parser.value(QStringLiteral("hw")).toStdString();
    settings.preset = parser.value(QStringLiteral("preset")) == QLatin1String("mixed")
                          ? qs::quantization::QuantizationPreset::Mixed
                          : qs::quantization::QuantizationPreset::Performance;
    settings.rule =
        qs::quantization::ruleFromArgument(parser.value(QStringLiteral("rule")).toStdString())
            .value_or(settings.rule);
    return settings;
}

/// True when the command line only asks for help or the version: no window, no display needed.
bool asksForInfoOnly(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "-h" || arg == "--help" || arg == "--help-all" || arg == "-v" ||
            arg == "--version") {
            return true;
        }
    }
    return false;
}

int printInfo(int argc, char** argv) {
    const QCoreApplication app(argc, argv);
    setIdentity();
    QCommandLineParser parser;
    describeCommandLine(parser);
    parser.process(app);
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    if (asksForInfoOnly(argc, argv)) {
        return printInfo(argc, argv);
    }
    const QApplication app(argc, argv);
    setIdentity();
    QCommandLineParser parser;
    describeCommandLine(parser);
    parser.process(app);

    const auto compression = compressionRequest(parser);
    if (!compression.ok()) {
        std::fprintf(stderr, "quantscope: %s\n", compression.error().toString().c_str());
        return 2;
    }
    const auto pruning = pruningRequest(parser);
    if (!pruning.ok()) {
        std::fprintf(stderr, "quantscope: %s\n", pruning.error().toString().c_str());
        return 2;
    }
    qs::ui::Settings settings;
    qs::ui::MainWindow window(settings);
    if (pruning.value()) {
        window.feature<qs::ui::PruningController>().pruneOnOpen(*pruning.value());
    }
    window.session().setInitialQuantizationSettings(quantizationSettings(parser));
    window.setInitialBitwidths(parser.values(QStringLiteral("set")));
    if (compression.value()) {
        window.feature<qs::ui::WeightCompressionController>().setInitialRequest(
            *compression.value());
    }
    if (parser.isSet(QStringLiteral("calibrate-random"))) {
        bool ok = false;
        const qint64 samples = parser.value(QStringLiteral("calibrate-random")).toLongLong(&ok);
        if (!ok || samples <= 0) {
            qCritical("--calibrate-random needs a positive number of samples");
            return 2;
        }
        window.feature<qs::ui::CalibrationController>().calibrateOnOpen(samples);
        window.feature<qs::ui::SqnrOverlayFeature>().overlayAction()->setChecked(true);
    }
    if (parser.isSet(QStringLiteral("hawq-ratio"))) {
        bool ok = false;
        const double ratio = parser.value(QStringLiteral("hawq-ratio")).toDouble(&ok);
        if (!ok || ratio <= 0.0) {
            qCritical("--hawq-ratio needs a positive compression ratio");
            return 2;
        }
        window.feature<qs::ui::HawqController>().runOnOpen(ratio);
    }
    if (parser.isSet(QStringLiteral("hessian-random"))) {
        bool ok = false;
        const qint64 samples = parser.value(QStringLiteral("hessian-random")).toLongLong(&ok);
        if (!ok || samples <= 0) {
            qCritical("--hessian-random needs a positive number of samples");
            return 2;
        }
        constexpr int kQuickIterations = 10;
        window.feature<qs::ui::HessianController>().computeOnOpen(samples, kQuickIterations);
    }
    window.show();
    if (const QStringList scopes = parser.values(QStringLiteral("expand")); !scopes.isEmpty()) {
        QObject::connect(
            &window.graphPage(), &qs::ui::GraphPage::layoutFinished, &window.graphPage(),
            [&window, scopes](bool ok) {
                if (ok) {
                    window.graphPage().expandScopes(scopes);
                }
            },
            Qt::SingleShotConnection);
    }
    if (parser.isSet(QStringLiteral("compare"))) {
        QObject::connect(
            &window.graphPage(), &qs::ui::GraphPage::layoutFinished, &window.graphPage(),
            [&window, other = parser.value(QStringLiteral("compare"))](bool ok) {
                if (ok) {
                    window.feature<qs::ui::CompareFeature>().compareWith(other);
                }
            },
            Qt::SingleShotConnection);
    }
    const QStringList models = parser.positionalArguments();
    if (!models.isEmpty()) {
        window.openModel(models.front());
    } else {
        // Autosaves left by a crash wait until a start without a model to open asks about them.
        window.sessions().offerRecovery();
    }
    return QApplication::exec();
}
