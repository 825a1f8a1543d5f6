// Strict reading of the JSON files a user hands the tool (setups, sessions): every field is
// looked up by its JSON path ("quantization_points[3].qip.input_port_id"), its type and range are
// checked before any conversion (a 1e30 bit width never reaches an int), and each failure is one
// Error whose message starts with that path. The file name is added as a context by the caller.
#pragma once

#include "core/support/result.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace qs::strict {

using Json = nlohmann::json;

/// `path.key`, or `key` at the root; a decimal key (an id) reads `path[key]`.
std::string member(std::string_view path, std::string_view key);

/// `path[index]`.
std::string element(std::string_view path, size_t index);

/// The error of a bad field: "`path`: `problem`" (Errc::InvalidArgument: bad input, not usage).
Error fieldError(std::string_view path, std::string_view problem);

/// Parses `text`. Invalid JSON is an error with the parser's position; an object that repeats a
/// key (which a plain parse would silently resolve to the last one) is an error naming its path.
Result<Json> parseStrict(std::string_view text);

/// The JSON type of `value` as an error message names it ("a string", "a floating-point number").
std::string typeName(const Json& value);

/// `object` must be an object.
Result<void> expectObject(const Json& value, std::string_view path);

/// `value` must be an array.
Result<void> expectArray(const Json& value, std::string_view path);

/// Every key of the object `value` must be one of `allowed`.
Result<void> onlyKeys(const Json& value, std::string_view path,
                      std::initializer_list<std::string_view> allowed);

/// The member `key` of the object `value`; missing is an error naming `path.key`.
Result<const Json*> require(const Json& value, std::string_view path, std::string_view key);

/// An integer in [min, max]; a float, a string or an out-of-range integer is an error.
Result<int64_t> integer(const Json& value, std::string_view path, int64_t min, int64_t max);

/// `integer` narrowed to int (the range must lie within int).
Result<int> smallInteger(const Json& value, std::string_view path, int min, int max);

/// A finite number (integer or float).
Result<double> number(const Json& value, std::string_view path);

Result<bool> boolean(const Json& value, std::string_view path);

Result<std::string> string(const Json& value, std::string_view path);

/// An object key that must be a decimal id in [0, INT32_MAX], written canonically ("7", not
/// "07" or "+7"), so two spellings of one id cannot both appear.
Result<int> idKey(std::string_view key, std::string_view path);

template <typename T>
struct IsVector : std::false_type {};

template <typename T>
struct IsVector<std::vector<T>> : std::true_type {};

template <typename T>
Result<std::vector<T>> asVector(const Json& value, std::string_view path);

/// `value` as a T (bool, string, floating point, integer type, or a vector of these), its JSON
/// type checked and an integer's range checked against T before converting — where nlohmann's
/// get<T>() would convert 1e30 or -1 into an int or size_t without a word.
template <typename T>
Result<T> as(const Json& value, std::string_view path) {
    if constexpr (std::is_same_v<T, bool>) {
        return boolean(value, path);
    } else if constexpr (std::is_same_v<T, std::string>) {
        return string(value, path);
    } else if constexpr (std::is_floating_point_v<T>) {
        QS_ASSIGN_OR_RETURN(const double number, strict::number(value, path));
        return static_cast<T>(number);
    } else if constexpr (std::is_same_v<T, uint64_t>) {
        if (value.is_number_unsigned()) { // beyond int64's range, as a 64-bit seed may be
            return value.get<uint64_t>();
        }
        QS_ASSIGN_OR_RETURN(const int64_t number,
                            integer(value, path, 0, std::numeric_limits<int64_t>::max()));
        return static_cast<uint64_t>(number);
    } else if constexpr (std::is_integral_v<T>) {
        constexpr int64_t kMin = std::is_signed_v<T> ? int64_t{std::numeric_limits<T>::min()} : 0;
        constexpr auto kMax = static_cast<int64_t>(std::numeric_limits<T>::max());
        QS_ASSIGN_OR_RETURN(const int64_t number, integer(value, path, kMin, kMax));
        return static_cast<T>(number);
    } else {
        static_assert(IsVector<T>::value, "strict::as reads scalars and vectors of them");
        return asVector<typename T::value_type>(value, path);
    }
}

template <typename T>
Result<std::vector<T>> asVector(const Json& value, std::string_view path) {
    QS_TRY(expectArray(value, path));
    std::vector<T> out;
    out.reserve(value.size());
    for (size_t i = 0; i < value.size(); ++i) {
        QS_ASSIGN_OR_RETURN(T item, as<T>(value[i], element(path, i)));
        out.push_back(std::move(item));
    }
    return out;
}

/// The member `key` of the object `object` (at `path`) as a T; missing or mistyped is an error
/// naming `path.key`.
template <typename T>
Result<T> field(const Json& object, std::string_view path, std::string_view key) {
    QS_ASSIGN_OR_RETURN(const Json* value, require(object, path, key));
    return as<T>(*value, member(path, key));
}

} // namespace qs::strict
