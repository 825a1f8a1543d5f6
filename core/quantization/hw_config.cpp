// Parsing of NNCF's HW config JSON: alias expansion (cartesian product in key order, last key
// fastest), op lists concatenated in order and deduplicated, validation errors naming the field.

#include "core/quantization/hw_config.h"

#include "core/support/atomic_file.h"
#include "core/support/json_reader.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace qs::quantization {

namespace {
using Json = nlohmann::ordered_json;

constexpr size_t kMaxExpandedConfigs = 1024;

Error fieldError(std::string_view origin, const std::string& field, const std::string& what) {
    return Error(Errc::InvalidArgument, "HW config field '" + field + "': " + what)
        .context("HW config '" + std::string(origin) + "'");
}

std::vector<Json> asList(const Json& value) {
    if (value.is_array()) {
        return std::vector<Json>(value.begin(), value.end());
    }
    return {value};
}

Result<void> setBits(QuantizerConfig& config, const Json& item, std::string_view origin,
                     const std::string& field) {
    // The range is checked on the JSON integer itself: converting a huge one to int first
    // would wrap it into range.
    if (!item.is_number_integer() || item.get<int64_t>() < 1 || item.get<int64_t>() > 32) {
        return fieldError(origin, field, "expected an integer bit width 1..32, got " + item.dump());
    }
    config.numBits = item.get<int>();
    return {};
}

Result<void> setMode(QuantizerConfig& config, const Json& item, std::string_view origin,
                     const std::string& field) {
    if (item != "symmetric" && item != "asymmetric") {
        return fieldError(origin, field,
                          "expected \"symmetric\" or \"asymmetric\", got " + item.dump());
    }
    config.mode = item == "symmetric" ? QuantizationMode::Symmetric : QuantizationMode::Asymmetric;
    return {};
}

Result<void> setGranularity(QuantizerConfig& config, const Json& item, std::string_view origin,
                            const std::string& field) {
    if (item != "perchannel" && item != "pertensor") {
        return fieldError(origin, field,
                          "expected \"perchannel\" or \"pertensor\", got " + item.dump());
    }
    config.perChannel = item == "perchannel";
    return {};
}

Result<void> setNarrowRange(QuantizerConfig& config, const Json& item, std::string_view origin,
                            const std::string& field) {
    if (!item.is_boolean()) {
        return fieldError(origin, field, "expected a boolean");
    }
    config.narrowRange = item.get<bool>();
    return {};
}

Result<void> setSignedness(QuantizerConfig& config, const Json& item, std::string_view origin,
                           const std::string& field) {
    if (!item.is_boolean() && !item.is_null()) {
        return fieldError(origin, field, "expected a boolean");
    }
    config.signednessToForce =
        item.is_null() ? std::nullopt : std::optional<bool>(item.get<bool>());
    return {};
}

/// Pre-2025 files give levels instead of narrow_range: an odd low level (-127) is narrow.
Result<void> setLevel(QuantizerConfig& config, const Json& item, std::string_view origin,
                      const std::string& field) {
    if (!item.is_number_integer()) {
        return fieldError(origin, field, "expected an integer");
    }
    const bool isLow = field.ends_with("level_low");
    config.narrowRange = config.narrowRange || (isLow && item.get<int64_t>() % 2 != 0);
    return {};
}

Result<void> setSimdSize(QuantizerConfig& config, const Json& item, std::string_view origin,
                         const std::string& field) {
    if (!item.is_number_integer() || item.get<int64_t>() < 1 || item.get<int64_t>() > 4096) {
        return fieldError(origin, field,
                          "expected an integer SIMD size 1..4096, got " + item.dump());
    }
    config.simdSize = item.get<int>();
    return {};
}

/// Sets one field of `config` from one JSON value of an alias body.
Result<void> applyAliasField(QuantizerConfig& config, const std::string& key, const Json& item,
                             std::string_view origin, const std::string& keyField) {
    using Setter =
        Result<void> (*)(QuantizerConfig&, const Json&, std::string_view, const std::string&);
    static const std::map<std::string, Setter, std::less<>> kSetters = {
        {"bits", setBits},
        {"mode", setMode},
        {"granularity", setGranularity},
        {"narrow_range", setNarrowRange},
        {"signedness_to_force", setSignedness},
        {"level_low", setLevel},
        {"level_high", setLevel},
        {"simd_size", setSimdSize},
    };
    auto it = kSetters.find(key);
    if (it == kSetters.end()) {
        return fieldError(origin, keyField, "unknown field");
    }
    return it->second(config, item, origin, keyField);
}

/// Expands one alias body (or inline dict) into its configs: the cartesian product of its fields
/// in key order, the last key varying fastest.
Result<QuantizerConfigList> expandAlias(const Json& body, std::string_view origin,
                                        const std::string& field) {
    if (!body.is_object()) {
        return fieldError(origin, field, "expected an object");
    }
    QuantizerConfigList configs = {QuantizerConfig{}};
    for (const auto& [key, value] : body.items()) {
        const std::string keyField = field + '.' + key;
        // The product of the lists grows with every field; a hostile file must not expand into
        // millions of configs (the shipped ones have at most a few dozen).
        if (configs.size() * asList(value).size() > kMaxExpandedConfigs) {
            return fieldError(origin, keyField,
                              "expands into more than " + std::to_string(kMaxExpandedConfigs) +
                                  " quantizer configs");
        }
        QuantizerConfigList next;
        for (const QuantizerConfig& base : configs) {
            for (const Json& item : asList(value)) {
                QuantizerConfig config = base;
                QS_TRY(applyAliasField(config, key, item, origin, keyField));
                next.push_back(config);
            }
        }
        configs = std::move(next);
    }
    return configs;
}

Result<QuantizerConfigList> expandOpList(const Json& value, const Json& aliases,
                                         std::string_view origin, const std::string& field) {
    QuantizerConfigList out;
    for (const Json& item : asList(value)) {
        QuantizerConfigList expanded;
        if (item.is_string()) {
            const std::string name = item.get<std::string>();
            if (!aliases.contains(name)) {
                return fieldError(origin, field, "unknown alias '" + name + "'");
            }
            QS_ASSIGN_OR_RETURN(
                expanded, expandAlias(aliases.at(name), origin, "config.quantization." + name));
        } else {
            QS_ASSIGN_OR_RETURN(expanded, expandAlias(item, origin, field));
        }
        for (const QuantizerConfig& config : expanded) {
            if (std::find(out.begin(), out.end(), config) == out.end()) {
                out.push_back(config);
            }
        }
    }
    return out;
}

Result<void> parseQuantizationLists(const Json& lists, const Json& aliases, std::string_view origin,
                                    const std::string& field, HWConfigOp& entry) {
    for (const auto& [kind, list] : lists.items()) {
        std::string listField = field;
        listField += '.';
        listField += kind;
        if (kind != "activations" && kind != "weights") {
            return fieldError(origin, listField, "unknown field");
        }
        QS_ASSIGN_OR_RETURN(QuantizerConfigList configs,
                            expandOpList(list, aliases, origin, listField));
        const bool any = !configs.empty();
        if (kind == "activations") {
            entry.activations = std::move(configs);
            entry.hasActivations = any;
        } else {
            entry.weights = std::move(configs);
            entry.hasWeights = any;
        }
    }
    return {};
}

void parseAttributes(const Json& attributes, HWConfigOp& entry) {
    for (const auto& [attr, attrValue] : attributes.items()) {
        entry.attributes[attr] =
            attrValue.is_string() ? attrValue.get<std::string>() : attrValue.dump();
    }
}

Result<HWConfigOp> parseOperation(const Json& op, const Json& aliases, std::string_view origin,
                                  const std::string& field) {
    if (!op.is_object() || !op.contains("type") || !op["type"].is_string()) {
        return fieldError(origin, field + ".type", "expected a string op type");
    }
    HWConfigOp entry;
    entry.type = op["type"].get<std::string>();
    for (const auto& [key, value] : op.items()) {
        std::string keyField = field;
        keyField += '.';
        keyField += key;
        if (key == "type") {
            continue;
        }
        if (key != "attributes" && key != "quantization") {
            return fieldError(origin, keyField, "unknown field");
        }
        if (!value.is_object()) {
            return fieldError(origin, keyField, "expected an object");
        }
        if (key == "attributes") {
            parseAttributes(value, entry);
        } else {
            QS_TRY(parseQuantizationLists(value, aliases, origin, keyField, entry));
        }
    }
    return entry;
}

std::string lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    return out;
}
} // namespace

