#include "ui/features/calibration/calibration.h"

#include "core/report/calibration_report.h"
#include "ui/accuracy_text.h"

#include <QCoreApplication>
#include <QStringList>

#include <algorithm>
#include <cmath>

namespace qs::ui {

namespace {
QString tr(const char* text) {
    return QCoreApplication::translate("qs::ui::Calibration", text);
}

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
    QS_ASSIGN_OR_RETURN(quantization::CalibrationOutcome outcome,
                        quantization::runCalibration(model, setup, request, progress));
    // Labels that do not fit the output fail the calibration, named, as in the CLI.
    if (auto accuracy = report::calibrationAccuracy(outcome); !accuracy.ok()) {
        return std::move(accuracy).error().context("labels");
    }
    CalibrationResult result;
    result.parameters = std::move(outcome.parameters);
    result.report = std::move(outcome.simulation);
    result.dataset = QString::fromStdString(outcome.dataset);
    result.setupFingerprint = setupFingerprint(setup);
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
    if (auto accuracy = report::simulationAccuracy(report);
        accuracy.ok() && accuracy->has_value()) {
        parts.push_back(accuracySummary(**accuracy, tr("quantized")));
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
