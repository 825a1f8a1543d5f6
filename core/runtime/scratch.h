// Per-thread scratch buffers that kernels reuse from call to call.
#pragma once

#include <cstddef>
#include <memory>

namespace qs::runtime {

/// Floats a kernel reuses across calls (held thread_local): the buffer grows to the largest
/// request, zeroed once when it grows, and is never cleared again. A std::vector resized per call
/// zero-fills what it adds back after a smaller request, so a buffer shared by layers of different
/// sizes was cleared again on every run wherever a larger layer followed a smaller one:
/// SqueezeNet 1.1's first Winograd layer (batch 1, two threads) spent 0.1 of its 0.35 ms in that
/// memset. Zeroed rather than left as the heap had it: GEMMs read the padding columns of a
/// partial strip (and drop what they compute there), and stale heap bytes such as pointers are
/// denormal floats, which multiply-adds take slow paths for.
class ScratchFloats {
public:
    /// At least `count` floats, holding what an earlier use left there (zeros where none wrote).
    float* get(size_t count) {
        if (count > m_capacity) {
            m_data.reset(); // the old contents are not kept: free them before allocating
            m_data = std::make_unique<float[]>(count);
            m_capacity = count;
        }
        return m_data.get();
    }

private:
    std::unique_ptr<float[]> m_data;
    size_t m_capacity = 0;
};

} // namespace qs::runtime
