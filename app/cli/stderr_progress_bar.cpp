#include "app/cli/command.h"

#include <iostream>
#include <string>

namespace qs::cli {

void StderrProgressBar::report(double fraction, std::string_view what) {
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(fraction * kWidth);
    std::cerr << "\r[" << std::string(static_cast<size_t>(filled), '#')
              << std::string(static_cast<size_t>(kWidth - filled), ' ') << "] " << what << "   "
              << std::flush;
    if (fraction >= 1.0) {
        std::cerr << '\n';
    }
}

} // namespace qs::cli
