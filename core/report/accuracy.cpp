#include "core/report/accuracy.h"

#include "core/runtime/npy.h"
#include "core/support/similarity.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>
#include <string>

namespace qs::report {

namespace {
bool isNumeric(graph::DataType dtype) {
    switch (dtype) {
    case graph::DataType::Undefined:
    case graph::DataType::String:
    case graph::DataType::Bool:
        return false;
    default:
        return true;
    }
}

/// Index of the first largest score of row `row` (NaN scores never win).
int64_t argmaxRow(const runtime::Tensor& scores, int64_t row, int64_t classes) {
    int64_t best = 0;
    double bestScore = -std::numeric_limits<double>::infinity();
    bool found = false;
    for (int64_t c = 0; c < classes; ++c) {
        const double v = scores.elementAsDouble(row * classes + c);
        if (!std::isnan(v) && (!found || v > bestScore)) {
            best = c;
            bestScore = v;
            found = true;
        }
    }
    return best;
}

/// Classes ranked before `label` in row `row`: scored higher, or equal with a lower id.
int64_t rankOfLabel(const runtime::Tensor& scores, int64_t row, int64_t classes, int64_t label) {
    const double target = scores.elementAsDouble(row * classes + label);
    if (std::isnan(target)) {
        return classes;
    }
    int64_t rank = 0;
    for (int64_t c = 0; c < classes; ++c) {
        const double v = scores.elementAsDouble(row * classes + c);
        rank += (v > target || (v == target && c < label)) ? 1 : 0;
    }
    return rank;
}
} // namespace

Result<std::vector<int64_t>> labelsFromTensor(const runtime::Tensor& labels) {
    const runtime::Shape& shape = labels.shape();
    const bool columnShape = shape.size() == 2 && shape[1] == 1;
    if (shape.size() != 1 && !columnShape) {
        return Error(Errc::InvalidArgument,
                     "labels must have shape [N] or [N, 1], not " + runtime::shapeToString(shape));
    }
    if (labels.dtype() != graph::DataType::Int64 && labels.dtype() != graph::DataType::Int32) {
        return Error(Errc::InvalidArgument, "labels must be int64 (or int32) class ids, not " +
                                                std::string(graph::dataTypeName(labels.dtype())));
    }
    std::vector<int64_t> ids(static_cast<size_t>(labels.numElements()));
    for (int64_t i = 0; i < labels.numElements(); ++i) {
        ids[static_cast<size_t>(i)] = labels.dtype() == graph::DataType::Int64
                                          ? labels.data<int64_t>()[i]
                                          : labels.data<int32_t>()[i];
    }
    return ids;
}

Result<std::vector<int64_t>> readLabelsNpy(const std::filesystem::path& path) {
    QS_ASSIGN_OR_RETURN(runtime::Tensor tensor, runtime::readNpy(path));
    return labelsFromTensor(tensor).context("labels file '" + path.string() + "'");
}

Result<void> validateLabels(std::span<const int64_t> labels, int64_t samples, int64_t classes) {
    if (static_cast<int64_t>(labels.size()) != samples) {
        return Error(Errc::InvalidArgument, std::to_string(labels.size()) + " labels for " +
                                                std::to_string(samples) +
                                                " samples: give one label per sample");
    }
    for (size_t i = 0; i < labels.size(); ++i) {
        if (labels[i] < 0 || labels[i] >= classes) {
            return Error(Errc::InvalidArgument,
                         "label " + std::to_string(labels[i]) + " of sample " + std::to_string(i) +
                             " is outside the output's " + std::to_string(classes) +
                             " classes (ids 0.." + std::to_string(classes - 1) + ")");
        }
    }
    return success();
}

Result<int64_t> classCount(const runtime::Tensor& scores) {
    const runtime::Shape& shape = scores.shape();
    if (!isNumeric(scores.dtype())) {
        return Error(Errc::Unsupported, "class scores must be numeric, not " +
                                            std::string(graph::dataTypeName(scores.dtype())));
    }
    const bool trailingOnes = shape.size() >= 2 && std::all_of(shape.begin() + 2, shape.end(),
                                                               [](int64_t d) { return d == 1; });
    if (!trailingOnes || shape[1] < 1) {
        return Error(Errc::Unsupported, "class scores must have shape [N, C] (or [N, C, 1, ...]), "
                                        "not " +
                                            runtime::shapeToString(shape));
    }
    return shape[1];
}

Result<Accuracy> computeAccuracy(const runtime::Tensor& scores, std::span<const int64_t> labels) {
    QS_ASSIGN_OR_RETURN(const int64_t classes, classCount(scores));
    const int64_t samples = scores.shape()[0];
    QS_TRY(validateLabels(labels, samples, classes));
    Accuracy accuracy;
    accuracy.samples = samples;
    accuracy.classes = classes;
    accuracy.perClass.resize(static_cast<size_t>(classes));
    const bool top5 = classes >= kTop5MinClasses;
    int64_t top5Correct = 0;
    for (int64_t n = 0; n < samples; ++n) {
        const int64_t label = labels[static_cast<size_t>(n)];
        const int64_t rank = rankOfLabel(scores, n, classes, label);
        ClassAccuracy& perClass = accuracy.perClass[static_cast<size_t>(label)];
        ++perClass.samples;
        if (rank == 0) {
            ++perClass.top1Correct;
            ++accuracy.top1Correct;
        }
        top5Correct += rank < 5 ? 1 : 0;
    }
    if (top5) {
        accuracy.top5Correct = top5Correct;
    }
    return accuracy;
}

double Accuracy::top1() const {
    return samples > 0 ? static_cast<double>(top1Correct) / static_cast<double>(samples) : 0.0;
}

std::optional<double> Accuracy::top5() const {
    if (!top5Correct) {
        return std::nullopt;
    }
    return samples > 0 ? static_cast<double>(*top5Correct) / static_cast<double>(samples) : 0.0;
}

Result<OutputAgreement> compareOutputs(const runtime::Tensor& reference,
                                       const runtime::Tensor& other) {
    QS_ASSIGN_OR_RETURN(const int64_t classes, classCount(reference));
    if (other.shape() != reference.shape()) {
        return Error(Errc::InvalidArgument, "outputs to compare differ in shape: " +
                                                runtime::shapeToString(reference.shape()) +
                                                " and " + runtime::shapeToString(other.shape()));
    }
    QS_TRY(classCount(other));
    const int64_t samples = reference.shape()[0];
    OutputAgreement agreement;
    agreement.samples = samples;
    agreement.minCosine = 1.0;
    int64_t same = 0;
    double sumCosine = 0.0;
    for (int64_t n = 0; n < samples; ++n) {
        same += argmaxRow(reference, n, classes) == argmaxRow(other, n, classes) ? 1 : 0;
        double dot = 0.0;
        double nx = 0.0;
        double ny = 0.0;
        for (int64_t c = 0; c < classes; ++c) {
            const double x = reference.elementAsDouble(n * classes + c);
            const double y = other.elementAsDouble(n * classes + c);
            dot += x * y;
            nx += x * x;
            ny += y * y;
        }
        const double cosine = cosineFromSums(dot, nx, ny);
        sumCosine += cosine;
        agreement.minCosine = std::min(agreement.minCosine, cosine);
    }
    if (samples > 0) {
        agreement.top1Agreement = static_cast<double>(same) / static_cast<double>(samples);
        agreement.meanCosine = sumCosine / static_cast<double>(samples);
    }
    return agreement;
}

nlohmann::json toJson(const Accuracy& accuracy) {
    nlohmann::json perClass = nlohmann::json::array();
    for (size_t c = 0; c < accuracy.perClass.size(); ++c) {
        perClass.push_back({{"class", c},
                            {"samples", accuracy.perClass[c].samples},
                            {"top1_correct", accuracy.perClass[c].top1Correct}});
    }
    nlohmann::json json = {{"samples", accuracy.samples},
                           {"classes", accuracy.classes},
                           {"top1", accuracy.top1()},
                           {"top1_correct", accuracy.top1Correct}};
    if (accuracy.top5Correct) {
        json["top5"] = *accuracy.top5();
        json["top5_correct"] = *accuracy.top5Correct;
    }
    json["per_class"] = std::move(perClass);
    return json;
}

nlohmann::json toJson(const OutputAgreement& agreement) {
    return {{"samples", agreement.samples},
            {"top1_agreement", agreement.top1Agreement},
            {"cosine_similarity", agreement.meanCosine},
            {"min_cosine_similarity", agreement.minCosine}};
}

Result<std::optional<AccuracyComparison>>
compareAccuracy(const std::optional<runtime::LabelledScores>& labelled) {
    if (!labelled) {
        return std::optional<AccuracyComparison>();
    }
    QS_ASSIGN_OR_RETURN(const std::vector<int64_t> labels, labelsFromTensor(labelled->labels));
    AccuracyComparison accuracy;
    QS_ASSIGN_OR_RETURN(accuracy.floatModel, computeAccuracy(labelled->floatScores, labels));
    QS_ASSIGN_OR_RETURN(accuracy.compressed, computeAccuracy(labelled->compressedScores, labels));
    return std::optional<AccuracyComparison>(std::move(accuracy));
}

nlohmann::json toJson(const AccuracyComparison& accuracy, std::string_view compressedName) {
    return {{"float", toJson(accuracy.floatModel)},
            {std::string(compressedName), toJson(accuracy.compressed)}};
}

std::string accuracyText(const AccuracyComparison& accuracy, std::string_view compressedName) {
    std::ostringstream out;
    out << std::fixed << std::setprecision(2);
    const auto line = [&](std::string_view what, double floatValue, double compressedValue) {
        out << what << " accuracy: float " << 100.0 * floatValue << " %, " << compressedName << " "
            << 100.0 * compressedValue << " % (" << std::showpos
            << 100.0 * (compressedValue - floatValue) << std::noshowpos << " points; "
            << accuracy.floatModel.samples << " labelled samples)\n";
    };
    line("Top-1", accuracy.floatModel.top1(), accuracy.compressed.top1());
    if (accuracy.floatModel.top5() && accuracy.compressed.top5()) {
        line("Top-5", *accuracy.floatModel.top5(), *accuracy.compressed.top5());
    }
    return out.str();
}

} // namespace qs::report
