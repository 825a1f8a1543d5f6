// NumPy .npy files (format versions 1.0-3.0): the exchange format of `quantscope-cli run` for
// inputs and outputs. C order only; float32, float16, float64, uint8, int8, int32, int64 and bool.
#pragma once

#include "core/runtime/tensor.h"
#include "core/support/result.h"

#include <filesystem>
#include <memory>
#include <string>

namespace qs::runtime {

/// An open .npy file read rows at a time (rows: its first axis): the header is checked when it is
/// opened (Fortran order, other dtypes and a size that is not the shape's give a clear error),
/// then any range of rows is read straight into a tensor. Copies share the open file. A file
/// that changed size since it was opened is refused at the next read.
class NpyRows {
public:
    static Result<NpyRows> open(const std::filesystem::path& path);

    graph::DataType dtype() const;
    const Shape& shape() const;

    /// The whole array.
    Result<Tensor> readAll() const;

    /// Rows [begin, end), 0 <= begin <= end <= shape()[0]; rank >= 1.
    Result<Tensor> read(int64_t begin, int64_t end) const;

private:
    struct File;
    std::shared_ptr<const File> m_file;
};

/// Reads a .npy file; Fortran order and other dtypes give a clear error.
Result<Tensor> readNpy(const std::filesystem::path& path);

/// Parses .npy bytes (for tests and in-memory use).
Result<Tensor> parseNpy(const std::string& bytes);

/// Serialises a tensor as .npy (format 1.0).
Result<std::string> serializeNpy(const Tensor& tensor);

/// Writes a .npy file atomically.
Result<void> writeNpy(const Tensor& tensor, const std::filesystem::path& path);

} // namespace qs::runtime
