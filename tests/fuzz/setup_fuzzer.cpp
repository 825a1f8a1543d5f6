// libFuzzer target for the setup JSON reader against the demo model: any byte string must read
// or fail with an Error, never crash, hang or leak; a setup that reads must write the same JSON
// back and read again to the same setup.

#include "core/onnx/model_io.h"
#include "core/quantization/quantization_state.h"
#include "core/quantization/setup_reader.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace {
const qs::graph::Graph& demoModel() {
    static const qs::graph::Graph model = [] {
        auto imported = qs::onnx::importModel(QS_FUZZ_MODEL);
        if (!imported.ok()) {
            __builtin_trap(); // the committed model must import
        }
        return std::move(imported).value();
    }();
    return model;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace qs::quantization;
    const qs::graph::Graph& model = demoModel();
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto setup = parseSetup(text, model);
    if (!setup.ok()) {
        return 0;
    }
    const nlohmann::json written = setup->toJson();
    auto again = parseSetup(written.dump(), model);
    if (!again.ok() || again->toJson() != written) {
        __builtin_trap(); // what the reader accepts, the writer must round-trip
    }
    (void)quantizerMarks(*setup, nullptr);
    (void)bitwidthDistribution(*setup, model);
    return 0;
}
