// Runtime type dispatch: turns a DataType into a call of a templated lambda with the matching C++
// type, so kernels written once for T serve float, double, half and the integer types.
#pragma once

#include "core/graph/data_type.h"
#include "core/support/assert.h"

#include <Eigen/Core>

#include <cstdint>
#include <type_traits>

namespace qs::runtime {

/// Converts one element with ONNX Cast semantics (float to integer truncates toward zero, any
/// nonzero value is true). Half goes through float.
template <typename To, typename From>
To castValue(From value) {
    if constexpr (std::is_same_v<To, From>) {
        return value;
    } else if constexpr (std::is_same_v<To, bool>) {
        return static_cast<float>(value) != 0.0F;
    } else if constexpr (std::is_same_v<From, Eigen::half>) {
        return static_cast<To>(static_cast<float>(value));
    } else if constexpr (std::is_same_v<To, Eigen::half>) {
        return Eigen::half(static_cast<float>(value));
    } else {
        return static_cast<To>(value);
    }
}

/// True when `dtype` is one dispatchAllTypes handles.
inline bool isDispatchable(graph::DataType dtype) {
    using graph::DataType;
    switch (dtype) {
    case DataType::Float:
    case DataType::Double:
    case DataType::Float16:
    case DataType::Int8:
    case DataType::UInt8:
    case DataType::Int16:
    case DataType::UInt16:
    case DataType::Int32:
    case DataType::UInt32:
    case DataType::Int64:
    case DataType::UInt64:
    case DataType::Bool:
        return true;
    default:
        return false;
    }
}

/// Calls `fn.template operator()<T>()` for the C++ type of `dtype`.
template <typename Fn>
void dispatchAllTypes(graph::DataType dtype, Fn&& fn) {
    using graph::DataType;
    switch (dtype) {
    case DataType::Float:
        fn.template operator()<float>();
        return;
    case DataType::Double:
        fn.template operator()<double>();
        return;
    case DataType::Float16:
        fn.template operator()<Eigen::half>();
        return;
    case DataType::Int8:
        fn.template operator()<int8_t>();
        return;
    case DataType::UInt8:
        fn.template operator()<uint8_t>();
        return;
    case DataType::Int16:
        fn.template operator()<int16_t>();
        return;
    case DataType::UInt16:
        fn.template operator()<uint16_t>();
        return;
    case DataType::Int32:
        fn.template operator()<int32_t>();
        return;
    case DataType::UInt32:
        fn.template operator()<uint32_t>();
        return;
    case DataType::Int64:
        fn.template operator()<int64_t>();
        return;
    case DataType::UInt64:
        fn.template operator()<uint64_t>();
        return;
    case DataType::Bool:
        fn.template operator()<bool>();
        return;
    default:
        QS_CHECK(false, "dispatch on a data type the runtime does not hold");
    }
}

/// Like dispatchAllTypes for the arithmetic types (no bool, no half); false when not one.
template <typename Fn>
bool dispatchNumeric(graph::DataType dtype, Fn&& fn) {
    using graph::DataType;
    switch (dtype) {
    case DataType::Float:
        fn.template operator()<float>();
        return true;
    case DataType::Double:
        fn.template operator()<double>();
        return true;
    case DataType::Int8:
        fn.template operator()<int8_t>();
        return true;
    case DataType::UInt8:
        fn.template operator()<uint8_t>();
        return true;
    case DataType::Int16:
        fn.template operator()<int16_t>();
        return true;
    case DataType::UInt16:
        fn.template operator()<uint16_t>();
        return true;
    case DataType::Int32:
        fn.template operator()<int32_t>();
        return true;
    case DataType::UInt32:
        fn.template operator()<uint32_t>();
        return true;
    case DataType::Int64:
        fn.template operator()<int64_t>();
        return true;
    case DataType::UInt64:
        fn.template operator()<uint64_t>();
        return true;
    default:
        return false;
    }
}

} // namespace qs::runtime
