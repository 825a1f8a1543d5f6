// HAWQ.json, the log line, the bit-width table, the Pareto CSV and the bitwidth DOT.

#include "core/report/hawq_report.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

namespace qs::report {

using mixed_precision::HawqCandidate;
using mixed_precision::HawqOutcome;
using mixed_precision::HawqProblem;
using mixed_precision::WeightLayer;

namespace {

std::string number(double value, const char* format = "%.6g") {
    std::array<char, 64> text{};
    std::snprintf(text.data(), text.size(), format, value);
    return text.data();
}

std::string bitsList(const std::vector<int>& bits) {
    std::string out;
    for (const int b : bits) {
        out += (out.empty() ? "" : ", ") + std::to_string(b);
    }
    return "[" + out + "]";
}

/// The bits of the activation quantizer feeding layer `l` in `candidate`, or nullopt.
std::optional<int> activationBitsOf(const HawqProblem& problem, const HawqCandidate& candidate,
                                    size_t l) {
    const WeightLayer& layer = problem.layers[l];
    if (!layer.activation) {
        return std::nullopt;
    }
    return candidate.activationBits[*layer.activation];
}

} // namespace

nlohmann::json toJson(const HawqOutcome& outcome) {
    const mixed_precision::HawqAnalysis& analysis = outcome.analysis;
    const HawqProblem& problem = analysis.problem;
    const HawqCandidate& chosen = analysis.candidates[outcome.chosen];
    nlohmann::json json;
    json["compression_ratio_target"] = outcome.target;
    json["mode"] = std::string(mixed_precision::assignmentModeName(problem.mode));
    json["search"] = std::string(mixed_precision::searchName(analysis.search));
    json["bits"] = problem.bits;
    nlohmann::json layers = nlohmann::json::array();
    for (size_t l = 0; l < problem.layers.size(); ++l) {
        const WeightLayer& layer = problem.layers[l];
        nlohmann::json perturbation = nlohmann::json::object();
        for (const auto& [bits, noise] : analysis.perturbations[l]) {
            perturbation[std::to_string(bits)] = noise;
        }
        const std::optional<int> activation = activationBitsOf(problem, chosen, l);
        layers.push_back({{"node", layer.node},
                          {"weight", layer.weight},
                          {"weight_qp", layer.weightQp},
                          {"numel", layer.numel},
                          {"macs", layer.macs},
                          {"avg_trace", analysis.avgTraces[l]},
                          {"bits_allowed", layer.bitsAllowed},
                          {"perturbation", perturbation},
                          {"group", layer.group},
                          {"chosen_weight_bits", chosen.weightBits[l]},
                          {"activation_bits",
                           activation ? nlohmann::json(*activation) : nlohmann::json(nullptr)}});
    }
    json["layers"] = std::move(layers);
    nlohmann::json candidates = nlohmann::json::array();
    for (const HawqCandidate& candidate : analysis.candidates) {
        candidates.push_back({{"weight_bits", candidate.weightBits},
                              {"ratio", candidate.ratio},
                              {"metric", candidate.metric}});
    }
    json["candidates"] = std::move(candidates);
    json["trace_order_candidates"] = analysis.traceOrder.size();
    json["chosen"] = outcome.chosen;
    json["pareto"] = analysis.pareto;
    json["merged_quantizers"] = outcome.mergedQuantizers;
    json["requantizers"] = outcome.requantizers;
    json["timings_s"] = {{"traces", outcome.timings.tracesSeconds},
                         {"perturbation", outcome.timings.perturbationSeconds},
                         {"search", outcome.timings.searchSeconds}};
    json["notes"] = problem.notes;
    return json;
}

std::string hawqLogLine(const HawqOutcome& outcome) {
    const HawqCandidate& chosen = outcome.analysis.candidates[outcome.chosen];
    return "Chosen HAWQ bitwidth sequence with ratio=" + number(chosen.ratio, "%.2f") +
           ", bitwidth per weightable layer=" + bitsList(chosen.weightBits);
}

std::string hawqText(const HawqOutcome& outcome) {
    const mixed_precision::HawqAnalysis& analysis = outcome.analysis;
    const HawqProblem& problem = analysis.problem;
    const HawqCandidate& chosen = analysis.candidates[outcome.chosen];
    size_t width = 5;
    for (const WeightLayer& layer : problem.layers) {
        width = std::max(width, layer.node.size());
    }
    std::ostringstream out;
    const auto pad = [](std::string text, size_t n) {
        text.resize(std::max(text.size(), n), ' ');
        return text;
    };
    out << pad("layer", width) << "  " << pad("MACs", 12) << "  " << pad("avg trace", 12) << "  "
        << pad("allowed", 10) << "  W  A   perturbation\n";
    for (size_t l = 0; l < problem.layers.size(); ++l) {
        const WeightLayer& layer = problem.layers[l];
        std::string allowed;
        for (const int b : layer.bitsAllowed) {
            allowed += (allowed.empty() ? "" : ",") + std::to_string(b);
        }
        const std::optional<int> activation = activationBitsOf(problem, chosen, l);
        out << pad(layer.node, width) << "  " << pad(std::to_string(layer.macs), 12) << "  "
            << pad(number(analysis.avgTraces[l]), 12) << "  " << pad(allowed, 10) << "  "
            << pad(std::to_string(chosen.weightBits[l]), 2) << " "
            << pad(activation ? std::to_string(*activation) : "-", 2) << "  "
            << number(analysis.perturbations[l].at(chosen.weightBits[l])) << '\n';
    }
    out << "candidates: " << analysis.candidates.size() << " (" << analysis.traceOrder.size()
        << " trace-order), Pareto front: " << analysis.pareto.size() << " points; chosen #"
        << outcome.chosen << " ratio " << number(chosen.ratio, "%.4f") << " metric "
        << number(chosen.metric) << '\n';
    out << "merged quantizers: " << outcome.mergedQuantizers
        << ", requantizers: " << outcome.requantizers << '\n';
    return out.str();
}

std::string hawqParetoCsv(const HawqOutcome& outcome) {
    const mixed_precision::HawqAnalysis& analysis = outcome.analysis;
    const std::set<size_t> front(analysis.pareto.begin(), analysis.pareto.end());
    std::string out = "index,ratio,metric,on_front,chosen,weight_bits\n";
    for (size_t i = 0; i < analysis.candidates.size(); ++i) {
        const HawqCandidate& candidate = analysis.candidates[i];
        std::string bits;
        for (const int b : candidate.weightBits) {
            bits += (bits.empty() ? "" : " ") + std::to_string(b);
        }
        out += std::to_string(i) + "," + number(candidate.ratio, "%.9g") + "," +
               number(candidate.metric, "%.9g") + "," + (front.contains(i) ? "1" : "0") + "," +
               (i == outcome.chosen ? "1" : "0") + "," + bits + "\n";
    }
    return out;
}

namespace {

/// NNCF's colours by bit width.
std::string_view fillFor(int bits) {
    switch (bits) {
    case 2:
        return "purple";
    case 4:
        return "red";
    case 6:
        return "orange";
    case 8:
        return "green";
    default:
        return "white";
    }
}

std::string quoted(const std::string& text) {
    std::string out = "\"";
    for (const char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
        }
        out += c;
    }
    return out + "\"";
}

/// Op label: type, _k<kxk>, _PAD, _#<index>; depthwise convs are DW_Conv2d.
std::pair<std::string, std::string_view> opLabel(const graph::Graph& model, const graph::Node& node,
                                                 size_t index) {
    std::string label = node.opType;
    std::string_view fill = "white";
    if (node.opType == "Conv") {
        fill = "lightblue";
        const std::vector<int64_t> kernel = node.intsAttr("kernel_shape");
        const int64_t group = node.intAttr("group", 1);
        if (group > 1 && node.inputs.size() > 1 && node.inputs[1].valid()) {
            const graph::Value& weight = model.value(node.inputs[1]);
            if (weight.initializer != nullptr && weight.initializer->dims().size() > 1 &&
                weight.initializer->dims()[1] == 1) {
                label = "DW_Conv2d";
                fill = "purple";
            }
        }
        if (!kernel.empty()) {
            label += "_k";
            for (size_t k = 0; k < kernel.size(); ++k) {
                label += (k == 0 ? "" : "x") + std::to_string(kernel[k]);
            }
        }
        const std::vector<int64_t> pads = node.intsAttr("pads");
        if (std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; })) {
            label += "_PAD";
        }
    }
    return {label + "_#" + std::to_string(index), fill};
}

} // namespace

