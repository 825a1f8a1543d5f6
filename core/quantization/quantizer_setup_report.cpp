// Proposal JSON, bitwidth table and DOT debug view.

#include "core/quantization/quantizer_setup_report.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <map>
#include <ostream>
#include <set>
#include <sstream>

namespace qs::quantization {

namespace {
nlohmann::json qipJson(const InsertionPoint& ip) {
    nlohmann::json qip = {{"target_node_name", ip.targetNodeName}};
    if (!ip.isWeight) {
        qip["input_port_id"] = ip.inputPortId ? nlohmann::json(*ip.inputPortId) : nlohmann::json();
    }
    return qip;
}

nlohmann::json groupsJson(const std::map<int, std::vector<int>>& groups) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [gid, ids] : groups) {
        out[std::to_string(gid)] = ids;
    }
    return out;
}

/// DOT ids and labels must not contain colons in NNCF's dumps; keep the same convention.
std::string dotEscape(std::string text) {
    std::replace(text.begin(), text.end(), ':', '^');
    std::string out;
    for (const char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
        }
        out += c == '\n' ? ' ' : c;
    }
    return out;
}

std::string cell(size_t count, size_t total) {
    const double percent =
        total == 0 ? 0.0 : 100.0 * static_cast<double>(count) / static_cast<double>(total);
    char buffer[64];
    std::snprintf(buffer, sizeof(buffer), "%.0f%% (%zu / %zu)", percent, count, total);
    return buffer;
}
} // namespace

nlohmann::json proposalToJson(const MultiConfigQuantizerSetup& setup) {
    nlohmann::json points = nlohmann::json::object();
    for (const auto& [id, point] : setup.quantizationPoints) {
        nlohmann::json configs = nlohmann::json::array();
        for (const QuantizerConfig& config : point.possibleConfigs) {
            configs.push_back(toJson(config));
        }
        points[std::to_string(id)] = {
            {"qip", qipJson(point.insertionPoint)},
            {"qip_class", point.insertionPoint.qipClass()},
            {"possible_qconfigs", configs},
            {"directly_quantized_operator_node_names", point.directlyQuantizedOperatorNodeNames}};
    }
    nlohmann::json types = nlohmann::json::object();
    for (const auto& [gid, type] : setup.unifiedScaleTypes) {
        types[std::to_string(gid)] =
            type == UnifiedScaleType::UnifyAlways ? "UNIFY_ALWAYS" : "UNIFY_ONLY_PER_TENSOR";
    }
    nlohmann::json requant = nlohmann::json::array();
    for (const auto& [child, parent] : setup.requantizationParents) {
        requant.push_back({{"requantizer", child}, {"upstream", parent}});
    }
    return {{"quantization_points", points},
            {"unified_scale_groups", groupsJson(setup.unifiedScaleGroups)},
            {"unified_scale_types", types},
            {"shared_input_operation_set_groups", groupsJson(setup.sharedInputOperationSetGroups)},
            {"requantization", requant}};
}

std::string bitwidthSummaryTable(const SingleConfigQuantizerSetup& setup) {
    std::map<int, std::pair<size_t, size_t>, std::greater<>>
        byBits; // bits -> (weights, activations)
    size_t weights = 0;
    size_t activations = 0;
    for (const auto& [id, point] : setup.quantizationPoints) {
        auto& counts = byBits[point.qconfig.numBits];
        if (point.insertionPoint.isWeight) {
            ++counts.first;
            ++weights;
        } else {
            ++counts.second;
            ++activations;
        }
    }
    const std::vector<std::string> header = {"Num bits (N)", "N-bits WQs / Placed WQs",
                                             "N-bits AQs / Placed AQs", "N-bits Qs / Placed Qs"};
    std::vector<std::vector<std::string>> rows;
    rows.reserve(byBits.size());
    for (const auto& [bits, counts] : byBits) {
        rows.push_back({std::to_string(bits), cell(counts.first, weights),
                        cell(counts.second, activations),
                        cell(counts.first + counts.second, weights + activations)});
    }
    std::vector<size_t> widths;
    widths.reserve(header.size());
    for (const std::string& h : header) {
        widths.push_back(h.size());
    }
    for (const auto& row : rows) {
        for (size_t i = 0; i < row.size(); ++i) {
            widths[i] = std::max(widths[i], row[i].size());
        }
    }
    auto rule = [&](char c) {
        std::string line = "+";
        for (const size_t w : widths) {
            line += std::string(w + 2, c) + "+";
        }
        return line + "\n";
    };
    auto line = [&](const std::vector<std::string>& cells, bool rightAlignFirst) {
        std::string out = "|";
        for (size_t i = 0; i < cells.size(); ++i) {
            const std::string pad(widths[i] - cells[i].size(), ' ');
            out += " " + ((i == 0 && rightAlignFirst) ? pad + cells[i] : cells[i] + pad) + " |";
        }
        return out + "\n";
    };
    std::string out = rule('-') + line(header, false) + rule('=');
    for (const auto& row : rows) {
        out += line(row, true) + rule('-');
    }
    return out;
}

