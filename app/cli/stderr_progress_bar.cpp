#include "app/cli/command.h"

#include <algorithm>
#include <iostream>
#include <string>
#include <unistd.h>

namespace qs::cli {

StderrProgressBar::StderrProgressBar()
    : m_terminal(isatty(STDERR_FILENO) == 1) {}

void StderrProgressBar::report(double fraction, std::string_view what) {
    fraction = std::clamp(fraction, 0.0, 1.0);
    if (!m_terminal) {
        const int tenth = static_cast<int>(fraction * 10.0);
        if (tenth != m_lastTenth) {
            m_lastTenth = tenth;
            std::cerr << "progress " << static_cast<int>(fraction * 100.0) << "% " << what << '\n'
                      << std::flush;
        }
        return;
    }
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
