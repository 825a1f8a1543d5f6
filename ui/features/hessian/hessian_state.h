// HessianState: what a GraphDocument keeps under the Hessian feature's key — the document's
// HessianCache (the service other features share: HAWQ's and pruning's dialogs ask it for scores)
// and the last sensitivity result: per-channel activation scores of the target ops with the dataset
// they were computed on (core's session::HessianSection). The result is stale when the model's
// hash or the dataset's fingerprint no longer match (a rewritten .npy, a session reopened after
// the data changed); it is saved as the session's "hessian" section and restored from it.
#pragma once

#include "core/session/hessian_section.h"
#include "ui/graph_document.h"

#include <QLatin1String>
#include <QString>

#include <memory>
#include <optional>

namespace qs::ui {

class HessianCache;

/// The Hessian feature's key: its document state and its session section.
inline constexpr QLatin1String kHessianKey("hessian");

/// What the overlay, the dock and the Inspector show.
using SensitivityResult = session::HessianSection;

class HessianState final : public DocumentState {
public:
    HessianState();

    ~HessianState() override;

    /// The shared service of the document (created with the state).
    const std::shared_ptr<HessianCache>& cache() const { return m_cache; }

    const std::optional<SensitivityResult>& result() const { return m_result; }

    void setResult(std::optional<SensitivityResult> result) { m_result = std::move(result); }

    std::optional<nlohmann::json> sessionSection() const override;

    std::optional<NodeDetails> nodeDetails(const QString& nodeName) const override;

private:
    std::shared_ptr<HessianCache> m_cache;
    std::optional<SensitivityResult> m_result;
};

/// The Hessian service of `document`, for any feature (created on first use; lives as long as
/// the document).
std::shared_ptr<HessianCache> hessianCache(GraphDocument& document);

/// The last sensitivity result of `document` (fresh or stale), or nullptr.
const SensitivityResult* sensitivity(const GraphDocument& document);

/// True when `result` no longer matches `document`'s model or its dataset's files.
bool isSensitivityStale(const GraphDocument& document, const SensitivityResult& result);

/// Keeps `result` as `document`'s sensitivity (emits stateChanged).
void storeSensitivity(GraphDocument& document, SensitivityResult result);

/// Restores the result saved in the session `document` was opened from (nothing to do when it
/// has none); a malformed section is an error naming it.
Result<void> restoreSensitivity(GraphDocument& document);

} // namespace qs::ui
