#include "core/support/assert.h"

#include <cstdio>
#include <cstdlib>

namespace qs::detail {

void assertionFailed(const char* condition, const char* why, const char* file, int line) {
    std::fprintf(stderr, "%s:%d: assertion failed: %s (%s)\n", file, line, condition, why);
    std::abort();
}

} // namespace qs::detail
