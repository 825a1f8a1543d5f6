#include "ui/features/calibration/calibration.h"

#include <QCoreApplication>
#include <QStringList>

#include <algorithm>
#include <cmath>
#include <string_view>

namespace qs::ui {

namespace {
QString tr(const char* text) {
    return QCoreApplication::translate("qs::ui::Calibration", text);
}

/// Maps a step's [0, 1] progress onto [from, to] of the whole job.
class StepProgress final : public Progress {
public:
    StepProgress(Progress& whole, double from, double to)
        : m_whole(whole)
        , m_from(from)
        , m_to(to) {}

    void report(double fraction, std::string_view what) override {
        m_whole.report(m_from + (m_to - m_from) * std::clamp(fraction, 0.0, 1.0), what);
    }

    bool isCancelled() const override { return m_whole.isCancelled(); }

private:
    Progress& m_whole;
    double m_from;
    double m_to;
};

constexpr double kLoaded = 0.10;
constexpr double kCalibrated = 0.55;

QString number(double value) {
    return QString::number(value, 'g', 5);
}

/// "0.5" for one channel, "0.1 … 0.9 (64 ch)" for several.
template <typename T>
QString spread(const std::vector<T>& values) {
    if (values.empty()) {
        return QStringLiteral("—");
    }
    if (values.size() == 1) {
        return number(static_cast<double>(values.front()));
    }
    const auto [low, high] = std::minmax_element(values.begin(), values.end());
    return QStringLiteral("%1 … %2 (%3 ch)")
        .arg(number(static_cast<double>(*low)), number(static_cast<double>(*high)))
        .arg(values.size());
}
} // namespace

std::string setupFingerprint(const quantization::SingleConfigQuantizerSetup& setup) {
    return setup.toJson().dump();
}

Result<CalibrationResult> runCalibration(const graph::Graph& model,
                                         const quantization::SingleConfigQuantizerSetup& setup,
                                         const CalibrationRequest& request, Progress& progress) {
    progress.report(0.0, "Loading the calibration data");
    QS_ASSIGN_OR_RETURN(std::vector<runtime::Tensor> inputs,
                        quantization::loadCalibrationData(model, request.source));
    if (progress.isCancelled()) {
        return Error(Errc::Cancelled, "cancelled");
    }
    progress.report(kLoaded, "Collecting statistics");
    quantization::CalibrationOptions options;
    options.batchSize = request.batchSize;
    CalibrationResult result;
    {
        StepProgress step(progress, kLoaded, kCalibrated);
        QS_ASSIGN_OR_RETURN(result.parameters,
                            quantization::calibrate(model, setup, inputs, options, &step));
    }
    progress.report(kCalibrated, "Simulating the quantized model");
    {
        StepProgress step(progress, kCalibrated, 1.0);
        QS_ASSIGN_OR_RETURN(result.report,
                            quantization::simulateQuantization(model, setup, result.parameters,
                                                               inputs, request.batchSize, &step));
    }
    result.dataset = QString::fromStdString(request.source.describe());
    result.setupFingerprint = setupFingerprint(setup);
    progress.report(1.0, "Done");
    return result;
}

QString outputMetricsText(const quantization::SimulationReport& report) {
    QStringList parts;
    for (const quantization::OutputMetrics& output : report.outputs) {
        QString text = tr("%1: cosine %2 · max |err| %3")
                           .arg(QString::fromStdString(output.name),
                                QString::number(output.meanCosine, 'f', 4),
                                QString::number(output.maxAbsError, 'g', 3));
        if (output.top1Agreement) {
            text += tr(" · top-1 %1 %").arg(QString::number(*output.top1Agreement * 100, 'f', 1));
        }
        parts.push_back(text);
    }
    return parts.join(QStringLiteral("; "));
}

QString sqnrText(double db) {
    return std::isfinite(db) ? QStringLiteral("%1 dB").arg(QString::number(db, 'f', 1))
                             : QStringLiteral("∞ dB");
}

QColor sqnrColor(double db) {
    const double t =
        std::isnan(db) ? 0.0 : std::clamp((db - kSqnrLowDb) / (kSqnrHighDb - kSqnrLowDb), 0.0, 1.0);
    constexpr double kGreenHue = 120.0 / 360.0;
    constexpr double kSaturation = 0.85;
    constexpr double kValue = 0.85;
    return QColor::fromHsvF(static_cast<float>(t * kGreenHue), kSaturation, kValue);
}

QString parametersText(const quantization::QuantizerParameters& params) {
    QString text = tr("range %1 … %2").arg(spread(params.inputLow), spread(params.inputHigh));
    text += QLatin1Char('\n') +
            tr("scale %1, zero point %2").arg(spread(params.scale), spread(params.zeroPoint));
    text += QLatin1Char('\n') + tr("grid [%1, %2], %3")
                                    .arg(params.quantMin)
                                    .arg(params.quantMax)
                                    .arg(params.isPerChannel()
                                             ? tr("per channel, axis %1").arg(*params.channelAxis)
                                             : tr("per tensor"));
    return text;
}

} // namespace qs::ui
