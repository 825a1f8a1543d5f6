// compareExport() and exportDiff(): both models run on the same samples, every tensor they share
// is compared, and the results become the diff page's facts and tables.

#include "core/quantization/insertion_point_values.h"
#include "core/report/export_diff.h"
#include "core/runtime/batching.h"
#include "core/runtime/executor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <unordered_map>
#include <variant>

namespace qs::report {

namespace {

using graph::Graph;
using graph::ValueId;
using runtime::Tensor;

constexpr double kInfinity = std::numeric_limits<double>::infinity();

bool isFloatType(graph::DataType type) {
    return type == graph::DataType::Float || type == graph::DataType::Float16 ||
           type == graph::DataType::Double;
}

std::string twoDecimals(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f", value);
    return text;
}

std::string sixDecimals(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.6f", value);
    return text;
}

std::string decibels(double db) {
    if (std::isinf(db)) {
        return db > 0 ? "inf" : "-inf";
    }
    return twoDecimals(db);
}

/// One compared pair: A's value and B's, accumulated over the samples.
struct Probe {
    ValueId a;
    ValueId b;
    size_t row = 0;                            ///< into ExportComparison::tensors
    const std::vector<int64_t>* map = nullptr; ///< B's channels in A (pruned), or null
    double signal = 0.0;
    double noise = 0.0;
    bool comparable = true;
};

/// A's values gathered on `map` along axis 1 (A's view of a pruned B tensor).
Result<Tensor> gatherChannels(const Tensor& a, const std::vector<int64_t>& map) {
    const Tensor x = runtime::castTensor(a, graph::DataType::Float);
    if (x.rank() < 2) {
        return Error(Errc::InvalidArgument, "rank below 2");
    }
    const int64_t outer = x.dim(0);
    const int64_t channels = x.dim(1);
    const int64_t inner = outer * channels == 0 ? 0 : x.numElements() / (outer * channels);
    runtime::Shape shape = x.shape();
    shape[1] = static_cast<int64_t>(map.size());
    std::vector<float> out;
    out.reserve(static_cast<size_t>(outer * inner) * map.size());
    const std::span<const float> in = x.values<float>();
    for (int64_t o = 0; o < outer; ++o) {
        for (const int64_t c : map) {
            if (c < 0 || c >= channels) {
                return Error(Errc::InvalidArgument, "channel map out of range");
            }
            const auto begin = static_cast<size_t>((o * channels + c) * inner);
            out.insert(out.end(), in.begin() + static_cast<std::ptrdiff_t>(begin),
                       in.begin() +
                           static_cast<std::ptrdiff_t>(begin + static_cast<size_t>(inner)));
        }
    }
    return Tensor::fromVector(shape, out);
}

/// Adds one sample's signal and noise to `probe`; a shape mismatch makes it not comparable.
void accumulate(Probe& probe, const Tensor& a, const Tensor& b, std::vector<std::string>& why,
                const std::string& name) {
    if (!probe.comparable) {
        return;
    }
    Tensor x = runtime::castTensor(a, graph::DataType::Float);
    if (probe.map != nullptr && x.rank() >= 2 &&
        x.dim(1) != static_cast<int64_t>(probe.map->size())) {
        Result<Tensor> gathered = gatherChannels(x, *probe.map);
        if (gathered.ok()) {
            x = std::move(gathered).value();
        }
    }
    const Tensor y = runtime::castTensor(b, graph::DataType::Float);
    if (x.shape() != y.shape()) {
        probe.comparable = false;
        why.push_back(name + ": shape " + runtime::shapeToString(x.shape()) + " in A, " +
                      runtime::shapeToString(y.shape()) + " in B");
        return;
    }
    const std::span<const float> xa = x.values<float>();
    const std::span<const float> yb = y.values<float>();
    for (size_t i = 0; i < xa.size(); ++i) {
        const double s = xa[i];
        const double d = s - static_cast<double>(yb[i]);
        probe.signal += s * s;
        probe.noise += d * d;
    }
}

double sqnrOf(const Probe& probe) {
    if (probe.noise == 0.0) {
        return kInfinity;
    }
    return 10.0 * std::log10(std::max(probe.signal, 1e-30) / probe.noise);
}

/// The probes and rows: each float tensor A's nodes compute that B has too, in A's order, each
/// followed by the quantizers placed on it (B's DequantizeLinear output against the tensor).
class ProbePlan {
public:
    ProbePlan(const Graph& a, const Graph& b, const ExportStructure& structure,
              ExportComparison& out)
        : m_a(a)
        , m_b(b)
        , m_structure(structure)
        , m_out(out) {}

