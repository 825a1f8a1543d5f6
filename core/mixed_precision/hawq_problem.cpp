// Building the HAWQ problem from a proposal: layers, activation quantizers, adjacency groups.

#include "core/mixed_precision/hawq_problem.h"

#include "core/quantization/insertion_point_values.h"
#include "core/report/model_info.h"
#include "core/runtime/executor.h"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <set>

namespace qs::mixed_precision {

using quantization::MultiConfigQuantizationPoint;
using quantization::QuantizationMode;
using quantization::QuantizationPreset;
using quantization::QuantizerConfig;

std::string_view assignmentModeName(BitwidthAssignmentMode mode) {
    return mode == BitwidthAssignmentMode::Strict ? "strict" : "liberal";
}

Result<BitwidthAssignmentMode> parseAssignmentMode(std::string_view text) {
    if (text == "liberal") {
        return BitwidthAssignmentMode::Liberal;
    }
    if (text == "strict") {
        return BitwidthAssignmentMode::Strict;
    }
    return Error(Errc::InvalidArgument,
                 "unknown bitwidth assignment mode '" + std::string(text) + "' (liberal, strict)");
}

std::optional<QuantizerConfig> configForBits(const MultiConfigQuantizationPoint& point, int bits,
                                             QuantizationPreset preset) {
    const QuantizationMode wanted =
        point.insertionPoint.isWeight || preset == QuantizationPreset::Performance
            ? QuantizationMode::Symmetric
            : QuantizationMode::Asymmetric;
    std::optional<QuantizerConfig> first;
    for (const QuantizerConfig& config : point.possibleConfigs) {
        if (config.numBits != bits) {
            continue;
        }
        if (config.mode == wanted) {
            return config;
        }
        if (!first) {
            first = config;
        }
    }
    return first;
}

namespace {

/// The bit widths of `point`'s candidates that are in `bits`, ascending.
std::vector<int> allowedBits(const MultiConfigQuantizationPoint& point, std::span<const int> bits) {
    std::set<int> out;
    for (const QuantizerConfig& config : point.possibleConfigs) {
        if (std::find(bits.begin(), bits.end(), config.numBits) != bits.end()) {
            out.insert(config.numBits);
        }
    }
    return {out.begin(), out.end()};
}

std::string unknownMacsNote(const std::string& node);

std::string bitsText(const std::vector<int>& bits) {
    std::string out;
    for (const int b : bits) {
        out += (out.empty() ? "" : ",") + std::to_string(b);
    }
    return "{" + out + "}";
}

/// Union-find over the quantizer ids of the proposal.
class Components {
public:
    int find(int id) {
        auto it = m_parent.try_emplace(id, id).first;
        if (it->second == id) {
            return id;
        }
        const int root = find(it->second);
        m_parent[id] = root;
        return root;
    }

