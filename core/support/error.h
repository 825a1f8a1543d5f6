// Error: the value every expected failure carries up to the edge (CLI message, GUI dialog).
// It holds a code, a message and a chain of contexts added on the way up ("node 'conv_3'",
// "file 'model.onnx'"), and is printed once, outermost context first.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace qs {

/// What kind of failure an Error reports. The CLI maps Usage to exit code 2 and every other kind
/// to 1: a bad file, bad data or a value that does not fit the model is bad input, never usage.
enum class Errc {
    InvalidArgument, ///< bad input: a malformed or inconsistent file, dataset or value
    Usage,           ///< a wrong command line: an unknown or malformed option, options that clash
    InvalidModel,    ///< the model file is malformed or inconsistent
    Unsupported,     ///< a valid model uses something we do not handle
    Io,              ///< reading or writing a file failed
    Cancelled,       ///< the user cancelled a long job
    Internal,        ///< a bug or an exception from a library
    Count
};

inline constexpr std::array<std::string_view, static_cast<size_t>(Errc::Count)> kErrcNames = {
    "invalid argument", "usage error", "invalid model", "unsupported",
    "i/o error",        "cancelled",   "internal error"};
static_assert(kErrcNames.size() == static_cast<size_t>(Errc::Count));

/// An expected failure: code, message and context chain (innermost first).
class Error {
public:
    Error(Errc code, std::string message)
        : m_code(code)
        , m_message(std::move(message)) {}

    Errc code() const { return m_code; }

    const std::string& message() const { return m_message; }

    const std::vector<std::string>& contexts() const { return m_contexts; }

    /// Adds a context on the way up, e.g. `err.context("node 'conv_3'")`.
    Error& context(std::string what) & {
        m_contexts.push_back(std::move(what));
        return *this;
    }

    Error&& context(std::string what) && {
        m_contexts.push_back(std::move(what));
        return std::move(*this);
    }

    /// One line: outermost context first, then the message.
    std::string toString() const {
        std::string out;
        for (size_t depth = m_contexts.size(); depth > 0; --depth) {
            out += m_contexts[depth - 1];
            out += ": ";
        }
        out += m_message;
        return out;
    }

private:
    Errc m_code;
    std::string m_message;
    std::vector<std::string> m_contexts;
};

} // namespace qs
