// FP16 conversion: float32 weights and computation become float16, except at the boundaries the
// user keeps in float32 (graph inputs/outputs with keepIoTypes, blocked op types, ops whose schema
// has no float16, inputs that must stay float32 such as Resize's scales), where Cast nodes are
// inserted. Weights outside the float16 range are clamped to +-65504 and counted.
#pragma once

#include "core/graph/graph.h"
#include "core/support/result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace qs::compression {

struct Fp16Options {
    bool keepIoTypes = false;            ///< graph inputs and outputs stay float32
    std::vector<std::string> blockedOps; ///< op types that keep running in float32
    bool useDefaultBlockList = true;     ///< also block defaultFp16BlockList()
};

struct Fp16Report {
    int64_t convertedInitializers = 0;
    int64_t convertedValues = 0; ///< initializers, inputs and node outputs now float16
    int64_t castsInserted = 0;
    int64_t blockedNodes = 0;
    int64_t clampedElements = 0;             ///< |x| > 65504, set to +-65504
    int64_t flushedElements = 0;             ///< non-zero values that became zero
    std::vector<std::string> clampedTensors; ///< names of initializers with clamped values
    int64_t bytesBefore = 0;                 ///< bytes of the converted initializers in float32
    int64_t bytesAfter = 0;
    /// Node outputs of unknown element type (shape inference gave up): left as they are, so a
    /// float one next to a float32 boundary may be mistyped.
    int64_t untypedValues = 0;
};

/// Op types kept in float32 by default: ones whose ONNX schema lacks float16 for some input
/// (Range, NonMaxSuppression), whose output type is an attribute (ConstantOfShape, EyeLike, the
/// random generators) and the quantize/dequantize pair (float16 scales need opset 19).
const std::vector<std::string>& defaultFp16BlockList();

/// Converts `graph` in place. Nodes of other domains and nodes with subgraphs stay float32; so
/// do the producers of values that subgraphs read.
Result<Fp16Report> convertToFloat16(graph::Graph& graph, const Fp16Options& options);

} // namespace qs::compression
