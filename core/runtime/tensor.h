// Runtime tensors: what kernels read and write. A Tensor is a dtype, a shape and a pointer into
// shared storage, which is either a fresh 64-byte-aligned buffer the executor owns or the bytes of
// an initializer (graph::TensorData), wrapped without copying. Copies of a Tensor share storage, so
// Reshape/Flatten/Identity are free; kernels only write to tensors they allocated themselves.
#pragma once

#include "core/graph/data_type.h"
#include "core/graph/tensor.h"
#include "core/support/assert.h"

#include <Eigen/Core>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace qs::runtime {

using Shape = std::vector<int64_t>;

/// Product of the dims (1 for a scalar).
int64_t shapeNumElements(const Shape& shape);

/// "[1,3,224,224]".
std::string shapeToString(const Shape& shape);

/// The DataType that stores C++ type T.
template <typename T>
constexpr graph::DataType dataTypeOf();

template <>
constexpr graph::DataType dataTypeOf<float>() {
    return graph::DataType::Float;
}

template <>
constexpr graph::DataType dataTypeOf<double>() {
    return graph::DataType::Double;
}

template <>
constexpr graph::DataType dataTypeOf<int64_t>() {
    return graph::DataType::Int64;
}

template <>
constexpr graph::DataType dataTypeOf<int32_t>() {
    return graph::DataType::Int32;
}

template <>
constexpr graph::DataType dataTypeOf<int16_t>() {
    return graph::DataType::Int16;
}

template <>
constexpr graph::DataType dataTypeOf<uint16_t>() {
    return graph::DataType::UInt16;
}

template <>
constexpr graph::DataType dataTypeOf<uint32_t>() {
    return graph::DataType::UInt32;
}

template <>
constexpr graph::DataType dataTypeOf<uint64_t>() {
    return graph::DataType::UInt64;
}

template <>
constexpr graph::DataType dataTypeOf<int8_t>() {
    return graph::DataType::Int8;
}

template <>
constexpr graph::DataType dataTypeOf<uint8_t>() {
    return graph::DataType::UInt8;
}

template <>
constexpr graph::DataType dataTypeOf<bool>() {
    return graph::DataType::Bool;
}

template <>
constexpr graph::DataType dataTypeOf<Eigen::half>() {
    return graph::DataType::Float16;
}

/// A dense, row-major tensor. Default-constructed tensors are "absent" (an omitted optional input,
/// or no gradient).
class Tensor {
public:
    Tensor() = default;

    /// A new uninitialised buffer.
    static Tensor allocate(graph::DataType dtype, Shape shape);

    /// A new zero-filled buffer.
    static Tensor zeros(graph::DataType dtype, Shape shape);

    /// Views an initializer's bytes without copying; the tensor is read-only. Sub-byte types
    /// (int4/uint4) are unpacked into int8/uint8, one byte per element (a copy).
    static Tensor wrap(graph::TensorPtr data);

    /// Dtype and dims without elements (data() is null): what stays of a weight the executor
    /// released once its kernel's packed copy was made (ExecutorOptions::releasePackedWeights).
    static Tensor withoutData(graph::DataType dtype, Shape shape);

    /// A new tensor holding `values`.
    template <typename T>
    static Tensor fromValues(const Shape& shape, std::span<const T> values) {
        Tensor out = allocate(dataTypeOf<T>(), shape);
        std::copy(values.begin(), values.end(), out.mutableData<T>());
        return out;
    }

    template <typename T>
    static Tensor fromVector(Shape shape, const std::vector<T>& values) {
        return fromValues<T>(std::move(shape), std::span<const T>(values.data(), values.size()));
    }

    /// A rank-0 tensor.
    template <typename T>
    static Tensor scalar(T value) {
        return fromValues<T>({}, std::span<const T>(&value, 1));
    }

    bool defined() const { return m_data != nullptr || m_dtype != graph::DataType::Undefined; }

    graph::DataType dtype() const { return m_dtype; }

    const Shape& shape() const { return m_shape; }

    size_t rank() const { return m_shape.size(); }

    /// Dim `axis`; negative axes count from the end.
    int64_t dim(int64_t axis) const;

    /// Cached: kernels call it in loop conditions.
    int64_t numElements() const { return m_count; }

    /// Bytes of the elements (one byte per element for bool).
    size_t byteSize() const;

    /// False for wrapped initializers.
    bool writable() const { return m_writable; }

    /// Writable storage that no other tensor shares (a gradient the executor may hand over).
    bool soleOwner() const {
        return m_writable && m_holder != nullptr && m_holder.use_count() == 1;
    }

    /// Identity of the storage, for counting live bytes once per buffer.
    const void* storageId() const { return m_holder.get(); }

    template <typename T>
    const T* data() const {
        QS_ASSERT(m_dtype == dataTypeOf<T>(), "tensor dtype does not match the requested type");
        return reinterpret_cast<const T*>(m_data);
    }

    template <typename T>
    T* mutableData() {
        QS_ASSERT(m_dtype == dataTypeOf<T>(), "tensor dtype does not match the requested type");
        QS_ASSERT(m_writable, "writing into a read-only tensor");
        return reinterpret_cast<T*>(m_data);
    }

    template <typename T>
    std::span<const T> values() const {
        return {data<T>(), static_cast<size_t>(numElements())};
    }

    const void* rawData() const { return m_data; }

    void* mutableRawData() {
        QS_ASSERT(m_writable, "writing into a read-only tensor");
        return m_data;
    }

    /// Same storage, another shape with the same element count.
    Tensor reshaped(Shape shape) const;

    /// A writable deep copy.
    Tensor clone() const;

    /// Element i as double (numeric and bool types).
    double elementAsDouble(int64_t index) const;

    /// A copy as graph TensorData (for constant folding and .npy output).
    graph::TensorPtr toTensorData() const;

private:
    graph::DataType m_dtype = graph::DataType::Undefined;
    Shape m_shape;
    int64_t m_count = 1; ///< product of m_shape
    std::shared_ptr<const void> m_holder;
    std::byte* m_data = nullptr;
    bool m_writable = false;
};

/// Element size in bytes of the runtime representation (bool uses one byte).
size_t runtimeElementSize(graph::DataType dtype);

/// Converts any numeric tensor to `dtype` (float/double/half/integers/bool), as Cast does.
Tensor castTensor(const Tensor& input, graph::DataType dtype);

/// Int64 values of an integer tensor (int32/int64), e.g. a shape or axes input.
std::vector<int64_t> toInt64Vector(const Tensor& tensor);

} // namespace qs::runtime