namespace {

/// The DOT text of one bitwidth graph, built in steps.
class BitwidthDot {
public:
    BitwidthDot(const graph::Graph& model, const HawqOutcome& outcome)
        : m_model(model)
        , m_inputs(model.runtimeInputs()) {
        for (const WeightLayer& layer : outcome.analysis.problem.layers) {
            m_groupOf[layer.weightQp] = layer.group;
        }
        for (const auto& activation : outcome.analysis.problem.activations) {
            m_groupOf[activation.qp] = activation.group;
        }
    }

    void addOps() {
        size_t index = 0;
        for (const graph::NodeId id : m_model.nodeIds()) {
            const graph::Node& node = m_model.node(id);
            const std::string dotId = "n" + std::to_string(id.index());
            m_idOfNode[node.name] = dotId;
            const auto [label, fill] = opLabel(m_model, node, index++);
            m_out << "  " << dotId << " [label=" << quoted(label) << ", fillcolor=" << fill
                  << "];\n";
        }
        for (size_t i = 0; i < m_inputs.size(); ++i) {
            const std::string name = "nncf_model_input_" + std::to_string(i);
            m_idOfNode[name] = "in" + std::to_string(i);
            m_out << "  in" << i << " [label=" << quoted(name) << ", fillcolor=white];\n";
        }
    }

