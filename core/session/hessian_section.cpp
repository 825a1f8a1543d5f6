#include "core/session/hessian_section.h"

#include "core/report/hessian_report.h"
#include "core/session/sections.h"
#include "core/support/json_reader.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <filesystem>
#include <limits>
#include <numeric>
#include <sstream>

namespace qs::session {

namespace {

/// "PATH: N files, S bytes, newest T" (a folder, recursively), "PATH: S bytes, T" (a file),
/// "PATH: missing".
std::string pathStamp(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const auto stamp = [](fs::file_time_type time) {
        return std::to_string(
            std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count());
    };
    if (fs::is_regular_file(path, ec)) {
        const uintmax_t size = fs::file_size(path, ec);
        return path + ": " + std::to_string(size) + " bytes, " +
               stamp(fs::last_write_time(path, ec));
    }
    if (!fs::is_directory(path, ec)) {
        return path + ": missing";
    }
    int64_t files = 0;
    uintmax_t bytes = 0;
    fs::file_time_type newest = fs::last_write_time(path, ec);
    for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
        std::error_code entryError;
        newest = std::max(newest, it->last_write_time(entryError));
        if (it->is_regular_file(entryError)) {
            ++files;
            bytes += it->file_size(entryError);
        }
    }
    return path + ": " + std::to_string(files) + " files, " + std::to_string(bytes) + " bytes, " +
           stamp(newest);
}

} // namespace

const hessian::HessianTargetScores* HessianSection::target(std::string_view node) const {
    for (const hessian::HessianTargetScores& t : scores.targets) {
        if (t.node == node) {
            return &t;
        }
    }
    return nullptr;
}

double HessianSection::perTensorScore(const hessian::HessianTargetScores& target) {
    const std::vector<double> mean = target.mean();
    return std::accumulate(mean.begin(), mean.end(), 0.0);
}

std::string datasetFingerprint(const runtime::DatasetRequest& dataset) {
    std::ostringstream out;
    out << dataset.describe();
    if (dataset.maxSamples != std::numeric_limits<int64_t>::max()) {
        out << "; at most " << dataset.maxSamples;
    }
    for (const std::string& shape : dataset.inputShapes) {
        out << "; shape " << shape;
    }
    std::vector<std::string> paths = dataset.npyFiles;
    for (const std::string* path : {&dataset.imagesDir, &dataset.classesDir, &dataset.labelsNpy}) {
        if (!path->empty()) {
            paths.push_back(*path);
        }
    }
    for (const std::string& path : paths) {
        out << "; " << pathStamp(path);
    }
    return out.str();
}

nlohmann::json toJson(const HessianSection& section) {
    return {{"dataset", section.dataset},
            {"dataset_fingerprint", section.datasetFingerprint},
            {"model_hash", section.modelHash},
            {"dataset_request", datasetRequestToJson(section.datasetRequest)},
            {"seconds", section.seconds},
            {"scores", report::toJson(section.scores)}};
}

Result<HessianSection> hessianSectionFromJson(const nlohmann::json& json) {
    const std::string path = strict::member("sections", kHessianSection);
    QS_TRY(strict::expectObject(json, path));
    QS_TRY(strict::onlyKeys(
        json, path,
        {"dataset", "dataset_fingerprint", "model_hash", "dataset_request", "seconds", "scores"}));
    HessianSection section;
    QS_ASSIGN_OR_RETURN(section.dataset, strict::field<std::string>(json, path, "dataset"));
    QS_ASSIGN_OR_RETURN(section.datasetFingerprint,
                        strict::field<std::string>(json, path, "dataset_fingerprint"));
    QS_ASSIGN_OR_RETURN(section.modelHash, strict::field<std::string>(json, path, "model_hash"));
    QS_ASSIGN_OR_RETURN(section.seconds, strict::field<double>(json, path, "seconds"));
    QS_ASSIGN_OR_RETURN(const nlohmann::json* request,
                        strict::require(json, path, "dataset_request"));
    QS_ASSIGN_OR_RETURN(section.datasetRequest,
                        datasetRequestFromJson(*request, strict::member(path, "dataset_request")));
    QS_ASSIGN_OR_RETURN(const nlohmann::json* scores, strict::require(json, path, "scores"));
    QS_ASSIGN_OR_RETURN(section.scores, report::hessianScoresFromJson(*scores).context(
                                            strict::member(path, "scores")));
    return section;
}

Result<std::optional<HessianSection>> hessianSection(const SessionFile& session) {
    const auto it = session.sections.find(kHessianSection);
    if (it == session.sections.end()) {
        return std::optional<HessianSection>();
    }
    QS_ASSIGN_OR_RETURN(HessianSection section, hessianSectionFromJson(it->second));
    return std::optional<HessianSection>(std::move(section));
}

void setHessianSection(SessionFile& session, const HessianSection& section) {
    session.sections.insert_or_assign(std::string(kHessianSection), toJson(section));
}

} // namespace qs::session
