// qs_compression_dump: quantizes one raw float32 tensor with the core quantizer and writes its
// codes (one byte each), scales (float32) and zero points (one byte each) as raw files, for the
// numpy reference comparison (numpy_reference.py).
//   qs_compression_dump IN.f32 OUT_PREFIX MODE GROUP_SIZE CHANNEL_AXIS DIM...

#include "core/compression/integer_quantizer.h"
#include "core/support/atomic_file.h"

#include <cstring>
#include <iostream>
#include <string>
#include <vector>

namespace {
int fail(const std::string& message) {
    std::cerr << "qs_compression_dump: " << message << '\n';
    return 1;
}
} // namespace

int main(int argc, char** argv) {
    using namespace qs::compression;
    if (argc < 7) {
        return fail("usage: IN.f32 OUT_PREFIX MODE GROUP_SIZE CHANNEL_AXIS DIM...");
    }
    const std::string prefix = argv[2];
    auto mode = parseMode(argv[3]);
    if (!mode.ok()) {
        return fail(mode.error().toString());
    }
    const int64_t groupSize = std::stoll(argv[4]);
    const int64_t channelAxis = std::stoll(argv[5]);
    std::vector<int64_t> dims;
    for (int i = 6; i < argc; ++i) {
        dims.push_back(std::stoll(argv[i]));
    }
    auto bytes = qs::readFile(argv[1]);
    if (!bytes.ok()) {
        return fail(bytes.error().toString());
    }
    std::vector<float> weight(bytes->size() / sizeof(float));
    std::memcpy(weight.data(), bytes->data(), weight.size() * sizeof(float));
    auto layout = makeWeightLayout(dims, channelAxis);
    if (!layout.ok()) {
        return fail(layout.error().toString());
    }
    auto quantized = quantizeWeight(weight, *layout, *mode, groupSize);
    if (!quantized.ok()) {
        return fail(quantized.error().toString());
    }
    auto asBytes = [](const auto& values) {
        return std::string_view(reinterpret_cast<const char*>(values.data()),
                                values.size() * sizeof(values[0]));
    };
    for (const auto& [suffix, contents] : {std::pair{".codes", asBytes(quantized->codes)},
                                           std::pair{".scales", asBytes(quantized->scales)},
                                           std::pair{".zps", asBytes(quantized->zeroPoints)}}) {
        auto written = qs::writeFileAtomically(prefix + suffix, contents);
        if (!written.ok()) {
            return fail(written.error().toString());
        }
    }
    return 0;
}
