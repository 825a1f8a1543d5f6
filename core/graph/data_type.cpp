#include "core/graph/data_type.h"

#include <array>

namespace qs::graph {

namespace {
struct TypeInfo {
    std::string_view name;
    int bits;
};

constexpr std::array<TypeInfo, kMaxDataTypeCode + 1> kTypes = {{
    {"undefined", 0},      {"float", 32},       {"uint8", 8},          {"int8", 8},
    {"uint16", 16},        {"int16", 16},       {"int32", 32},         {"int64", 64},
    {"string", 0},         {"bool", 8},         {"float16", 16},       {"double", 64},
    {"uint32", 32},        {"uint64", 64},      {"complex64", 64},     {"complex128", 128},
    {"bfloat16", 16},      {"float8e4m3fn", 8}, {"float8e4m3fnuz", 8}, {"float8e5m2", 8},
    {"float8e5m2fnuz", 8}, {"uint4", 4},        {"int4", 4},
}};
static_assert(kTypes.size() == kMaxDataTypeCode + 1);

const TypeInfo& info(DataType type) {
    const auto code = static_cast<int32_t>(type);
    return kTypes[isKnownDataType(code) ? static_cast<size_t>(code) : 0];
}
} // namespace

std::string_view dataTypeName(DataType type) {
    return info(type).name;
}

int dataTypeBits(DataType type) {
    return info(type).bits;
}

bool isFloatingPoint(DataType type) {
    switch (type) {
    case DataType::Float:
    case DataType::Float16:
    case DataType::Double:
    case DataType::BFloat16:
    case DataType::Float8E4M3FN:
    case DataType::Float8E4M3FNUZ:
    case DataType::Float8E5M2:
    case DataType::Float8E5M2FNUZ:
        return true;
    default:
        return false;
    }
}

bool isInteger(DataType type) {
    switch (type) {
    case DataType::UInt8:
    case DataType::Int8:
    case DataType::UInt16:
    case DataType::Int16:
    case DataType::Int32:
    case DataType::Int64:
    case DataType::UInt32:
    case DataType::UInt64:
    case DataType::UInt4:
    case DataType::Int4:
    case DataType::Bool:
        return true;
    default:
        return false;
    }
}

} // namespace qs::graph
