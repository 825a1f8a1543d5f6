// Compiled without -march (part of qs_core, not of the kernel library), so it runs anywhere.

#include "core/runtime/processor_support.h"

namespace qs::runtime {

Result<void> checkProcessorSupport() {
#if defined(QS_RUNTIME_NEEDS_X86_64_V3)
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
        return Error(
            Errc::Unsupported,
            "this build's kernels need a processor with AVX2 and FMA (built with "
            "QS_RUNTIME_ARCH=x86-64-v3); rebuild with -DQS_RUNTIME_ARCH= for this machine");
    }
#endif
    return success();
}

} // namespace qs::runtime
