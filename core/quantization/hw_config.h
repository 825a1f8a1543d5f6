// HWConfig: what a target device can run quantized, in NNCF's HW config JSON schema
// (reference/nncf-quantization.md §2). Aliases expand to ordered config lists (first = default),
// ops carry activation/weight lists and attributes (`scales: unified`, `mode`). The CPU, GPU and
// NPU configs are embedded in the binary; a user's file is validated with errors naming the field.
#pragma once

#include "core/quantization/quantizer_config.h"
#include "core/support/result.h"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qs::quantization {

/// One entry of the "operations" list.
struct HWConfigOp {
    std::string type;                              ///< HW op name, e.g. "Convolution"
    std::map<std::string, std::string> attributes; ///< e.g. scales=unified, mode=linear
    bool hasActivations = false;                   ///< "activations" given and non-empty
    QuantizerConfigList activations;
    bool hasWeights = false;
    QuantizerConfigList weights;

    bool unifiedScales() const;
};

class HWConfig {
public:
    /// Parses NNCF's JSON schema; `origin` names the source in errors.
    static Result<HWConfig> parse(std::string_view jsonText, std::string_view origin);

    static Result<HWConfig> load(const std::filesystem::path& path);

    /// "cpu", "gpu", "npu" (case-insensitive); ANY and CPU_SPR map to CPU as in NNCF.
    static Result<HWConfig> builtin(std::string_view device);

    /// `--hw` argument: a built-in device name or a JSON file.
    static Result<HWConfig> fromArgument(std::string_view deviceOrPath);

    const std::string& targetDevice() const { return m_targetDevice; }

    const std::vector<HWConfigOp>& operations() const { return m_operations; }

    /// The op entry for `hwName`; for ops listed several times (Interpolate), the one whose
    /// `mode` attribute equals `mode` (or the first without a mode).
    const HWConfigOp* findOp(std::string_view hwName, std::string_view mode = {}) const;

    /// The entry NNCF applies to every op of `hwName`: the last one listed. NNCF maps each HW op
    /// name to one config list, so a later entry overwrites an earlier one whatever their
    /// attributes: NPU's and GPU's second Interpolate (mode nearest, no configs) makes every
    /// Resize a wildcard.
    const HWConfigOp* effectiveOp(std::string_view hwName) const;

private:
    std::string m_targetDevice;
    std::vector<HWConfigOp> m_operations;
};

/// The embedded JSON text of a built-in config ("cpu", "gpu", "npu"); empty if unknown.
std::string_view builtinHWConfigJson(std::string_view device);

} // namespace qs::quantization
