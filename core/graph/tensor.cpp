#include "core/graph/tensor.h"

#include <Eigen/Core>

#include <cstring>

namespace qs::graph {

TensorShape TensorShape::ofDims(const std::vector<int64_t>& sizes) {
    TensorShape shape;
    shape.rankKnown = true;
    shape.dims.reserve(sizes.size());
    for (const int64_t size : sizes) {
        shape.dims.push_back(Dim::known(size));
    }
    return shape;
}

bool TensorShape::isStatic() const {
    if (!rankKnown) {
        return false;
    }
    for (const Dim& dim : dims) {
        if (!dim.isKnown()) {
            return false;
        }
    }
    return true;
}

std::optional<int64_t> TensorShape::numElements() const {
    if (!isStatic()) {
        return std::nullopt;
    }
    int64_t count = 1;
    for (const Dim& dim : dims) {
        count *= dim.size;
    }
    return count;
}

std::string TensorShape::toString() const {
    if (!rankKnown) {
        return "?";
    }
    if (dims.empty()) {
        return "scalar";
    }
    std::string out;
    for (size_t dimIdx = 0; dimIdx < dims.size(); ++dimIdx) {
        if (dimIdx > 0) {
            out += 'x';
        }
        const Dim& dim = dims[dimIdx];
        out += dim.isKnown() ? std::to_string(dim.size) : (dim.symbol.empty() ? "?" : dim.symbol);
    }
    return out;
}

int64_t TensorData::numElements() const {
    int64_t count = 1;
    for (const int64_t dim : m_dims) {
        count *= dim;
    }
    return count;
}

size_t TensorData::expectedByteSize() const {
    const int bits = dataTypeBits(m_dtype);
    const auto count = static_cast<size_t>(numElements());
    return (count * static_cast<size_t>(bits) + 7) / 8;
}

namespace {
template <typename T>
double load(const std::string& bytes, int64_t index) {
    T value;
    std::memcpy(&value, bytes.data() + static_cast<size_t>(index) * sizeof(T), sizeof(T));
    return static_cast<double>(value);
}
} // namespace

double TensorData::elementAsDouble(int64_t index) const {
    switch (m_dtype) {
    case DataType::Float:
        return load<float>(m_bytes, index);
    case DataType::Double:
        return load<double>(m_bytes, index);
    case DataType::Float16: {
        uint16_t bits = 0;
        std::memcpy(&bits, m_bytes.data() + static_cast<size_t>(index) * 2, 2);
        return static_cast<double>(static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(bits)));
    }
    case DataType::Int4:
    case DataType::UInt4: {
        // Two elements per byte, the first in the low nibble (ONNX's packing).
        const auto byte = static_cast<uint8_t>(m_bytes[static_cast<size_t>(index / 2)]);
        const int nibble = (index % 2 == 0) ? (byte & 0x0F) : (byte >> 4);
        return m_dtype == DataType::Int4 && nibble >= 8 ? nibble - 16 : nibble;
    }
    case DataType::Int8:
        return load<int8_t>(m_bytes, index);
    case DataType::UInt8:
    case DataType::Bool:
        return load<uint8_t>(m_bytes, index);
    case DataType::Int16:
        return load<int16_t>(m_bytes, index);
    case DataType::UInt16:
        return load<uint16_t>(m_bytes, index);
    case DataType::Int32:
        return load<int32_t>(m_bytes, index);
    case DataType::UInt32:
        return load<uint32_t>(m_bytes, index);
    case DataType::Int64:
        return load<int64_t>(m_bytes, index);
    case DataType::UInt64:
        return load<uint64_t>(m_bytes, index);
    default:
        return 0.0;
    }
}

} // namespace qs::graph
