#include "ui/features/calibration/calibration_state.h"

#include <memory>
#include <utility>

namespace qs::ui {

namespace {
bool staleFor(const CalibrationResult& result, const GraphDocument& document) {
    const quantization::QuantizationState* state = document.quantization();
    return state == nullptr || setupFingerprint(state->setup) != result.setupFingerprint;
}

const CalibrationState* stateOf(const GraphDocument& document) {
    return document.state<CalibrationState>(kCalibrationKey);
}
} // namespace

CalibrationState::CalibrationState(CalibrationResult result, const GraphDocument& document)
    : m_result(std::move(result))
    , m_stale(staleFor(m_result, document)) {}

bool CalibrationState::followQuantization(const GraphDocument& document) {
    const bool stale = staleFor(m_result, document);
    return std::exchange(m_stale, stale) != stale;
}

const CalibrationResult* calibration(const GraphDocument& document) {
    const CalibrationState* state = stateOf(document);
    return state == nullptr ? nullptr : &state->result();
}

const CalibrationResult* freshCalibration(const GraphDocument& document) {
    const CalibrationState* state = stateOf(document);
    return state == nullptr || state->isStale() ? nullptr : &state->result();
}

bool isCalibrationStale(const GraphDocument& document) {
    const CalibrationState* state = stateOf(document);
    return state != nullptr && state->isStale();
}

void storeCalibration(GraphDocument& document, CalibrationResult result) {
    auto state = std::make_unique<CalibrationState>(std::move(result), document);
    document.setState(kCalibrationKey, std::move(state));
}

} // namespace qs::ui
