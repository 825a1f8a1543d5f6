#include "ui/features/hessian/hessian_state.h"

#include "ui/features/hessian/hessian_cache.h"

#include <QObject>

#include <cmath>

namespace qs::ui {

namespace {
QString qs(const std::string& text) {
    return QString::fromStdString(text);
}

HessianState& ensureState(GraphDocument& document) {
    if (auto* state = document.state<HessianState>(kHessianKey)) {
        return *state;
    }
    auto created = std::make_unique<HessianState>();
    HessianState& state = *created;
    document.setState(kHessianKey, std::move(created));
    return state;
}
} // namespace

HessianState::HessianState()
    : m_cache(std::make_shared<HessianCache>()) {}

HessianState::~HessianState() = default;

std::optional<nlohmann::json> HessianState::sessionSection() const {
    if (!m_result) {
        return std::nullopt;
    }
    return session::toJson(*m_result);
}

std::optional<DocumentState::NodeDetails> HessianState::nodeDetails(const QString& nodeName) const {
    if (!m_result) {
        return std::nullopt;
    }
    const hessian::HessianTargetScores* target = m_result->target(nodeName.toStdString());
    if (target == nullptr) {
        return std::nullopt;
    }
    NodeDetails details;
    details.section = QObject::tr("Sensitivity (Hessian)");
    const double score = SensitivityResult::perTensorScore(*target);
    details.rows.push_back({QObject::tr("Score"), QString::number(score, 'g', 4)});
    details.rows.push_back({QObject::tr("log10"), score > 0
                                                      ? QString::number(std::log10(score), 'f', 2)
                                                      : QStringLiteral("-inf")});
    details.rows.push_back({QObject::tr("Tensor"), qs(target->tensor)});
    details.rows.push_back(
        {QObject::tr("Samples"), QString::number(m_result->scores.sampleIndices.size())});
    details.rows.push_back({QObject::tr("Dataset"), qs(m_result->dataset)});
    std::vector<double> channels = target->mean();
    details.rows.push_back({QObject::tr("Channels"), QString::number(channels.size())});
    if (channels.size() > 1) {
        details.barsLabel = QObject::tr("Per channel");
        details.bars = std::move(channels);
    }
    return details;
}

std::shared_ptr<HessianCache> hessianCache(GraphDocument& document) {
    return ensureState(document).cache();
}

const SensitivityResult* sensitivity(const GraphDocument& document) {
    const auto* state = document.state<HessianState>(kHessianKey);
    return state != nullptr && state->result() ? &*state->result() : nullptr;
}

bool isSensitivityStale(const GraphDocument& document, const SensitivityResult& result) {
    return result.modelHash != document.modelHash() ||
           session::datasetFingerprint(result.datasetRequest) != result.datasetFingerprint;
}

void storeSensitivity(GraphDocument& document, SensitivityResult result) {
    ensureState(document).setResult(std::move(result));
    Q_EMIT document.stateChanged(kHessianKey);
}

Result<void> restoreSensitivity(GraphDocument& document) {
    const nlohmann::json* saved =
        document.savedSection(std::string_view(kHessianKey.data(), kHessianKey.size()));
    if (saved == nullptr) {
        return success();
    }
    QS_ASSIGN_OR_RETURN(SensitivityResult result,
                        session::hessianSectionFromJson(*saved).context("session"));
    storeSensitivity(document, std::move(result));
    return success();
}

} // namespace qs::ui