bool HWConfigOp::unifiedScales() const {
    auto it = attributes.find("scales");
    return it != attributes.end() && it->second == "unified";
}

Result<HWConfig> HWConfig::parse(std::string_view jsonText, std::string_view origin) {
    // The strict parse refuses repeated keys and runaway nesting; the ordered one keeps the key
    // order alias expansion depends on.
    QS_TRY(strict::parseStrict(jsonText).context("HW config '" + std::string(origin) + "'"));
    Json root = Json::parse(jsonText, nullptr, false);
    if (root.is_discarded() || !root.is_object()) {
        return Error(Errc::InvalidArgument, "not a JSON object")
            .context("HW config '" + std::string(origin) + "'");
    }
    for (const auto& [key, value] : root.items()) {
        if (key != "target_device" && key != "config" && key != "operations") {
            return fieldError(origin, key, "unknown field");
        }
    }
    HWConfig config;
    if (root.contains("target_device")) {
        if (!root["target_device"].is_string()) {
            return fieldError(origin, "target_device", "expected a string");
        }
        config.m_targetDevice = root["target_device"].get<std::string>();
    }
    Json aliases = Json::object();
    if (root.contains("config")) {
        const Json& cfg = root["config"];
        if (!cfg.is_object()) {
            return fieldError(origin, "config", "expected an object");
        }
        if (cfg.contains("quantization")) {
            aliases = cfg["quantization"];
            if (!aliases.is_object()) {
                return fieldError(origin, "config.quantization", "expected an object");
            }
        }
    }
    if (!root.contains("operations") || !root["operations"].is_array()) {
        return fieldError(origin, "operations", "expected a list of operations");
    }
    const Json& ops = root["operations"];
    for (size_t i = 0; i < ops.size(); ++i) {
        QS_ASSIGN_OR_RETURN(
            HWConfigOp entry,
            parseOperation(ops[i], aliases, origin, "operations[" + std::to_string(i) + "]"));
        config.m_operations.push_back(std::move(entry));
    }
    return config;
}