    Result<std::vector<Probe>> build() {
        QS_ASSIGN_OR_RETURN(const std::vector<graph::NodeId> order, m_a.topologicalOrder());
        std::map<uint32_t, std::vector<int>> quantizersOf; // A value slot -> qp ids
        for (const auto& [id, point] : m_structure.setup.quantizationPoints) {
            if (point.insertionPoint.isWeight || !m_structure.dequantizedValue.contains(id)) {
                continue;
            }
            const auto resolved = quantization::resolveInsertionPoint(m_a, point.insertionPoint);
            if (resolved.ok()) {
                quantizersOf[resolved.value().value.index()].push_back(id);
            }
        }
        for (const ValueId input : m_a.runtimeInputs()) {
            addQuantizers(input, quantizersOf);
        }
        for (const graph::NodeId id : order) {
            const graph::Node& node = m_a.node(id);
            for (const ValueId output : node.outputs) {
                if (!output.valid() || !isFloatType(m_a.value(output).dtype)) {
                    continue;
                }
                addTensor(output, node);
                addQuantizers(output, quantizersOf);
            }
        }
        return std::move(m_probes);
    }

private:
    void addTensor(ValueId output, const graph::Node& node) {
        const std::string& name = m_a.value(output).name;
        // The value B's copy of the node computes: a quantized graph output is renamed in B,
        // and its own name is the DequantizeLinear's output there.
        const auto computed = m_structure.tensorInB.find(name);
        const auto inB = computed == m_structure.tensorInB.end() ? std::optional<ValueId>()
                                                                 : m_b.findValue(computed->second);
        if (!inB || !isFloatType(m_b.value(*inB).dtype)) {
            m_out.skipped.push_back(name + ": " + (inB ? "not a float tensor in B" : "not in B"));
            return;
        }
        TensorComparison row{.tensor = name,
                             .producer = node.name,
                             .opType = node.opType,
                             .sqnrDb = 0.0,
                             .inputSqnrDb = std::nullopt,
                             .note = {}};
        const auto map = m_structure.channelMaps.find(m_b.value(*inB).name);
        if (map != m_structure.channelMaps.end()) {
            row.note = "channels " + std::to_string(map->second.size()) + " kept (pruned)";
        }
        m_probes.push_back({.a = output,
                            .b = *inB,
                            .row = m_out.tensors.size(),
                            .map = map == m_structure.channelMaps.end() ? nullptr : &map->second});
        m_out.tensors.push_back(std::move(row));
    }

    void addQuantizers(ValueId tensor, const std::map<uint32_t, std::vector<int>>& quantizersOf) {
        const auto found = quantizersOf.find(tensor.index());
        if (found == quantizersOf.end()) {
            return;
        }
        for (const int id : found->second) {
            const auto inB = m_b.findValue(m_structure.dequantizedValue.at(id));
            if (!inB) {
                continue;
            }
            const auto& point = m_structure.setup.quantizationPoints.at(id);
            m_probes.push_back({.a = tensor, .b = *inB, .row = m_out.tensors.size()});
            m_out.tensors.push_back({.tensor = m_a.value(tensor).name,
                                     .producer = "quantizer " + std::to_string(id),
                                     .opType = "Q/DQ " + point.insertionPoint.toString(),
                                     .sqnrDb = 0.0,
                                     .inputSqnrDb = std::nullopt,
                                     .note = std::to_string(point.qconfig.numBits) + "-bit",
                                     .quantizer = id});
        }
    }

