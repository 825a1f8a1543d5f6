// libFuzzer target for the `.qscope` session reader (format versions 1 and 2): any byte string
// must read or fail with an Error, never crash, hang or leak; a session that reads must write and
// read back equal. Feature sections are kept as JSON here and read by their features' readers.

#include "core/session/session_file.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace qs::session;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto session = parseSessionText(text);
    if (!session.ok()) {
        return 0;
    }
    auto again = parseSessionText(toJson(*session).dump());
    if (!again.ok() || !(*again == *session)) {
        __builtin_trap(); // what the reader accepts, the writer must round-trip
    }
    return 0;
}
