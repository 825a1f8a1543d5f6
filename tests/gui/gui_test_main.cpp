// Entry point of the GUI tests: a QApplication on the offscreen platform (unless the environment
// picks another), then GoogleTest.

#include <QApplication>
#include <gtest/gtest.h>

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    const QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("QuantscopeTests"));
    QApplication::setApplicationName(QStringLiteral("qs_gui_tests"));
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