    void join(int a, int b) {
        const int ra = find(a);
        const int rb = find(b);
        if (ra != rb) {
            m_parent[std::max(ra, rb)] = std::min(ra, rb); // the smallest id is the root
        }
    }

private:
    std::map<int, int> m_parent;
};

Result<WeightLayer> makeLayer(const graph::Graph& model, int id,
                              const MultiConfigQuantizationPoint& point, std::span<const int> bits,
                              std::vector<std::string>& notes) {
    WeightLayer layer;
    layer.weightQp = id;
    layer.node = point.insertionPoint.targetNodeName;
    QS_ASSIGN_OR_RETURN(const quantization::ResolvedInsertionPoint at,
                        quantization::resolveInsertionPoint(model, point.insertionPoint));
    const graph::Value& weight = model.value(at.value);
    if (weight.initializer == nullptr) {
        return Error(Errc::Unsupported, "the weight of '" + layer.node + "' is not an initializer");
    }
    layer.weight = weight.name;
    layer.numel = weight.initializer->numElements();
    if (const std::optional<graph::NodeId> node = model.findNode(layer.node)) {
        if (const std::optional<int64_t> macs = report::nodeMacs(model, *node)) {
            layer.macs = *macs;
        }
    }
    if (layer.macs == 0) {
        notes.push_back(unknownMacsNote(layer.node));
    }
    layer.bitsAllowed = allowedBits(point, bits);
    if (layer.bitsAllowed.empty()) {
        std::vector<int> own;
        for (const QuantizerConfig& config : point.possibleConfigs) {
            own.push_back(config.numBits);
        }
        std::sort(own.begin(), own.end());
        own.erase(std::unique(own.begin(), own.end()), own.end());
        return Error(Errc::Usage, "weight quantizer #" + std::to_string(id) + " of '" + layer.node +
                                      "' allows bits " + bitsText(own) + ", none of " +
                                      bitsText({bits.begin(), bits.end()}));
    }
    return layer;
}

std::string unknownMacsNote(const std::string& node) {
    return "layer '" + node + "': MACs unknown (no static shapes), it counts 0 BitOps";
}

/// The traced tensor at `values[port]`, or nullptr.
const runtime::Tensor* tracedAt(const runtime::ForwardTrace& trace,
                                const std::vector<graph::ValueId>& values, size_t port) {
    if (port >= values.size() || !values[port].valid()) {
        return nullptr;
    }
    const runtime::Tensor& tensor = trace.values[values[port].index()];
    return tensor.defined() ? &tensor : nullptr;
}

/// One sample's MACs of a Conv/ConvTranspose/Gemm/MatMul from its traced shapes (0: unknown).
int64_t measuredMacs(const graph::Graph& graph, const graph::Node& node,
                     const runtime::ForwardTrace& trace) {
    const runtime::Tensor* out = tracedAt(trace, node.outputs, 0);
    const runtime::Tensor* a = tracedAt(trace, node.inputs, 0);
    if (out == nullptr || a == nullptr || node.inputs.size() < 2 || !node.inputs[1].valid()) {
        return 0;
    }
    const graph::Value& w = graph.value(node.inputs[1]);
    if (w.initializer == nullptr || w.initializer->dims().size() < 2) {
        return 0;
    }
    const std::vector<int64_t>& dims = w.initializer->dims();
    const int64_t perOutput =
        std::accumulate(dims.begin() + 1, dims.end(), int64_t{1}, std::multiplies<>());
    if (node.opType == "Conv") {
        return out->numElements() * perOutput;
    }
    if (node.opType == "ConvTranspose") {
        return a->numElements() * perOutput;
    }
    if ((node.opType == "MatMul" || node.opType == "Gemm") && a->rank() > 0) {
        const bool transA = node.opType == "Gemm" && node.intAttr("transA", 0) != 0;
        const int64_t k = transA ? a->dim(0) : a->dim(static_cast<int64_t>(a->rank()) - 1);
        return out->numElements() * k;
    }
    return 0;
}

/// Adjacency groups: the shared-input operation set groups, joined with each layer's feeding
/// activation quantizer (which it also records); groups in order of their smallest quantizer id.
/// This is NNCF's definition (GroupsOfAdjacentQuantizers reads shared_input_operation_set_groups,
/// which join the activation quantizers whose sink ops overlap, plus the weights of those ops; not
/// unified-scale groups, whose members share an op and so one group anyway). Weights are adjacent
/// only when their ops read one activation quantizer: on a ResNet the conv and the downsample conv
/// of a block's first unit. The conv after an Add shares its input quantizer with the next Add,
/// whose other input quantizer joins the group, but that brings no other weight; so nearly every
/// layer is its own group, as in NNCF: resnet18 has 21 layers in 18 groups (22 with the 4 that
/// hold only activations), resnet50 54 in 50 (tests/unit/mixed_precision/hawq_adjacency_test).
void buildGroups(const quantization::MultiConfigQuantizerSetup& setup,
                 const std::map<int, size_t>& activationIndex, HawqProblem& problem) {
    Components components;
    for (const auto& [gid, members] : setup.sharedInputOperationSetGroups) {
        for (const int qp : members) {
            components.join(members.front(), qp);
        }
    }
    for (WeightLayer& layer : problem.layers) {
        for (const auto& [id, index] : activationIndex) {
            const auto& direct = setup.quantizationPoints.at(id).directlyQuantizedOperatorNodeNames;
            if (std::find(direct.begin(), direct.end(), layer.node) != direct.end()) {
                layer.activation = index;
                components.join(layer.weightQp, id);
                break;
            }
        }
    }
    std::map<int, AdjacencyGroup> byRoot; // roots are the smallest ids
    for (size_t l = 0; l < problem.layers.size(); ++l) {
        byRoot[components.find(problem.layers[l].weightQp)].layers.push_back(l);
    }
    for (size_t a = 0; a < problem.activations.size(); ++a) {
        byRoot[components.find(problem.activations[a].qp)].activations.push_back(a);
    }
    for (auto& [root, group] : byRoot) {
        for (const size_t l : group.layers) {
            problem.layers[l].group = problem.groups.size();
        }
        for (const size_t a : group.activations) {
            problem.activations[a].group = problem.groups.size();
        }
        problem.groups.push_back(std::move(group));
    }
}

ActivationQuantizer makeActivation(const quantization::QuantizationState& state, int id,
                                   const MultiConfigQuantizationPoint& point,
                                   std::span<const int> bits) {
    ActivationQuantizer activation;
    activation.qp = id;
    activation.bitsAllowed = allowedBits(point, bits);
    const auto chosen = state.choice.find(id);
    if (chosen != state.choice.end()) {
        activation.currentBits = chosen->second.numBits;
    } else if (!point.possibleConfigs.empty()) {
        activation.currentBits = point.possibleConfigs.front().numBits;
    }
    return activation;
}

} // namespace

Result<void> measureUnknownMacs(const graph::Graph& model,
                                std::span<const runtime::Tensor> oneSample, HawqProblem& problem) {
    if (std::none_of(problem.layers.begin(), problem.layers.end(),
                     [](const WeightLayer& layer) { return layer.macs == 0; })) {
        return success();
    }
    QS_ASSIGN_OR_RETURN(const runtime::Executor executor, runtime::Executor::create(model));
    QS_ASSIGN_OR_RETURN(const runtime::ForwardTrace trace, executor.forwardWithTrace(oneSample));
    const graph::Graph& graph = executor.graph();
    for (WeightLayer& layer : problem.layers) {
        const std::optional<graph::NodeId> id = graph.findNode(layer.node);
        if (layer.macs != 0 || !id) {
            continue;
        }
        layer.macs = measuredMacs(graph, graph.node(*id), trace);
        if (layer.macs != 0) {
            const std::string note = unknownMacsNote(layer.node);
            problem.notes.erase(std::remove(problem.notes.begin(), problem.notes.end(), note),
                                problem.notes.end());
        }
    }
    return success();
}

Result<void> narrowToCommonBits(HawqProblem& problem) {
    for (size_t g = 0; g < problem.groups.size(); ++g) {
        const AdjacencyGroup& group = problem.groups[g];
        std::optional<std::vector<int>> common;
        std::string members;
        const auto meet = [&](const std::vector<int>& allowed, int qp) {
            members += (members.empty() ? "#" : ", #") + std::to_string(qp) + bitsText(allowed);
            if (!common) {
                common = allowed;
                return;
            }
            std::vector<int> both;
            std::set_intersection(common->begin(), common->end(), allowed.begin(), allowed.end(),
                                  std::back_inserter(both));
            common = std::move(both);
        };
        for (const size_t l : group.layers) {
            meet(problem.layers[l].bitsAllowed, problem.layers[l].weightQp);
        }
        for (const size_t a : group.activations) {
            if (!problem.activations[a].bitsAllowed.empty()) {
                meet(problem.activations[a].bitsAllowed, problem.activations[a].qp);
            }
        }
        if (common && common->empty()) {
            return Error(Errc::InvalidArgument,
                         "strict bitwidth assignment: the quantizers of adjacency group " +
                             std::to_string(g) + " (" + members + ") share no bit width");
        }
        if (common) {
            for (const size_t l : group.layers) {
                problem.layers[l].bitsAllowed = *common;
            }
        }
    }
    return success();
}

Result<HawqProblem> buildHawqProblem(const graph::Graph& model,
                                     const quantization::QuantizationState& state,
                                     std::span<const int> bits, BitwidthAssignmentMode mode,
                                     const std::set<int>& fixed) {
    const quantization::MultiConfigQuantizerSetup& setup = state.proposal.setup;
    HawqProblem problem;
    problem.mode = mode;
    std::map<int, size_t> activationIndex;
    for (const auto& [id, point] : setup.quantizationPoints) {
        if (point.insertionPoint.isWeight) {
            if (fixed.contains(id)) {
                continue;
            }
            QS_ASSIGN_OR_RETURN(WeightLayer layer,
                                makeLayer(model, id, point, bits, problem.notes)
                                    .context("weight quantizer #" + std::to_string(id)));
            problem.layers.push_back(std::move(layer));
            continue;
        }
        activationIndex[id] = problem.activations.size();
        problem.activations.push_back(makeActivation(state, id, point, bits));
    }
    if (problem.layers.empty()) {
        return Error(Errc::InvalidArgument,
                     fixed.empty()
                         ? "the quantizer setup has no weight quantizer: nothing for HAWQ to choose"
                         : "no weight quantizer has traces: nothing for HAWQ to choose");
    }
    buildGroups(setup, activationIndex, problem);
    if (mode == BitwidthAssignmentMode::Strict) {
        QS_TRY(narrowToCommonBits(problem));
    }
    std::set<int> all;
    for (const WeightLayer& layer : problem.layers) {
        all.insert(layer.bitsAllowed.begin(), layer.bitsAllowed.end());
    }
    problem.bits.assign(all.begin(), all.end());
    return problem;
}

} // namespace qs::mixed_precision
