// Weight compression vocabulary: the integer modes (INT8_SYM, INT8_ASYM, INT4_SYM, INT4_ASYM),
// the group-size fallback policy and the error metrics of NNCF's weight compression
// (reference/nncf-quantization.md §5), with their command-line spellings.
#pragma once

#include "core/graph/data_type.h"
#include "core/support/result.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace qs::compression {

/// NNCF's integer CompressWeightsMode values. None keeps a weight in float (backup NONE).
enum class CompressionMode { None, Int8Sym, Int8Asym, Int4Sym, Int4Asym };

/// What to do when the reduction channel is not divisible by the group size (§5 "Grouping").
enum class GroupSizeFallback {
    Error,  ///< fail, naming the layer (NNCF's default)
    Ignore, ///< leave the weight uncompressed
    Adjust, ///< largest power of two dividing the channel if >= kMinAdjustedGroupSize, else backup
};

/// §5 "Error measures": max over rows of the mean squared error, or the Frobenius norm.
enum class ErrorMetric { MaxMean, Frobenius };

/// NNCF's min_adjusted_group_size.
inline constexpr int64_t kMinAdjustedGroupSize = 32;

/// Default group size of the 4-bit modes; the 8-bit modes are per channel (-1).
inline constexpr int64_t kDefaultInt4GroupSize = 128;

/// "int4_asym", "int8_sym", ...; "none" for None.
std::string_view modeName(CompressionMode mode);

/// Parses a mode name, case-insensitively ("int4_asym", "INT8_SYM", "none").
Result<CompressionMode> parseMode(std::string_view text);

std::string_view fallbackName(GroupSizeFallback fallback);

Result<GroupSizeFallback> parseFallback(std::string_view text);

/// 4 or 8 (0 for None).
int modeBits(CompressionMode mode);

bool isSymmetric(CompressionMode mode);

/// Storage type of the quantized weight: int4 (INT4_SYM), uint4 (INT4_ASYM), int8 (INT8_SYM),
/// uint8 (INT8_ASYM).
graph::DataType storageType(CompressionMode mode);

/// -1 (per channel) for the 8-bit modes, 128 for the 4-bit ones.
int64_t defaultGroupSize(CompressionMode mode);

/// Integer grid [low, high]: symmetric [-2^(b-1), 2^(b-1)-1], asymmetric [0, 2^b-1] (§3, §5).
struct IntegerRange {
    int32_t low = 0;
    int32_t high = 0;
};

IntegerRange integerRange(CompressionMode mode);

} // namespace qs::compression
