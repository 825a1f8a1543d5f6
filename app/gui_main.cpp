// quantscope: the desktop workbench. Sets up the application identity, parses the command line
// (--help, --version, an optional MODEL to open) and shows the main window. --help and --version
// answer without a display.

#include "ui/main_window.h"
#include "ui/session.h"
#include "ui/settings.h"

#include <QApplication>
#include <QCommandLineParser>

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

    qs::ui::Settings settings;
    qs::ui::MainWindow window(settings);
    window.session().setInitialQuantizationSettings(quantizationSettings(parser));
    window.setInitialBitwidths(parser.values(QStringLiteral("set")));
    window.show();
    const QStringList models = parser.positionalArguments();
    if (!models.isEmpty()) {
        window.openModel(models.front());
    } else {
        // Autosaves left by a crash wait until a start without a model to open asks about them.
        window.offerRecovery();
    }
    return QApplication::exec();
}