    const Graph& m_a;
    const Graph& m_b;
    const ExportStructure& m_structure;
    ExportComparison& m_out;
    std::vector<Probe> m_probes;
};

/// `g` with its float16 tensors as float32 (initializers converted exactly, Casts to float16 made
/// Casts to float); true when there were any. Run with ExecutorOptions::fp16, the executor stores
/// activations as float16 between ops, as an FP16 runtime does, on kernels that take float32.
bool asFloat32(Graph& g) {
    bool any = false;
    for (const ValueId id : g.valueIds()) {
        graph::Value& value = g.value(id);
        if (value.dtype != graph::DataType::Float16) {
            continue;
        }
        any = true;
        value.dtype = graph::DataType::Float;
        if (value.isInitializer()) {
            const graph::TensorData& half = *value.initializer;
            std::vector<float> floats(static_cast<size_t>(half.numElements()));
            for (size_t i = 0; i < floats.size(); ++i) {
                floats[i] = static_cast<float>(half.elementAsDouble(static_cast<int64_t>(i)));
            }
            value.initializer = graph::TensorData::fromValues<float>(
                graph::DataType::Float, half.dims(), std::span<const float>(floats));
        }
    }
    for (const graph::NodeId id : g.nodeIds()) {
        graph::Node& node = g.node(id);
        if (node.opType != "Cast") {
            continue;
        }
        for (graph::Attribute& attribute : node.attributes) {
            if (attribute.name == "to" && std::holds_alternative<int64_t>(attribute.value) &&
                std::get<int64_t>(attribute.value) ==
                    static_cast<int64_t>(graph::DataType::Float16)) {
                attribute.value = static_cast<int64_t>(graph::DataType::Float);
            }
        }
    }
    return any;
}

Graph withProbes(const Graph& g, const std::vector<Probe>& probes, bool sideA) {
    Graph probed = g;
    for (const Probe& p : probes) {
        probed.addOutput(sideA ? p.a : p.b);
    }
    return probed;
}

/// B's inputs in A's order (by name), cast to B's declared types.
Result<std::vector<Tensor>> inputsForB(const runtime::Executor& a, const runtime::Executor& b,
                                       const std::vector<Tensor>& samplesA) {
    std::vector<Tensor> inputs;
    for (const ValueId id : b.inputIds()) {
        const std::string& name = b.graph().value(id).name;
        const auto& idsA = a.inputIds();
        const auto at = std::find_if(idsA.begin(), idsA.end(),
                                     [&](ValueId v) { return a.graph().value(v).name == name; });
        if (at == idsA.end()) {
            return Error(Errc::InvalidArgument, "B's input '" + name + "' is not an input of A");
        }
        const Tensor& x = samplesA[static_cast<size_t>(at - idsA.begin())];
        const graph::DataType want = b.graph().value(id).dtype;
        inputs.push_back(x.dtype() == want ? x : runtime::castTensor(x, want));
    }
    return inputs;
}

/// The SQNR a node reads at each input: a quantizer's output where one sits on the edge (a
/// pre-hook on it, a post-hook on its tensor), else the tensor's own.
class InputSqnr {
public:
    InputSqnr(const Graph& a, const ExportStructure& structure, const ExportComparison& out)
        : m_a(&a) {
        for (const TensorComparison& row : out.tensors) {
            if (row.quantizer < 0) {
                m_tensor[row.tensor] = row.sqnrDb;
                continue;
            }
            const quantization::InsertionPoint& point =
                structure.setup.quantizationPoints.at(row.quantizer).insertionPoint;
            if (point.inputPortId) {
                m_edge[point.targetNodeName + ":" + std::to_string(*point.inputPortId)] =
                    row.sqnrDb;
            } else {
                m_quantized[row.tensor] = row.sqnrDb;
            }
        }
    }

    /// The lowest SQNR among `node`'s activation inputs (+inf: all exact).
    double lowest(const graph::Node& node) const {
        double low = kInfinity;
        for (size_t port = 0; port < node.inputs.size(); ++port) {
            const ValueId input = node.inputs[port];
            if (!input.valid() || m_a->value(input).isInitializer()) {
                continue;
            }
            low = std::min(low, at(m_a->value(input).name, node.name + ":" + std::to_string(port)));
        }
        return low;
    }

