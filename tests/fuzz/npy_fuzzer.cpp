// libFuzzer target for the .npy reader: any byte string must parse or fail with an Error, never
// crash, hang, leak or allocate what the file does not hold; an array that parses must serialise
// and parse back to the same bytes.

#include "core/runtime/npy.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    auto tensor = qs::runtime::parseNpy(bytes);
    if (!tensor.ok()) {
        return 0;
    }
    auto written = qs::runtime::serializeNpy(*tensor);
    if (!written.ok()) {
        __builtin_trap(); // every dtype the reader accepts has a writer
    }
    auto again = qs::runtime::parseNpy(*written);
    if (!again.ok() || again->shape() != tensor->shape() || again->dtype() != tensor->dtype() ||
        again->byteSize() != tensor->byteSize() ||
        (tensor->byteSize() > 0 &&
         std::memcmp(again->rawData(), tensor->rawData(), tensor->byteSize()) != 0)) {
        __builtin_trap();
    }
    return 0;
}
