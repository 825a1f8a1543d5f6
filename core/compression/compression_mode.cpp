#include "core/compression/compression_mode.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

namespace qs::compression {

namespace {
constexpr std::array<std::pair<CompressionMode, std::string_view>, 5> kModeNames = {{
    {CompressionMode::None, "none"},
    {CompressionMode::Int8Sym, "int8_sym"},
    {CompressionMode::Int8Asym, "int8_asym"},
    {CompressionMode::Int4Sym, "int4_sym"},
    {CompressionMode::Int4Asym, "int4_asym"},
}};

constexpr std::array<std::pair<GroupSizeFallback, std::string_view>, 3> kFallbackNames = {{
    {GroupSizeFallback::Error, "error"},
    {GroupSizeFallback::Ignore, "ignore"},
    {GroupSizeFallback::Adjust, "adjust"},
}};

std::string lowered(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}
} // namespace

std::string_view modeName(CompressionMode mode) {
    for (const auto& [value, name] : kModeNames) {
        if (value == mode) {
            return name;
        }
    }
    return "none";
}

Result<CompressionMode> parseMode(std::string_view text) {
    const std::string key = lowered(text);
    for (const auto& [value, name] : kModeNames) {
        if (name == key) {
            return value;
        }
    }
    return Error(Errc::Usage, "unknown compression mode '" + std::string(text) +
                                  "' (expected int4_asym, int4_sym, int8_asym, "
                                  "int8_sym or none)");
}

std::string_view fallbackName(GroupSizeFallback fallback) {
    for (const auto& [value, name] : kFallbackNames) {
        if (value == fallback) {
            return name;
        }
    }
    return "error";
}

Result<GroupSizeFallback> parseFallback(std::string_view text) {
    const std::string key = lowered(text);
    for (const auto& [value, name] : kFallbackNames) {
        if (name == key) {
            return value;
        }
    }
    return Error(Errc::Usage, "unknown group-size fallback '" + std::string(text) +
                                  "' (expected error, ignore or adjust)");
}

int modeBits(CompressionMode mode) {
    switch (mode) {
    case CompressionMode::Int8Sym:
    case CompressionMode::Int8Asym:
        return 8;
    case CompressionMode::Int4Sym:
    case CompressionMode::Int4Asym:
        return 4;
    case CompressionMode::None:
        break;
    }
    return 0;
}

bool isSymmetric(CompressionMode mode) {
    return mode == CompressionMode::Int8Sym || mode == CompressionMode::Int4Sym;
}

graph::DataType storageType(CompressionMode mode) {
    switch (mode) {
    case CompressionMode::Int8Sym:
        return graph::DataType::Int8;
    case CompressionMode::Int8Asym:
        return graph::DataType::UInt8;
    case CompressionMode::Int4Sym:
        return graph::DataType::Int4;
    case CompressionMode::Int4Asym:
        return graph::DataType::UInt4;
    case CompressionMode::None:
        break;
    }
    return graph::DataType::Float;
}

int64_t defaultGroupSize(CompressionMode mode) {
    return modeBits(mode) == 4 ? kDefaultInt4GroupSize : -1;
}

IntegerRange integerRange(CompressionMode mode) {
    const int bits = modeBits(mode);
    if (bits == 0) {
        return {};
    }
    if (isSymmetric(mode)) {
        return {-(1 << (bits - 1)), (1 << (bits - 1)) - 1};
    }
    return {0, (1 << bits) - 1};
}

} // namespace qs::compression
