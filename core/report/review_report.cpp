#include "core/report/review_report.h"

#include "core/quantization/quantizer_setup_report.h"
#include "core/report/calibration_report.h"
#include "core/report/model_info.h"
#include "core/support/atomic_file.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <ranges>
#include <set>
#include <sstream>
#include <unistd.h>
#include <unordered_map>

namespace qs::report {

namespace {
using quantization::QuantizerMark;
using quantization::QuantizerStatus;

/// "%.6g" of `value`.
std::string number(double value) {
    std::array<char, 32> buffer{};
    std::snprintf(buffer.data(), buffer.size(), "%.6g", value);
    return buffer.data();
}

std::string fixed(double value, int digits) {
    std::array<char, 48> buffer{};
    std::snprintf(buffer.data(), buffer.size(), "%.*f", digits, value);
    return buffer.data();
}

std::string percent(double part, double whole) {
    return whole > 0 ? fixed(100.0 * part / whole, 1) : "0.0";
}

std::string bitsName(int bits) {
    return bits > 0 ? std::to_string(bits) + "-bit" : "float";
}

/// One value, or "min .. max (N channels)" of a per-channel list.
template <typename T>
std::string valueList(const std::vector<T>& values) {
    if (values.empty()) {
        return {};
    }
    if (values.size() == 1) {
        return number(static_cast<double>(values.front()));
    }
    const auto [low, high] = std::minmax_element(values.begin(), values.end());
    return number(static_cast<double>(*low)) + " .. " + number(static_cast<double>(*high)) + " (" +
           std::to_string(values.size()) + " ch)";
}

std::string nowUtc() {
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm utc{};
    gmtime_r(&now, &utc);
    std::array<char, 32> buffer{};
    std::strftime(buffer.data(), buffer.size(), "%Y-%m-%dT%H:%M:%SZ", &utc);
    return buffer.data();
}

std::string presetName(quantization::QuantizationPreset preset) {
    return preset == quantization::QuantizationPreset::Mixed ? "mixed" : "performance";
}

std::unordered_map<std::string_view, graph::NodeId> nodesByName(const graph::Graph& model) {
    std::unordered_map<std::string_view, graph::NodeId> nodes;
    for (const graph::NodeId node : model.nodeIds()) {
        nodes.try_emplace(model.node(node).name, node);
    }
    return nodes;
}

/// The constant weight tensors (rank >= 2) of `node`, as bitwidthDistribution() counts them.
std::vector<const graph::TensorData*> weightTensors(const graph::Graph& model, graph::NodeId node) {
    std::vector<const graph::TensorData*> tensors;
    for (const graph::ValueId input : model.node(node).inputs) {
        if (input.valid() && model.value(input).isInitializer() &&
            model.value(input).initializer->dims().size() >= 2) {
            tensors.push_back(model.value(input).initializer.get());
        }
    }
    return tensors;
}

std::string opsetsText(const graph::Graph& model) {
    std::string text;
    for (const graph::OpsetImport& opset : model.metadata().opsetImports) {
        text += (text.empty() ? "" : ", ") + (opset.domain.empty() ? "ai.onnx" : opset.domain) +
                " " + std::to_string(opset.version);
    }
    return text;
}

std::string candidatesText(const quantization::QuantizerConfigList& configs) {
    std::string text;
    for (const quantization::QuantizerConfig& config : configs) {
        text += (text.empty() ? "" : "; ") + config.toString();
    }
    return text;
}

/// Range, scale, zero point and SQNR cells of `mark` (empty without a calibration).
void calibrationCells(std::vector<std::string>& row, const QuantizerMark& mark,
                      const quantization::CalibrationOutcome* calibration) {
    const quantization::QuantizerParameters* parameters = nullptr;
    const quantization::QuantizerError* error = nullptr;
    if (calibration != nullptr && mark.status != QuantizerStatus::Merged) {
        if (auto p = calibration->parameters.find(mark.id); p != calibration->parameters.end()) {
            parameters = &p->second;
        }
        if (auto e = calibration->simulation.quantizers.find(mark.id);
            e != calibration->simulation.quantizers.end()) {
            error = &e->second;
        }
    }
    row.push_back(parameters ? valueList(parameters->inputLow) : "");
    row.push_back(parameters ? valueList(parameters->inputHigh) : "");
    row.push_back(parameters ? valueList(parameters->scale) : "");
    row.push_back(parameters ? valueList(parameters->zeroPoint) : "");
    row.push_back(error ? fixed(error->sqnrDb, 2) : "");
    row.push_back(error ? fixed(error->localSqnrDb, 2) : "");
}

ReviewTable quantizerTable(const graph::Graph& model, const ReviewInputs& inputs,
                           const std::vector<QuantizerMark>& marks) {
    ReviewTable table{.id = "quantizers",
                      .title = "Quantizers",
                      .columns = {"id", "insertion point", "kind", "op", "candidates",
                                  "candidate configs", "chosen config", "bits", "state",
                                  "linked to", "unified group", "range low", "range high", "scale",
                                  "zero point", "SQNR dB", "local SQNR dB"},
                      .numeric = {true, false, false, false, true, false, false, true, false, true,
                                  true, false, false, false, false, true, true},
                      .rows = {}};
    // By InsertionPoint::toString(), which tells weights ("[W]") and ports apart.
    std::map<std::string, const quantization::QuantizerConfigList*> candidates;
    if (inputs.proposal != nullptr) {
        for (const auto& [id, point] : inputs.proposal->quantizationPoints) {
            candidates.emplace(point.insertionPoint.toString(), &point.possibleConfigs);
        }
    }
    const auto nodes = nodesByName(model);
    for (const QuantizerMark& mark : marks) {
        std::vector<std::string> row;
        row.push_back(std::to_string(mark.id));
        row.push_back(mark.point.toString());
        row.push_back(mark.point.isWeight ? "weight" : "activation");
        const auto node = nodes.find(mark.point.targetNodeName);
        row.push_back(node == nodes.end() ? "" : model.node(node->second).opType);
        const auto found = candidates.find(mark.point.toString());
        const bool known = found != candidates.end();
        row.push_back(std::to_string(known ? found->second->size()
                                           : static_cast<size_t>(mark.candidateCount)));
        row.push_back(known ? candidatesText(*found->second) : "");
        row.push_back(mark.config.toString());
        row.push_back(std::to_string(mark.config.numBits));
        row.emplace_back(quantization::statusName(mark.status));
        row.push_back(mark.linkedTo ? std::to_string(*mark.linkedTo) : "");
        row.push_back(mark.unifiedGroup ? std::to_string(*mark.unifiedGroup) : "");
        calibrationCells(row, mark, inputs.calibration);
        table.rows.push_back(std::move(row));
    }
    return table;
}

ReviewHeader header(const graph::Graph& model, const ReviewInputs& inputs,
                    const BitwidthBreakdown& bitwidths) {
    const ModelInfo info = computeModelInfo(model);
    ReviewHeader out;
    out.modelPath = inputs.modelPath;
    out.modelName = std::filesystem::path(inputs.modelPath).filename().string();
    out.opsets = opsetsText(model);
    out.producer = info.producer;
    out.nodes = static_cast<int64_t>(info.nodeCount);
    out.parameters = info.parameterCount;
    out.macs = info.macs;
    out.macsDynamicDimsAsOne = info.macsDynamicDimsAsOne;
    out.hw = inputs.settings.hw;
    out.preset = presetName(inputs.settings.preset);
    out.rule = std::string(quantization::ruleArgument(inputs.settings.rule));
    out.source = inputs.source;
    out.date = inputs.date.empty() ? nowUtc() : inputs.date;
    out.toolVersion = QS_VERSION;
    out.floatBytes = info.parameterBytes;
    // The quantized weights at their widths instead of their stored bytes; a weight quantized
    // twice (two points on one node) counts once.
    int64_t compressed = info.parameterBytes;
    const auto nodes = nodesByName(model);
    std::set<const graph::TensorData*> counted;
    for (const auto& [id, point] : inputs.setup.quantizationPoints) {
        const auto node = nodes.find(point.insertionPoint.targetNodeName);
        if (!point.insertionPoint.isWeight || node == nodes.end()) {
            continue;
        }
        for (const graph::TensorData* tensor : weightTensors(model, node->second)) {
            if (counted.insert(tensor).second) {
                compressed -= static_cast<int64_t>(tensor->expectedByteSize());
                compressed += (tensor->numElements() * point.qconfig.numBits + 7) / 8;
            }
        }
    }
    out.compressedBytes = compressed;
    // bitOps = MACs x max(w, a): the all-8-bit cost is MACs x 8, summed over the same layers.
    double macs8 = 0;
    for (const auto& [id, point] : inputs.setup.quantizationPoints) {
        const auto node = nodes.find(point.insertionPoint.targetNodeName);
        if (point.insertionPoint.isWeight && node != nodes.end()) {
            macs8 += 8.0 * static_cast<double>(nodeMacs(model, node->second).value_or(0));
        }
    }
    const double total = bitwidths.totalBitOps();
    out.bitOpsRatio = total > 0 ? macs8 / total : 1.0;
    for (const auto& [id, point] : inputs.setup.quantizationPoints) {
        if (inputs.setup.requantizationParents.contains(id)) {
            ++out.requantizers;
        } else {
            ++out.activeQuantizers;
        }
    }
    out.mergedQuantizers = static_cast<int>(inputs.setup.mergedInto.size());
    out.unifiedGroups = static_cast<int>(inputs.setup.unifiedScaleGroups.size());
    if (inputs.calibration != nullptr) {
        out.dataset = inputs.calibration->dataset;
        out.outputs = inputs.calibration->simulation.outputs;
    }
    return out;
}

ReviewTable bitwidthTable(const BitwidthBreakdown& breakdown) {
    ReviewTable table{.id = "bitwidths",
                      .title = "Bit widths",
                      .columns = {"bits", "activation quantizers", "weight quantizers",
                                  "quantizers %", "weight parameters", "weight bytes",
                                  "weight bytes %", "BitOps", "BitOps %"},
                      .numeric = {true, true, true, true, true, true, true, true, true},
                      .rows = {}};
    const double quantizers = breakdown.totalQuantizers();
    const double bytes = static_cast<double>(breakdown.totalWeightBytes());
    const double bitOps = breakdown.totalBitOps();
    std::vector<int> widest;
    for (const auto& [bits, share] : breakdown.byBits) {
        widest.insert(widest.begin(), bits);
    }
    for (const int bits : widest) {
        const BitwidthShare& share = breakdown.byBits.at(bits);
        table.rows.push_back(
            {std::to_string(bits), std::to_string(share.activationQuantizers),
             std::to_string(share.weightQuantizers),
             percent(share.activationQuantizers + share.weightQuantizers, quantizers),
             std::to_string(share.weightParameters), std::to_string(share.weightBytes),
             percent(static_cast<double>(share.weightBytes), bytes), number(share.bitOps),
             percent(share.bitOps, bitOps)});
    }
    return table;
}

ReviewTable opTypeTable(const BitwidthBreakdown& breakdown) {
    std::set<int, std::greater<>> bits;
    for (const auto& [op, counts] : breakdown.byOpType) {
        for (const auto& [b, count] : counts) {
            bits.insert(b);
        }
    }
    ReviewTable table{.id = "op_types",
                      .title = "Bit widths per op type",
                      .columns = {"op type"},
                      .numeric = {false},
                      .rows = {}};
    for (int b : bits) {
        table.columns.push_back(bitsName(b));
        table.numeric.push_back(true);
    }
    for (const auto& [op, counts] : breakdown.byOpType) {
        std::vector<std::string> row{op};
        for (int b : bits) {
            const auto found = counts.find(b);
            row.push_back(std::to_string(found == counts.end() ? 0 : found->second));
        }
        table.rows.push_back(std::move(row));
    }
    return table;
}

ReviewTable hawqTable(const ReviewHawq& hawq) {
    ReviewTable table{.id = "hawq_layers",
                      .title = "HAWQ: chosen bit width per layer",
                      .columns = {"layer", "node", "average trace", "weight bits", "MACs",
                                  "perturbation at chosen bits"},
                      .numeric = {true, false, true, true, true, true},
                      .rows = {}};
    for (size_t i = 0; i < hawq.layers.size(); ++i) {
        const ReviewHawq::Layer& layer = hawq.layers[i];
        const auto perturbation = layer.perturbation.find(layer.weightBits);
        table.rows.push_back(
            {std::to_string(i), layer.node, number(layer.avgTrace),
             std::to_string(layer.weightBits), std::to_string(layer.macs),
             perturbation == layer.perturbation.end() ? "" : number(perturbation->second)});
    }
    return table;
}

ReviewTable pruningTable(const ReviewPruning& pruning) {
    ReviewTable table{.id = "pruning_sections",
                      .title = "Pruning: channels kept per section",
                      .columns = {"entry", "exit", "channels", "kept", "kept %", "constraint"},
                      .numeric = {false, false, true, true, true, false},
                      .rows = {}};
    for (const ReviewPruning::Section& section : pruning.sections) {
        table.rows.push_back(
            {section.entry, section.exit, std::to_string(section.channels),
             std::to_string(section.kept),
             percent(static_cast<double>(section.kept), static_cast<double>(section.channels)),
             section.constraint});
    }
    return table;
}

/// Bytes of a weight of `parameters` float32 elements in `mode` (codes only; scales and zero
/// points are a per-group extra the table leaves out).
int64_t modeBytes(std::string_view mode, int64_t parameters) {
    if (mode.starts_with("int8") || mode.starts_with("uint8")) {
        return parameters;
    }
    if (mode.starts_with("int4") || mode.starts_with("uint4") || mode.starts_with("nf4") ||
        mode.starts_with("e2m1")) {
        return (parameters + 1) / 2;
    }
    return parameters * 4;
}

ReviewTable compressionTable(const nlohmann::json& plan) {
    ReviewTable table{
        .id = "weight_compression",
        .title = "Weight compression: mode per layer",
        .columns = {"weight", "node", "op", "mode", "parameters", "bytes before", "bytes after"},
        .numeric = {false, false, false, false, true, true, true},
        .rows = {}};
    for (const nlohmann::json& weight : plan.value("weights", nlohmann::json::array())) {
        const std::string mode = weight.value("mode", "");
        const int64_t parameters = weight.value("num_parameters", int64_t{0});
        table.rows.push_back({weight.value("weight", ""), weight.value("node", ""),
                              weight.value("op_type", ""), mode, std::to_string(parameters),
                              std::to_string(parameters * 4),
                              std::to_string(modeBytes(mode, parameters))});
    }
    return table;
}

Result<void> checkCompressionPlan(const nlohmann::json& plan) {
    if (!plan.is_object() || !plan.contains("weights") || !plan.at("weights").is_array()) {
        return Error(Errc::InvalidArgument, "sections.compression: no 'weights' list");
    }
    for (size_t i = 0; i < plan.at("weights").size(); ++i) {
        const nlohmann::json& weight = plan.at("weights").at(i);
        const std::string where = "sections.compression.weights[" + std::to_string(i) + "]";
        if (!weight.is_object() || !weight.contains("mode") || !weight.at("mode").is_string()) {
            return Error(Errc::InvalidArgument, where + ".mode: missing or not a string");
        }
        if (!weight.contains("num_parameters") ||
            !weight.at("num_parameters").is_number_integer()) {
            return Error(Errc::InvalidArgument,
                         where + ".num_parameters: missing or not an integer");
        }
        for (const char* key : {"weight", "node", "op_type"}) {
            if (weight.contains(key) && !weight.at(key).is_string()) {
                return Error(Errc::InvalidArgument, where + "." + key + ": not a string");
            }
        }
    }
    return {};
}
} // namespace

int BitwidthBreakdown::totalQuantizers() const {
    int total = 0;
    for (const auto& [bits, share] : byBits) {
        total += share.activationQuantizers + share.weightQuantizers;
    }
    return total;
}

int64_t BitwidthBreakdown::totalWeightBytes() const {
    int64_t total = 0;
    for (const auto& [bits, share] : byBits) {
        total += share.weightBytes;
    }
    return total;
}

double BitwidthBreakdown::totalBitOps() const {
    double total = 0;
    for (const auto& [bits, share] : byBits) {
        total += share.bitOps;
    }
    return total;
}

namespace {
/// The op types an activation quantizer serves: those of the ops it quantizes directly, else its
/// target's.
std::set<std::string>
activationOpTypes(const graph::Graph& model,
                  const std::unordered_map<std::string_view, graph::NodeId>& nodes,
                  const quantization::SingleConfigQuantizationPoint& point) {
    std::set<std::string> types;
    for (const std::string& op : point.directlyQuantizedOperatorNodeNames) {
        if (const auto found = nodes.find(op); found != nodes.end()) {
            types.insert(model.node(found->second).opType);
        }
    }
    if (const auto node = nodes.find(point.insertionPoint.targetNodeName);
        types.empty() && node != nodes.end()) {
        types.insert(model.node(node->second).opType);
    }
    return types;
}

/// The activation bits entering each op: the widest quantizer that quantizes it directly.
std::unordered_map<std::string, int>
inputBitsByOp(const quantization::SingleConfigQuantizerSetup& setup) {
    std::unordered_map<std::string, int> inputBits;
    for (const auto& [id, point] : setup.quantizationPoints) {
        if (point.insertionPoint.isWeight) {
            continue;
        }
        for (const std::string& op : point.directlyQuantizedOperatorNodeNames) {
            int& bits = inputBits[op];
            bits = std::max(bits, point.qconfig.numBits);
        }
    }
    return inputBits;
}
} // namespace

BitwidthBreakdown bitwidthBreakdown(const quantization::SingleConfigQuantizerSetup& setup,
                                    const graph::Graph& model) {
    BitwidthBreakdown out;
    const auto nodes = nodesByName(model);
    const std::unordered_map<std::string, int> inputBits = inputBitsByOp(setup);
    for (const auto& [id, point] : setup.quantizationPoints) {
        const int bits = point.qconfig.numBits;
        const bool weight = point.insertionPoint.isWeight;
        BitwidthShare& share = out.byBits[bits];
        out.ids[{bits, weight}].push_back(id);
        if (!weight) {
            ++share.activationQuantizers;
            for (const std::string& type : activationOpTypes(model, nodes, point)) {
                ++out.byOpType[type][bits];
                out.opTypeIds[type][bits].push_back(id);
            }
            continue;
        }
        ++share.weightQuantizers;
        const auto node = nodes.find(point.insertionPoint.targetNodeName);
        if (node == nodes.end()) {
            continue;
        }
        const std::string& type = model.node(node->second).opType;
        ++out.byOpType[type][bits];
        out.opTypeIds[type][bits].push_back(id);
        for (const graph::TensorData* tensor : weightTensors(model, node->second)) {
            share.weightParameters += tensor->numElements();
            share.weightBytes += (tensor->numElements() * bits + 7) / 8;
        }
        const auto activation = inputBits.find(point.insertionPoint.targetNodeName);
        const int opBits = std::max(bits, activation == inputBits.end() ? 0 : activation->second);
        share.bitOps += static_cast<double>(nodeMacs(model, node->second).value_or(0)) * opBits;
    }
    return out;
}

std::vector<ReviewTable> ReviewReport::tables() const {
    std::vector<ReviewTable> out{quantizers, bitwidthTable(bitwidths), opTypeTable(bitwidths)};
    if (hawq) {
        out.push_back(hawqTable(*hawq));
    }
    if (pruning) {
        out.push_back(pruningTable(*pruning));
    }
    if (compressionPlan) {
        out.push_back(compressionTable(*compressionPlan));
    }
    return out;
}

Result<ReviewReport> buildReviewReport(const graph::Graph& model, const ReviewInputs& inputs) {
    ReviewReport report;
    report.marks = quantization::quantizerMarks(
        inputs.setup, inputs.finalizedFromProposal ? inputs.proposal : nullptr);
    report.bitwidths = bitwidthBreakdown(inputs.setup, model);
    report.header = header(model, inputs, report.bitwidths);
    report.quantizers = quantizerTable(model, inputs, report.marks);
    report.nncfTable = quantization::bitwidthSummaryTable(inputs.setup);
    if (inputs.calibration != nullptr) {
        QS_ASSIGN_OR_RETURN(report.header.accuracy,
                            calibrationAccuracy(*inputs.calibration).context("--labels-npy"));
    }
    report.hawq = inputs.hawq;
    report.pruning = inputs.pruning;
    report.expandedGroups = inputs.expandedGroups;
    if (inputs.compressionPlan) {
        QS_TRY(checkCompressionPlan(*inputs.compressionPlan));
        report.compressionPlan = inputs.compressionPlan;
    }
    return report;
}

Result<void> checkReportOutputs(const std::filesystem::path& path,
                                const std::filesystem::path& csvDir) {
    QS_TRY(checkWritableTarget(path));
    std::error_code error;
    if (!csvDir.empty() && std::filesystem::exists(csvDir, error) &&
        !std::filesystem::is_directory(csvDir, error)) {
        return Error(Errc::Io, "the CSV folder '" + csvDir.string() + "' is a file");
    }
    return {};
}

std::string htmlEscape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        default:
            out += c;
        }
    }
    return out;
}

