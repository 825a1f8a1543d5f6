// External data: initializers whose bytes live in side files next to the model (models over
// 2 GB must use them). Locations resolve relative to the model's folder only.
#pragma once

#include "core/support/result.h"

#include <onnx/onnx_pb.h>

#include <filesystem>

namespace qs::onnx::detail {

/// True when the tensor's bytes live in an external file.
bool usesExternalData(const ::onnx::TensorProto& tensor);

/// Reads the tensor's external bytes into raw_data. Rejects absolute locations, `..` escapes,
/// links leaving `baseDir`, and offset/length ranges past the end of the file.
Result<void> loadExternalData(::onnx::TensorProto& tensor, const std::filesystem::path& baseDir);

} // namespace qs::onnx::detail
