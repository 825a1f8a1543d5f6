// Assertions for bugs (never for bad input, which gets an Error). QS_ASSERT is on in debug and
// CI builds; QS_CHECK stays on in release for cheap checks at module edges.
#pragma once

namespace qs::detail {
[[noreturn]] void assertionFailed(const char* condition, const char* why, const char* file,
                                  int line);
} // namespace qs::detail

#define QS_CHECK(cond, why)                                                                        \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            ::qs::detail::assertionFailed(#cond, why, __FILE__, __LINE__);                         \
        }                                                                                          \
    } while (false)

#ifdef NDEBUG
#define QS_ASSERT(cond, why)                                                                       \
    do {                                                                                           \
        (void)sizeof(cond);                                                                        \
    } while (false)
#else
#define QS_ASSERT(cond, why) QS_CHECK(cond, why)
#endif
