// Result<T>: our small [[nodiscard]] expected type (std::expected needs C++23). Expected
// failures travel up as Error values; exceptions never cross a core API.
#pragma once

#include "core/support/assert.h"
#include "core/support/error.h"

#include <utility>
#include <variant>

namespace qs {

/// Either a value or an Error.
template <typename T>
class [[nodiscard]] Result {
public:
    Result(T value)
        : m_state(std::in_place_index<0>, std::move(value)) {}

    Result(Error error)
        : m_state(std::in_place_index<1>, std::move(error)) {}

    bool ok() const { return m_state.index() == 0; }

    explicit operator bool() const { return ok(); }

    T& value() & {
        QS_ASSERT(ok(), "value() on an error Result");
        return std::get<0>(m_state);
    }

    const T& value() const& {
        QS_ASSERT(ok(), "value() on an error Result");
        return std::get<0>(m_state);
    }

    T&& value() && {
        QS_ASSERT(ok(), "value() on an error Result");
        return std::get<0>(std::move(m_state));
    }

    const Error& error() const& {
        QS_ASSERT(!ok(), "error() on an ok Result");
        return std::get<1>(m_state);
    }

    Error&& error() && {
        QS_ASSERT(!ok(), "error() on an ok Result");
        return std::get<1>(std::move(m_state));
    }

    T& operator*() & { return value(); }

    const T& operator*() const& { return value(); }

    T* operator->() { return &value(); }

    const T* operator->() const { return &value(); }

    /// Adds a context to the error, if any; a no-op on success.
    Result context(std::string what) && {
        if (!ok()) {
            std::get<1>(m_state).context(std::move(what));
        }
        return std::move(*this);
    }

private:
    std::variant<T, Error> m_state;
};

/// Result of an operation that yields nothing but can fail.
template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;

    Result(Error error)
        : m_error(std::move(error))
        , m_failed(true) {}

    bool ok() const { return !m_failed; }

    explicit operator bool() const { return ok(); }

    const Error& error() const& {
        QS_ASSERT(m_failed, "error() on an ok Result");
        return m_error;
    }

    Error&& error() && {
        QS_ASSERT(m_failed, "error() on an ok Result");
        return std::move(m_error);
    }

    Result context(std::string what) && {
        if (m_failed) {
            m_error.context(std::move(what));
        }
        return std::move(*this);
    }

private:
    Error m_error{Errc::Internal, {}};
    bool m_failed = false;
};

inline Result<void> success() {
    return {};
}

} // namespace qs

#define QS_CONCAT_INNER(a, b) a##b
#define QS_CONCAT(a, b) QS_CONCAT_INNER(a, b)

/// Returns the error of `expr` (a Result) from the enclosing function.
#define QS_TRY(expr)                                                                               \
    do {                                                                                           \
        auto qsTryResult = (expr);                                                                 \
        if (!qsTryResult.ok()) {                                                                   \
            return std::move(qsTryResult).error();                                                 \
        }                                                                                          \
    } while (false)

/// `QS_ASSIGN_OR_RETURN(auto graph, importModel(path));` unwraps or returns the error.
#define QS_ASSIGN_OR_RETURN(decl, expr)                                                            \
    QS_ASSIGN_OR_RETURN_IMPL(QS_CONCAT(qsRes, __LINE__), decl, expr)
// `decl` is a declaration and `tmp` a name, so neither can be parenthesized.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define QS_ASSIGN_OR_RETURN_IMPL(tmp, decl, expr)                                                  \
    auto tmp = (expr);                                                                             \
    if (!tmp.ok()) {                                                                               \
        return std::move(tmp).error();                                                             \
    }                                                                                              \
    decl = std::move(tmp).value()
// NOLINTEND(bugprone-macro-parentheses)
