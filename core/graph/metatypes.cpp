// The metatype registry: one table of ONNX op types (default domain) and the metatypes they map
// to. Names, HW-config names and traits follow NNCF's ONNX metatypes and
// DEFAULT_ONNX_QUANT_TRAIT_TO_OP_DICT (reference/nncf-quantization.md §1.2). Adding an op is one
// line in kRegistrations (plus a Metatype if it needs its own).

#include "core/graph/metatype.h"

#include <algorithm>
#include <unordered_map>

namespace qs::graph {

namespace {
using Trait = QuantizationTrait;

Metatype simple(std::string_view name, std::string_view hwName, Trait trait) {
    return Metatype{name, hwName, trait, {}, false, {}};
}

Metatype weighted(std::string_view name, std::string_view hwName, std::vector<int> weightPorts) {
    return Metatype{name, hwName, Trait::InputsQuantizable, std::move(weightPorts), true, {}};
}

const TensorData* constantInput(const Graph& graph, NodeId id, size_t port) {
    const Node& n = graph.node(id);
    if (port >= n.inputs.size() || !n.inputs[port].valid()) {
        return nullptr;
    }
    return graph.value(n.inputs[port]).initializer.get();
}

/// The initializer NNCF's get_tensor_edge_name reaches from input `port`: through Identity,
/// Transpose, Reshape, QuantizeLinear and DequantizeLinear (their port 0) to a graph initializer.
/// A tensor of a Constant node is no initializer for NNCF (Paddle exports keep their weights so).
const TensorData* weightInitializer(const Graph& graph, NodeId id, size_t port) {
    for (int hops = 0; hops < 64; ++hops) {
        const Node& n = graph.node(id);
        if (port >= n.inputs.size() || !n.inputs[port].valid()) {
            return nullptr;
        }
        const Value& v = graph.value(n.inputs[port]);
        if (v.isInitializer()) {
            return v.constantNodeName.empty() ? v.initializer.get() : nullptr;
        }
        if (!v.producer.valid()) {
            return nullptr;
        }
        const std::string& type = graph.node(v.producer).opType;
        if (type != "Identity" && type != "Transpose" && type != "Reshape" &&
            type != "QuantizeLinear" && type != "DequantizeLinear") {
            return nullptr;
        }
        id = v.producer;
        port = 0;
    }
    return nullptr;
}

/// NNCF's group convolution: a group attribute other than 1.
bool isGroupConv(const Graph& graph, NodeId id) {
    return graph.node(id).intAttr("group", 1) != 1;
}

/// NNCF's depthwise test: a group convolution with group == C_in (C_in = W.shape[1] * group)
/// and C_out a multiple of C_in, W read from an initializer (not a Constant node).
bool isDepthwiseConv(const Graph& graph, NodeId id) {
    const int64_t group = graph.node(id).intAttr("group", 1);
    const TensorData* weight = weightInitializer(graph, id, 1);
    if (weight == nullptr || weight->dims().size() < 2 || group == 1) {
        return false;
    }
    const int64_t outChannels = weight->dims()[0];
    const int64_t inChannels = weight->dims()[1] * group;
    return group == inChannels && inChannels > 0 && outChannels % inChannels == 0;
}

/// A Gather whose data (port 0) is a constant float table.
bool isEmbedding(const Graph& graph, NodeId id) {
    const TensorData* table = constantInput(graph, id, 0);
    return table != nullptr && isFloatingPoint(table->dtype()) && table->dims().size() >= 2;
}

struct Metatypes {
    Metatype unknown = simple("UnknownMetatype", "", Trait::NonQuantizable);
    Metatype conv = weighted("ONNXConvolutionMetatype", "Convolution", {1});
    Metatype depthwiseConv =
        weighted("ONNXDepthwiseConvolutionMetatype", "DepthWiseConvolution", {1});
    Metatype groupConv = weighted("ONNXGroupConvolutionMetatype", "Convolution", {1});
    Metatype convTranspose = weighted("ONNXConvolutionTransposeMetatype", "Convolution", {1});
    Metatype deformConv = weighted("ONNXDeformableConvolutionMetatype", "Convolution", {1});
    Metatype gemm = weighted("ONNXGemmMetatype", "MatMul", {0, 1});
    Metatype matMul = weighted("ONNXMatMulMetatype", "MatMul", {0, 1});
    Metatype embedding = Metatype{
        "ONNXEmbeddingMetatype", "Embedding", Trait::OutputQuantizationAsWeights, {0}, true, {}};
    Metatype attention = Metatype{"ONNXScaledDotProductAttentionMetatype",
                                  "ScaledDotProductAttention",
                                  Trait::InputsQuantizable,
                                  {},
                                  false,
                                  {0, 1}};
};

const Metatypes& metatypes() {
    static const Metatypes kMetatypes;
    return kMetatypes;
}

/// Plain metatypes with no attribute logic: (op types, NNCF metatype, HW name, default trait).
struct PlainEntry {
    std::vector<std::string_view> opTypes;
    std::string_view name;
    std::string_view hwName;
    Trait trait;
};

const std::vector<PlainEntry>& plainEntries() {
    static const std::vector<PlainEntry> kEntries = {
        {{"Add", "Sum"}, "ONNXAddLayerMetatype", "Add", Trait::InputsQuantizable},
        {{"Sub"}, "ONNXSubMetatype", "Subtract", Trait::InputsQuantizable},
        {{"Mul"}, "ONNXMulLayerMetatype", "Multiply", Trait::InputsQuantizable},
        {{"Div"}, "ONNXDivLayerMetatype", "Divide", Trait::NonQuantizable},
        {{"AveragePool"}, "ONNXAveragePoolMetatype", "AvgPool", Trait::InputsQuantizable},
        {{"GlobalAveragePool"},
         "ONNXGlobalAveragePoolMetatype",
         "AvgPool",
         Trait::InputsQuantizable},
        {{"MaxPool"}, "ONNXMaxPoolMetatype", "MaxPool", Trait::QuantizationAgnostic},
        {{"GlobalMaxPool"}, "ONNXGlobalMaxPoolMetatype", "MaxPool", Trait::QuantizationAgnostic},
        {{"BatchNormalization"}, "ONNXBatchNormMetatype", "", Trait::InputsQuantizable},
        {{"HardSigmoid"}, "ONNXHardSigmoidMetatype", "", Trait::InputsQuantizable},
        {{"Resize"}, "ONNXResizeMetatype", "Interpolate", Trait::InputsQuantizable},
        {{"Upsample"}, "ONNXUpsampleMetatype", "Interpolate", Trait::NonQuantizable},
        {{"Pow"}, "ONNXPowMetatype", "Power", Trait::InputsQuantizable},
        {{"Sqrt"}, "ONNXSqrtMetatype", "Power", Trait::NonQuantizable},
        {{"Reciprocal"}, "ONNXReciprocalMetatype", "Power", Trait::InputsQuantizable},
        {{"Max"}, "ONNXMaximumMetatype", "Maximum", Trait::InputsQuantizable},
        {{"Min"}, "ONNXMinimumMetatype", "Minimum", Trait::InputsQuantizable},
        {{"ReduceMax"}, "ONNXReduceMaxMetatype", "ReduceMax", Trait::QuantizationAgnostic},
        {{"ReduceMin"}, "ONNXReduceMinMetatype", "", Trait::NonQuantizable},
        {{"ReduceMean"}, "ONNXReduceMeanMetatype", "ReduceMean", Trait::NonQuantizable},
        {{"ReduceSum"}, "ONNXReduceSumMetatype", "ReduceSum", Trait::NonQuantizable},
        {{"ReduceL2"}, "ONNXReduceL2Metatype", "ReduceL2", Trait::NonQuantizable},
        {{"Reshape"}, "ONNXReshapeMetatype", "Reshape", Trait::QuantizationAgnostic},
        {{"Transpose"}, "ONNXTransposeMetatype", "Transpose", Trait::QuantizationAgnostic},
        {{"Squeeze"}, "ONNXSqueezeMetatype", "Squeeze", Trait::QuantizationAgnostic},
        {{"Unsqueeze"}, "ONNXUnsqueezeMetatype", "Unsqueeze", Trait::QuantizationAgnostic},
        {{"Split"}, "ONNXSplitMetatype", "Split", Trait::QuantizationAgnostic},
        {{"Tile"}, "ONNXTileMetatype", "", Trait::QuantizationAgnostic},
        {{"CenterCropPad"}, "ONNXCenterCropPadMetatype", "Crop", Trait::QuantizationAgnostic},
        {{"Slice"}, "ONNXSliceMetatype", "", Trait::QuantizationAgnostic},
        {{"Pad"}, "ONNXPadMetatype", "", Trait::QuantizationAgnostic},
        {{"Gather"}, "ONNXGatherMetatype", "", Trait::QuantizationAgnostic},
        {{"GatherND"}, "ONNXGatherNDMetatype", "", Trait::QuantizationAgnostic},
        {{"GatherElements"}, "ONNXGatherElementsMetatype", "", Trait::QuantizationAgnostic},
        {{"DepthToSpace"}, "ONNXDepthToSpaceMetatype", "", Trait::QuantizationAgnostic},
        {{"SpaceToDepth"}, "ONNXSpaceToDepthMetatype", "", Trait::QuantizationAgnostic},
        {{"Scatter"}, "ONNXScatterMetatype", "", Trait::QuantizationAgnostic},
        {{"ScatterND"}, "ONNXScatterNDMetatype", "", Trait::QuantizationAgnostic},
        {{"ScatterElements"}, "ONNXScatterElementsMetatype", "", Trait::QuantizationAgnostic},
        {{"CastLike"}, "ONNXCastLikeMetatype", "", Trait::QuantizationAgnostic},
        {{"Dropout"}, "ONNXDropoutMetatype", "", Trait::QuantizationAgnostic},
        {{"Flatten"}, "ONNXFlattenMetatype", "Flatten", Trait::QuantizationAgnostic},
        {{"Expand"}, "ONNXExpandMetatype", "", Trait::QuantizationAgnostic},
        {{"Identity"}, "ONNXIdentityMetatype", "", Trait::QuantizationAgnostic},
        {{"Concat"}, "ONNXConcatMetatype", "Concat", Trait::Concat},
        {{"Relu", "Clip"}, "ONNXReluMetatype", "", Trait::NonQuantizable},
        {{"LeakyRelu"}, "ONNXLeakyReluMetatype", "", Trait::NonQuantizable},
        {{"ThresholdedRelu"}, "ONNXThresholdedReluMetatype", "", Trait::NonQuantizable},
        {{"Elu"}, "ONNXEluMetatype", "", Trait::NonQuantizable},
        {{"PRelu"}, "ONNXPReluMetatype", "", Trait::NonQuantizable},
        {{"Selu"}, "ONNXSeluMetatype", "", Trait::NonQuantizable},
        {{"Sigmoid"}, "ONNXSigmoidMetatype", "", Trait::NonQuantizable},
        {{"HardSwish"}, "ONNXHardSwishMetatype", "", Trait::NonQuantizable},
        {{"Softmax"}, "ONNXSoftmaxMetatype", "", Trait::NonQuantizable},
        {{"LogSoftmax"}, "ONNXLogSoftmaxMetatype", "", Trait::NonQuantizable},
        {{"Softplus"}, "ONNXSoftplusMetatype", "", Trait::NonQuantizable},
        {{"Tanh"}, "ONNXTanhMetatype", "", Trait::NonQuantizable},
        {{"Erf"}, "ONNXErfMetatype", "", Trait::NonQuantizable},
        {{"Gelu"}, "ONNXGeluMetatype", "", Trait::NonQuantizable},
        {{"Exp"}, "ONNXExpMetatype", "", Trait::NonQuantizable},
        {{"Log"}, "ONNXLogMetatype", "", Trait::NonQuantizable},
        {{"Abs"}, "ONNXAbsMetatype", "", Trait::NonQuantizable},
        {{"Neg"}, "ONNXNegMetatype", "", Trait::NonQuantizable},
        {{"Floor"}, "ONNXFloorMetatype", "", Trait::NonQuantizable},
        {{"Ceil"}, "ONNXCeilMetatype", "", Trait::NonQuantizable},
        {{"Round"}, "ONNXRoundMetatype", "", Trait::NonQuantizable},
        {{"Sign"}, "ONNXSignMetatype", "", Trait::NonQuantizable},
        {{"Sin"}, "ONNXSinMetatype", "", Trait::NonQuantizable},
        {{"Cos"}, "ONNXCosMetatype", "", Trait::NonQuantizable},
        {{"Mod"}, "ONNXModMetatype", "FloorMod", Trait::NonQuantizable},
        {{"Not"}, "ONNXNotMetatype", "LogicalNot", Trait::NonQuantizable},
        {{"And"}, "ONNXAndMetatype", "LogicalAnd", Trait::NonQuantizable},
        {{"Or"}, "ONNXOrMetatype", "LogicalOr", Trait::NonQuantizable},
        {{"Xor"}, "ONNXXorMetatype", "LogicalXor", Trait::NonQuantizable},
        {{"Equal"}, "ONNXEqualMetatype", "Equal", Trait::NonQuantizable},
        {{"Less"}, "ONNXLessMetatype", "Less", Trait::NonQuantizable},
        {{"LessOrEqual"}, "ONNXLessOrEqualMetatype", "LessEqual", Trait::NonQuantizable},
        {{"Greater"}, "ONNXGreaterMetatype", "Greater", Trait::NonQuantizable},
        {{"GreaterOrEqual"}, "ONNXGreaterOrEqualMetatype", "GreaterEqual", Trait::NonQuantizable},
        {{"Where"}, "ONNXWhereMetatype", "", Trait::NonQuantizable},
        {{"NonZero"}, "ONNXNonZeroMetatype", "", Trait::NonQuantizable},
        {{"Shape"}, "ONNXShapeMetatype", "", Trait::NonQuantizable},
        {{"Size"}, "ONNXSizeMetatype", "", Trait::NonQuantizable},
        {{"ConstantOfShape"}, "ONNXConstantOfShapeMetatype", "", Trait::NonQuantizable},
        {{"Constant"}, "ONNXConstantMetatype", "", Trait::NonQuantizable},
        {{"Cast"}, "ONNXCastMetatype", "", Trait::NonQuantizable},
        {{"Range"}, "ONNXRangeMetatype", "", Trait::NonQuantizable},
        {{"TopK"}, "ONNXTopKMetatype", "", Trait::NonQuantizable},
        {{"NonMaxSuppression"}, "ONNXNonMaxSuppressionMetatype", "", Trait::NonQuantizable},
        {{"RoiAlign"}, "ONNXRoiAlignMetatype", "", Trait::NonQuantizable},
        {{"ArgMax"}, "ONNXArgMaxMetatype", "", Trait::NonQuantizable},
        {{"ArgMin"}, "ONNXArgMinMetatype", "", Trait::NonQuantizable},
        {{"LayerNormalization"}, "ONNXLayerNormalizationMetatype", "", Trait::NonQuantizable},
        {{"InstanceNormalization"}, "ONNXInstanceNormalizationMetatype", "", Trait::NonQuantizable},
        {{"GroupNormalization"}, "ONNXGroupNormalizationMetatype", "", Trait::NonQuantizable},
        {{"MeanVarianceNormalization"},
         "ONNXMeanVarianceNormalizationMetatype",
         "MVN",
         Trait::NonQuantizable},
        {{"LpNormalization"}, "ONNXLpNormalizationMetatype", "", Trait::NonQuantizable},
        {{"Einsum"}, "ONNXEinsumMetatype", "", Trait::NonQuantizable},
        {{"CumSum"}, "ONNXCumSumMetatype", "", Trait::NonQuantizable},
        {{"OneHot"}, "ONNXOneHotMetatype", "", Trait::NonQuantizable},
        {{"LSTM"}, "ONNXLSTMMetatype", "", Trait::NonQuantizable},
        {{"GRU"}, "ONNXGRUMetatype", "", Trait::NonQuantizable},
        {{"RNN"}, "ONNXRNNMetatype", "", Trait::NonQuantizable},
        {{"QuantizeLinear"}, "ONNXQuantizeLinearMetatype", "", Trait::NonQuantizable},
        {{"DequantizeLinear"}, "ONNXDequantizeLinearMetatype", "", Trait::NonQuantizable},
        {{"Trilu"}, "ONNXTriluMetatype", "", Trait::NonQuantizable},
        {{"Compress"}, "ONNXCompressMetatype", "", Trait::NonQuantizable},
        {{"ReverseSequence"}, "ONNXReverseSequenceMetatype", "", Trait::NonQuantizable},
        {{"Mish"}, "ONNXMishMetatype", "", Trait::NonQuantizable},
        {{"Celu"}, "ONNXCeluMetatype", "", Trait::NonQuantizable},
        {{"Softsign"}, "ONNXSoftsignMetatype", "", Trait::NonQuantizable},
        {{"Hardmax"}, "ONNXHardmaxMetatype", "", Trait::NonQuantizable},
        {{"Det"}, "ONNXDetMetatype", "", Trait::NonQuantizable},
        {{"BitShift"}, "ONNXBitShiftMetatype", "", Trait::NonQuantizable},
        {{"IsNaN"}, "ONNXIsNaNMetatype", "", Trait::NonQuantizable},
        {{"IsInf"}, "ONNXIsInfMetatype", "", Trait::NonQuantizable},
        {{"Mean"}, "ONNXMeanMetatype", "", Trait::NonQuantizable},
        {{"ReduceProd"}, "ONNXReduceProdMetatype", "", Trait::NonQuantizable},
        {{"ReduceL1"}, "ONNXReduceL1Metatype", "", Trait::NonQuantizable},
        {{"ReduceLogSum"}, "ONNXReduceLogSumMetatype", "", Trait::NonQuantizable},
        {{"ReduceLogSumExp"}, "ONNXReduceLogSumExpMetatype", "", Trait::NonQuantizable},
        {{"ReduceSumSquare"}, "ONNXReduceSumSquareMetatype", "", Trait::NonQuantizable},
        {{"LRN"}, "ONNXLRNMetatype", "", Trait::NonQuantizable},
        {{"GridSample"}, "ONNXGridSampleMetatype", "", Trait::NonQuantizable},
        {{"Col2Im"}, "ONNXCol2ImMetatype", "", Trait::NonQuantizable},
        {{"EyeLike"}, "ONNXEyeLikeMetatype", "", Trait::NonQuantizable},
        {{"RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Multinomial",
          "Bernoulli"},
         "ONNXRandomMetatype",
         "",
         Trait::NonQuantizable},
        {{"Optional", "OptionalGetElement", "OptionalHasElement"},
         "ONNXOptionalMetatype",
         "",
         Trait::NonQuantizable},
        {{"SequenceAt", "SequenceConstruct", "SequenceEmpty", "SequenceErase", "SequenceInsert",
          "SequenceLength", "SplitToSequence", "ConcatFromSequence"},
         "ONNXSequenceMetatype",
         "",
         Trait::NonQuantizable},
    };
    return kEntries;
}

std::vector<MetatypeRegistration> buildRegistry() {
    const Metatypes& m = metatypes();
    // Refining entries first: depthwise before group before plain Conv (NNCF's subtypes), embedding
    // before plain Gather.
    std::vector<MetatypeRegistration> registry = {
        {"Conv", &m.depthwiseConv, isDepthwiseConv},
        {"Conv", &m.groupConv, isGroupConv},
        {"Conv", &m.conv, {}},
        {"ConvTranspose", &m.convTranspose, {}},
        {"DeformConv", &m.deformConv, {}},
        {"Gemm", &m.gemm, {}},
        {"MatMul", &m.matMul, {}},
        {"Gather", &m.embedding, isEmbedding},
        {"Attention", &m.attention, {}},
    };
    static std::vector<Metatype> plainMetatypes = [] {
        std::vector<Metatype> out;
        for (const PlainEntry& entry : plainEntries()) {
            out.push_back(simple(entry.name, entry.hwName, entry.trait));
        }
        return out;
    }();
    const auto& entries = plainEntries();
    for (size_t entryIdx = 0; entryIdx < entries.size(); ++entryIdx) {
        for (const std::string_view opType : entries[entryIdx].opTypes) {
            registry.push_back({opType, &plainMetatypes[entryIdx], {}});
        }
    }
    return registry;
}

} // namespace

std::string_view quantizationTraitName(QuantizationTrait trait) {
    switch (trait) {
    case Trait::NonQuantizable:
        return "NON_QUANTIZABLE";
    case Trait::QuantizationAgnostic:
        return "QUANTIZATION_AGNOSTIC";
    case Trait::InputsQuantizable:
        return "INPUTS_QUANTIZABLE";
    case Trait::OutputQuantizationAsWeights:
        return "OUTPUT_QUANTIZATION_AS_WEIGHTS";
    case Trait::Concat:
        return "CONCAT";
    }
    return "?";
}

const std::vector<MetatypeRegistration>& metatypeRegistry() {
    static const std::vector<MetatypeRegistration> kRegistry = buildRegistry();
    return kRegistry;
}

const Metatype& unknownMetatype() {
    return metatypes().unknown;
}

bool isRegisteredOpType(std::string_view opType) {
    static const auto kOpTypes = [] {
        std::unordered_map<std::string_view, bool> known;
        for (const auto& entry : metatypeRegistry()) {
            known.emplace(entry.opType, true);
        }
        return known;
    }();
    return kOpTypes.contains(opType);
}

const Metatype& metatypeOf(const Graph& graph, NodeId id) {
    const Node& n = graph.node(id);
    if (!n.isDefaultDomain()) {
        return unknownMetatype();
    }
    for (const MetatypeRegistration& entry : metatypeRegistry()) {
        if (entry.opType == n.opType && (!entry.matches || entry.matches(graph, id))) {
            return *entry.metatype;
        }
    }
    return unknownMetatype();
}

std::vector<int> constantWeightPorts(const Graph& graph, NodeId id) {
    const Metatype& meta = metatypeOf(graph, id);
    std::vector<int> ports;
    for (const int port : meta.weightPorts) {
        if (constantInput(graph, id, static_cast<size_t>(port)) != nullptr) {
            ports.push_back(port);
        }
    }
    // Gemm/MatMul with two constants: NNCF takes the second input as the weight.
    if (ports.size() > 1 &&
        (meta.name == metatypes().gemm.name || meta.name == metatypes().matMul.name)) {
        ports = {ports.back()};
    }
    return ports;
}

std::optional<int64_t> weightOutputChannelAxis(const Graph& graph, NodeId id, int port) {
    const Metatype& meta = metatypeOf(graph, id);
    const TensorData* weight = constantInput(graph, id, static_cast<size_t>(port));
    if (weight == nullptr || !meta.hasWeights) {
        return std::nullopt;
    }
    const auto rank = static_cast<int64_t>(weight->dims().size());
    const Metatypes& m = metatypes();
    if (meta.name == m.conv.name || meta.name == m.depthwiseConv.name ||
        meta.name == m.groupConv.name || meta.name == m.deformConv.name ||
        meta.name == m.embedding.name) {
        return 0;
    }
    if (meta.name == m.convTranspose.name) {
        return rank > 1 ? 1 : 0;
    }
    const Node& n = graph.node(id);
    if (meta.name == m.gemm.name) {
        const bool transposed = n.intAttr(port == 1 ? "transB" : "transA", 0) != 0;
        // Weight on port 1 is [K, N] (or [N, K] transposed); on port 0 it is [M, K].
        if (port == 1) {
            return transposed ? 0 : 1;
        }
        return transposed ? 1 : 0;
    }
    if (meta.name == m.matMul.name) {
        if (rank < 2) {
            return std::nullopt;
        }
        return port == 1 ? rank - 1 : rank - 2;
    }
    return std::nullopt;
}

} // namespace qs::graph