    void addQuantizers(const quantization::SingleConfigQuantizerSetup& setup) {
        for (const auto& [qp, point] : setup.quantizationPoints) {
            const quantization::InsertionPoint& at = point.insertionPoint;
            const std::string dotId = "q" + std::to_string(qp);
            std::string label = std::string(at.isWeight ? "WFQ_[" : "AFQ_[") +
                                point.qconfig.toString() + "]_#" + std::to_string(qp);
            if (const auto g = m_groupOf.find(qp); g != m_groupOf.end()) {
                label += "_G" + std::to_string(g->second);
            }
            m_out << "  " << dotId << " [label=" << quoted(label)
                  << ", fillcolor=" << fillFor(point.qconfig.numBits) << "];\n";
            if (at.isWeight) {
                if (const auto target = m_idOfNode.find(at.targetNodeName);
                    target != m_idOfNode.end()) {
                    m_out << "  " << dotId << " -> " << target->second << ";\n";
                }
            } else if (at.inputPortId) {
                m_preHook[{at.targetNodeName, *at.inputPortId}] = dotId;
            } else {
                m_postHook[at.targetNodeName] = dotId;
            }
        }
        for (const auto& [name, fq] : m_postHook) {
            if (const auto source = m_idOfNode.find(name); source != m_idOfNode.end()) {
                m_out << "  " << source->second << " -> " << fq << ";\n";
            }
        }
    }

    /// Producer -> [post-hook FQ] -> [pre-hook FQ] -> consumer for every activation edge.
    void addEdges() {
        for (const graph::NodeId id : m_model.nodeIds()) {
            const graph::Node& node = m_model.node(id);
            for (size_t port = 0; port < node.inputs.size(); ++port) {
                const std::string source =
                    node.inputs[port].valid() ? sourceOf(node.inputs[port]) : std::string();
                if (source.empty()) {
                    continue; // an initializer or an absent optional input
                }
                const std::string& target = m_idOfNode[node.name];
                const auto fq = m_preHook.find({node.name, static_cast<int>(port)});
                if (fq == m_preHook.end()) {
                    m_out << "  " << source << " -> " << target << ";\n";
                } else {
                    m_out << "  " << source << " -> " << fq->second << ";\n  " << fq->second
                          << " -> " << target << ";\n";
                }
            }
        }
    }

    std::string text() const {
        return "strict digraph bitwidth_graph {\n  node [style=filled, shape=box];\n" +
               m_out.str() + "}\n";
    }

private:
    /// The DOT node an edge from `value` starts at: its producer (or model input), or the
    /// post-hook quantizer on the producer's output 0.
    std::string sourceOf(graph::ValueId value) {
        const graph::Value& v = m_model.value(value);
        std::string name;
        if (v.producer.valid()) {
            name = m_model.node(v.producer).name;
        } else {
            const auto it = std::find(m_inputs.begin(), m_inputs.end(), value);
            if (it == m_inputs.end()) {
                return {};
            }
            name = "nncf_model_input_" + std::to_string(it - m_inputs.begin());
        }
        const bool firstOutput = !v.producer.valid() || v.producerPort == 0;
        if (const auto fq = m_postHook.find(name); fq != m_postHook.end() && firstOutput) {
            return fq->second;
        }
        return m_idOfNode[name];
    }

    const graph::Graph& m_model;
    std::vector<graph::ValueId> m_inputs;
    std::map<int, size_t> m_groupOf;
    std::map<std::string, std::string> m_idOfNode;
    std::map<std::string, std::string> m_postHook;
    std::map<std::pair<std::string, int>, std::string> m_preHook;
    std::ostringstream m_out;
};

} // namespace

std::string hawqBitwidthDot(const graph::Graph& model, const HawqOutcome& outcome) {
    BitwidthDot dot(model, outcome);
    dot.addOps();
    dot.addQuantizers(outcome.state.setup);
    dot.addEdges();
    return dot.text();
}

} // namespace qs::report
