// Whether this processor can run the kernels as they were compiled. The runtime kernels are built
// for x86-64-v3 (AVX2 + FMA) by default; on an older processor they would die of SIGILL, so the
// executor and the CLI ask first and report a clear error instead.
#pragma once

#include "core/support/result.h"

namespace qs::runtime {

/// An Unsupported error naming the missing instruction sets, or success.
Result<void> checkProcessorSupport();

} // namespace qs::runtime
