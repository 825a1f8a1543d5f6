#include "core/report/hessian_report.h"

#include "core/runtime/npy.h"

#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

namespace qs::report {

using nlohmann::json;

runtime::Tensor perSampleTensor(const hessian::HessianTargetScores& target) {
    runtime::Shape shape = target.shape;
    shape.insert(shape.begin(), static_cast<int64_t>(target.perSample.size()));
    runtime::Tensor out = runtime::Tensor::allocate(graph::DataType::Float, shape);
    float* data = out.mutableData<float>();
    const int64_t numel = target.numel();
    for (size_t s = 0; s < target.perSample.size(); ++s) {
        for (int64_t i = 0; i < numel && static_cast<size_t>(i) < target.perSample[s].size(); ++i) {
            data[static_cast<int64_t>(s) * numel + i] =
                static_cast<float>(target.perSample[s][static_cast<size_t>(i)]);
        }
    }
    return out;
}

json toJson(const hessian::HessianScores& scores,
            const std::map<std::string, std::string>& npyFiles) {
    json out;
    out["mode"] = hessian::modeName(scores.mode);
    out["granularity"] = hessian::granularityName(scores.granularity);
    out["iterations"] = scores.iterations;
    out["samples"] = scores.sampleIndices.size();
    out["batch"] = scores.batch;
    out["seed"] = scores.seed;
    out["early_stop"] = scores.earlyStop;
    out["tolerance"] = scores.tolerance;
    out["outputs"] = scores.outputs;
    out["notes"] = scores.notes;
    out["sample_indices"] = scores.sampleIndices;
    json targets = json::array();
    for (const hessian::HessianTargetScores& target : scores.targets) {
        json t;
        t["node"] = target.node;
        t["tensor"] = target.tensor;
        t["shape"] = target.shape;
        t["numel"] = target.numel();
        const auto npy = npyFiles.find(target.node);
        if (npy != npyFiles.end()) {
            t["npy"] = npy->second;
        } else {
            t["per_sample"] = target.perSample;
            t["mean"] = target.mean();
        }
        targets.push_back(std::move(t));
    }
    out["targets"] = std::move(targets);
    return out;
}

namespace {

/// A std::vector of integers (a shape, sample indices).
template <typename T>
constexpr bool kIsIntegerList = false;
template <typename E>
constexpr bool kIsIntegerList<std::vector<E>> = std::is_integral_v<E> && !std::is_same_v<E, bool>;

/// True when `value` (or, for a list of integers, each element) is an integer that fits `T`:
/// nlohmann's get<int>() of 1e30 or of 2^40 would convert out of range.
template <typename T>
bool fitsIntegers(const json& value) {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        if (value.is_number_unsigned()) {
            return value.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max());
        }
        return value.is_number_integer() &&
               value.get<int64_t>() >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
               (std::is_unsigned_v<T> ||
                value.get<int64_t>() <= static_cast<int64_t>(std::numeric_limits<T>::max()));
    } else if constexpr (kIsIntegerList<T>) {
        if (!value.is_array()) {
            return false;
        }
        for (const json& item : value) {
            if (!fitsIntegers<typename T::value_type>(item)) {
                return false;
            }
        }
        return true;
    } else {
        return true;
    }
}

template <typename T>
Result<T> field(const json& object, const char* name, const std::string& where) {
    if (!object.is_object() || !object.contains(name)) {
        return Error(Errc::InvalidArgument, "missing \"" + std::string(name) + "\"").context(where);
    }
    if (!fitsIntegers<T>(object.at(name))) {
        return Error(Errc::InvalidArgument, "\"" + std::string(name) +
                                                "\" must hold integers in range, got " +
                                                object.at(name).dump())
            .context(where);
    }
    try {
        return object.at(name).get<T>();
    } catch (const json::exception&) {
        return Error(Errc::InvalidArgument, "\"" + std::string(name) + "\" has the wrong type")
            .context(where);
    }
}

/// Per-sample rows from a [N, ...shape] .npy file.
Result<std::vector<std::vector<double>>> readNpyRows(const std::filesystem::path& path,
                                                     int64_t samples, int64_t numel) {
    QS_ASSIGN_OR_RETURN(runtime::Tensor tensor, runtime::readNpy(path));
    if (tensor.dtype() != graph::DataType::Float || tensor.numElements() != samples * numel) {
        return Error(Errc::InvalidArgument, "expected " + std::to_string(samples) + " x " +
                                                std::to_string(numel) + " float32 scores, got " +
                                                runtime::shapeToString(tensor.shape()))
            .context(path.string());
    }
    std::vector<std::vector<double>> rows(static_cast<size_t>(samples));
    for (int64_t s = 0; s < samples; ++s) {
        const float* row = tensor.data<float>() + s * numel;
        rows[static_cast<size_t>(s)].assign(row, row + numel);
    }
    return rows;
}

} // namespace

