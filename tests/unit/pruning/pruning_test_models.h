// Small models built in code for the pruning tests, shapes inferred by an ONNX round trip.
#pragma once

#include "core/graph/graph.h"
#include "core/runtime/tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace qs::pruning::testing {

/// MCT's memory case: x [1, 1, 6, 6] -> Conv conv (1 -> 2 channels, 3x3, bias) -> y.
graph::Graph mctConv();

/// x [B, 3, 8, 8] -> conv1 (3 -> 8, 3x3, bias) -> BatchNormalization bn -> PRelu prelu (slope
/// [8, 1, 1]) -> Mul mul ([1, 8, 1, 1]) -> Add add (scalar) -> Relu relu1 -> conv2 (8 -> 6, 3x3)
/// -> Relu relu2 -> MaxPool pool -> conv3 (6 -> 4, 1x1, bias) -> Tanh -> GlobalAveragePool gap ->
/// Flatten flatten -> Gemm fc (4 -> 3) -> y. Sections: conv1 -> conv2 and conv2 -> conv3 (a
/// shared node).
graph::Graph chainModel();

/// x [B, 6] -> Gemm fc1 (6 -> 16) -> Relu -> Gemm fc2 (transB, 16 -> 8) -> Sigmoid -> MatMul mm
/// (8 -> 4) -> Add bias [4] -> y. Sections: fc1 -> fc2, fc2 -> mm.
graph::Graph mlpModel();

/// x [B, 4, 6, 6] -> conv1 (4 -> 8) -> Relu relu1 -> conv2 (8 -> 4) -> Add residual (x) ->
/// Relu relu2 -> y: conv1 -> conv2 is a section; conv2 (feeding the residual Add) is no entry.
graph::Graph residualModel();

/// x -> conv1 (4 -> 8) -> Relu, conv2 (4 -> 8) on x, Concat -> conv3 (16 -> 4) -> y.
graph::Graph concatModel();

/// x -> conv1 (4 -> 8) -> Relu relu -> conv2 (8 -> 4) and conv3 (8 -> 4) -> Add -> y (fan-out).
graph::Graph fanOutModel();

/// x [B, 2, 4, 4] -> conv (2 -> 3) -> Relu -> Flatten -> Gemm fc (48 -> 5) -> y (mismatch).
graph::Graph flattenGemmModel();

/// x [B, 3, 6, 6] -> conv (3 -> 8) -> BatchNormalization bn -> Relu -> GlobalAveragePool ->
/// Flatten -> Gemm fc (transB, 8 -> 5) -> y: one section, conv -> fc.
graph::Graph gapGemmModel();

/// x -> conv1 (4 -> 8) -> depthwise dw (group 8) -> Relu -> conv2 (8 -> 4) -> y.
graph::Graph depthwiseModel();

/// `graph` exported and imported again, so every value has its inferred shape.
graph::Graph withShapes(const graph::Graph& graph);

/// Seeded standard-normal inputs [count, ...] for the model's single input.
runtime::Tensor randomInputs(const graph::Graph& graph, int64_t count, uint64_t seed);

/// The graph's outputs on `x`.
std::vector<runtime::Tensor> runGraph(const graph::Graph& graph, const runtime::Tensor& x);

/// Largest absolute difference of two float tensors of the same shape.
double maxAbsDiff(const runtime::Tensor& a, const runtime::Tensor& b);

} // namespace qs::pruning::testing
