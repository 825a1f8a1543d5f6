#include "core/report/review_diff.h"

#include <algorithm>
#include <map>
#include <optional>
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

/// What changed at one point: "added", "removed", "bit width", "state", "config" or "".
std::string changeOf(const Row* a, const Row* b) {
    if (a == nullptr) {
        return "added";
    }
    if (b == nullptr) {
        return "removed";
    }
    for (const auto& [column, name] :
         {std::pair{"bits", "bit width"}, {"state", "state"}, {"chosen config", "config"}}) {
        if ((*a)[column] != (*b)[column]) {
            return name;
        }
    }
    return {};
}

void changedQuantizers(ReviewDiff& diff, const ReviewReport& a, const ReviewReport& b) {
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
    for (const auto* rows : {&rowsA, &rowsB}) {
        for (const auto& [point, row] : *rows) {
            points.insert(point);
        }
    }
    for (const std::string& point : points) {
        const auto ra = rowsA.find(point);
        const auto rb = rowsB.find(point);
        const Row* rowA = ra == rowsA.end() ? nullptr : &ra->second;
        const Row* rowB = rb == rowsB.end() ? nullptr : &rb->second;
        const std::string change = changeOf(rowA, rowB);
        if (change.empty()) {
            ++diff.unchanged;
            continue;
        }
        const Row& any = rowA != nullptr ? *rowA : *rowB;
        auto cell = [](const Row* row, std::string_view column) {
            return row != nullptr ? (*row)[column] : std::string();
        };
        diff.quantizers.rows.push_back(
            {point, any["kind"], any["op"], change, cell(rowA, "bits"), cell(rowB, "bits"),
             cell(rowA, "chosen config"), cell(rowB, "chosen config"), cell(rowA, "state"),
             cell(rowB, "state"), cell(rowA, "SQNR dB"), cell(rowB, "SQNR dB")});
    }
}

void bitwidthRows(ReviewDiff& diff, const ReviewReport& a, const ReviewReport& b) {
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
}

void changedPruning(ReviewDiff& diff, const ReviewReport& a, const ReviewReport& b) {
    diff.pruning = {.id = "changed_pruning",
                    .title = "Pruning sections that changed",
                    .columns = {"entry", "channels", "kept A", "kept B"},
                    .numeric = {false, true, true, true},
                    .rows = {}};
    // A side without pruning (or without the section) keeps every channel.
    std::map<std::string, std::pair<std::optional<int64_t>, std::optional<int64_t>>> kept;
    std::map<std::string, int64_t> channels;
    for (const ReviewPruning::Section& s :
         a.pruning ? a.pruning->sections : std::vector<ReviewPruning::Section>{}) {
        kept[s.entry].first = s.kept;
        channels[s.entry] = s.channels;
    }
    for (const ReviewPruning::Section& s :
         b.pruning ? b.pruning->sections : std::vector<ReviewPruning::Section>{}) {
        kept[s.entry].second = s.kept;
        channels[s.entry] = s.channels;
    }
    for (const auto& [entry, pair] : kept) {
        const int64_t all = channels[entry];
        const int64_t keptA = pair.first.value_or(all);
        const int64_t keptB = pair.second.value_or(all);
        if (keptA != keptB) {
            diff.pruning.rows.push_back(
                {entry, std::to_string(all), std::to_string(keptA), std::to_string(keptB)});
        }
    }
}
} // namespace

std::map<std::string, MarkChange> markChanges(const std::vector<quantization::QuantizerMark>& a,
                                              const std::vector<quantization::QuantizerMark>& b) {
    std::map<std::string, MarkChange> changes;
    std::map<std::string, const quantization::QuantizerMark*> inB;
    for (const quantization::QuantizerMark& mark : b) {
        inB.emplace(mark.point.toString(), &mark);
    }
    std::set<std::string> seen;
    for (const quantization::QuantizerMark& mark : a) {
        const std::string point = mark.point.toString();
        seen.insert(point);
        const auto other = inB.find(point);
        if (other == inB.end()) {
            changes[point] = {.change = "removed", .a = mark, .b = std::nullopt};
            continue;
        }
        const quantization::QuantizerMark& m = *other->second;
        // A setup may leave the signedness to the statistics; an export has decided it.
        const char* change = mark.config.numBits != m.config.numBits   ? "bit width"
                             : mark.status != m.status                 ? "state"
                             : !mark.config.isCompatibleWith(m.config) ? "config"
                                                                       : nullptr;
        if (change != nullptr) {
            changes[point] = {.change = change, .a = mark, .b = m};
        }
    }
    for (const auto& [point, mark] : inB) {
        if (!seen.contains(point)) {
            changes[point] = {.change = "added", .a = std::nullopt, .b = *mark};
        }
    }
    return changes;
}

ReviewDiff diffReviews(const ReviewReport& a, const ReviewReport& b, std::string nameA,
                       std::string nameB) {
    ReviewDiff diff;
    diff.nameA = std::move(nameA);
    diff.nameB = std::move(nameB);
    diff.a = a.header;
    diff.b = b.header;
    changedQuantizers(diff, a, b);
    bitwidthRows(diff, a, b);
    changedPruning(diff, a, b);
    if (a.header.modelPath != b.header.modelPath) {
        diff.notes.push_back("A is of " + a.header.modelPath + ", B of " + b.header.modelPath +
                             ": points are matched by name");
    }
    return diff;
}

} // namespace qs::report