std::string tableCsv(const ReviewTable& table) {
    std::string out;
    auto line = [&out](const std::vector<std::string>& cells) {
        for (size_t i = 0; i < cells.size(); ++i) {
            const std::string& cell = cells[i];
            if (i > 0) {
                out += ',';
            }
            if (cell.find_first_of(",\"\n\r") == std::string::npos) {
                out += cell;
                continue;
            }
            out += '"';
            for (const char c : cell) {
                out += c == '"' ? std::string("\"\"") : std::string(1, c);
            }
            out += '"';
        }
        out += '\n';
    };
    line(table.columns);
    for (const std::vector<std::string>& row : table.rows) {
        line(row);
    }
    return out;
}

Result<void> writeReviewCsv(const ReviewReport& report, const std::filesystem::path& dir) {
    return writeTablesCsv(report.tables(), dir);
}

Result<void> writeTablesCsv(const std::vector<ReviewTable>& tables,
                            const std::filesystem::path& dir) {
    std::error_code error;
    std::filesystem::create_directories(dir, error);
    if (error) {
        return Error(Errc::Io,
                     "cannot create the CSV folder '" + dir.string() + "': " + error.message());
    }
    for (const ReviewTable& table : tables) {
        QS_TRY(writeFileAtomically(dir / (table.id + ".csv"), tableCsv(table)));
    }
    return {};
}

} // namespace qs::report
