// DataType: tensor element types with ONNX's TensorProto codes, so import and export are a cast.
// int4/uint4 (codes 22/21, ONNX 1.16) are listed although our ONNX headers predate them.
#pragma once

#include <cstdint>
#include <string_view>

namespace qs::graph {

enum class DataType : int32_t {
    Undefined = 0,
    Float = 1,
    UInt8 = 2,
    Int8 = 3,
    UInt16 = 4,
    Int16 = 5,
    Int32 = 6,
    Int64 = 7,
    String = 8,
    Bool = 9,
    Float16 = 10,
    Double = 11,
    UInt32 = 12,
    UInt64 = 13,
    Complex64 = 14,
    Complex128 = 15,
    BFloat16 = 16,
    Float8E4M3FN = 17,
    Float8E4M3FNUZ = 18,
    Float8E5M2 = 19,
    Float8E5M2FNUZ = 20,
    UInt4 = 21,
    Int4 = 22,
};

inline constexpr int32_t kMaxDataTypeCode = 22;

/// ONNX spelling: "float", "int64", "float16", ...
std::string_view dataTypeName(DataType type);

/// Bits per element (4 for int4/uint4, 0 for strings and Undefined).
int dataTypeBits(DataType type);

bool isFloatingPoint(DataType type);

bool isInteger(DataType type);

/// True for codes 1..22; anything else in a file is rejected at import.
inline bool isKnownDataType(int32_t code) {
    return code >= 1 && code <= kMaxDataTypeCode;
}

} // namespace qs::graph
