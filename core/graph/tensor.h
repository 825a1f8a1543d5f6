// Tensor data and tensor shapes. TensorData holds one tensor's bytes exactly once: the importer
// moves the protobuf's raw bytes into it, and graphs, undo snapshots and kernels share it through
// std::shared_ptr<const TensorData>.
#pragma once

#include "core/graph/data_type.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace qs::graph {

/// One dimension: a known size, a named symbol ("batch"), or unknown.
struct Dim {
    int64_t size = -1;  ///< >= 0 when known
    std::string symbol; ///< ONNX dim_param when the size is not known

    static Dim known(int64_t size) { return Dim{size, {}}; }

    static Dim symbolic(std::string name) { return Dim{-1, std::move(name)}; }

    bool isKnown() const { return size >= 0; }

    bool operator==(const Dim&) const = default;
};

/// A shape whose rank may be unknown; dims may be symbolic.
struct TensorShape {
    bool rankKnown = false;
    std::vector<Dim> dims;

    static TensorShape ofDims(const std::vector<int64_t>& sizes);

    size_t rank() const { return dims.size(); }

    /// True when the rank and every dim are known.
    bool isStatic() const;

    /// Product of dims when static.
    std::optional<int64_t> numElements() const;

    /// "1x3x224x224", "batchx1000", "?" for unknown rank, "scalar" for rank 0.
    std::string toString() const;

    bool operator==(const TensorShape&) const = default;
};

/// The bytes of one constant tensor (an initializer or a Constant's value), row-major,
/// little-endian, sub-byte types packed two per byte as in ONNX.
class TensorData {
public:
    TensorData(DataType dtype, std::vector<int64_t> dims, std::string bytes)
        : m_dtype(dtype)
        , m_dims(std::move(dims))
        , m_bytes(std::move(bytes)) {}

    /// Copies `values` into a new tensor of matching type.
    template <typename T>
    static std::shared_ptr<const TensorData> fromValues(DataType dtype, std::vector<int64_t> dims,
                                                        std::span<const T> values) {
        std::string bytes(values.size_bytes(), '\0');
        if (!values.empty()) {
            std::memcpy(bytes.data(), values.data(), values.size_bytes());
        }
        return std::make_shared<const TensorData>(dtype, std::move(dims), std::move(bytes));
    }

    DataType dtype() const { return m_dtype; }

    const std::vector<int64_t>& dims() const { return m_dims; }

    int64_t numElements() const;

    /// Bytes the elements need; equals bytes().size() in a well-formed tensor.
    size_t expectedByteSize() const;

    const std::string& bytes() const { return m_bytes; }

    const void* data() const { return m_bytes.data(); }

    /// Typed view; the caller checks dtype. Alignment: std::string storage is heap-allocated
    /// with malloc's alignment for anything larger than the small-string buffer.
    template <typename T>
    std::span<const T> as() const {
        return {reinterpret_cast<const T*>(m_bytes.data()), m_bytes.size() / sizeof(T)};
    }

    /// Element i converted to double (float, float16, integer and bool types).
    double elementAsDouble(int64_t index) const;

private:
    DataType m_dtype;
    std::vector<int64_t> m_dims;
    std::string m_bytes;
};

using TensorPtr = std::shared_ptr<const TensorData>;

} // namespace qs::graph
