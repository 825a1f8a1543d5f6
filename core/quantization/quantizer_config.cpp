// QuantizerConfig predicates, string form and constraints.

#include "core/quantization/quantizer_config.h"

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

QuantizerConfig quantizerConfigFromJson(const nlohmann::json& json) {
    QuantizerConfig config;
    config.numBits = json.at("num_bits").get<int>();
    const auto mode = json.at("mode").get<std::string>();
    if (mode != modeName(QuantizationMode::Symmetric) &&
        mode != modeName(QuantizationMode::Asymmetric)) {
        throw std::invalid_argument("unknown quantization mode '" + mode + "'");
    }
    config.mode = mode == modeName(QuantizationMode::Asymmetric) ? QuantizationMode::Asymmetric
                                                                 : QuantizationMode::Symmetric;
    const nlohmann::json& sign = json.at("signedness_to_force");
    if (!sign.is_null()) {
        config.signednessToForce = sign.get<bool>();
    }
    config.perChannel = json.at("per_channel").get<bool>();
    config.narrowRange = json.at("narrow_range").get<bool>();
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