Result<HWConfig> HWConfig::load(const std::filesystem::path& path) {
    QS_ASSIGN_OR_RETURN(std::string text, readFile(path));
    return parse(text, path.string());
}

Result<HWConfig> HWConfig::builtin(std::string_view device) {
    std::string name = lower(device);
    if (name == "any" || name == "cpu_spr") {
        name = "cpu";
    }
    const std::string_view text = builtinHWConfigJson(name);
    if (text.empty()) {
        return Error(Errc::InvalidArgument, "unknown HW config '" + std::string(device) +
                                                "' (expected cpu, gpu, npu or a .json file)");
    }
    return parse(text, name);
}

Result<HWConfig> HWConfig::fromArgument(std::string_view deviceOrPath) {
    if (!builtinHWConfigJson(lower(deviceOrPath)).empty() || lower(deviceOrPath) == "any" ||
        lower(deviceOrPath) == "cpu_spr") {
        return builtin(deviceOrPath);
    }
    const std::filesystem::path path{std::string(deviceOrPath)};
    std::error_code ec;
    // A bare word that is no file ("tpu") was meant as a device name: say which ones there are.
    if (!path.has_parent_path() && path.extension() != ".json" &&
        !std::filesystem::exists(path, ec)) {
        return builtin(deviceOrPath);
    }
    return load(path);
}

const HWConfigOp* HWConfig::findOp(std::string_view hwName, std::string_view mode) const {
    const HWConfigOp* fallback = nullptr;
    for (const HWConfigOp& op : m_operations) {
        if (op.type != hwName) {
            continue;
        }
        auto it = op.attributes.find("mode");
        if (it == op.attributes.end()) {
            if (fallback == nullptr) {
                fallback = &op;
            }
            continue;
        }
        if (it->second == mode) {
            return &op;
        }
    }
    return fallback;
}

const HWConfigOp* HWConfig::effectiveOp(std::string_view hwName) const {
    const HWConfigOp* last = nullptr;
    for (const HWConfigOp& op : m_operations) {
        if (op.type == hwName) {
            last = &op;
        }
    }
    return last;
}

} // namespace qs::quantization