    /// A quantizer row's input: its tensor's SQNR.
    double tensor(const std::string& name) const {
        const auto found = m_tensor.find(name);
        if (found == m_tensor.end()) {
            return kInfinity;
        }
        return found->second;
    }

private:
    double at(const std::string& tensorName, const std::string& edge) const {
        if (const auto found = m_edge.find(edge); found != m_edge.end()) {
            return found->second;
        }
        if (const auto found = m_quantized.find(tensorName); found != m_quantized.end()) {
            return found->second;
        }
        return tensor(tensorName);
    }

    const Graph* m_a = nullptr;
    std::map<std::string, double> m_tensor;    ///< by tensor name
    std::map<std::string, double> m_quantized; ///< post-hook quantizer output, by tensor name
    std::map<std::string, double> m_edge;      ///< pre-hook quantizer output, by "node:port"
};

/// Each row's input SQNR, the first divergent row and the largest drop.
void summarize(const Graph& a, const ExportStructure& structure, ExportComparison& out) {
    const InputSqnr inputs(a, structure, out);
    std::unordered_map<std::string, graph::NodeId> nodes; // findNode is a scan
    for (const graph::NodeId id : a.nodeIds()) {
        nodes.emplace(a.node(id).name, id);
    }
    double worstDrop = 0.0;
    for (size_t i = 0; i < out.tensors.size(); ++i) {
        TensorComparison& row = out.tensors[i];
        if (row.quantizer >= 0) {
            row.inputSqnrDb = inputs.tensor(row.tensor);
        } else if (const auto node = nodes.find(row.producer); node != nodes.end()) {
            row.inputSqnrDb = inputs.lowest(a.node(node->second));
        }
        if (!out.firstDivergent && row.sqnrDb < out.divergenceDb) {
            out.firstDivergent = i;
        }
        if (row.inputSqnrDb && std::isfinite(*row.inputSqnrDb) && std::isfinite(row.sqnrDb) &&
            *row.inputSqnrDb - row.sqnrDb > worstDrop) {
            worstDrop = *row.inputSqnrDb - row.sqnrDb;
            out.largestDrop = i;
        }
    }
}

/// The first outputs' agreement and, with labels, both models' accuracy.
Result<void> scoreOutputs(const runtime::Dataset& dataset, const std::vector<Tensor>& firstA,
                          const std::vector<Tensor>& firstB, ExportComparison& out) {
    QS_ASSIGN_OR_RETURN(const Tensor scoresA, runtime::concatBatches(firstA));
    QS_ASSIGN_OR_RETURN(const Tensor scoresB, runtime::concatBatches(firstB));
    if (scoresA.shape() != scoresB.shape() || !classCount(scoresA).ok()) {
        return success(); // not a classifier's scores, or pruned to another shape
    }
    QS_ASSIGN_OR_RETURN(out.agreement, compareOutputs(scoresA, scoresB));
    if (!dataset.labels) {
        return success();
    }
    QS_ASSIGN_OR_RETURN(const std::vector<int64_t> labels, labelsFromTensor(*dataset.labels));
    QS_ASSIGN_OR_RETURN(const int64_t classes, classCount(scoresA));
    QS_TRY(validateLabels(labels, scoresA.dim(0), classes).context("labels"));
    QS_ASSIGN_OR_RETURN(const Accuracy accuracyA, computeAccuracy(scoresA, labels));
    QS_ASSIGN_OR_RETURN(const Accuracy accuracyB, computeAccuracy(scoresB, labels));
    out.accuracy = AccuracyComparison{.floatModel = accuracyA, .compressed = accuracyB};
    return success();
}

/// Runs both executors on every sample and accumulates each probe; keeps the first outputs.
Result<void> runSamples(const runtime::Executor& runA, const runtime::Executor& runB,
                        const runtime::Dataset& dataset, std::vector<Probe>& probes,
                        ExportComparison& out, Progress& progress) {
    out.samples = dataset.samples();
    const size_t outputsA = runA.graph().outputs().size() - probes.size();
    const size_t outputsB = runB.graph().outputs().size() - probes.size();
    std::vector<Tensor> firstA;
    std::vector<Tensor> firstB;
    // One sample at a time: every shared tensor of both models is alive at once.
    for (int64_t s = 0; s < out.samples; ++s) {
        QS_TRY(checkCancelled(progress));
        const std::string step =
            "sample " + std::to_string(s + 1) + "/" + std::to_string(out.samples);
        progress.report(static_cast<double>(s) / static_cast<double>(out.samples),
                        "comparing, " + step);
        std::vector<Tensor> samplesA;
        for (const Tensor& input : dataset.inputs) {
            samplesA.push_back(runtime::sliceBatch(input, s, s + 1));
        }
        QS_ASSIGN_OR_RETURN(const std::vector<Tensor> valuesA,
                            runA.run(samplesA).context("A, " + step));
        QS_ASSIGN_OR_RETURN(const std::vector<Tensor> samplesB, inputsForB(runA, runB, samplesA));
        QS_ASSIGN_OR_RETURN(const std::vector<Tensor> valuesB,
                            runB.run(samplesB).context("B, " + step));
        for (size_t p = 0; p < probes.size(); ++p) {
            accumulate(probes[p], valuesA[outputsA + p], valuesB[outputsB + p], out.skipped,
                       out.tensors[probes[p].row].tensor);
        }
        if (outputsA > 0 && outputsB > 0) {
            firstA.push_back(valuesA[0]);
            firstB.push_back(runtime::castTensor(valuesB[0], graph::DataType::Float));
        }
    }
    progress.report(1.0, "comparing, done");
    if (!firstA.empty()) {
        QS_TRY(scoreOutputs(dataset, firstA, firstB, out));
    }
    return success();
}

/// Each comparable probe's SQNR into its row; the rows of the others are dropped.
void keepComparable(const std::vector<Probe>& probes, ExportComparison& out) {
    std::set<size_t> dropped;
    for (const Probe& probe : probes) {
        if (probe.comparable) {
            out.tensors[probe.row].sqnrDb = sqnrOf(probe);
        } else {
            dropped.insert(probe.row);
        }
    }
    std::vector<TensorComparison> kept;
    for (size_t i = 0; i < out.tensors.size(); ++i) {
        if (!dropped.contains(i)) {
            kept.push_back(std::move(out.tensors[i]));
        }
    }
    out.tensors = std::move(kept);
}

} // namespace

Result<ExportComparison> compareExport(const Graph& a, const Graph& b,
                                       const ExportStructure& structure,
                                       const runtime::Dataset& dataset, double divergenceDb,
                                       Progress& progress) {
    ExportComparison out;
    out.divergenceDb = divergenceDb;
    std::vector<Probe> probes;
    QS_ASSIGN_OR_RETURN(probes, ProbePlan(a, b, structure, out).build());
    QS_ASSIGN_OR_RETURN(const runtime::Executor runA,
                        runtime::Executor::create(withProbes(a, probes, true)).context("A"));
    Graph probedB = withProbes(b, probes, false);
    const bool fp16 = asFloat32(probedB);
    QS_ASSIGN_OR_RETURN(const runtime::Executor runB,
                        runtime::Executor::create(std::move(probedB), {.fp16 = fp16}).context("B"));
    if (dataset.inputs.size() != runA.inputIds().size()) {
        return Error(Errc::InvalidArgument,
                     "the dataset has " + std::to_string(dataset.inputs.size()) +
                         " input tensor(s), A takes " + std::to_string(runA.inputIds().size()));
    }
    QS_TRY(runSamples(runA, runB, dataset, probes, out, progress));
    keepComparable(probes, out);
    summarize(a, structure, out);
    return out;
}

namespace {

std::string opCounts(const std::map<std::string, int>& ops) {
    std::string text;
    for (const auto& [op, count] : ops) {
        text += (text.empty() ? "" : ", ") + op + " " + std::to_string(count);
    }
    return text.empty() ? "nothing" : text;
}

std::string channelList(const std::vector<int64_t>& channels) {
    std::string text;
    for (const int64_t c : channels) {
        text += (text.empty() ? "" : " ") + std::to_string(c);
    }
    return text;
}

ReviewTable prunedTable(const ExportStructure& structure) {
    ReviewTable table{
        .id = "pruned_channels",
        .title = "Pruned weights",
        .columns = {"node", "weight", "axis", "channels A", "channels B", "pruned channels"},
        .numeric = {false, false, true, true, true, false},
        .rows = {}};
    for (const PrunedWeight& w : structure.pruned) {
        table.rows.push_back(
            {w.node, w.weight, std::to_string(w.axis), std::to_string(w.channels),
             std::to_string(w.kept),
             w.matched ? channelList(w.prunedChannels) : std::string("(rows not found in A)")});
    }
    return table;
}

ReviewTable tensorTable(const ExportComparison& comparison) {
    ReviewTable table{
        .id = "tensor_sqnr",
        .title =
            "SQNR of B against A per tensor (" + std::to_string(comparison.samples) + " samples)",
        .columns = {"#", "tensor", "producer", "op", "SQNR dB", "input SQNR dB", "drop dB", "note"},
        .numeric = {true, false, false, false, true, true, true, false},
        .rows = {}};
    for (size_t i = 0; i < comparison.tensors.size(); ++i) {
        const TensorComparison& row = comparison.tensors[i];
        const bool hasDrop =
            row.inputSqnrDb && std::isfinite(*row.inputSqnrDb) && std::isfinite(row.sqnrDb);
        std::string note = row.note;
        if (comparison.firstDivergent == i) {
            note += (note.empty() ? "" : "; ") + std::string("first below ") +
                    decibels(comparison.divergenceDb) + " dB";
        }
        if (comparison.largestDrop == i) {
            note += (note.empty() ? "" : "; ") + std::string("largest drop");
        }
        table.rows.push_back({std::to_string(i + 1), row.tensor, row.producer, row.opType,
                              decibels(row.sqnrDb),
                              row.inputSqnrDb ? decibels(*row.inputSqnrDb) : "",
                              hasDrop ? decibels(*row.inputSqnrDb - row.sqnrDb) : "", note});
    }
    return table;
}

void comparisonFacts(ReviewDiff& diff, const ExportComparison& comparison) {
    diff.facts.emplace_back("Compared", std::to_string(comparison.tensors.size()) + " tensors on " +
                                            std::to_string(comparison.samples) + " samples");
    if (comparison.firstDivergent) {
        const TensorComparison& row = comparison.tensors[*comparison.firstDivergent];
        diff.facts.emplace_back("First divergent layer",
                                row.producer + " (" + row.opType + "), tensor " + row.tensor +
                                    ": " + decibels(row.sqnrDb) + " dB < " +
                                    decibels(comparison.divergenceDb) + " dB");
    } else {
        diff.facts.emplace_back("First divergent layer", "none: every tensor at " +
                                                             decibels(comparison.divergenceDb) +
                                                             " dB or more");
    }
    if (comparison.largestDrop) {
        const TensorComparison& row = comparison.tensors[*comparison.largestDrop];
        diff.facts.emplace_back("Largest SQNR drop", row.producer + " (" + row.opType + "): " +
                                                         decibels(*row.inputSqnrDb) + " dB in, " +
                                                         decibels(row.sqnrDb) + " dB out");
    }
    if (comparison.agreement) {
        diff.facts.emplace_back("Outputs of B against A",
                                "top-1 agreement " +
                                    twoDecimals(100.0 * comparison.agreement->top1Agreement) +
                                    " %, cosine " + sixDecimals(comparison.agreement->meanCosine) +
                                    " (min " + sixDecimals(comparison.agreement->minCosine) + ")");
    }
    if (comparison.accuracy) {
        std::string text = accuracyText(*comparison.accuracy, "B");
        while (!text.empty() && text.back() == '\n') {
            text.pop_back();
        }
        diff.facts.emplace_back("Accuracy", text);
    }
    if (!comparison.tensors.empty()) {
        const TensorComparison& last = comparison.tensors.back();
        diff.facts.emplace_back("SQNR of the last tensor",
                                last.tensor + ": " + decibels(last.sqnrDb) + " dB");
    }
}

/// The SQNR of each quantizer's DQ output, by insertion point text.
std::map<std::string, std::string> quantizerSqnr(const ExportStructure& structure,
                                                 const ExportComparison& comparison) {
    std::map<std::string, std::string> byPoint;
    for (const TensorComparison& row : comparison.tensors) {
        if (row.quantizer < 0) {
            continue;
        }
        const auto point = structure.setup.quantizationPoints.find(row.quantizer);
        if (point != structure.setup.quantizationPoints.end()) {
            byPoint[point->second.insertionPoint.toString()] = decibels(row.sqnrDb);
        }
    }
    return byPoint;
}

} // namespace

ReviewDiff exportDiff(const ReviewReport& a, const ReviewReport& b,
                      const ExportStructure& structure, const ExportComparison* comparison) {
    ReviewDiff diff = diffReviews(a, b, a.header.source, b.header.source);
    diff.notes.clear();
    diff.a.compressedBytes = structure.bytesA;
    diff.b.compressedBytes = structure.bytesB;
    diff.facts.emplace_back("Export inserted", opCounts(structure.insertedOps));
    if (structure.float16Initializers > 0) {
        diff.facts.emplace_back("Float16 initializers in B",
                                std::to_string(structure.float16Initializers));
    }
    if (!structure.pruned.empty()) {
        int64_t channels = 0;
        int64_t kept = 0;
        for (const PrunedWeight& w : structure.pruned) {
            channels += w.channels;
            kept += w.kept;
        }
        diff.facts.emplace_back("Pruned weights", std::to_string(structure.pruned.size()) + " (" +
                                                      std::to_string(kept) + " of " +
                                                      std::to_string(channels) +
                                                      " output channels kept)");
    }
    if (!structure.missingNodes.empty()) {
        diff.facts.emplace_back("Nodes of A missing in B",
                                std::to_string(structure.missingNodes.size()) +
                                    " (first: " + structure.missingNodes.front() + ")");
    }
    diff.pruning = prunedTable(structure);
    ReviewTable inserted{.id = "inserted_ops",
                         .title = "Nodes the export inserted",
                         .columns = {"op", "count"},
                         .numeric = {false, true},
                         .rows = {}};
    for (const auto& [op, count] : structure.insertedOps) {
        inserted.rows.push_back({op, std::to_string(count)});
    }
    diff.extra.push_back(std::move(inserted));
    if (comparison != nullptr) {
        comparisonFacts(diff, *comparison);
        const std::map<std::string, std::string> sqnr = quantizerSqnr(structure, *comparison);
        const auto column = static_cast<size_t>(
            std::find(diff.quantizers.columns.begin(), diff.quantizers.columns.end(), "SQNR dB B") -
            diff.quantizers.columns.begin());
        for (std::vector<std::string>& row : diff.quantizers.rows) {
            if (const auto found = sqnr.find(row[0]); found != sqnr.end() && column < row.size()) {
                row[column] = found->second;
            }
        }
        diff.extra.push_back(tensorTable(*comparison));
        const size_t shown = std::min<size_t>(comparison->skipped.size(), 5);
        for (size_t i = 0; i < shown; ++i) {
            diff.notes.push_back("not compared: " + comparison->skipped[i]);
        }
        if (comparison->skipped.size() > shown) {
            diff.notes.push_back("and " + std::to_string(comparison->skipped.size() - shown) +
                                 " more tensors not compared");
        }
    }
    diff.notes.insert(diff.notes.end(), structure.notes.begin(), structure.notes.end());
    diff.notes.push_back("B's structure is recovered by node names: every QuantizeLinear/"
                         "DequantizeLinear pair that covers all uses of a tensor is a post-hook "
                         "quantizer, one that covers some of them a pre-hook on each");
    return diff;
}

} // namespace qs::report
