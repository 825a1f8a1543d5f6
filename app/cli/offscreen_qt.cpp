#include "app/cli/offscreen_qt.h"

#include <QHashFunctions>

namespace qs::cli {

std::unique_ptr<QApplication> startOffscreenQt() {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QHashSeed::setDeterministicGlobalSeed();
    static int argc = 1;
    static char name[] = "quantscope-cli";
    static char* argv[] = {name, nullptr};
    return std::make_unique<QApplication>(argc, argv);
}

} // namespace qs::cli
