// libFuzzer target for the ONNX importer: any byte string must import or fail with an Error,
// never crash, hang or leak; whatever imports must export and verify.

#include "core/onnx/model_io.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    auto graph = qs::onnx::importModelFromBytes(bytes, {});
    if (!graph.ok()) {
        return 0;
    }
    if (!qs::graph::verify(*graph).ok()) {
        __builtin_trap(); // import promised a consistent graph
    }
    auto serialized = qs::onnx::serializeModel(*graph);
    if (serialized.ok()) {
        auto again = qs::onnx::importModelFromBytes(*serialized, {});
        (void)again;
    }
    return 0;
}
