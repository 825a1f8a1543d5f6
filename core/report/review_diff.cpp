#include "core/report/review_diff.h"

#include <algorithm>
#include <map>
#include <set>

namespace qs::report {

namespace {
/// A quantizer row's cells by column name.
struct Row {
    const std::vector<std::string>* cells = nullptr;
    const std::vector<std::string>* columns = nullptr;

    const std::string& operator[](std::string_view name) const {
        static const std::string kEmpty;
        const auto found = std::find(columns->begin(), columns->end(), name);
        return found == columns->end() ? kEmpty
                                       : cells->at(static_cast<size_t>(found - columns->begin()));
    }
};

/// Rows by insertion point (a point has one quantizer in a setup).
std::map<std::string, Row> byPoint(const ReviewTable& table) {
    std::map<std::string, Row> rows;
    for (const std::vector<std::string>& cells : table.rows) {
        const Row row{&cells, &table.columns};
        rows.emplace(row["insertion point"], row);
    }
    return rows;
}
} // namespace

ReviewDiff diffReviews(const ReviewReport& a, const ReviewReport& b, std::string nameA,
                       std::string nameB) {
    ReviewDiff diff;
    diff.nameA = std::move(nameA);
    diff.nameB = std::move(nameB);
    diff.a = a.header;
    diff.b = b.header;
    diff.quantizers = {
        .id = "changed_quantizers",
        .title = "Quantizers that changed",
        .columns = {"insertion point", "kind", "op", "change", "bits A", "bits B", "config A",
                    "config B", "state A", "state B", "SQNR dB A", "SQNR dB B"},
        .numeric = {false, false, false, false, true, true, false, false, false, false, true, true},
        .rows = {}};
    const std::map<std::string, Row> rowsA = byPoint(a.quantizers);
    const std::map<std::string, Row> rowsB = byPoint(b.quantizers);
    std::set<std::string> points;
    for (const auto& [point, row] : rowsA) {
        points.insert(point);
    }
    for (const auto& [point, row] : rowsB) {
        points.insert(point);
    }
    for (const std::string& point : points) {
        const auto ra = rowsA.find(point);
        const auto rb = rowsB.find(point);
        const bool inA = ra != rowsA.end();
        const bool inB = rb != rowsB.end();
        const Row& any = inA ? ra->second : rb->second;
        std::string change;
        if (!inA) {
            change = "added";
        } else if (!inB) {
            change = "removed";
        } else if (ra->second["bits"] != rb->second["bits"]) {
            change = "bit width";
        } else if (ra->second["state"] != rb->second["state"]) {
            change = "state";
        } else if (ra->second["chosen config"] != rb->second["chosen config"]) {
            change = "config";
        }
        if (change.empty()) {
            ++diff.unchanged;
            continue;
        }
        auto cell = [](const std::map<std::string, Row>::const_iterator& it, bool present,
                       std::string_view column) {
            return present ? it->second[column] : std::string();
        };
        diff.quantizers.rows.push_back(
            {point, any["kind"], any["op"], change, cell(ra, inA, "bits"), cell(rb, inB, "bits"),
             cell(ra, inA, "chosen config"), cell(rb, inB, "chosen config"), cell(ra, inA, "state"),
             cell(rb, inB, "state"), cell(ra, inA, "SQNR dB"), cell(rb, inB, "SQNR dB")});
    }
    diff.bitwidths = {.id = "bitwidths",
                      .title = "Quantizers per bit width",
                      .columns = {"bits", "activations A", "activations B", "weights A",
                                  "weights B", "weight bytes A", "weight bytes B"},
                      .numeric = std::vector<bool>(7, true),
                      .rows = {}};
    std::set<int, std::greater<>> bits;
    for (const auto* breakdown : {&a.bitwidths, &b.bitwidths}) {
        for (const auto& [width, share] : breakdown->byBits) {
            bits.insert(width);
        }
    }
    for (const int width : bits) {
        const auto share = [width](const BitwidthBreakdown& breakdown) {
            const auto found = breakdown.byBits.find(width);
            return found == breakdown.byBits.end() ? BitwidthShare{} : found->second;
        };
        const BitwidthShare sa = share(a.bitwidths);
        const BitwidthShare sb = share(b.bitwidths);
        diff.bitwidths.rows.push_back(
            {std::to_string(width), std::to_string(sa.activationQuantizers),
             std::to_string(sb.activationQuantizers), std::to_string(sa.weightQuantizers),
             std::to_string(sb.weightQuantizers), std::to_string(sa.weightBytes),
             std::to_string(sb.weightBytes)});
    }
    diff.pruning = {.id = "changed_pruning",
                    .title = "Pruning sections that changed",
                    .columns = {"entry", "channels", "kept A", "kept B"},
                    .numeric = {false, true, true, true},
                    .rows = {}};
    std::map<std::string, std::pair<std::string, std::string>> kept;
    std::map<std::string, int64_t> channels;
    for (const auto& [report, side] : {std::pair{&a, 0}, std::pair{&b, 1}}) {
        if (!report->pruning) {
            continue;
        }
        for (const ReviewPruning::Section& s : report->pruning->sections) {
            (side == 0 ? kept[s.entry].first : kept[s.entry].second) = std::to_string(s.kept);
            channels[s.entry] = s.channels;
        }
    }
    for (const auto& [entry, pair] : kept) {
        // A side without pruning keeps every channel.
        const std::string all = std::to_string(channels[entry]);
        const std::string keptA = pair.first.empty() ? all : pair.first;
        const std::string keptB = pair.second.empty() ? all : pair.second;
        if (keptA != keptB) {
            diff.pruning.rows.push_back({entry, all, keptA, keptB});
        }
    }
    if (a.header.modelName != b.header.modelName) {
        diff.notes.push_back("A is of " + a.header.modelPath + ", B of " + b.header.modelPath +
                             ": points are matched by name");
    }
    return diff;
}

} // namespace qs::report
