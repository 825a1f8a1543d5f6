// Metatypes: what an ONNX op *is* for compression, after its attributes and inputs (a Conv with
// group != 1 is a GroupConvolution, a DepthwiseConvolution when group == C_in of an initializer
// weight; a Gather on a constant table is an Embedding). Each metatype knows its weight ports, the
// output-channel axis of its weight, its HW-config op name and its default quantization trait, as
// NNCF's ONNX metatypes do (reference/nncf-quantization.md §1.2). One registration per op.
#pragma once

#include "core/graph/graph.h"

#include <functional>
#include <optional>
#include <string_view>
#include <vector>

namespace qs::graph {

/// NNCF's QuantizationTrait with its numeric values.
enum class QuantizationTrait : int {
    NonQuantizable = -1,
    QuantizationAgnostic = 0,
    InputsQuantizable = 1,
    OutputQuantizationAsWeights = 2,
    Concat = 100,
};

std::string_view quantizationTraitName(QuantizationTrait trait);

struct Metatype {
    std::string_view name;   ///< NNCF's ONNX metatype name without prefix/suffix: "Convolution"
    std::string_view hwName; ///< op name in HW config JSON ("Convolution", "MatMul"); "" = none
    QuantizationTrait defaultTrait = QuantizationTrait::NonQuantizable;
    std::vector<int> weightPorts; ///< ports that may carry a constant weight
    bool hasWeights = false;      ///< true for the weighted ops (Conv, Gemm, MatMul, Embedding)
    std::vector<int> targetInputPorts; ///< when non-empty, only these ports get quantizers
};

/// The metatype of an op nobody registered (opaque, custom domain, If/Loop/Scan).
const Metatype& unknownMetatype();

/// Resolves the metatype of `node` in `graph`, looking at attributes and constant inputs.
const Metatype& metatypeOf(const Graph& graph, NodeId node);

/// The weight ports of `node` that actually hold constants (for Gemm/MatMul: the constant side).
std::vector<int> constantWeightPorts(const Graph& graph, NodeId node);

/// Axis of the weight tensor on `port` that indexes output channels (Conv: 0, ConvTranspose: 1,
/// MatMul weight on port 1: -1 → rank-1, Gemm with transB: 0, Embedding: 0). nullopt if none.
std::optional<int64_t> weightOutputChannelAxis(const Graph& graph, NodeId node, int port);

/// A registration: an ONNX op type (default domain) and an optional matcher that refines it;
/// entries with a matcher are tried before the plain entry of the same op type.
struct MetatypeRegistration {
    std::string_view opType;
    const Metatype* metatype = nullptr;
    std::function<bool(const Graph&, NodeId)> matches; ///< empty = always
};

/// Every registration, in lookup order.
const std::vector<MetatypeRegistration>& metatypeRegistry();

/// True when the default-domain op type has a registration (the op is "known").
bool isRegisteredOpType(std::string_view opType);

} // namespace qs::graph