namespace {
struct DotQuantizer {
    int ipNode = -1;
    std::string configs;
    std::vector<std::string> sinks;
    bool requantizer = false;
};

void writeGraphNodes(std::ostream& out, const InsertionPointGraph& g) {
    for (size_t i = 0; i < g.nodes().size(); ++i) {
        const IpNode& n = g.nodes()[i];
        out << "  n" << i << " [";
        if (n.isInsertionPoint()) {
            out << "label=\"TP: " << dotEscape(n.key) << "\", color=red";
        } else if (n.type == IpNodeType::AuxiliaryBarrier) {
            out << "label=\"" << dotEscape(n.key) << "\", color=green";
        } else {
            out << "label=\"" << dotEscape(n.key) << "\", shape=box";
        }
        out << "];\n";
    }
}

/// Edges: blue and labelled with the ids of the quantizers covering them; integer edges violet.
void writeGraphEdges(std::ostream& out, const QuantizationProposal& proposal,
                     const SingleConfigQuantizerSetup* finalSetup) {
    const InsertionPointGraph& g = *proposal.graph;
    for (size_t i = 0; i < g.edges().size(); ++i) {
        const IpEdge& e = g.edges()[i];
        std::string ids;
        const auto& covering =
            i < proposal.edgeQuantizers.size() ? proposal.edgeQuantizers[i] : std::vector<int>{};
        for (const int id : covering) {
            if (finalSetup == nullptr || finalSetup->quantizationPoints.contains(id)) {
                ids += (ids.empty() ? "" : ",") + std::to_string(id);
            }
        }
        std::vector<std::string> attrs;
        if (!ids.empty()) {
            attrs.insert(attrs.end(), {"color=blue", "label=\"" + ids + "\""});
        }
        if (e.isInteger) {
            attrs.insert(attrs.end(), {"color=violet", "style=bold"});
        }
        out << "  n" << e.from << " -> n" << e.to;
        for (size_t a = 0; a < attrs.size(); ++a) {
            out << (a == 0 ? " [" : ", ") << attrs[a] << (a + 1 == attrs.size() ? "]" : "");
        }
        out << ";\n";
    }
}

std::map<int, DotQuantizer> dotQuantizers(const QuantizationProposal& proposal,
                                          const SingleConfigQuantizerSetup* finalSetup) {
    std::map<int, DotQuantizer> quantizers;
    if (finalSetup != nullptr) {
        for (const auto& [id, point] : finalSetup->quantizationPoints) {
            if (!point.insertionPoint.isWeight) {
                quantizers[id] = {point.ipNode, point.qconfig.toString(),
                                  point.directlyQuantizedOperatorNodeNames,
                                  finalSetup->requantizationParents.contains(id)};
            }
        }
        return quantizers;
    }
    for (const auto& [id, point] : proposal.setup.quantizationPoints) {
        if (point.insertionPoint.isWeight) {
            continue;
        }
        std::string configs;
        for (const QuantizerConfig& config : point.possibleConfigs) {
            configs += config.toString() + "\\n";
        }
        quantizers[id] = {point.ipNode, configs, point.directlyQuantizedOperatorNodeNames,
                          proposal.setup.requantizationParents.contains(id)};
    }
    return quantizers;
}

void writeQuantizers(std::ostream& out, const std::map<int, DotQuantizer>& quantizers) {
    for (const auto& [id, q] : quantizers) {
        out << "  q" << id << " [label=\"Quantizer #" << id << (q.requantizer ? " (RQ)" : "")
            << "\\n"
            << dotEscape(q.configs) << "\\nQ-input sink ops:";
        for (const std::string& sink : q.sinks) {
            out << "\\n" << dotEscape(sink);
        }
        out << "\", color=blue, shape=note];\n";
        out << "  q" << id << " -> n" << q.ipNode << " [style=dashed];\n";
    }
}

/// Each unified group as a ring of dotted, arrowless edges.
void writeUnifiedRings(std::ostream& out, const std::map<int, std::vector<int>>& groups,
                       const std::map<int, DotQuantizer>& quantizers) {
    for (const auto& [gid, ids] : groups) {
        std::vector<int> members;
        std::copy_if(ids.begin(), ids.end(), std::back_inserter(members),
                     [&](int id) { return quantizers.contains(id); });
        if (members.size() < 2) {
            continue;
        }
        for (size_t i = 0; i < members.size(); ++i) {
            out << "  q" << members[i] << " -> q" << members[(i + 1) % members.size()]
                << " [style=dotted, arrowhead=none, label=\"Unified group " << gid << "\"];\n";
        }
    }
}
} // namespace

std::string quantizerSetupToDot(const QuantizationProposal& proposal,
                                const SingleConfigQuantizerSetup* finalSetup) {
    std::ostringstream out;
    out << "digraph quant_prop {\n";
    out << "  label=\""
        << (finalSetup != nullptr ? "final quantizer setup" : "proposed quantizer setup")
        << "\";\n";
    writeGraphNodes(out, *proposal.graph);
    writeGraphEdges(out, proposal, finalSetup);
    const std::map<int, DotQuantizer> quantizers = dotQuantizers(proposal, finalSetup);
    writeQuantizers(out, quantizers);
    writeUnifiedRings(out,
                      finalSetup != nullptr ? finalSetup->unifiedScaleGroups
                                            : proposal.setup.unifiedScaleGroups,
                      quantizers);
    out << "}\n";
    return out.str();
}

} // namespace qs::quantization
