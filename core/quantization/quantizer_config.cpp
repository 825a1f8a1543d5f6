// QuantizerConfig predicates, string form and constraints.

#include "core/quantization/quantizer_config.h"

#include "core/support/json_reader.h"

#include <stdexcept>
#include <string>

namespace qs::quantization {

bool QuantizerConfig::isValidRequantizationFor(const QuantizerConfig& upstream) const {
    const bool failed =
        numBits > upstream.numBits ||
        (mode == QuantizationMode::Asymmetric && upstream.mode == QuantizationMode::Symmetric) ||
        (!signednessToForce.has_value() && upstream.signednessToForce.has_value()) ||
        (signednessToForce == true && upstream.signednessToForce == false) ||
        narrowRange != upstream.narrowRange;
    return !failed;
}

bool QuantizerConfig::isRedundantWithDownstream(const QuantizerConfig& downstream) const {
    if (numBits != downstream.numBits || narrowRange != downstream.narrowRange) {
        return false;
    }
    const bool modeOk =
        mode == downstream.mode ||
        (downstream.mode == QuantizationMode::Asymmetric && mode == QuantizationMode::Symmetric);
    const bool granularityOk =
        perChannel == downstream.perChannel || (downstream.perChannel && !perChannel);
    return modeOk && granularityOk;
}

bool QuantizerConfig::isCompatibleWith(const QuantizerConfig& other) const {
    const bool signednessOk = !signednessToForce.has_value() ||
                              !other.signednessToForce.has_value() ||
                              signednessToForce == other.signednessToForce;
    return numBits == other.numBits && mode == other.mode && perChannel == other.perChannel &&
           narrowRange == other.narrowRange && signednessOk;
}

std::string QuantizerConfig::toString() const {
    std::string out = "B:" + std::to_string(numBits);
    out += mode == QuantizationMode::Symmetric ? " M:S" : " M:A";
    out += " SGN:";
    out += !signednessToForce.has_value() ? "ANY" : (*signednessToForce ? "S" : "U");
    out += perChannel ? " PC:Y" : " PC:N";
    out += narrowRange ? " NR:Y" : " NR:N";
    return out;
}

bool tieBreakLess(const QuantizerConfig& a, const QuantizerConfig& b) {
    if (a.numBits != b.numBits) {
        return a.numBits > b.numBits;
    }
    if (a.perChannel != b.perChannel) {
        return !a.perChannel;
    }
    if (a.mode != b.mode) {
        return a.mode == QuantizationMode::Symmetric;
    }
    return false;
}

std::string_view modeName(QuantizationMode mode) {
    return mode == QuantizationMode::Symmetric ? "symmetric" : "asymmetric";
}

nlohmann::json toJson(const QuantizerConfig& config) {
    nlohmann::json out;
    out["num_bits"] = config.numBits;
    out["mode"] = modeName(config.mode);
    out["signedness_to_force"] =
        config.signednessToForce ? nlohmann::json(*config.signednessToForce) : nlohmann::json();
    out["per_channel"] = config.perChannel;
    out["narrow_range"] = config.narrowRange;
    return out;
}

Result<QuantizerConfig> quantizerConfigFromJson(const nlohmann::json& json, std::string_view path) {
    QS_TRY(strict::onlyKeys(
        json, path, {"num_bits", "mode", "signedness_to_force", "per_channel", "narrow_range"}));
    QuantizerConfig config;
    const std::string bitsPath = strict::member(path, "num_bits");
    QS_ASSIGN_OR_RETURN(const nlohmann::json* bits, strict::require(json, path, "num_bits"));
    QS_ASSIGN_OR_RETURN(config.numBits, strict::smallInteger(*bits, bitsPath, kMinQuantizerBits,
                                                             kMaxQuantizerBits));
    QS_ASSIGN_OR_RETURN(const nlohmann::json* modeJson, strict::require(json, path, "mode"));
    QS_ASSIGN_OR_RETURN(const std::string mode,
                        strict::string(*modeJson, strict::member(path, "mode")));
    if (mode != modeName(QuantizationMode::Symmetric) &&
        mode != modeName(QuantizationMode::Asymmetric)) {
        return strict::fieldError(strict::member(path, "mode"),
                                  "unknown quantization mode '" + mode +
                                      "' (expected symmetric or asymmetric)");
    }
    config.mode = mode == modeName(QuantizationMode::Asymmetric) ? QuantizationMode::Asymmetric
                                                                 : QuantizationMode::Symmetric;
    QS_ASSIGN_OR_RETURN(const nlohmann::json* sign,
                        strict::require(json, path, "signedness_to_force"));
    if (!sign->is_null()) {
        QS_ASSIGN_OR_RETURN(config.signednessToForce,
                            strict::boolean(*sign, strict::member(path, "signedness_to_force")));
    }
    QS_ASSIGN_OR_RETURN(const nlohmann::json* perChannel,
                        strict::require(json, path, "per_channel"));
    QS_ASSIGN_OR_RETURN(config.perChannel,
                        strict::boolean(*perChannel, strict::member(path, "per_channel")));
    QS_ASSIGN_OR_RETURN(const nlohmann::json* narrow, strict::require(json, path, "narrow_range"));
    QS_ASSIGN_OR_RETURN(config.narrowRange,
                        strict::boolean(*narrow, strict::member(path, "narrow_range")));
    return config;
}

bool QuantizerConstraints::accepts(const QuantizerConfig& config) const {
    return (!numBits || *numBits == config.numBits) && (!mode || *mode == config.mode) &&
           (!signednessToForce || signednessToForce == config.signednessToForce) &&
           (!perChannel || *perChannel == config.perChannel) &&
           (!narrowRange || *narrowRange == config.narrowRange);
}

QuantizerConfigList QuantizerConstraints::filter(const QuantizerConfigList& configs) const {
    QuantizerConfigList out;
    for (const QuantizerConfig& config : configs) {
        if (accepts(config)) {
            out.push_back(config);
        }
    }
    return out;
}

QuantizerConfig QuantizerConstraints::applyTo(QuantizerConfig config) const {
    if (numBits) {
        config.numBits = *numBits;
    }
    if (mode) {
        config.mode = *mode;
    }
    if (signednessToForce) {
        config.signednessToForce = signednessToForce;
    }
    if (perChannel) {
        config.perChannel = *perChannel;
    }
    if (narrowRange) {
        config.narrowRange = *narrowRange;
    }
    return config;
}

} // namespace qs::quantization
