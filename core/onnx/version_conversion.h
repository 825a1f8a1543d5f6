// ONNX's own version converter (onnx::version_conversion::ConvertVersion from libonnx) applied to
// our graph: the graph is serialized, converted and imported again. Used to raise opset 7-10 models
// to the opset the QDQ / weight-compressed export needs.
#pragma once

#include "core/graph/graph.h"
#include "core/support/result.h"

namespace qs::onnx {

/// Highest default-domain opset the converter of our ONNX headers (1.12) can target.
inline constexpr int64_t kConverterMaxOpset = 17;

/// `graph` converted to default-domain opset `target` by ONNX's converter. Unsupported, with the
/// converter's message (it names the op: "No Adapter From Version $9 for Upsample"), when an op
/// has no adapter; InvalidArgument for a target outside (current, kConverterMaxOpset].
Result<graph::Graph> convertOpsetWithOnnx(const graph::Graph& graph, int64_t target);

} // namespace qs::onnx
