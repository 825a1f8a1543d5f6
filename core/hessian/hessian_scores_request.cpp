#include "core/hessian/hessian_scores_request.h"

namespace qs::hessian {

std::string_view modeName(HessianMode mode) {
    return mode == HessianMode::Weights ? "weights" : "activation";
}

std::string_view granularityName(HessianScoresGranularity granularity) {
    switch (granularity) {
    case HessianScoresGranularity::PerElement:
        return "per_element";
    case HessianScoresGranularity::PerOutputChannel:
        return "per_output_channel";
    case HessianScoresGranularity::PerTensor:
        return "per_tensor";
    }
    return "per_tensor";
}

Result<HessianMode> parseMode(std::string_view text) {
    if (text == "activation") {
        return HessianMode::Activation;
    }
    if (text == "weights") {
        return HessianMode::Weights;
    }
    return Error(Errc::InvalidArgument,
                 "unknown Hessian mode '" + std::string(text) + "' (activation or weights)");
}

Result<HessianScoresGranularity> parseGranularity(std::string_view text) {
    if (text == "per_tensor" || text == "per-tensor") {
        return HessianScoresGranularity::PerTensor;
    }
    if (text == "per_output_channel" || text == "per-channel" || text == "per_channel" ||
        text == "per-output-channel") {
        return HessianScoresGranularity::PerOutputChannel;
    }
    if (text == "per_element" || text == "per-element") {
        return HessianScoresGranularity::PerElement;
    }
    return Error(Errc::InvalidArgument, "unknown granularity '" + std::string(text) +
                                            "' (per-tensor, per-channel or per-element)");
}

Result<void> HessianScoresRequest::validate() const {
    if (samples <= 0) {
        return Error(Errc::InvalidArgument,
                     "the number of samples must be positive, got " + std::to_string(samples));
    }
    if (firstSample < 0) {
        return Error(Errc::InvalidArgument,
                     "the first sample must be >= 0, got " + std::to_string(firstSample));
    }
    if (batch <= 0) {
        return Error(Errc::InvalidArgument,
                     "the Hessian batch must be positive, got " + std::to_string(batch));
    }
    if (iterations <= 0) {
        return Error(Errc::InvalidArgument,
                     "the iterations must be positive, got " + std::to_string(iterations));
    }
    if (earlyStop && !(tolerance > 0.0)) {
        return Error(Errc::InvalidArgument,
                     "the early-stop tolerance must be positive, got " + std::to_string(tolerance));
    }
    return success();
}

} // namespace qs::hessian
