// Accuracy of a classifier's outputs against labels (top-1, top-5), and how closely two models'
// outputs agree (top-1 agreement, per-sample cosine similarity): the figures
// `quantscope-cli evaluate` prints and that reports add when the dataset carries labels.
// Labels are int64 class ids, one per sample; a count that differs from the outputs' sample count,
// or an id outside the output's class range, is a clear error naming both numbers.
#pragma once

#include "core/runtime/labelled_scores.h"
#include "core/runtime/tensor.h"
#include "core/support/result.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace qs::report {

/// Top-5 is reported only for outputs with at least this many classes (below it, top-5 of a
/// 5-class output is trivially 100 %).
inline constexpr int64_t kTop5MinClasses = 10;

/// Class ids of a labels tensor: int64 or int32, shape [N] or [N, 1].
Result<std::vector<int64_t>> labelsFromTensor(const runtime::Tensor& labels);

/// Reads a labels .npy file (labelsFromTensor); errors name the file.
Result<std::vector<int64_t>> readLabelsNpy(const std::filesystem::path& path);

/// Checks that `labels` fit outputs of `samples` rows of `classes` scores: one label per sample,
/// every id in [0, classes).
Result<void> validateLabels(std::span<const int64_t> labels, int64_t samples, int64_t classes);

/// The class count of a classifier output: [N, C] or [N, C, 1, ...]. Anything else (a scalar, a
/// sequence of scores, a non-numeric tensor) is an error.
Result<int64_t> classCount(const runtime::Tensor& scores);

struct ClassAccuracy {
    int64_t samples = 0;     ///< samples labelled with this class
    int64_t top1Correct = 0; ///< of those, predicted as this class
};

struct Accuracy {
    int64_t samples = 0;
    int64_t classes = 0;
    int64_t top1Correct = 0;
    std::optional<int64_t> top5Correct;  ///< when classes >= kTop5MinClasses
    std::vector<ClassAccuracy> perClass; ///< indexed by class id

    double top1() const;
    std::optional<double> top5() const;
};

/// Top-1 and top-5 of `scores` ([N, C]) against `labels` (validateLabels first). A sample's rank is
/// the number of classes scored above its label, ties going to the lower class id as argmax
/// does; top-k counts ranks below k. A NaN score for the label counts as wrong.
Result<Accuracy> computeAccuracy(const runtime::Tensor& scores, std::span<const int64_t> labels);

/// Two models' outputs on the same samples.
struct OutputAgreement {
    int64_t samples = 0;
    double top1Agreement = 0.0; ///< fraction of samples whose argmax is the same class
    double meanCosine = 0.0;    ///< mean over samples of the per-sample cosine similarity
    double minCosine = 0.0;
};

/// Compares two classifier outputs of the same shape ([N, C]): argmax agreement and per-sample
/// cosine similarity (1 when both rows are zero, 0 when only one is).
Result<OutputAgreement> compareOutputs(const runtime::Tensor& reference,
                                       const runtime::Tensor& other);

/// {"samples", "classes", "top1", "top1_correct", "top5"?, "top5_correct"?, "per_class": [...]}.
nlohmann::json toJson(const Accuracy& accuracy);

/// {"samples", "top1_agreement", "cosine_similarity", "min_cosine_similarity"}.
nlohmann::json toJson(const OutputAgreement& agreement);

/// Top-1 (and top-5) accuracy of the float and the compressed model on a labelled dataset.
struct AccuracyComparison {
    Accuracy floatModel;
    Accuracy compressed; ///< the quantized, weight-compressed or pruned model
};

/// Both models' accuracies from their labelled scores; nothing without them. Labels outside the
/// output's class range are an error naming both numbers.
Result<std::optional<AccuracyComparison>>
compareAccuracy(const std::optional<runtime::LabelledScores>& labelled);

/// {"float": Accuracy, "<compressedName>": Accuracy}.
nlohmann::json toJson(const AccuracyComparison& accuracy,
                      std::string_view compressedName = "quantized");

/// "Top-1 accuracy: float 97.22 %, quantized 97.04 % (-0.18 points; 540 labelled samples)",
/// then the same for top-5 when there are >= 10 classes.
std::string accuracyText(const AccuracyComparison& accuracy,
                         std::string_view compressedName = "quantized");

} // namespace qs::report
