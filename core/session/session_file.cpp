// `.qscope` sessions: JSON in and out, the model hash, and the saved choices checked against a
// freshly computed proposal.

#include "core/session/session_file.h"

#include "core/support/atomic_file.h"
#include "core/support/json_reader.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string_view>
#include <vector>

namespace qs::session {

using quantization::QuantizationPreset;
using quantization::QuantizerConfigList;
using quantization::QuantizerPropagationRule;

namespace {
constexpr std::string_view kFormatKey = "quantscope_session";
constexpr std::uint64_t kFnvOffset = 14695981039346656037ULL;
constexpr std::uint64_t kFnvPrime = 1099511628211ULL;
constexpr size_t kHashChunk = size_t{1} << 20;

constexpr std::array<std::pair<std::string_view, QuantizationPreset>, 2> kPresets = {{
    {"performance", QuantizationPreset::Performance},
    {"mixed", QuantizationPreset::Mixed},
}};

std::string_view presetArgument(QuantizationPreset preset) {
    for (const auto& [name, value] : kPresets) {
        if (value == preset) {
            return name;
        }
    }
    return "performance";
}

constexpr int kMaxId = std::numeric_limits<int32_t>::max();

Result<QuantizationPreset> presetFromJson(const nlohmann::json& json, const std::string& path) {
    QS_ASSIGN_OR_RETURN(const std::string text, strict::string(json, path));
    for (const auto& [name, value] : kPresets) {
        if (name == text) {
            return value;
        }
    }
    return strict::fieldError(path,
                              "unknown preset '" + text + "' (expected performance or mixed)");
}

nlohmann::json pointToJson(const InsertionPoint& point) {
    nlohmann::json out;
    out["qip_class"] = point.qipClass();
    out["target_node_name"] = point.targetNodeName;
    out["input_port_id"] =
        point.inputPortId ? nlohmann::json(*point.inputPortId) : nlohmann::json();
    return out;
}

Result<InsertionPoint> pointFromJson(const nlohmann::json& json, const std::string& path) {
    QS_TRY(strict::onlyKeys(json, path, {"qip_class", "target_node_name", "input_port_id"}));
    InsertionPoint point;
    QS_ASSIGN_OR_RETURN(const nlohmann::json* qipClass, strict::require(json, path, "qip_class"));
    QS_ASSIGN_OR_RETURN(const std::string className,
                        strict::string(*qipClass, strict::member(path, "qip_class")));
    point.isWeight = className == "WeightQuantizationInsertionPoint";
    if (!point.isWeight && className != "ActivationQuantizationInsertionPoint") {
        return strict::fieldError(strict::member(path, "qip_class"),
                                  "unknown qip_class '" + className + "'");
    }
    QS_ASSIGN_OR_RETURN(const nlohmann::json* name,
                        strict::require(json, path, "target_node_name"));
    QS_ASSIGN_OR_RETURN(point.targetNodeName,
                        strict::string(*name, strict::member(path, "target_node_name")));
    QS_ASSIGN_OR_RETURN(const nlohmann::json* port, strict::require(json, path, "input_port_id"));
    if (!port->is_null()) {
        QS_ASSIGN_OR_RETURN(
            point.inputPortId,
            strict::smallInteger(*port, strict::member(path, "input_port_id"), 0, kMaxId));
    }
    return point;
}

/// The chosen config per quantizer id, each with the point it was chosen for.
Result<void> parseChoices(const nlohmann::json& choices, const std::string& choicesPath,
                          SessionFile& session) {
    QS_TRY(strict::expectObject(choices, choicesPath));
    for (const auto& [key, entry] : choices.items()) {
        QS_ASSIGN_OR_RETURN(const int id, strict::idKey(key, choicesPath));
        const std::string entryPath = strict::member(choicesPath, key);
        QS_TRY(strict::onlyKeys(entry, entryPath, {"qip", "qconfig"}));
        QS_ASSIGN_OR_RETURN(const nlohmann::json* qip, strict::require(entry, entryPath, "qip"));
        QS_ASSIGN_OR_RETURN(InsertionPoint point,
                            pointFromJson(*qip, strict::member(entryPath, "qip")));
        QS_ASSIGN_OR_RETURN(const nlohmann::json* qconfig,
                            strict::require(entry, entryPath, "qconfig"));
        QS_ASSIGN_OR_RETURN(
            QuantizerConfig config,
            quantization::quantizerConfigFromJson(*qconfig, strict::member(entryPath, "qconfig")));
        session.choices[id] = SessionChoice{std::move(point), config};
    }
    return {};
}

/// The quantization section at `path`: settings, and the choices at `choicesPath` (version 1 kept
/// both at the top level).
Result<void> parseQuantization(const nlohmann::json& settings, const std::string& path,
                               const nlohmann::json& choices, const std::string& choicesPath,
                               SessionFile& session) {
    QS_ASSIGN_OR_RETURN(const nlohmann::json* hw, strict::require(settings, path, "hw_config"));
    QS_ASSIGN_OR_RETURN(session.settings.hw,
                        strict::string(*hw, strict::member(path, "hw_config")));
    if (session.settings.hw.empty()) {
        return strict::fieldError(strict::member(path, "hw_config"), "empty HW config name");
    }
    QS_ASSIGN_OR_RETURN(const nlohmann::json* preset, strict::require(settings, path, "preset"));
    QS_ASSIGN_OR_RETURN(session.settings.preset,
                        presetFromJson(*preset, strict::member(path, "preset")));
    QS_ASSIGN_OR_RETURN(const nlohmann::json* ruleJson, strict::require(settings, path, "rule"));
    QS_ASSIGN_OR_RETURN(const std::string rule,
                        strict::string(*ruleJson, strict::member(path, "rule")));
    const std::optional<QuantizerPropagationRule> parsedRule = quantization::ruleFromArgument(rule);
    if (!parsedRule) {
        return strict::fieldError(strict::member(path, "rule"),
                                  "unknown propagation rule '" + rule + "'");
    }
    session.settings.rule = *parsedRule;
    return parseChoices(choices, choicesPath, session);
}

Result<SessionView> viewFromJson(const nlohmann::json& view) {
    QS_TRY(strict::onlyKeys(view, "view", {"zoom", "center_x", "center_y", "expanded_groups"}));
    SessionView out;
    for (const auto& [key, field] :
         {std::pair{"zoom", &out.zoom}, std::pair{"center_x", &out.centerX},
          std::pair{"center_y", &out.centerY}}) {
        QS_ASSIGN_OR_RETURN(const nlohmann::json* value, strict::require(view, "view", key));
        QS_ASSIGN_OR_RETURN(*field, strict::number(*value, strict::member("view", key)));
    }
    if (out.zoom <= 0) {
        return strict::fieldError("view.zoom", "must be positive");
    }
    // Absent in sessions saved before the expand state was kept.
    if (const auto groups = view.find("expanded_groups"); groups != view.end()) {
        QS_TRY(strict::expectArray(*groups, "view.expanded_groups"));
        for (size_t i = 0; i < groups->size(); ++i) {
            QS_ASSIGN_OR_RETURN(
                std::string key,
                strict::string((*groups)[i], strict::element("view.expanded_groups", i)));
            out.expandedGroups.push_back(std::move(key));
        }
    }
    return out;
}

/// The format version, 1 to SessionFile::kFormatVersion, and only the top-level keys it has.
Result<int64_t> parseVersion(const nlohmann::json& json) {
    const std::string formatKey(kFormatKey);
    QS_ASSIGN_OR_RETURN(const nlohmann::json* versionJson, strict::require(json, "", formatKey));
    QS_ASSIGN_OR_RETURN(
        const int64_t version,
        strict::integer(*versionJson, formatKey, 0, std::numeric_limits<int32_t>::max()));
    if (version < 1 || version > SessionFile::kFormatVersion) {
        return strict::fieldError(formatKey,
                                  "session format version " + std::to_string(version) +
                                      " is not supported (this build reads versions 1 to " +
                                      std::to_string(SessionFile::kFormatVersion) + ")");
    }
    if (version == 1) {
        QS_TRY(
            strict::onlyKeys(json, "", {kFormatKey, "model", "view", "quantization", "choices"}));
    } else {
        QS_TRY(strict::onlyKeys(json, "", {kFormatKey, "model", "view", "sections"}));
    }
    return version;
}

/// "model": {"path", "hash"}.
Result<void> parseModel(const nlohmann::json& json, SessionFile& session) {
    QS_ASSIGN_OR_RETURN(const nlohmann::json* model, strict::require(json, "", "model"));
    QS_TRY(strict::onlyKeys(*model, "model", {"path", "hash"}));
    QS_ASSIGN_OR_RETURN(const nlohmann::json* path, strict::require(*model, "model", "path"));
    QS_ASSIGN_OR_RETURN(session.modelPath, strict::string(*path, "model.path"));
    QS_ASSIGN_OR_RETURN(const nlohmann::json* hash, strict::require(*model, "model", "hash"));
    QS_ASSIGN_OR_RETURN(session.modelHash, strict::string(*hash, "model.hash"));
    if (session.modelPath.empty()) {
        return strict::fieldError("model.path", "empty model path");
    }
    return {};
}

/// Version 2's "sections": quantization read here, the others kept for their features.
Result<void> parseSections(const nlohmann::json& sections, SessionFile& session) {
    QS_TRY(strict::expectObject(sections, "sections"));
    for (const auto& [key, section] : sections.items()) {
        if (key != kQuantizationSection) {
            session.sections[key] = section; // read by its feature, or kept as it is
            continue;
        }
        const std::string sectionPath = strict::member("sections", key);
        QS_TRY(strict::onlyKeys(section, sectionPath, {"hw_config", "preset", "rule", "choices"}));
        QS_ASSIGN_OR_RETURN(const nlohmann::json* choices,
                            strict::require(section, sectionPath, "choices"));
        QS_TRY(parseQuantization(section, sectionPath, *choices,
                                 strict::member(sectionPath, "choices"), session));
    }
    return {};
}

/// Version 1 kept "quantization" (the settings) and "choices" at the top level.
Result<void> parseVersionOneQuantization(const nlohmann::json& json, SessionFile& session) {
    QS_ASSIGN_OR_RETURN(const nlohmann::json* settings, strict::require(json, "", "quantization"));
    QS_TRY(strict::onlyKeys(*settings, "quantization", {"hw_config", "preset", "rule"}));
    QS_ASSIGN_OR_RETURN(const nlohmann::json* choices, strict::require(json, "", "choices"));
    return parseQuantization(*settings, "quantization", *choices, "choices", session);
}

Result<SessionFile> parseSession(const nlohmann::json& json) {
    QS_ASSIGN_OR_RETURN(const int64_t version, parseVersion(json));
    SessionFile session;
    QS_TRY(parseModel(json, session));
    if (version == 1) {
        QS_TRY(parseVersionOneQuantization(json, session));
    } else if (const auto sections = json.find("sections"); sections != json.end()) {
        QS_TRY(parseSections(*sections, session));
    }
    if (const auto view = json.find("view"); view != json.end() && !view->is_null()) {
        QS_ASSIGN_OR_RETURN(session.view, viewFromJson(*view));
    }
    return session;
}

} // namespace

Result<std::string> hashModelFile(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return Error(Errc::Io, "cannot read '" + path.string() + "' to hash it");
    }
    std::uint64_t hash = kFnvOffset;
    std::vector<char> buffer(kHashChunk);
    while (in) {
        in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
        const auto got = static_cast<size_t>(in.gcount());
        for (size_t i = 0; i < got; ++i) {
            hash ^= static_cast<unsigned char>(buffer[i]);
            hash *= kFnvPrime;
        }
    }
    if (in.bad()) {
        return Error(Errc::Io, "reading '" + path.string() + "' failed while hashing it");
    }
    std::array<char, 17> hex{};
    std::snprintf(hex.data(), hex.size(), "%016llx", static_cast<unsigned long long>(hash));
    return "fnv1a64:" + std::string(hex.data());
}

