// ONNX model import and export: the boundary between the ONNX protobuf world and our Graph.
// Only core/onnx/ includes protobuf headers; everything else sees Graph.
#pragma once

#include "core/graph/graph.h"
#include "core/support/result.h"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace qs::onnx {

/// The default-domain opsets we import.
inline constexpr int64_t kMinOpset = 7;
inline constexpr int64_t kMaxOpset = 21;

/// Largest single dimension and element count we accept in a declared shape.
inline constexpr int64_t kMaxDimSize = int64_t{1} << 40;
inline constexpr int64_t kMaxElements = int64_t{1} << 48;

/// A user override of a graph input's shape: `--input-shape input=1,3,224,224`.
struct InputShapeOverride {
    std::string inputName;
    std::vector<int64_t> dims;
};

/// Parses "NAME=D1,D2,..." (a dim may be -1 or a symbol to leave it dynamic: only integers here).
Result<InputShapeOverride> parseInputShapeOverride(std::string_view text);

struct ImportOptions {
    std::vector<InputShapeOverride> inputShapes;
    bool inferShapes = true; ///< run onnx::shape_inference::InferShapes
    /// Accept default-domain opsets below kMinOpset (ONNX's own pytorch-converted test data uses
    /// opset 6); for conformance tests only, since old attribute forms are not all handled.
    bool allowOldOpsets = false;
};

/// Non-fatal findings of an import (shape inference gave up, opaque nodes, ...).
struct ImportNotes {
    std::vector<std::string> warnings;
};

/// Imports a model file. External data is resolved relative to the file's folder; paths that
/// leave it, and ranges past the end of a data file, are rejected.
Result<graph::Graph> importModel(const std::filesystem::path& path,
                                 const ImportOptions& options = {}, ImportNotes* notes = nullptr);

/// Imports a serialized ModelProto held in memory; external data resolves against `baseDir`
/// (empty: external data is rejected).
Result<graph::Graph> importModelFromBytes(std::string_view bytes, const ImportOptions& options,
                                          const std::filesystem::path& baseDir = {},
                                          ImportNotes* notes = nullptr);

/// Reads one serialized TensorProto file (ONNX test data: input_0.pb, output_0.pb).
Result<graph::TensorPtr> readTensorFile(const std::filesystem::path& path);

/// Serializes a graph into ModelProto bytes.
Result<std::string> serializeModel(const graph::Graph& graph);

/// Writes the graph as an ONNX file, atomically (temp file + rename).
Result<void> exportModel(const graph::Graph& graph, const std::filesystem::path& path);

/// Runs onnx::checker on the exported form of the graph.
Result<void> checkModel(const graph::Graph& graph);

/// Highest default-domain opset the checker of our ONNX headers (1.12) knows.
inline constexpr int64_t kCheckerMaxOpset = 17;

/// True when checkModel can judge the graph: default opset <= kCheckerMaxOpset and no int4/uint4
/// value (types the 1.12 checker does not know).
bool checkerCanJudge(const graph::Graph& graph);

} // namespace qs::onnx
