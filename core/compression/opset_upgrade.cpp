#include "core/compression/opset_upgrade.h"

#include "core/onnx/version_conversion.h"
#include "core/runtime/executor.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <random>
#include <span>
#include <string_view>

namespace qs::compression {

using graph::Graph;
using graph::Node;
using graph::NodeId;
using graph::ValueId;

namespace {
/// Reductions whose `axes` attribute became an input at opset 18 (ReduceSum already at 13).
constexpr std::array<std::string_view, 9> kReductionsAt18 = {
    "ReduceMean", "ReduceMax",    "ReduceMin",       "ReduceProd",     "ReduceL1",
    "ReduceL2",   "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"};

bool crosses(int64_t from, int64_t to, int64_t version) {
    return from < version && to >= version;
}

/// The opset at which `node`'s `attrName` attribute became input `port`, or 0.
int64_t attributeToInputVersion(const Node& node, std::string_view& attrName) {
    if (std::find(kReductionsAt18.begin(), kReductionsAt18.end(), node.opType) !=
        kReductionsAt18.end()) {
        attrName = "axes";
        return 18;
    }
    if (node.opType == "ReduceSum" || node.opType == "Squeeze" || node.opType == "Unsqueeze") {
        attrName = "axes";
        return 13;
    }
    if (node.opType == "Split") {
        attrName = "split";
        return 13;
    }
    return 0;
}

Result<void> checkMigratable(const Graph& graph, NodeId id, int64_t from, int64_t to) {
    const Node& node = graph.node(id);
    if (!node.isDefaultDomain()) {
        return success();
    }
    auto refuse = [&](const std::string& why) {
        return Error(Errc::Unsupported, "cannot raise the opset from " + std::to_string(from) +
                                            " to " + std::to_string(to) + ": node '" + node.name +
                                            "' (" + node.opType + ") " + why);
    };
    const bool softmaxLike =
        node.opType == "Softmax" || node.opType == "LogSoftmax" || node.opType == "Hardmax";
    if (softmaxLike && crosses(from, to, 13)) {
        // Before 13 the input is coerced to 2-D at `axis` (default 1); from 13 on `axis`
        // (default -1) is a single axis. They agree only when the axis is the last one.
        const graph::TensorShape& shape = graph.value(node.inputs[0]).shape;
        const int64_t axis = node.intAttr("axis", 1);
        const auto rank = static_cast<int64_t>(shape.rank());
        if (!(axis == -1 || (shape.rankKnown && axis == rank - 1))) {
            return refuse("changes meaning: its axis is not the last one");
        }
    }
    if (node.opType == "GroupNormalization" && crosses(from, to, 21)) {
        return refuse("changes meaning: scale and bias became per channel");
    }
    if (node.hasSubgraph()) {
        return refuse("has a subgraph whose nodes would need migrating too");
    }
    return success();
}

void moveAttributeToInput(Graph& graph, NodeId id, std::string_view attrName, size_t port) {
    Node& node = graph.node(id);
    const auto found = std::find_if(node.attributes.begin(), node.attributes.end(),
                                    [&](const auto& a) { return a.name == attrName; });
    if (found == node.attributes.end()) {
        return;
    }
    const std::vector<int64_t> values = node.intsAttr(attrName);
    const std::string name = uniqueValueName(graph, (node.name.empty() ? node.opType : node.name) +
                                                        "_" + std::string(attrName));
    node.attributes.erase(found);
    const ValueId input = graph.addInitializer(
        name, graph::TensorData::fromValues<int64_t>(graph::DataType::Int64,
                                                     {static_cast<int64_t>(values.size())},
                                                     std::span<const int64_t>(values)));
    Node& current = graph.node(id);
    while (current.inputs.size() < port) {
        current.inputs.push_back(ValueId());
    }
    if (current.inputs.size() == port) {
        current.inputs.push_back(ValueId());
    }
    graph.setNodeInput(id, static_cast<uint32_t>(port), input);
}

/// Split needs `num_outputs` from 18 on when no split sizes are given.
void migrateSplit(graph::Node& node) {
    const bool hasSplitInput = node.inputs.size() > 1 && node.inputs[1].valid();
    if (!hasSplitInput && node.attribute("num_outputs") == nullptr) {
        node.attributes.push_back({"num_outputs", static_cast<int64_t>(node.outputs.size()), {}});
    }
}

/// GridSample's modes were renamed at 20: bilinear -> linear, bicubic -> cubic.
void migrateGridSample(graph::Node& node) {
    for (graph::Attribute& attribute : node.attributes) {
        auto* mode = std::get_if<std::string>(&attribute.value);
        if (attribute.name == "mode" && mode != nullptr) {
            *mode = *mode == "bilinear" ? "linear" : (*mode == "bicubic" ? "cubic" : *mode);
        }
    }
    if (node.attribute("mode") == nullptr) {
        node.attributes.push_back({"mode", std::string("linear"), {}});
    }
}

void migrateNode(Graph& graph, NodeId id, int64_t from, int64_t to) {
    if (!graph.node(id).isDefaultDomain()) {
        return;
    }
    std::string_view attrName;
    const int64_t version = attributeToInputVersion(graph.node(id), attrName);
    if (version > 0 && crosses(from, to, version)) {
        moveAttributeToInput(graph, id, attrName, 1);
    }
    Node& migrated = graph.node(id);
    if (migrated.opType == "Split" && crosses(from, to, 18)) {
        migrateSplit(migrated);
    }
    if (migrated.opType == "GridSample" && crosses(from, to, 20)) {
        migrateGridSample(migrated);
    }
}
} // namespace

std::string uniqueValueName(const Graph& graph, const std::string& base) {
    if (!graph.findValue(base)) {
        return base;
    }
    for (int suffix = 1;; ++suffix) {
        std::string candidate = base + "_" + std::to_string(suffix);
        if (!graph.findValue(candidate)) {
            return candidate;
        }
    }
}

std::string OpsetUpgrade::describe() const {
    if (!upgraded()) {
        return "opset " + std::to_string(fromOpset) + " kept";
    }
    std::string out =
        "opset " + std::to_string(fromOpset) + " raised to " + std::to_string(toOpset);
    if (onnxConverter) {
        char diff[32];
        std::snprintf(diff, sizeof diff, "%.2g", maxRelativeDifference);
        out += " (by ONNX's version converter; equal to the original on random inputs, max "
               "relative difference " +
               std::string(diff) + ")";
    }
    return out;
}

namespace {
/// Seeded uniform [-1, 1) samples for every runtime input; dynamic dims become 1 (batch) or 16.
Result<std::vector<runtime::Tensor>> randomInputs(const Graph& model, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> uniform(-1.0F, 1.0F);
    std::vector<runtime::Tensor> inputs;
    for (const ValueId input : model.runtimeInputs()) {
        const graph::Value& v = model.value(input);
        if (v.dtype != graph::DataType::Float) {
            return Error(Errc::Unsupported, "input '" + v.name +
                                                "' is not float: cannot check the conversion "
                                                "on random data");
        }
        runtime::Shape dims;
        for (size_t axis = 0; axis < v.shape.dims.size(); ++axis) {
            const graph::Dim& d = v.shape.dims[axis];
            dims.push_back(d.isKnown() ? d.size : (axis == 0 ? 1 : 16));
        }
        runtime::Tensor t = runtime::Tensor::allocate(graph::DataType::Float, dims);
        float* data = t.mutableData<float>();
        for (int64_t k = 0; k < t.numElements(); ++k) {
            data[k] = uniform(rng);
        }
        inputs.push_back(std::move(t));
    }
    return inputs;
}

/// max |x - y| / max |x| of one output pair (the plain max difference when x is all zero).
double relativeDifference(const runtime::Tensor& expected, const runtime::Tensor& actual) {
    const auto x = expected.values<float>();
    const auto y = actual.values<float>();
    double scale = 0;
    double diff = 0;
    for (size_t k = 0; k < x.size(); ++k) {
        scale = std::max(scale, std::abs(static_cast<double>(x[k])));
        diff = std::max(diff, std::abs(static_cast<double>(x[k]) - y[k]));
    }
    return scale > 0 ? diff / scale : diff;
}
} // namespace

Result<double> compareOnRandomInputs(const Graph& reference, const Graph& candidate,
                                     uint64_t seed) {
    QS_ASSIGN_OR_RETURN(runtime::Executor a, runtime::Executor::create(reference));
    QS_ASSIGN_OR_RETURN(runtime::Executor b, runtime::Executor::create(candidate));
    QS_ASSIGN_OR_RETURN(const std::vector<runtime::Tensor> inputs, randomInputs(reference, seed));
    QS_ASSIGN_OR_RETURN(const std::vector<runtime::Tensor> expected, a.run(inputs));
    QS_ASSIGN_OR_RETURN(const std::vector<runtime::Tensor> actual, b.run(inputs));
    if (expected.size() != actual.size()) {
        return Error(Errc::Internal, "the converted model has another number of outputs");
    }
    double worst = 0;
    for (size_t i = 0; i < expected.size(); ++i) {
        if (expected[i].shape() != actual[i].shape() ||
            expected[i].dtype() != graph::DataType::Float ||
            actual[i].dtype() != graph::DataType::Float) {
            return Error(Errc::Internal, "output " + std::to_string(i) +
                                             " of the converted model has another shape or type");
        }
        worst = std::max(worst, relativeDifference(expected[i], actual[i]));
    }
    return worst;
}

namespace {
/// Opset 7-10: ONNX's converter to 13, checked against the original on our executor.
Result<void> convertWithOnnx(Graph& graph, int64_t target, OpsetUpgrade& report) {
    const int64_t from = graph.opsetVersion();
    const int64_t to = std::min(std::max(target, kPerAxisQdqOpset), onnx::kConverterMaxOpset);
    QS_ASSIGN_OR_RETURN(Graph converted, onnx::convertOpsetWithOnnx(graph, to));
    QS_ASSIGN_OR_RETURN(const double diff,
                        compareOnRandomInputs(graph, converted)
                            .context("checking the model ONNX's version converter raised from "
                                     "opset " +
                                     std::to_string(from) + " to " + std::to_string(to)));
    if (!(diff <= kUpgradeTolerance)) {
        return Error(Errc::Unsupported, "ONNX's version converter raised opset " +
                                            std::to_string(from) + " to " + std::to_string(to) +
                                            " but the result differs from the original on "
                                            "random inputs (max relative difference " +
                                            std::to_string(diff) + ")");
    }
    report.onnxConverter = true;
    report.maxRelativeDifference = diff;
    graph = std::move(converted);
    return success();
}
} // namespace

Result<void> raiseDefaultOpset(Graph& graph, int64_t target, OpsetUpgrade* report) {
    OpsetUpgrade local;
    OpsetUpgrade& out = report != nullptr ? *report : local;
    out.fromOpset = graph.opsetVersion();
    out.toOpset = out.fromOpset;
    if (out.fromOpset >= target) {
        return success();
    }
    if (out.fromOpset < kMinUpgradableOpset) {
        QS_TRY(convertWithOnnx(graph, target, out));
        out.toOpset = graph.opsetVersion();
    }
    const int64_t from = graph.opsetVersion();
    if (from >= target) {
        return success();
    }
    const std::vector<NodeId> nodes = graph.nodeIds();
    for (const NodeId id : nodes) {
        QS_TRY(checkMigratable(graph, id, from, target));
    }
    for (const NodeId id : nodes) {
        migrateNode(graph, id, from, target);
    }
    for (graph::OpsetImport& opset : graph.metadata().opsetImports) {
        if (opset.domain.empty() || opset.domain == "ai.onnx") {
            opset.version = target;
        }
    }
    out.toOpset = target;
    return success();
}

Result<void> raiseOpsetAndIrVersion(Graph& graph, int64_t target, OpsetUpgrade* report) {
    QS_TRY(raiseDefaultOpset(graph, target, report));
    // IR 7 brought opset 13, IR 10 opset 21 (and the int4/uint4 types).
    constexpr int64_t kIrOfPerAxisOpset = 7;
    constexpr int64_t kIrOfInt4Opset = 10;
    int64_t& irVersion = graph.metadata().irVersion;
    if (target >= kInt4QdqOpset) {
        irVersion = std::max(irVersion, kIrOfInt4Opset);
    } else if (target >= kPerAxisQdqOpset) {
        irVersion = std::max(irVersion, kIrOfPerAxisOpset);
    }
    return success();
}

} // namespace qs::compression
