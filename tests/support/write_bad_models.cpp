// Writes the bad-input models of bad_models.h into a folder and lists "file<TAB>phrase" lines, for
// the CLI test and the fuzz corpus.

#include "tests/support/bad_models.h"

#include <cstdio>

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    for (const auto& bad : qs::testing::writeBadModels(argv[1])) {
        std::printf("%s\t%s\n", bad.name.c_str(), bad.expectedMessagePart.c_str());
    }
    return 0;
}
