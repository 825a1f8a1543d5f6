// The "hessian" section of a session: the last Hessian scores computed in the GUI (Quantize ▸
// Compute Hessian Scores…) with what they were computed on — the dataset's description and a
// fingerprint of its files, and the model's hash — so a reopened session shows them again and can
// tell when the model or the dataset changed since (stale). The scores are SCORES.json's
// (core/report/hessian_report.h), inline.
//   {"dataset": "...", "dataset_fingerprint": "...", "model_hash": "fnv1a64:...",
//    "dataset_request": {"npy": [...], "images", "classes", "random", "seed", "max_samples",
//                        "labels", "input_shapes": [...]},
//    "seconds": 1.2, "scores": {SCORES.json}}
#pragma once

#include "core/hessian/hessian_scores.h"
#include "core/runtime/dataset_request.h"
#include "core/session/session_file.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace qs::session {

inline constexpr std::string_view kHessianSection = "hessian";

struct HessianSection {
    std::string dataset;            ///< DatasetRequest::describe()
    std::string datasetFingerprint; ///< datasetFingerprint() when computed
    std::string modelHash;          ///< hashModelFile() of the model scored
    /// The dataset asked for (sources, limit, labels, shapes), to re-check its fingerprint.
    runtime::DatasetRequest datasetRequest;
    double seconds = 0.0;
    hessian::HessianScores scores;

    /// The target scored at `node`, or nullptr.
    const hessian::HessianTargetScores* target(std::string_view node) const;

    /// A target's per-tensor score: the sum of its mean over samples (per-channel scores add up
    /// to the per-tensor one).
    static double perTensorScore(const hessian::HessianTargetScores& target);
};

/// The description of `dataset` plus the size and modification time of every file or folder it
/// reads (labels included): equal fingerprints, the same data as far as a session can tell.
/// Random samples depend on the description (count, seed) only.
std::string datasetFingerprint(const runtime::DatasetRequest& dataset);

nlohmann::json toJson(const HessianSection& section);

/// Reads a hessian section; a malformed one is an error naming the field.
Result<HessianSection> hessianSectionFromJson(const nlohmann::json& json);

/// The session's hessian section, if it has one.
Result<std::optional<HessianSection>> hessianSection(const SessionFile& session);

void setHessianSection(SessionFile& session, const HessianSection& section);

} // namespace qs::session
