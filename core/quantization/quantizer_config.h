// QuantizerConfig: how one quantizer quantizes (bits, mode, signedness, granularity, narrow range),
// with the predicates NNCF's propagation and finalisation use to decide whether two quantizers can
// share a place, whether one makes another redundant, and whether a requantization is valid
// (reference/nncf-quantization.md §1.5, §3).
#pragma once

#include "core/support/result.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qs::quantization {

enum class QuantizationMode { Symmetric, Asymmetric };

/// One quantizer configuration. Defaults are NNCF's DEFAULT_QCONFIG: 8 bits, symmetric,
/// signedness from statistics, per-tensor, full range.
struct QuantizerConfig {
    int numBits = 8;
    QuantizationMode mode = QuantizationMode::Symmetric;
    std::optional<bool> signednessToForce; ///< nullopt: decided from statistics
    bool perChannel = false;
    bool narrowRange = false;
    /// MCT's simd_size of the op config ("simd_size" in a HW config body); 0 = the default of
    /// the bit width (core/pruning/simd_size.h). Only pruning reads it.
    int simdSize = 0;

    bool operator==(const QuantizerConfig&) const = default;

    /// True when a quantizer with this config may sit below `upstream` as a requantizer.
    bool isValidRequantizationFor(const QuantizerConfig& upstream) const;

    /// True when a downstream quantizer with `downstream` adds nothing after this one.
    bool isRedundantWithDownstream(const QuantizerConfig& downstream) const;

    /// Equal up to an unforced signedness on either side.
    bool isCompatibleWith(const QuantizerConfig& other) const;

    /// NNCF's string form, e.g. "B:8 M:S SGN:ANY PC:N NR:N".
    std::string toString() const;
};

using QuantizerConfigList = std::vector<QuantizerConfig>;

/// NNCF's tie-break between configs of equal merge priority: more bits first, then per-tensor,
/// then symmetric.
bool tieBreakLess(const QuantizerConfig& a, const QuantizerConfig& b);

std::string_view modeName(QuantizationMode mode);

/// The qconfig object of NNCF's setup state: {num_bits, mode, signedness_to_force, per_channel,
/// narrow_range}.
nlohmann::json toJson(const QuantizerConfig& config);

/// The bit widths quantizer parameters can be computed for.
inline constexpr int kMinQuantizerBits = 2;
inline constexpr int kMaxQuantizerBits = 16;

/// Reads what toJson writes, strictly: exactly its five fields, each of its JSON type, num_bits in
/// kMinQuantizerBits..kMaxQuantizerBits; an error names `path` and the field.
Result<QuantizerConfig> quantizerConfigFromJson(const nlohmann::json& json, std::string_view path);

/// Constraints that filter a config list: each set field must match (NNCF's
/// QuantizationConstraints built from the preset and user parameters).
struct QuantizerConstraints {
    std::optional<int> numBits;
    std::optional<QuantizationMode> mode;
    std::optional<bool> signednessToForce;
    std::optional<bool> perChannel;
    std::optional<bool> narrowRange;

    bool accepts(const QuantizerConfig& config) const;
    QuantizerConfigList filter(const QuantizerConfigList& configs) const;
    /// The default config with the constrained fields applied.
    QuantizerConfig applyTo(QuantizerConfig config) const;
};

} // namespace qs::quantization