namespace {

/// Everything but the targets.
Result<hessian::HessianScores> headerFromJson(const json& in) {
    hessian::HessianScores scores;
    const std::string top = "scores";
    QS_ASSIGN_OR_RETURN(const std::string mode, field<std::string>(in, "mode", top));
    QS_ASSIGN_OR_RETURN(scores.mode, hessian::parseMode(mode));
    QS_ASSIGN_OR_RETURN(const std::string gran, field<std::string>(in, "granularity", top));
    QS_ASSIGN_OR_RETURN(scores.granularity, hessian::parseGranularity(gran));
    QS_ASSIGN_OR_RETURN(scores.iterations, field<int>(in, "iterations", top));
    QS_ASSIGN_OR_RETURN(scores.batch, field<int64_t>(in, "batch", top));
    QS_ASSIGN_OR_RETURN(scores.seed, field<uint64_t>(in, "seed", top));
    QS_ASSIGN_OR_RETURN(scores.earlyStop, field<bool>(in, "early_stop", top));
    QS_ASSIGN_OR_RETURN(scores.tolerance, field<double>(in, "tolerance", top));
    QS_ASSIGN_OR_RETURN(scores.outputs, field<std::vector<std::string>>(in, "outputs", top));
    if (in.contains("notes")) {
        QS_ASSIGN_OR_RETURN(scores.notes, field<std::vector<std::string>>(in, "notes", top));
    }
    QS_ASSIGN_OR_RETURN(scores.sampleIndices,
                        field<std::vector<int64_t>>(in, "sample_indices", top));
    return scores;
}

Result<hessian::HessianTargetScores> targetFromJson(const json& t, int64_t samples,
                                                    const std::filesystem::path& baseDir) {
    hessian::HessianTargetScores target;
    QS_ASSIGN_OR_RETURN(target.node, field<std::string>(t, "node", "target"));
    const std::string where = "target '" + target.node + "'";
    QS_ASSIGN_OR_RETURN(target.tensor, field<std::string>(t, "tensor", where));
    QS_ASSIGN_OR_RETURN(target.shape, field<runtime::Shape>(t, "shape", where));
    // Bounded before numel() multiplies the dims: a hostile shape must not overflow it.
    constexpr double kMaxScores = 1e12;
    double elements = 1.0;
    for (const int64_t dim : target.shape) {
        elements *= static_cast<double>(dim);
        if (dim < 0 || elements > kMaxScores) {
            return Error(Errc::InvalidArgument, "\"shape\" is not a tensor shape of at most 1e12 "
                                                "elements")
                .context(where);
        }
    }
    if (t.contains("npy")) {
        QS_ASSIGN_OR_RETURN(const std::string file, field<std::string>(t, "npy", where));
        QS_ASSIGN_OR_RETURN(target.perSample, readNpyRows(baseDir / file, samples, target.numel()));
    } else {
        QS_ASSIGN_OR_RETURN(target.perSample,
                            field<std::vector<std::vector<double>>>(t, "per_sample", where));
    }
    if (static_cast<int64_t>(target.perSample.size()) != samples) {
        return Error(Errc::InvalidArgument, "holds " + std::to_string(target.perSample.size()) +
                                                " samples, sample_indices lists " +
                                                std::to_string(samples))
            .context(where);
    }
    return target;
}

} // namespace

Result<hessian::HessianScores> hessianScoresFromJson(const json& in,
                                                     const std::filesystem::path& baseDir) {
    QS_ASSIGN_OR_RETURN(hessian::HessianScores scores, headerFromJson(in));
    if (!in.contains("targets") || !in["targets"].is_array()) {
        return Error(Errc::InvalidArgument, "missing \"targets\" list").context("scores");
    }
    const auto samples = static_cast<int64_t>(scores.sampleIndices.size());
    for (const json& t : in["targets"]) {
        QS_ASSIGN_OR_RETURN(hessian::HessianTargetScores target,
                            targetFromJson(t, samples, baseDir));
        scores.targets.push_back(std::move(target));
    }
    return scores;
}

} // namespace qs::report
