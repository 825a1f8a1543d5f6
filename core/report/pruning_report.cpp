#include "core/report/pruning_report.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace qs::report {

namespace {

std::string megabytes(int64_t bytes) {
    std::ostringstream out;
    out << std::fixed << std::setprecision(2);
    if (bytes < 1000000) {
        out << static_cast<double>(bytes) / 1.0e3 << " kB";
    } else {
        out << static_cast<double>(bytes) / 1.0e6 << " MB";
    }
    return out.str();
}

} // namespace

Result<std::optional<AccuracyComparison>> pruningAccuracy(const pruning::PruningOutcome& outcome) {
    return compareAccuracy(outcome.labelled);
}

nlohmann::json toJson(const pruning::PruningAnalysis& analysis,
                      const pruning::PruningOutcome& outcome) {
    const graph::Graph& graph = analysis.graph;
    nlohmann::json json;
    json["target_bytes"] = outcome.targetBytes;
    json["dense_bytes"] = outcome.denseBytes;
    json["pruned_bytes"] = outcome.prunedBytes;
    json["minimum_bytes"] = outcome.minimumBytes;
    json["pruned_graph_bytes"] = outcome.prunedGraphBytes;
    json["simd"] = analysis.simd;
    json["simd_padding"] = analysis.simdPadding;
    json["importance"] = std::string(pruning::importanceName(analysis.metric));
    json["samples"] = analysis.samples;
    nlohmann::json sections = nlohmann::json::array();
    for (size_t s = 0; s < analysis.detection.sections.size(); ++s) {
        const pruning::PruningSection& section = analysis.detection.sections[s];
        nlohmann::json item;
        item["entry"] = analysis.entryNames[s];
        nlohmann::json intermediates = nlohmann::json::array();
        for (const graph::NodeId n : section.intermediates) {
            intermediates.push_back(graph.node(n).name);
        }
        item["intermediates"] = intermediates;
        item["exit"] = analysis.exitNames[s];
        item["channels"] = section.channels;
        item["kept"] = outcome.kept[s];
        const pruning::EntryConstraint constraint =
            outcome.constraints.empty() ? pruning::EntryConstraint{} : outcome.constraints[s];
        item["locked"] = constraint.kind == pruning::EntryConstraint::Kind::Lock;
        if (constraint.kind == pruning::EntryConstraint::Kind::Keep) {
            item["fixed_kept"] = constraint.kept;
        }
        item["simd"] = analysis.importance[s].simd;
        item["bytes_before"] = outcome.sectionBytesBefore[s];
        item["bytes_after"] = outcome.sectionBytesAfter[s];
        item["mask"] = outcome.info.masks[s];
        item["scores"] = outcome.info.scores[s];
        sections.push_back(std::move(item));
    }
    json["sections"] = sections;
    nlohmann::json notPrunable = nlohmann::json::array();
    for (const graph::NodeId id : graph.nodeIds()) {
        const std::string& reason = analysis.detection.notPrunableReason[id.index()];
        if (!reason.empty()) {
            notPrunable.push_back({{"node", graph.node(id).name}, {"reason", reason}});
        }
    }
    json["not_prunable"] = notPrunable;
    json["notes"] = analysis.notes;
    // Bad labels are reported by pruningAccuracy() where the caller checks it.
    if (auto accuracy = pruningAccuracy(outcome); accuracy.ok() && accuracy->has_value()) {
        json["accuracy"] = toJson(**accuracy, "pruned");
    }
    return json;
}

std::string pruningText(const pruning::PruningAnalysis& analysis,
                        const pruning::PruningOutcome& outcome) {
    std::ostringstream out;
    size_t entryWidth = 5;
    size_t exitWidth = 4;
    for (size_t s = 0; s < analysis.entryNames.size(); ++s) {
        entryWidth = std::max(entryWidth, analysis.entryNames[s].size());
        exitWidth = std::max(exitWidth, analysis.exitNames[s].size());
    }
    const auto ew = static_cast<int>(entryWidth);
    const auto xw = static_cast<int>(exitWidth);
    out << std::left << std::setw(ew) << "entry"
        << "  " << std::setw(xw) << "exit"
        << "  " << std::setw(11) << "kept/total"
        << "  " << std::setw(12) << "before"
        << "  "
        << "after\n";
    for (size_t s = 0; s < analysis.entryNames.size(); ++s) {
        std::ostringstream kept;
        kept << outcome.kept[s] << '/' << analysis.detection.sections[s].channels;
        const pruning::EntryConstraint c =
            outcome.constraints.empty() ? pruning::EntryConstraint{} : outcome.constraints[s];
        std::string mark;
        if (c.kind == pruning::EntryConstraint::Kind::Lock) {
            mark = "  (locked)";
        } else if (c.kind == pruning::EntryConstraint::Kind::Keep) {
            mark = "  (fixed)";
        }
        out << std::left << std::setw(ew) << analysis.entryNames[s] << "  " << std::setw(xw)
            << analysis.exitNames[s] << "  " << std::setw(11) << kept.str() << "  " << std::setw(12)
            << megabytes(outcome.sectionBytesBefore[s]) << "  "
            << megabytes(outcome.sectionBytesAfter[s]) << mark << '\n';
    }
    const double ratio = outcome.denseBytes > 0 ? static_cast<double>(outcome.prunedBytes) /
                                                      static_cast<double>(outcome.denseBytes)
                                                : 0.0;
    out << analysis.entryNames.size() << " pruning sections; importance "
        << pruning::importanceName(analysis.metric) << ", SIMD " << analysis.simd
        << (analysis.simdPadding ? " (padded)" : "") << '\n';
    out << "dense " << outcome.denseBytes << " bytes, pruned " << outcome.prunedBytes << " bytes ("
        << std::fixed << std::setprecision(1) << ratio * 100.0 << " %), target "
        << outcome.targetBytes << " bytes, minimum " << outcome.minimumBytes << " bytes\n";
    if (auto accuracy = pruningAccuracy(outcome); accuracy.ok() && accuracy->has_value()) {
        out << std::defaultfloat << accuracyText(**accuracy, "pruned");
    }
    return out.str();
}

} // namespace qs::report