Result<SessionFile> captureSession(const std::filesystem::path& modelPath, std::string modelHash,
                                   const QuantizationState& state) {
    SessionFile session;
    session.modelPath = std::filesystem::absolute(modelPath).string();
    session.modelHash = std::move(modelHash);
    session.settings = state.settings;
    for (const auto& [id, config] : state.choice) {
        auto point = state.proposal.setup.quantizationPoints.find(id);
        if (point == state.proposal.setup.quantizationPoints.end()) {
            return Error(Errc::Internal, "chosen quantization point " + std::to_string(id) +
                                             " is not in the proposal");
        }
        session.choices[id] = SessionChoice{point->second.insertionPoint, config};
    }
    return session;
}

nlohmann::json toJson(const SessionFile& session) {
    nlohmann::json out;
    out[std::string(kFormatKey)] = SessionFile::kFormatVersion;
    out["model"] = {{"path", session.modelPath}, {"hash", session.modelHash}};
    nlohmann::json choices = nlohmann::json::object();
    for (const auto& [id, choice] : session.choices) {
        choices[std::to_string(id)] = {{"qip", pointToJson(choice.point)},
                                       {"qconfig", quantization::toJson(choice.config)}};
    }
    nlohmann::json sections = nlohmann::json::object();
    for (const auto& [key, section] : session.sections) {
        sections[key] = section;
    }
    sections[std::string(kQuantizationSection)] = {
        {"hw_config", session.settings.hw},
        {"preset", presetArgument(session.settings.preset)},
        {"rule", quantization::ruleArgument(session.settings.rule)},
        {"choices", std::move(choices)}};
    out["sections"] = std::move(sections);
    if (session.view) {
        out["view"] = {{"zoom", session.view->zoom},
                       {"center_x", session.view->centerX},
                       {"center_y", session.view->centerY},
                       {"expanded_groups", session.view->expandedGroups}};
    }
    return out;
}

