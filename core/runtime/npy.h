// NumPy .npy files (format versions 1.0-3.0): the exchange format of `quantscope-cli run` for
// inputs and outputs. C order only; float32, float16, float64, uint8, int8, int32, int64 and bool.
#pragma once

#include "core/runtime/tensor.h"
#include "core/support/result.h"

#include <filesystem>
#include <string>

namespace qs::runtime {

/// Reads a .npy file; Fortran order and other dtypes give a clear error.
Result<Tensor> readNpy(const std::filesystem::path& path);

/// Parses .npy bytes (for tests and in-memory use).
Result<Tensor> parseNpy(const std::string& bytes);

/// Serialises a tensor as .npy (format 1.0).
Result<std::string> serializeNpy(const Tensor& tensor);

/// Writes a .npy file atomically.
Result<void> writeNpy(const Tensor& tensor, const std::filesystem::path& path);

} // namespace qs::runtime
