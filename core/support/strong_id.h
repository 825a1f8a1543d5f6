// StrongId: a typed index into one of the Graph's vectors, so a NodeId cannot be passed where a
// ValueId is meant. Undo commands, selections and item models hold ids, never pointers.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <limits>

namespace qs {

template <typename Tag>
class StrongId {
public:
    static constexpr uint32_t kInvalid = std::numeric_limits<uint32_t>::max();

    constexpr StrongId() = default;

    constexpr explicit StrongId(uint32_t index)
        : m_index(index) {}

    constexpr uint32_t index() const { return m_index; }

    constexpr bool valid() const { return m_index != kInvalid; }

    constexpr explicit operator bool() const { return valid(); }

    constexpr auto operator<=>(const StrongId&) const = default; // NOLINT(modernize-use-nullptr)

private:
    uint32_t m_index = kInvalid;
};

} // namespace qs

template <typename Tag>
struct std::hash<qs::StrongId<Tag>> {
    size_t operator()(const qs::StrongId<Tag>& id) const noexcept {
        return std::hash<uint32_t>{}(id.index());
    }
};
