#include "core/report/model_info.h"

#include "core/graph/metatype.h"
#include "core/graph/op_facts.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

namespace qs::report {
using graph::Graph;
using graph::NodeId;

namespace {

TensorSummary summarize(const graph::Value& value) {
    return {value.name, std::string(graph::dataTypeName(value.dtype)), value.shape.toString()};
}

/// Dims of a value with a known rank; symbolic dims (a dynamic batch) count as 1.
std::optional<std::vector<int64_t>> macDims(const Graph& graph, graph::ValueId id, bool& assumed) {
    if (!id.valid()) {
        return std::nullopt;
    }
    const graph::TensorShape& shape = graph.value(id).shape;
    if (!shape.rankKnown) {
        return std::nullopt;
    }
    std::vector<int64_t> dims;
    for (const graph::Dim& dim : shape.dims) {
        assumed = assumed || !dim.isKnown();
        dims.push_back(dim.isKnown() ? dim.size : 1);
    }
    return dims;
}

int64_t product(const std::vector<int64_t>& dims, size_t from = 0) {
    int64_t out = 1;
    for (size_t i = from; i < dims.size(); ++i) {
        out *= dims[i];
    }
    return out;
}

std::string withThousands(int64_t value) {
    std::string digits = std::to_string(value);
    for (int pos = static_cast<int>(digits.size()) - 3;
         pos > 0 && digits[static_cast<size_t>(pos) - 1] != '-'; pos -= 3) {
        digits.insert(static_cast<size_t>(pos), ",");
    }
    return digits;
}

std::string humanBytes(int64_t bytes) {
    char buffer[32];
    const double value = static_cast<double>(bytes);
    if (value >= 1e9) {
        std::snprintf(buffer, sizeof buffer, "%.2f GB", value / 1e9);
    } else if (value >= 1e6) {
        std::snprintf(buffer, sizeof buffer, "%.2f MB", value / 1e6);
    } else if (value >= 1e3) {
        std::snprintf(buffer, sizeof buffer, "%.1f kB", value / 1e3);
    } else {
        std::snprintf(buffer, sizeof buffer, "%lld B", static_cast<long long>(bytes));
    }
    return buffer;
}

} // namespace

std::optional<int64_t> nodeMacs(const Graph& graph, NodeId id, bool* dynamicDimsAssumedOne) {
    const graph::Node& n = graph.node(id);
    if (!n.isDefaultDomain() || n.inputs.size() < 2 || n.outputs.empty()) {
        return std::nullopt;
    }
    bool assumed = false;
    const auto out = macDims(graph, n.outputs[0], assumed);
    const auto weight = macDims(graph, n.inputs[1], assumed);
    if (dynamicDimsAssumedOne != nullptr) {
        *dynamicDimsAssumedOne = assumed;
    }
    switch (graph::opFacts(n.opType).macs) {
    case graph::MacRule::Conv: {
        // Each output element sums C_in/group x kernel products: weight is [C_out, C_in/g, k...].
        if (!out || !weight || weight->size() < 2) {
            return std::nullopt;
        }
        return product(*out) * product(*weight, 1);
    }
    case graph::MacRule::ConvTranspose: {
        // Each input element scatters into C_out/group x kernel outputs: weight is [C_in, C_out/g,
        // k...].
        const auto in = macDims(graph, n.inputs[0], assumed);
        if (!in || !weight || weight->size() < 2) {
            return std::nullopt;
        }
        return product(*in) * product(*weight, 1);
    }
    case graph::MacRule::MatMul: {
        // M x N outputs (per batch), each a K-long dot product.
        const auto a = macDims(graph, n.inputs[0], assumed);
        if (!out || !a || a->empty()) {
            return std::nullopt;
        }
        int64_t k = a->back();
        if (n.opType == "Gemm" && n.intAttr("transA", 0) != 0 && a->size() == 2) {
            k = (*a)[0];
        }
        return product(*out) * k;
    }
    case graph::MacRule::None:
        break;
    }
    return std::nullopt;
}

ModelInfo computeModelInfo(const Graph& graph) {
    ModelInfo info;
    const graph::ModelMetadata& meta = graph.metadata();
    info.irVersion = meta.irVersion;
    info.opsets = meta.opsetImports;
    info.defaultOpset = graph.opsetVersion();
    info.producer =
        meta.producerName + (meta.producerVersion.empty() ? "" : " " + meta.producerVersion);
    for (const graph::ValueId id : graph.runtimeInputs()) {
        info.inputs.push_back(summarize(graph.value(id)));
    }
    for (const graph::ValueId id : graph.outputs()) {
        info.outputs.push_back(summarize(graph.value(id)));
    }
    std::map<std::string, size_t> counts;
    for (const NodeId id : graph.nodeIds()) {
        const graph::Node& n = graph.node(id);
        const std::string qualified = n.isDefaultDomain() ? n.opType : n.domain + "." + n.opType;
        ++counts[qualified];
        ++info.nodeCount;
        if (!n.isDefaultDomain()) {
            info.opaqueNodes.push_back({n.name, qualified, "custom domain '" + n.domain + "'"});
        } else if (n.hasSubgraph()) {
            info.opaqueNodes.push_back({n.name, qualified, "has subgraphs"});
        } else if (!graph::isRegisteredOpType(n.opType)) {
            info.opaqueNodes.push_back({n.name, qualified, "unknown op"});
        }
        if (graph::opFacts(n.opType).macs != graph::MacRule::None) {
            bool assumed = false;
            if (const auto macs = nodeMacs(graph, id, &assumed)) {
                info.macs += *macs;
                info.macsDynamicDimsAsOne = info.macsDynamicDimsAsOne || assumed;
            } else {
                ++info.macsUnknownNodes;
            }
        }
    }
    info.opTypeCounts.assign(counts.begin(), counts.end());
    std::stable_sort(info.opTypeCounts.begin(), info.opTypeCounts.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    for (const graph::ValueId id : graph.initializers()) {
        const graph::TensorData& data = *graph.value(id).initializer;
        ++info.initializerCount;
        info.parameterCount += data.numElements();
        info.parameterBytes += static_cast<int64_t>(data.bytes().size());
    }
    return info;
}

std::string formatModelInfo(const ModelInfo& info) {
    std::ostringstream out;
    if (!info.path.empty()) {
        out << "Model:       " << info.path << '\n';
    }
    out << "IR version:  " << info.irVersion << '\n';
    out << "Opsets:     ";
    for (const graph::OpsetImport& opset : info.opsets) {
        out << ' ' << (opset.domain.empty() ? "ai.onnx" : opset.domain) << ':' << opset.version;
    }
    out << '\n';
    if (!info.producer.empty()) {
        out << "Producer:    " << info.producer << '\n';
    }
    out << "Inputs:\n";
    for (const TensorSummary& t : info.inputs) {
        out << "  " << t.name << "  " << t.dtype << "  " << t.shape << '\n';
    }
    out << "Outputs:\n";
    for (const TensorSummary& t : info.outputs) {
        out << "  " << t.name << "  " << t.dtype << "  " << t.shape << '\n';
    }
    out << "Nodes:       " << info.nodeCount << '\n';
    out << "Parameters:  " << withThousands(info.parameterCount) << " in " << info.initializerCount
        << " initializers (" << humanBytes(info.parameterBytes) << ")\n";
    out << "MACs:        " << withThousands(info.macs);
    if (info.macsDynamicDimsAsOne) {
        out << " (dynamic dims counted as 1)";
    }
    if (info.macsUnknownNodes > 0) {
        out << " (+" << info.macsUnknownNodes << " Conv/Gemm/MatMul nodes of unknown rank)";
    }
    out << '\n';
    out << "Op types:\n";
    for (const auto& [opType, count] : info.opTypeCounts) {
        char line[128];
        std::snprintf(line, sizeof line, "  %-24s %zu\n", opType.c_str(), count);
        out << line;
    }
    if (info.opaqueNodes.empty()) {
        out << "Unsupported/opaque ops: none\n";
    } else {
        out << "Unsupported/opaque ops: " << info.opaqueNodes.size() << '\n';
        for (const OpaqueNode& n : info.opaqueNodes) {
            out << "  " << n.name << " (" << n.opType << "): " << n.reason << '\n';
        }
    }
    for (const std::string& warning : info.warnings) {
        out << "warning: " << warning << '\n';
    }
    return out.str();
}

nlohmann::json modelInfoToJson(const ModelInfo& info) {
    using nlohmann::json;
    auto tensors = [](const std::vector<TensorSummary>& list) {
        json arr = json::array();
        for (const TensorSummary& t : list) {
            arr.push_back({{"name", t.name}, {"dtype", t.dtype}, {"shape", t.shape}});
        }
        return arr;
    };
    json opsets = json::object();
    for (const graph::OpsetImport& opset : info.opsets) {
        opsets[opset.domain.empty() ? "ai.onnx" : opset.domain] = opset.version;
    }
    json opTypes = json::object();
    for (const auto& [opType, count] : info.opTypeCounts) {
        opTypes[opType] = count;
    }
    json opaque = json::array();
    for (const OpaqueNode& n : info.opaqueNodes) {
        opaque.push_back({{"name", n.name}, {"op_type", n.opType}, {"reason", n.reason}});
    }
    return json{{"path", info.path},
                {"ir_version", info.irVersion},
                {"opset", info.defaultOpset},
                {"opset_imports", opsets},
                {"producer", info.producer},
                {"inputs", tensors(info.inputs)},
                {"outputs", tensors(info.outputs)},
                {"node_count", info.nodeCount},
                {"op_type_counts", opTypes},
                {"initializer_count", info.initializerCount},
                {"parameter_count", info.parameterCount},
                {"parameter_bytes", info.parameterBytes},
                {"macs", info.macs},
                {"macs_unknown_nodes", info.macsUnknownNodes},
                {"macs_dynamic_dims_as_one", info.macsDynamicDimsAsOne},
                {"opaque_nodes", opaque},
                {"warnings", info.warnings}};
}

} // namespace qs::report
