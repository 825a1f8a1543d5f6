// A tiny LLM-shaped model for compression tests: token embedding (Gather), an MLP of MatMuls with
// a residual and a mean-centering ReduceMean (axes as an attribute, opset 13), and an LM head
// MatMul followed by Softmax. Weights are random normal from a fixed seed.
#pragma once

#include "core/graph/graph.h"

#include <cstdint>

namespace qs::testing {

struct TinyLlmShape {
    int64_t vocab = 64;
    int64_t hidden = 128;
    int64_t ffn = 256;
    int64_t tokens = 8;
};

/// Builds the model; `seed` picks the weights.
graph::Graph makeTinyLlm(const TinyLlmShape& shape = {}, uint32_t seed = 7);

} // namespace qs::testing
