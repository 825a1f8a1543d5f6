// `.qscope` sessions: JSON in and out, the model hash, and the saved choices checked against a
// freshly computed proposal.

#include "core/session/session_file.h"

#include "core/support/atomic_file.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <stdexcept>
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

/// Thrown inside the parser for a field with a wrong value; caught at sessionFromJson.
struct BadField : std::runtime_error {
    using std::runtime_error::runtime_error;
};

QuantizationPreset presetFromJson(const nlohmann::json& json) {
    const auto text = json.get<std::string>();
    for (const auto& [name, value] : kPresets) {
        if (name == text) {
            return value;
        }
    }
    throw BadField("unknown preset '" + text + "' (expected performance or mixed)");
}

nlohmann::json pointToJson(const InsertionPoint& point) {
    nlohmann::json out;
    out["qip_class"] = point.qipClass();
    out["target_node_name"] = point.targetNodeName;
    out["input_port_id"] =
        point.inputPortId ? nlohmann::json(*point.inputPortId) : nlohmann::json();
    return out;
}

InsertionPoint pointFromJson(const nlohmann::json& json) {
    InsertionPoint point;
    const auto qipClass = json.at("qip_class").get<std::string>();
    point.isWeight = qipClass == "WeightQuantizationInsertionPoint";
    if (!point.isWeight && qipClass != "ActivationQuantizationInsertionPoint") {
        throw BadField("unknown qip_class '" + qipClass + "'");
    }
    point.targetNodeName = json.at("target_node_name").get<std::string>();
    const nlohmann::json& port = json.at("input_port_id");
    if (!port.is_null()) {
        point.inputPortId = port.get<int>();
    }
    return point;
}

/// The quantization section: settings and choices (version 1 kept both at the top level).
void parseQuantization(const nlohmann::json& settings, const nlohmann::json& choices,
                       SessionFile& session) {
    session.settings.hw = settings.at("hw_config").get<std::string>();
    session.settings.preset = presetFromJson(settings.at("preset"));
    const auto rule = settings.at("rule").get<std::string>();
    const std::optional<QuantizerPropagationRule> parsedRule = quantization::ruleFromArgument(rule);
    if (!parsedRule) {
        throw BadField("unknown propagation rule '" + rule + "'");
    }
    session.settings.rule = *parsedRule;
    for (const auto& [key, entry] : choices.items()) {
        size_t used = 0;
        const int id = std::stoi(key, &used);
        if (used != key.size()) {
            throw BadField("choice key '" + key + "' is not a quantization point id");
        }
        session.choices[id] =
            SessionChoice{pointFromJson(entry.at("qip")),
                          quantization::quantizerConfigFromJson(entry.at("qconfig"))};
    }
}

SessionFile parseSession(const nlohmann::json& json) {
    const int version = json.at(std::string(kFormatKey)).get<int>();
    if (version < 1 || version > SessionFile::kFormatVersion) {
        throw BadField("session format version " + std::to_string(version) +
                       " is not supported (this build reads versions 1 to " +
                       std::to_string(SessionFile::kFormatVersion) + ")");
    }
    SessionFile session;
    const nlohmann::json& model = json.at("model");
    session.modelPath = model.at("path").get<std::string>();
    session.modelHash = model.at("hash").get<std::string>();
    if (version == 1) {
        parseQuantization(json.at("quantization"), json.at("choices"), session);
    } else if (json.contains("sections")) {
        for (const auto& [key, section] : json.at("sections").items()) {
            if (key == kQuantizationSection) {
                parseQuantization(section, section.at("choices"), session);
            } else {
                session.sections[key] = section;
            }
        }
    }
    if (json.contains("view") && !json.at("view").is_null()) {
        const nlohmann::json& view = json.at("view");
        session.view = SessionView{view.at("zoom").get<double>(),
                                   view.at("center_x").get<double>(),
                                   view.at("center_y").get<double>(),
                                   {}};
        if (view.contains("expanded_groups")) { // absent before expand state was saved
            session.view->expandedGroups =
                view.at("expanded_groups").get<std::vector<std::string>>();
        }
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
    try {
        if (!json.is_object()) {
            return Error(Errc::InvalidArgument, "not a Quantscope session: expected a JSON object");
        }
        if (!json.contains(std::string(kFormatKey))) {
            return Error(Errc::InvalidArgument, "not a Quantscope session: no '" +
                                                    std::string(kFormatKey) + "' version field");
        }
        return parseSession(json);
    } catch (const std::exception& e) {
        return Error(Errc::InvalidArgument, std::string("malformed session: ") + e.what());
    }
}

Result<SessionFile> readSessionFile(const std::filesystem::path& path) {
    QS_ASSIGN_OR_RETURN(const std::string text, readFile(path));
    nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded()) {
        // Parse again with exceptions for the position of the first error.
        try {
            json = nlohmann::json::parse(text);
        } catch (const nlohmann::json::parse_error& e) {
            return Error(Errc::InvalidArgument, std::string("not valid JSON: ") + e.what())
                .context("session '" + path.string() + "'");
        }
    }
    auto session = sessionFromJson(json);
    if (!session.ok()) {
        return std::move(session).error().context("session '" + path.string() + "'");
    }
    return session;
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
            return Error(Errc::InvalidArgument, "quantization point " + std::to_string(id) + " (" +
                                                    saved.point.toString() +
                                                    ") is not placed for this model any more");
        }
        const QuantizerConfigList& candidates = point->second.possibleConfigs;
        if (std::find(candidates.begin(), candidates.end(), saved.config) == candidates.end()) {
            return Error(Errc::InvalidArgument, "saved config " + saved.config.toString() +
                                                    " is not a candidate of quantizer " +
                                                    std::to_string(id) + " (" +
                                                    saved.point.toString() + ")");
        }
        choice[id] = saved.config;
    }
    return choice;
}

} // namespace qs::session
