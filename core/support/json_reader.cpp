#include "core/support/json_reader.h"

#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <vector>

namespace qs::strict {

namespace {
/// Deeper nesting than any of our formats uses is refused: code that walks a value recursively
/// (dump, comparisons) must not run out of stack on a hostile file.
constexpr size_t kMaxDepth = 64;

/// One open object or array while parsing, for the paths of repeated keys.
struct Frame {
    bool isObject = false;
    std::string path;
    std::set<std::string, std::less<>> keys;
    std::string lastKey;
    size_t index = 0; ///< next element of an array
};

std::string childPath(const std::vector<Frame>& stack) {
    if (stack.empty()) {
        return {};
    }
    const Frame& parent = stack.back();
    return parent.isObject ? member(parent.path, parent.lastKey)
                           : element(parent.path, parent.index);
}

void endChild(std::vector<Frame>& stack) {
    if (!stack.empty() && !stack.back().isObject) {
        ++stack.back().index;
    }
}

/// Parser state shared with the callback: the open containers and the first problem seen.
struct StrictParse {
    std::vector<Frame> stack;
    std::optional<Error> problem;

    bool onEvent(nlohmann::json::parse_event_t event, const Json& parsed) {
        using Event = nlohmann::json::parse_event_t;
        if (problem) {
            return false;
        }
        switch (event) {
        case Event::object_start:
        case Event::array_start:
            if (stack.size() >= kMaxDepth) {
                problem = fieldError(childPath(stack),
                                     "nested deeper than " + std::to_string(kMaxDepth) + " levels");
                return false;
            }
            stack.push_back({.isObject = event == Event::object_start, .path = childPath(stack)});
            return true;
        case Event::object_end:
        case Event::array_end:
            if (!stack.empty()) {
                stack.pop_back();
            }
            endChild(stack);
            return true;
        case Event::key: {
            Frame& frame = stack.back();
            std::string key = parsed.get<std::string>();
            if (!frame.keys.insert(key).second) {
                problem = fieldError(member(frame.path, key), "key given twice");
                return false;
            }
            frame.lastKey = std::move(key);
            return true;
        }
        case Event::value:
            endChild(stack);
            return true;
        }
        return true;
    }
};
} // namespace

std::string member(std::string_view path, std::string_view key) {
    std::string out(path);
    // Id-keyed maps (quantization points, groups) read like arrays: quantization_points[3].
    if (!key.empty() && key.find_first_not_of("0123456789") == std::string_view::npos) {
        return out + "[" + std::string(key) + "]";
    }
    if (!out.empty()) {
        out += '.';
    }
    out += key;
    return out;
}

std::string element(std::string_view path, size_t index) {
    return std::string(path) + "[" + std::to_string(index) + "]";
}

Error fieldError(std::string_view path, std::string_view problem) {
    std::string message(path.empty() ? std::string_view("(top level)") : path);
    message += ": ";
    message += problem;
    return {Errc::InvalidArgument, std::move(message)};
}

Result<Json> parseStrict(std::string_view text) {
    StrictParse state;
    Json root;
    try {
        root = Json::parse(
            text,
            [&state](int /*depth*/, nlohmann::json::parse_event_t event, Json& parsed) {
                return state.onEvent(event, parsed);
            },
            /*allow_exceptions=*/true);
    } catch (const nlohmann::json::exception& e) {
        if (!state.problem) {
            return Error(Errc::InvalidArgument, std::string("not valid JSON: ") + e.what());
        }
    }
    if (state.problem) {
        return *state.problem;
    }
    return root;
}

std::string typeName(const Json& value) {
    switch (value.type()) {
    case Json::value_t::null:
        return "null";
    case Json::value_t::object:
        return "an object";
    case Json::value_t::array:
        return "an array";
    case Json::value_t::string:
        return "a string";
    case Json::value_t::boolean:
        return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
        return "an integer";
    case Json::value_t::number_float:
        return "a floating-point number";
    case Json::value_t::binary:
        return "binary data";
    case Json::value_t::discarded:
        return "nothing";
    }
    return "?";
}

Result<void> expectObject(const Json& value, std::string_view path) {
    if (!value.is_object()) {
        return fieldError(path, "expected an object, got " + typeName(value));
    }
    return {};
}

Result<void> expectArray(const Json& value, std::string_view path) {
    if (!value.is_array()) {
        return fieldError(path, "expected an array, got " + typeName(value));
    }
    return {};
}

Result<void> onlyKeys(const Json& value, std::string_view path,
                      std::initializer_list<std::string_view> allowed) {
    QS_TRY(expectObject(value, path));
    for (const auto& [key, item] : value.items()) {
        bool known = false;
        for (const std::string_view name : allowed) {
            known = known || name == key;
        }
        if (!known) {
            std::string names;
            for (const std::string_view name : allowed) {
                names += names.empty() ? "" : ", ";
                names += name;
            }
            return fieldError(member(path, key), "unknown field (expected one of " + names + ")");
        }
    }
    return {};
}

Result<const Json*> require(const Json& value, std::string_view path, std::string_view key) {
    QS_TRY(expectObject(value, path));
    const auto it = value.find(key);
    if (it == value.end()) {
        return fieldError(member(path, key), "missing");
    }
    return &*it;
}

Result<int64_t> integer(const Json& value, std::string_view path, int64_t min, int64_t max) {
    const std::string range = std::to_string(min) + ".." + std::to_string(max);
    if (value.is_number_unsigned()) {
        const auto raw = value.get<uint64_t>();
        if (max < 0 || raw > static_cast<uint64_t>(max)) {
            return fieldError(path, value.dump() + " is out of range " + range);
        }
        return static_cast<int64_t>(raw);
    }
    if (!value.is_number_integer()) {
        return fieldError(path, "expected an integer in " + range + ", got " +
                                    (value.is_number() ? value.dump() : typeName(value)));
    }
    const auto raw = value.get<int64_t>();
    if (raw < min || raw > max) {
        return fieldError(path, value.dump() + " is out of range " + range);
    }
    return raw;
}

Result<int> smallInteger(const Json& value, std::string_view path, int min, int max) {
    QS_ASSIGN_OR_RETURN(const int64_t raw, integer(value, path, min, max));
    return static_cast<int>(raw);
}

Result<double> number(const Json& value, std::string_view path) {
    if (!value.is_number()) {
        return fieldError(path, "expected a number, got " + typeName(value));
    }
    const auto out = value.get<double>();
    if (!std::isfinite(out)) {
        return fieldError(path, "expected a finite number");
    }
    return out;
}

Result<bool> boolean(const Json& value, std::string_view path) {
    if (!value.is_boolean()) {
        return fieldError(path, "expected true or false, got " + typeName(value));
    }
    return value.get<bool>();
}

Result<std::string> string(const Json& value, std::string_view path) {
    if (!value.is_string()) {
        return fieldError(path, "expected a string, got " + typeName(value));
    }
    return value.get<std::string>();
}

Result<int> idKey(std::string_view key, std::string_view path) {
    const std::string where = member(path, key);
    constexpr size_t kMaxDigits = 10;
    const bool digits = !key.empty() && key.size() <= kMaxDigits &&
                        key.find_first_not_of("0123456789") == std::string_view::npos &&
                        (key.size() == 1 || key.front() != '0');
    if (!digits) {
        return fieldError(where, "the key '" + std::string(key) + "' is not an id (0, 1, 2, ...)");
    }
    const int64_t id = std::stoll(std::string(key));
    if (id > std::numeric_limits<int32_t>::max()) {
        return fieldError(where, "id " + std::string(key) + " is too large");
    }
    return static_cast<int>(id);
}

} // namespace qs::strict
