// SessionFile: what a `.qscope` session saves (DESIGN.md, Formats): the model's path and content
// hash, the view state, and one section per feature under "sections". "quantization" holds the
// settings (HW config, preset, propagation rule) and the chosen config of every quantization point
// with its insertion point, so a restore can check that the ids still mean the same places; other
// features register their own (sections.h: the "calibration" summary, the "compression" plan;
// next Hessian scores, HAWQ, pruning masks). A missing section is simply absent; an unknown one is
// kept as read and written back, so an older build does not drop a newer feature's data.
// Version-1 files (settings and choices at the top level) still open. Qt-free, so the CLI reads
// and writes sessions too; written atomically.
//
// Format version 2:
//   {"quantscope_session": 2, "model": {"path", "hash"},
//    "view": {"zoom", "center_x", "center_y", "expanded_groups": [KEY, ...]},
//    "sections": {"quantization": {"hw_config", "preset", "rule", "choices": {ID: {"qip",
//    "qconfig"}}}, "calibration": {...}, "compression": {...}, ...}}
#pragma once

#include "core/quantization/quantization_state.h"
#include "core/support/result.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qs::session {

using quantization::InsertionPoint;
using quantization::QuantizationSettings;
using quantization::QuantizationState;
using quantization::QuantizerConfig;
using quantization::QuantizerConfigChoice;

/// Where the graph view looked: scale, the scene point at the centre, and which groups were
/// open (their keys: the scope path, "/layer1/layer1.0", or for a group made from the structure
/// the path and its name, "/features#section 2 of 5"), so a reopened big graph looks the same.
struct SessionView {
    double zoom = 1.0;
    double centerX = 0.0;
    double centerY = 0.0;
    std::vector<std::string> expandedGroups;

    bool operator==(const SessionView&) const = default;
};

/// One saved choice: the config chosen at a point, and where that point is.
struct SessionChoice {
    InsertionPoint point;
    QuantizerConfig config;

    bool operator==(const SessionChoice&) const = default;
};

/// The key of the quantization section (held as `settings` and `choices`).
inline constexpr std::string_view kQuantizationSection = "quantization";

/// The contents of a `.qscope` file.
struct SessionFile {
    static constexpr int kFormatVersion = 2;

    std::string modelPath; ///< absolute path of the ONNX model
    std::string modelHash; ///< hashModelFile() of the model when saved
    /// The quantization section; defaults and no choices when the file has none.
    QuantizationSettings settings;
    std::map<int, SessionChoice> choices; ///< by quantization point id
    std::optional<SessionView> view;
    /// Every other feature's section by key, as JSON (sections.h reads and writes the known ones;
    /// unknown ones are kept as read).
    std::map<std::string, nlohmann::json, std::less<>> sections;

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

/// Reads a session object (version 1 or 2); a missing field, a wrong type or an unknown version is
/// an error naming it. Missing sections are fine; unknown ones are kept in `sections`.
Result<SessionFile> sessionFromJson(const nlohmann::json& json);

/// Parses the text of a `.qscope` file strictly (repeated keys refused) and reads it.
Result<SessionFile> parseSessionText(std::string_view text);

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

} // namespace qs::session
