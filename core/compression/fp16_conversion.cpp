#include "core/compression/fp16_conversion.h"

#include "core/compression/opset_upgrade.h"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <span>
#include <unordered_map>
#include <unordered_set>

namespace qs::compression {

using graph::DataType;
using graph::Graph;
using graph::NodeId;
using graph::ValueId;

namespace {
/// Largest finite float16.
constexpr float kFloat16Max = 65504.0F;

enum class Precision { Fp32, Fp16 };

/// Inputs typed tensor(float) in every opset (no float16): Resize's and Upsample's scales.
bool isFloat32OnlyPort(const graph::Node& node, uint32_t port) {
    return (node.opType == "Resize" && port == 2) || (node.opType == "Upsample" && port == 1);
}

DataType dataTypeOf(Precision precision) {
    return precision == Precision::Fp16 ? DataType::Float16 : DataType::Float;
}

struct Converter {
    Graph& graph;
    const Fp16Options& options;
    Fp16Report report;
    std::vector<bool> blocked;
    std::unordered_set<uint32_t> forcedFp32; ///< values read by subgraphs
    std::unordered_map<uint32_t, Precision> home;

    Converter(Graph& g, const Fp16Options& o)
        : graph(g)
        , options(o) {}

    bool isFloat(ValueId id) const {
        return id.valid() && graph.value(id).dtype == DataType::Float;
    }

    Precision wanted(const graph::Use& use) const {
        if (blocked[use.node.index()] || isFloat32OnlyPort(graph.node(use.node), use.port)) {
            return Precision::Fp32;
        }
        return Precision::Fp16;
    }

    Precision outputWanted() const {
        return options.keepIoTypes ? Precision::Fp32 : Precision::Fp16;
    }

    void markBlocked() {
        std::unordered_set<std::string> blockedTypes(options.blockedOps.begin(),
                                                     options.blockedOps.end());
        if (options.useDefaultBlockList) {
            blockedTypes.insert(defaultFp16BlockList().begin(), defaultFp16BlockList().end());
        }
        blocked.assign(graph.numNodeSlots(), false);
        for (const NodeId id : graph.nodeIds()) {
            const graph::Node& node = graph.node(id);
            blocked[id.index()] =
                !node.isDefaultDomain() || node.hasSubgraph() || blockedTypes.contains(node.opType);
        }
        for (const NodeId id : graph.nodeIds()) {
            for (const ValueId value : graph.node(id).implicitInputs) {
                forcedFp32.insert(value.index());
                const NodeId producer = graph.value(value).producer;
                if (producer.valid()) {
                    blocked[producer.index()] = true;
                }
            }
        }
        for (const NodeId id : graph.nodeIds()) {
            report.blockedNodes += blocked[id.index()] ? 1 : 0;
        }
    }

    Precision homeOf(ValueId id) const {
        const graph::Value& value = graph.value(id);
        if (forcedFp32.contains(id.index())) {
            return Precision::Fp32;
        }
        if (value.producer.valid()) {
            return blocked[value.producer.index()] ? Precision::Fp32 : Precision::Fp16;
        }
        if (value.isInitializer()) {
            const bool anyFp16 =
                std::any_of(value.consumers.begin(), value.consumers.end(),
                            [&](const graph::Use& use) { return wanted(use) == Precision::Fp16; });
            return anyFp16 ? Precision::Fp16 : Precision::Fp32;
        }
        return options.keepIoTypes ? Precision::Fp32 : Precision::Fp16;
    }

    ValueId addCast(ValueId input, const std::string& outputName, Precision to) {
        const graph::Value& source = graph.value(input);
        const ValueId output = graph.addValue(outputName, dataTypeOf(to), source.shape);
        graph.addNode(outputName, "Cast", {input}, {output},
                      {{"to", static_cast<int64_t>(dataTypeOf(to)), {}}});
        ++report.castsInserted;
        return output;
    }

    /// Casts in front of the consumers that want the other precision; one Cast per value.
    void castConsumers(ValueId id, Precision valueHome) {
        std::vector<graph::Use> mismatched;
        for (const graph::Use& use : graph.value(id).consumers) {
            if (wanted(use) != valueHome) {
                mismatched.push_back(use);
            }
        }
        if (mismatched.empty()) {
            return;
        }
        const Precision other = valueHome == Precision::Fp16 ? Precision::Fp32 : Precision::Fp16;
        const std::string suffix = other == Precision::Fp16 ? "_fp16" : "_fp32";
        const ValueId cast =
            addCast(id, uniqueValueName(graph, graph.value(id).name + suffix), other);
        for (const graph::Use& use : mismatched) {
            graph.setNodeInput(use.node, use.port, cast);
        }
    }

