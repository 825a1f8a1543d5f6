// Weight compression, the report step: NNCF's bitwidth table and the plan as JSON.

#include "core/compression/weight_compression.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <sstream>

namespace qs::compression {

namespace {
struct TableRow {
    std::string label;
    int bits = 32;
    int64_t allParams = 0;
    int64_t allLayers = 0;
    int64_t ratioParams = 0;
    int64_t ratioLayers = 0;
};

std::vector<TableRow> tableRows(const CompressionPlan& plan, TableRow& totals) {
    std::map<std::string, TableRow> rows;
    for (const WeightDecision& decision : plan.weights) {
        const std::string label = decisionModeLabel(decision.mode, decision.groupSize);
        TableRow& row = rows[label];
        row.label = label;
        row.bits = decision.mode == CompressionMode::None ? 32 : modeBits(decision.mode);
        row.allParams += decision.numElements;
        ++row.allLayers;
        totals.allParams += decision.numElements;
        ++totals.allLayers;
        if (decision.ratioDefining) {
            row.ratioParams += decision.numElements;
            ++row.ratioLayers;
            totals.ratioParams += decision.numElements;
            ++totals.ratioLayers;
        }
    }
    std::vector<TableRow> out;
    out.reserve(rows.size());
    for (auto& [label, row] : rows) {
        out.push_back(row);
    }
    // Widest precision first, as NNCF lists 8-bit before 4-bit.
    std::stable_sort(out.begin(), out.end(),
                     [](const TableRow& a, const TableRow& b) { return a.bits > b.bits; });
    return out;
}

std::string percentCell(int64_t part, int64_t whole, int64_t layers, int64_t totalLayers) {
    const double percent =
        whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
    std::ostringstream cell;
    cell << std::llround(percent) << "% (" << layers << " / " << totalLayers << ")";
    return cell.str();
}

std::string padded(const std::string& text, size_t width) {
    return " " + text + std::string(width - text.size() + 1, ' ');
}
} // namespace

std::string formatBitwidthTable(const CompressionPlan& plan) {
    TableRow totals;
    const std::vector<TableRow> rows = tableRows(plan, totals);
    std::vector<std::array<std::string, 3>> cells = {{"Weight compression mode",
                                                      "% all parameters (layers)",
                                                      "% ratio-defining parameters (layers)"}};
    for (const TableRow& row : rows) {
        cells.push_back(
            {row.label,
             percentCell(row.allParams, totals.allParams, row.allLayers, totals.allLayers),
             percentCell(row.ratioParams, totals.ratioParams, row.ratioLayers,
                         totals.ratioLayers)});
    }
    std::array<size_t, 3> widths{};
    for (const auto& line : cells) {
        for (size_t col = 0; col < 3; ++col) {
            widths[col] = std::max(widths[col], line[col].size());
        }
    }
    auto rule = [&](char fill) {
        std::string out = "+";
        for (const size_t width : widths) {
            out += std::string(width + 2, fill) + "+";
        }
        return out + "\n";
    };
    std::string out = "Statistics of the bitwidth distribution:\n" + rule('-');
    for (size_t line = 0; line < cells.size(); ++line) {
        out += "|";
        for (size_t col = 0; col < 3; ++col) {
            out += padded(cells[line][col], widths[col]) + "|";
        }
        out += "\n" + rule(line == 0 ? '=' : '-');
    }
    return out;
}

nlohmann::json planToJson(const CompressionPlan& plan) {
    const WeightCompressionOptions& options = plan.options;
    nlohmann::json json;
    json["options"] = {
        {"mode", modeName(options.mode)},
        {"group_size", options.groupSize == 0 ? defaultGroupSize(options.mode) : options.groupSize},
        {"ratio", options.ratio},
        {"group_size_fallback", fallbackName(options.groupSizeFallback)},
        {"backup_mode", modeName(options.backupMode)},
        {"all_layers", options.allLayers},
        {"sensitivity_metric", sensitivityMetricName(options.sensitivity)}};
    nlohmann::json weights = nlohmann::json::array();
    for (const WeightDecision& decision : plan.weights) {
        weights.push_back({{"weight", decision.valueName},
                           {"node", decision.nodeName},
                           {"op_type", decision.opType},
                           {"metatype", decision.metatype},
                           {"shape", decision.dims},
                           {"num_parameters", decision.numElements},
                           {"channel_axis", decision.channelAxis},
                           {"ratio_defining", decision.ratioDefining},
                           {"mode", modeName(decision.mode)},
                           {"group_size", decision.groupSize},
                           {"sensitivity", decision.sensitivity},
                           {"activation_statistic", decision.activationStatistic},
                           {"note", decision.note}});
    }
    json["weights"] = std::move(weights);
    TableRow totals;
    nlohmann::json table = nlohmann::json::array();
    for (const TableRow& row : tableRows(plan, totals)) {
        table.push_back({{"mode", row.label},
                         {"parameters", row.allParams},
                         {"layers", row.allLayers},
                         {"ratio_defining_parameters", row.ratioParams},
                         {"ratio_defining_layers", row.ratioLayers}});
    }
    json["table"] = std::move(table);
    json["totals"] = {{"parameters", totals.allParams},
                      {"layers", totals.allLayers},
                      {"ratio_defining_parameters", totals.ratioParams},
                      {"ratio_defining_layers", totals.ratioLayers}};
    return json;
}

} // namespace qs::compression
