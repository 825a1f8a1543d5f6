#include "core/layout/group_tree.h"

#include <algorithm>
#include <map>

namespace qs::layout {

namespace {
/// A child of a group while the tree is built: a node or a group.
struct Member {
    bool isNode = false;
    uint32_t index = 0;
};

/// Smallest layout-node index inside each group: its place in the drawing order.
uint32_t firstNode(const GroupTree& tree, uint32_t group) {
    uint32_t first = UINT32_MAX;
    const LayoutGroup& g = tree.groups[group];
    if (!g.nodes.empty()) {
        first = *std::min_element(g.nodes.begin(), g.nodes.end());
    }
    for (uint32_t child : g.groups) {
        first = std::min(first, firstNode(tree, child));
    }
    return first;
}

void collectNodes(const GroupTree& tree, uint32_t group, std::vector<uint32_t>& out) {
    out.insert(out.end(), tree.groups[group].nodes.begin(), tree.groups[group].nodes.end());
    for (uint32_t child : tree.groups[group].groups) {
        collectNodes(tree, child, out);
    }
}

/// Dissolves every non-root group with a single child into its parent, bottom up.
void dissolveSingleChildren(GroupTree& tree, uint32_t group) {
    LayoutGroup& g = tree.groups[group];
    const std::vector<uint32_t> children = g.groups;
    for (uint32_t child : children) {
        dissolveSingleChildren(tree, child);
    }
    std::vector<uint32_t> kept;
    for (uint32_t child : tree.groups[group].groups) {
        LayoutGroup& c = tree.groups[child];
        if (c.groups.size() + c.nodes.size() != 1) {
            kept.push_back(child);
            continue;
        }
        // Hand the single child up; the emptied group stays in the vector, unreachable.
        for (uint32_t grandchild : c.groups) {
            tree.groups[grandchild].parent = group;
            kept.push_back(grandchild);
        }
        for (uint32_t node : c.nodes) {
            tree.groups[group].nodes.push_back(node);
        }
        c.groups.clear();
        c.nodes.clear();
    }
    tree.groups[group].groups = std::move(kept);
}

/// Cuts `members` (in drawing order) into runs of at most `cap`, each cut where the fewest
/// edges cross within the last 40 % of the run.
std::vector<std::vector<Member>> cutIntoSections(const std::vector<Member>& members,
                                                 const std::vector<int64_t>& crossing, size_t cap) {
    std::vector<std::vector<Member>> sections;
    size_t start = 0;
    while (start < members.size()) {
        size_t cut = members.size();
        if (members.size() - start > cap) {
            const size_t lowest = start + std::max<size_t>(1, cap * 6 / 10);
            cut = start + cap;
            for (size_t c = start + cap; c >= lowest; --c) {
                if (crossing[c] < crossing[cut]) {
                    cut = c;
                }
            }
        }
        sections.emplace_back(members.begin() + static_cast<std::ptrdiff_t>(start),
                              members.begin() + static_cast<std::ptrdiff_t>(cut));
        start = cut;
    }
    return sections;
}

/// A group's children (nodes and child groups) in drawing order, and the member position of
/// every layout node inside them (UINT32_MAX for nodes elsewhere).
std::vector<Member> orderedMembers(const GroupTree& tree, const LayoutInput& input, uint32_t group,
                                   std::vector<uint32_t>& positionOfNode) {
    const LayoutGroup& g = tree.groups[group];
    std::vector<std::pair<uint32_t, Member>> keyed;
    for (uint32_t node : g.nodes) {
        keyed.push_back({node, {true, node}});
    }
    for (uint32_t child : g.groups) {
        keyed.push_back({firstNode(tree, child), {false, child}});
    }
    std::sort(keyed.begin(), keyed.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<Member> members;
    positionOfNode.assign(input.nodes.size(), UINT32_MAX);
    for (size_t i = 0; i < keyed.size(); ++i) {
        members.push_back(keyed[i].second);
        std::vector<uint32_t> inside;
        if (keyed[i].second.isNode) {
            inside.push_back(keyed[i].second.index);
        } else {
            collectNodes(tree, keyed[i].second.index, inside);
        }
        for (uint32_t node : inside) {
            positionOfNode[node] = static_cast<uint32_t>(i);
        }
    }
    return members;
}

/// crossing[c]: edges between a member before c and one at or after c.
std::vector<int64_t> crossingCounts(const LayoutInput& input, size_t members,
                                    const std::vector<uint32_t>& positionOfNode) {
    std::vector<int64_t> crossing(members + 1, 0);
    for (const LayoutEdge& edge : input.edges) {
        const uint32_t a = positionOfNode[edge.from];
        const uint32_t b = positionOfNode[edge.to];
        if (a == UINT32_MAX || b == UINT32_MAX || a == b) {
            continue;
        }
        ++crossing[std::min(a, b) + 1];
        --crossing[std::max(a, b) + 1];
    }
    for (size_t c = 1; c < crossing.size(); ++c) {
        crossing[c] += crossing[c - 1];
    }
    return crossing;
}

/// Replaces `group`'s children by one artificial group per section.
void replaceBySections(GroupTree& tree, uint32_t group,
                       const std::vector<std::vector<Member>>& sections) {
    const std::string path = tree.groups[group].path;
    const uint32_t depth = tree.groups[group].depth;
    std::vector<uint32_t> created;
    for (size_t s = 0; s < sections.size(); ++s) {
        LayoutGroup section;
        section.name =
            "section " + std::to_string(s + 1) + " of " + std::to_string(sections.size());
        section.path = path;
        section.parent = group;
        section.depth = depth + 1;
        section.artificial = true;
        const auto id = static_cast<uint32_t>(tree.groups.size());
        for (const Member& member : sections[s]) {
            (member.isNode ? section.nodes : section.groups).push_back(member.index);
        }
        tree.groups.push_back(std::move(section));
        for (uint32_t child : tree.groups[id].groups) {
            tree.groups[child].parent = id;
        }
        created.push_back(id);
    }
    tree.groups[group].nodes.clear();
    tree.groups[group].groups = std::move(created);
}

/// Splits a group with too many children into artificial sections (recursively, should the
/// sections themselves be too many).
void sectionize(GroupTree& tree, const LayoutInput& input, uint32_t group, size_t cap) {
    for (size_t i = 0; i < tree.groups[group].groups.size(); ++i) {
        sectionize(tree, input, tree.groups[group].groups[i], cap);
    }
    while (tree.groups[group].groups.size() + tree.groups[group].nodes.size() > cap) {
        std::vector<uint32_t> positionOfNode;
        const std::vector<Member> members = orderedMembers(tree, input, group, positionOfNode);
        const std::vector<int64_t> crossing = crossingCounts(input, members.size(), positionOfNode);
        // Sections of about an eighth of the group (at least 32 members, at most the cap): an
        // overview of a handful of blocks reads better than two giant ones.
        constexpr size_t kSectionsWanted = 8;
        constexpr size_t kMinSection = 32;
        const size_t size = std::min(cap, std::max(kMinSection, members.size() / kSectionsWanted));
        replaceBySections(tree, group, cutIntoSections(members, crossing, size));
    }
}

/// Drops the groups dissolved into their parents: renumbers the reachable ones in pre-order.
void compact(GroupTree& tree) {
    std::vector<uint32_t> order{0};
    for (size_t i = 0; i < order.size(); ++i) {
        for (uint32_t child : tree.groups[order[i]].groups) {
            order.push_back(child);
        }
    }
    std::vector<uint32_t> renumbered(tree.groups.size(), kNoGroup);
    for (size_t i = 0; i < order.size(); ++i) {
        renumbered[order[i]] = static_cast<uint32_t>(i);
    }
    std::vector<LayoutGroup> kept;
    kept.reserve(order.size());
    for (uint32_t old : order) {
        LayoutGroup group = std::move(tree.groups[old]);
        group.parent = group.parent == kNoGroup ? kNoGroup : renumbered[group.parent];
        for (uint32_t& child : group.groups) {
            child = renumbered[child];
        }
        kept.push_back(std::move(group));
    }
    tree.groups = std::move(kept);
}

/// Depths, node counts and groupOfNode from the final shape; children in drawing order.
size_t finish(GroupTree& tree, uint32_t group, uint32_t depth) {
    LayoutGroup& g = tree.groups[group];
    g.depth = depth;
    std::sort(g.nodes.begin(), g.nodes.end());
    for (uint32_t node : g.nodes) {
        tree.groupOfNode[node] = group;
    }
    std::vector<std::pair<uint32_t, uint32_t>> keyed;
    for (uint32_t child : tree.groups[group].groups) {
        keyed.emplace_back(firstNode(tree, child), child);
    }
    std::sort(keyed.begin(), keyed.end());
    size_t count = tree.groups[group].nodes.size();
    tree.groups[group].groups.clear();
    for (const auto& [first, child] : keyed) {
        tree.groups[group].groups.push_back(child);
        count += finish(tree, child, depth + 1);
    }
    tree.groups[group].nodeCount = count;
    return count;
}
} // namespace

bool GroupTree::contains(uint32_t ancestor, uint32_t group) const {
    while (group != kNoGroup) {
        if (group == ancestor) {
            return true;
        }
        group = groups[group].parent;
    }
    return false;
}

GroupTree::Child GroupTree::childToward(uint32_t group, uint32_t node) const {
    uint32_t inner = groupOfNode[node];
    if (inner == group) {
        return {true, node};
    }
    while (groups[inner].parent != group) {
        inner = groups[inner].parent;
    }
    return {false, inner};
}

std::vector<std::string> scopePath(std::string_view nodeName) {
    std::vector<std::string> path;
    if (nodeName.size() < 2 || nodeName.front() != '/') {
        return path;
    }
    size_t start = 1;
    while (true) {
        const size_t slash = nodeName.find('/', start);
        if (slash == std::string_view::npos) {
            break; // the last component names the op itself
        }
        if (slash > start) {
            path.emplace_back(nodeName.substr(start, slash - start));
        }
        start = slash + 1;
    }
    return path;
}

GroupTree buildGroupTree(const LayoutInput& input, std::span<const std::vector<std::string>> scopes,
                         const GroupingOptions& options) {
    GroupTree tree;
    tree.groups.push_back(LayoutGroup{});
    tree.groups[0].name = "model";
    tree.groupOfNode.assign(input.nodes.size(), 0);
    std::map<std::pair<uint32_t, std::string>, uint32_t> childByName;
    for (uint32_t node = 0; node < input.nodes.size(); ++node) {
        uint32_t group = 0;
        if (node < scopes.size()) {
            for (const std::string& component : scopes[node]) {
                auto [it, added] = childByName.try_emplace({group, component}, 0);
                if (added) {
                    LayoutGroup child;
                    child.name = component;
                    child.path = tree.groups[group].path + "/" + component;
                    child.parent = group;
                    it->second = static_cast<uint32_t>(tree.groups.size());
                    tree.groups.push_back(std::move(child));
                    tree.groups[group].groups.push_back(it->second);
                }
                group = it->second;
            }
        }
        tree.groups[group].nodes.push_back(node);
    }
    dissolveSingleChildren(tree, 0);
    sectionize(tree, input, 0, std::max<size_t>(options.maxChildren, 2));
    compact(tree);
    finish(tree, 0, 0);
    return tree;
}

} // namespace qs::layout
