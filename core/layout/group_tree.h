// GroupTree: the hierarchy a big graph is drawn with, Model Explorer style. Nodes are grouped by
// the scopes of their names ("/layer1/layer1.0/conv1/Conv" lies in layer1 > layer1.0 > conv1);
// a scope with a single child is dissolved into its parent (conv1 above holds one op). A group
// with more children than one dot call should take — and a model without usable scopes, whose
// ops all sit in the root — is cut into artificial sections in topological order, preferably
// where a single tensor crosses (between sequential blocks). Groups are drawn collapsed as one
// box and laid out only when expanded (see grouped_layout.h).
#pragma once

#include "core/layout/layout.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace qs::layout {

inline constexpr uint32_t kNoGroup = UINT32_MAX;

struct LayoutGroup {
    std::string name; ///< the scope component ("layer1.0") or "section 2 of 5"
    std::string path; ///< the full scope ("/layer1/layer1.0"); for sections, the parent's path
    uint32_t parent = kNoGroup;
    std::vector<uint32_t> groups; ///< child groups, in drawing order
    std::vector<uint32_t> nodes;  ///< layout nodes directly inside, in drawing order
    size_t nodeCount = 0;         ///< layout nodes inside, at any depth
    uint32_t depth = 0;           ///< the root is 0
    bool artificial = false;
};

/// A group's key in a session ("view.expanded_groups") and a review report: its scope path, and
/// for a group made from the structure (whose path is its parent's) the path and its name.
inline std::string groupKey(const LayoutGroup& group) {
    return group.artificial ? group.path + "#" + group.name : group.path;
}

/// Groups of a layout input; group 0 is the root, which holds everything and is never drawn.
struct GroupTree {
    std::vector<LayoutGroup> groups;
    std::vector<uint32_t> groupOfNode; ///< innermost group of every layout node

    /// True when `group` is `ancestor` or lies inside it.
    bool contains(uint32_t ancestor, uint32_t group) const;

    /// The child of `group` (a group or, with isNode, the node) on the way to `node`, which must
    /// lie inside `group`.
    struct Child {
        bool isNode = false;
        uint32_t index = 0;
    };

    Child childToward(uint32_t group, uint32_t node) const;
};

struct GroupingOptions {
    /// Groups with more children than this are cut into artificial sections.
    size_t maxChildren = 200;
};

/// The scope components of an ONNX node name, without the op's own last component:
/// "/layer1/layer1.0/conv1/Conv" -> {layer1, layer1.0, conv1}; "p2o.Conv.12" or "" -> {}.
std::vector<std::string> scopePath(std::string_view nodeName);

/// Builds the tree of `input` from one scope path per layout node (empty: the root).
GroupTree buildGroupTree(const LayoutInput& input, std::span<const std::vector<std::string>> scopes,
                         const GroupingOptions& options = {});

} // namespace qs::layout
