// quantscope: the desktop workbench. Sets up the application identity, parses the command line
// (--help, --version, an optional MODEL to open) and shows the main window. --help and --version
// answer without a display.

#include "ui/main_window.h"
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
    window.show();
    const QStringList models = parser.positionalArguments();
    if (!models.isEmpty()) {
        window.openModel(models.front());
    }
    return QApplication::exec();
}
