// Random inputs for the kernel tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace qs::runtime::test {

/// `size` floats drawn uniformly from [-1, 1).
inline std::vector<float> randomVector(std::mt19937& rng, int64_t size) {
    std::uniform_real_distribution<float> uniform(-1.0F, 1.0F);
    std::vector<float> v(static_cast<size_t>(size));
    for (float& x : v) {
        x = uniform(rng);
    }
    return v;
}

} // namespace qs::runtime::test
