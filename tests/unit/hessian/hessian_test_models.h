// Small models built in code for the Hessian tests, and the exact scores they are checked
// against (one backward per output unit).
#pragma once

#include "core/graph/graph.h"
#include "core/runtime/executor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace qs::hessian::testing {

/// x [B, 4] -> Gemm fc1 (4 -> 5, bias) -> Gemm fc2 (5 -> 3, transB) -> y [B, 3].
graph::Graph linearModel();

/// x [B, 2, 5, 5] -> Conv conv (3 filters 3x3 pad 1) -> Relu -> Flatten -> Gemm fc (75 -> 4).
graph::Graph convReluGemm();

/// x [B, 3, 6, 6] -> conv1 3x3 -> Relu -> conv2 1x1 -> Add(x) -> Relu -> GlobalAveragePool
/// -> Flatten -> MatMul mm (3 -> 4) -> Tanh -> y [B, 4].
graph::Graph residualBlock();

/// x [B, 4, 3] -> Transpose to [4, B, 3] -> MatMul mm_seq (3 -> 2) -> Transpose back -> MatMul
/// mm_out (2 -> 2) -> Tanh -> y [B, 4, 2]: mm_seq's output holds the samples on axis 1, and no
/// declared shape says so (only tracing finds it).
graph::Graph sequenceFirst();

/// linearModel with a Softmax after fc2 (output "probs"); `argmax` adds an ArgMax output too.
graph::Graph linearWithSoftmax(bool argmax);

/// Seeded standard-normal inputs [count, ...] for the model's single input.
runtime::Tensor randomInputs(const graph::Graph& graph, int64_t count, uint64_t seed);

/// Rows [i, i + 1) of `x`.
runtime::Tensor sampleOf(const runtime::Tensor& x, int64_t i);

/// ||dY/dA||_F^2 for one sample (x holds 1 sample), A = `tensor` (an activation, or a weight
/// when `weights`), Y = every graph output: one backward per output element.
double exactFrobenius(const runtime::Executor& executor, const runtime::Tensor& x,
                      const std::string& tensor);

} // namespace qs::hessian::testing