Result<SessionFile> sessionFromJson(const nlohmann::json& json) {
    if (!json.is_object()) {
        return Error(Errc::InvalidArgument, "not a Quantscope session: expected a JSON object");
    }
    if (!json.contains(std::string(kFormatKey))) {
        return Error(Errc::InvalidArgument, "not a Quantscope session: no '" +
                                                std::string(kFormatKey) + "' version field");
    }
    return parseSession(json);
}

Result<SessionFile> parseSessionText(std::string_view text) {
    QS_ASSIGN_OR_RETURN(const nlohmann::json json, strict::parseStrict(text));
    return sessionFromJson(json);
}

Result<SessionFile> readSessionFile(const std::filesystem::path& path) {
    QS_ASSIGN_OR_RETURN(const std::string text, readFile(path)); // names the file itself
    return parseSessionText(text).context("session '" + path.string() + "'");
}

Result<void> writeSessionFile(const std::filesystem::path& path, const SessionFile& session) {
    return writeFileAtomically(path, toJson(session).dump(2) + "\n");
}

Result<void> checkSessionModel(const SessionFile& session, const std::filesystem::path& path) {
    QS_ASSIGN_OR_RETURN(const std::string hash, hashModelFile(path));
    if (hash != session.modelHash) {
        return Error(Errc::InvalidArgument, "the model file '" + path.string() +
                                                "' changed since the session was saved " +
                                                "(its hash is " + hash + ", the session expects " +
                                                session.modelHash + ")");
    }
    return {};
}

Result<QuantizerConfigChoice> sessionChoicesFor(const SessionFile& session,
                                                const QuantizationState& state) {
    QuantizerConfigChoice choice;
    for (const auto& [id, saved] : session.choices) {
        auto point = state.proposal.setup.quantizationPoints.find(id);
        if (point == state.proposal.setup.quantizationPoints.end() ||
            !(point->second.insertionPoint == saved.point)) {
            return Error(Errc::InvalidArgument,
                         "sections.quantization.choices[" + std::to_string(id) +
                             "]: quantization point " + std::to_string(id) + " (" +
                             saved.point.toString() + ") is not placed for this model any more");
        }
        const QuantizerConfigList& candidates = point->second.possibleConfigs;
        if (std::find(candidates.begin(), candidates.end(), saved.config) == candidates.end()) {
            return Error(Errc::InvalidArgument,
                         "sections.quantization.choices[" + std::to_string(id) +
                             "].qconfig: saved config " + saved.config.toString() +
                             " is not a candidate of quantizer " + std::to_string(id) + " (" +
                             saved.point.toString() + ")");
        }
        choice[id] = saved.config;
    }
    return choice;
}

} // namespace qs::session
