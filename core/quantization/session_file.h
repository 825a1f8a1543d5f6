// SessionFile: what a `.qscope` session saves (DESIGN.md, Formats) — the model's path and content
// hash, the quantization settings (HW config, preset, propagation rule), the chosen config of every
// quantization point (with its insertion point, so a restore can check that the ids still mean the
// same places) and the view state. Qt-free, so the CLI can read sessions too; written atomically.
#pragma once

#include "core/quantization/quantization_state.h"
#include "core/support/result.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace qs::quantization {

/// Where the graph view looked: scale and the scene point at the centre.
struct SessionView {
    double zoom = 1.0;
    double centerX = 0.0;
    double centerY = 0.0;

    bool operator==(const SessionView&) const = default;
};

/// One saved choice: the config chosen at a point, and where that point is.
struct SessionChoice {
    InsertionPoint point;
    QuantizerConfig config;

    bool operator==(const SessionChoice&) const = default;
};

/// The contents of a `.qscope` file.
struct SessionFile {
    static constexpr int kFormatVersion = 1;

    std::string modelPath; ///< absolute path of the ONNX model
    std::string modelHash; ///< hashModelFile() of the model when saved
    QuantizationSettings settings;
    std::map<int, SessionChoice> choices; ///< by quantization point id
    std::optional<SessionView> view;

    bool operator==(const SessionFile&) const = default;
};

/// A content hash of the file at `path` ("fnv1a64:<16 hex digits>"): it tells a changed model
/// from the saved one, it is not a cryptographic digest.
Result<std::string> hashModelFile(const std::filesystem::path& path);

/// The session of `state` for the model at `modelPath` whose hashModelFile() is `modelHash`
/// (taken when the model was read, so saving never re-reads a big model).
Result<SessionFile> captureSession(const std::filesystem::path& modelPath, std::string modelHash,
                                   const QuantizationState& state);

nlohmann::json toJson(const SessionFile& session);

/// Reads a session object; a missing field, a wrong type or an unknown version is an error
/// naming it.
Result<SessionFile> sessionFromJson(const nlohmann::json& json);

/// Reads and parses a `.qscope` file; invalid JSON is an error with its position.
Result<SessionFile> readSessionFile(const std::filesystem::path& path);

/// Writes `session` to `path` atomically.
Result<void> writeSessionFile(const std::filesystem::path& path, const SessionFile& session);

/// Checks that the model at `path` is the one the session was saved for (same hash).
Result<void> checkSessionModel(const SessionFile& session, const std::filesystem::path& path);

/// The saved choices as a QuantizerConfigChoice for `state` (computed with the session's
/// settings): every saved point must exist at the same insertion point and its config must be
/// one of the point's candidates.
Result<QuantizerConfigChoice> sessionChoicesFor(const SessionFile& session,
                                                const QuantizationState& state);

} // namespace qs::quantization
