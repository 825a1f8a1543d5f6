// Strict reading of the JSON files a user hands the tool (setups, sessions): every field is
// looked up by its JSON path ("quantization_points[3].qip.input_port_id"), its type and range are
// checked before any conversion (a 1e30 bit width never reaches an int), and each failure is one
// Error whose message starts with that path. The file name is added as a context by the caller.
#pragma once

#include "core/support/result.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

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

} // namespace qs::strict