    /// A graph output whose precision differs from the kept I/O type: the value is renamed and
    /// a Cast produces the output under its original name.
    void castGraphOutput(ValueId id, Precision valueHome) {
        const std::string name = graph.value(id).name;
        const std::string suffix = valueHome == Precision::Fp16 ? "_fp16" : "_fp32";
        graph.renameValue(id, uniqueValueName(graph, name + suffix));
        const std::vector<graph::Use> consumers = graph.value(id).consumers;
        const ValueId output =
            graph.addValue(name, dataTypeOf(outputWanted()), graph.value(id).shape);
        graph.replaceAllUses(id, output);
        for (const graph::Use& use : consumers) {
            graph.setNodeInput(use.node, use.port, id);
        }
        graph.addNode(name + "_cast", "Cast", {id}, {output},
                      {{"to", static_cast<int64_t>(dataTypeOf(outputWanted())), {}}});
        ++report.castsInserted;
    }

    void convertInitializer(ValueId id) {
        graph::Value& value = graph.value(id);
        const std::span<const float> source = value.initializer->as<float>();
        std::vector<Eigen::half> converted(source.size());
        bool clamped = false;
        for (size_t i = 0; i < source.size(); ++i) {
            float x = source[i];
            if (std::fabs(x) > kFloat16Max && std::isfinite(x)) {
                x = std::copysign(kFloat16Max, x);
                ++report.clampedElements;
                clamped = true;
            }
            converted[i] = Eigen::half(x);
            if (x != 0.0F && static_cast<float>(converted[i]) == 0.0F) {
                ++report.flushedElements;
            }
        }
        if (clamped) {
            report.clampedTensors.push_back(value.name);
        }
        report.bytesBefore += static_cast<int64_t>(source.size_bytes());
        report.bytesAfter += static_cast<int64_t>(converted.size() * sizeof(Eigen::half));
        value.initializer = graph::TensorData::fromValues<Eigen::half>(
            DataType::Float16, value.initializer->dims(), std::span<const Eigen::half>(converted));
        ++report.convertedInitializers;
    }

    /// Cast nodes computing in float16 now produce float16.
    void retargetCasts() {
        for (const NodeId id : graph.nodeIds()) {
            graph::Node& node = graph.node(id);
            if (node.opType != "Cast" || blocked.size() <= id.index() || blocked[id.index()] ||
                node.outputs.empty() || graph.value(node.outputs[0]).dtype != DataType::Float16) {
                continue;
            }
            for (graph::Attribute& attribute : node.attributes) {
                auto* to = std::get_if<int64_t>(&attribute.value);
                if (attribute.name == "to" && to != nullptr &&
                    *to == static_cast<int64_t>(DataType::Float)) {
                    *to = static_cast<int64_t>(DataType::Float16);
                }
            }
        }
    }

    Result<Fp16Report> run() {
        markBlocked();
        const std::vector<ValueId> values = graph.valueIds();
        for (const ValueId id : values) {
            if (isFloat(id)) {
                home[id.index()] = homeOf(id);
            } else if (graph.value(id).dtype == DataType::Undefined &&
                       graph.value(id).opaqueType.empty() && graph.value(id).producer.valid()) {
                ++report.untypedValues;
            }
        }
        const std::vector<ValueId> outputs = graph.outputs();
        for (const ValueId id : values) {
            if (!home.contains(id.index())) {
                continue;
            }
            const Precision valueHome = home[id.index()];
            castConsumers(id, valueHome);
            const bool isOutput = std::find(outputs.begin(), outputs.end(), id) != outputs.end();
            // A graph input passed straight through keeps its name and type: renaming it would
            // rename the input.
            const bool isInput =
                std::find(graph.inputs().begin(), graph.inputs().end(), id) != graph.inputs().end();
            if (isOutput && !isInput && valueHome != outputWanted()) {
                castGraphOutput(id, valueHome);
            }
        }
        for (const auto& [index, precision] : home) {
            if (precision != Precision::Fp16) {
                continue;
            }
            const ValueId id(index);
            if (graph.value(id).isInitializer()) {
                convertInitializer(id);
            }
            graph.value(id).dtype = DataType::Float16;
            ++report.convertedValues;
        }
        retargetCasts();
        std::sort(report.clampedTensors.begin(), report.clampedTensors.end());
        return report;
    }
};
} // namespace

const std::vector<std::string>& defaultFp16BlockList() {
    static const std::vector<std::string> kBlocked = {"Range",
                                                      "NonMaxSuppression",
                                                      "ConstantOfShape",
                                                      "EyeLike",
                                                      "RandomNormal",
                                                      "RandomNormalLike",
                                                      "RandomUniform",
                                                      "RandomUniformLike",
                                                      "Multinomial",
                                                      "Bernoulli",
                                                      "QuantizeLinear",
                                                      "DequantizeLinear",
                                                      "DynamicQuantizeLinear",
                                                      "CumSum"};
    return kBlocked;
}

Result<Fp16Report> convertToFloat16(Graph& graph, const Fp16Options& options) {
    for (const ValueId id : graph.initializers()) {
        const graph::Value& value = graph.value(id);
        if (value.dtype == DataType::Float && value.initializer->dtype() != DataType::Float) {
            return Error(Errc::InvalidModel,
                         "initializer '" + value.name + "' is declared float but holds other data");
        }
    }
    Converter converter(graph, options);
    return converter.run();
}

} // namespace qs::compression
