// libFuzzer target for the HW config reader: any byte string must parse or fail with an Error,
// never crash, hang or leak (alias expansion is bounded); a config that parses is used to propose
// quantizers on a tiny residual model, which must succeed or fail with an Error.

#include "core/onnx/model_io.h"
#include "core/quantization/hw_config.h"
#include "core/quantization/quantizer_propagation_solver.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace {
const qs::graph::Graph& tinyModel() {
    static const qs::graph::Graph model = [] {
        auto imported = qs::onnx::importModel(QS_FUZZ_MODEL);
        if (!imported.ok()) {
            __builtin_trap();
        }
        return std::move(imported).value();
    }();
    return model;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace qs::quantization;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto config = HWConfig::parse(text, "fuzz.json");
    if (!config.ok()) {
        return 0;
    }
    const qs::graph::Graph& model = tinyModel();
    auto proposal = proposeQuantizerSetup(
        model, *config, presetOptions(QuantizationPreset::Performance, model.opsetVersion()));
    (void)proposal;
    return 0;
}
