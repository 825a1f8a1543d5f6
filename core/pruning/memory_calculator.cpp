#include "core/pruning/memory_calculator.h"

#include "core/graph/metatype.h"

#include <algorithm>
#include <map>
#include <set>

namespace qs::pruning {

namespace {

using graph::NodeId;
using graph::ValueId;

int64_t padded(int64_t channels, int64_t simd) {
    if (simd <= 1) {
        return channels;
    }
    return (channels + simd - 1) / simd * simd;
}

/// Output-channel axis size of a kernel's constant outside any section role (for padding):
/// the weight's output-channel axis, or a bias of one value per output channel.
int64_t kernelOutSize(const graph::Graph& graph, NodeId id, uint32_t port) {
    const graph::Node& node = graph.node(id);
    if (!isEdgeOpType(node.opType) || node.inputs.size() < 2) {
        return 0;
    }
    const graph::Value& weight = graph.value(node.inputs[1]);
    if (!weight.isInitializer()) {
        return 0;
    }
    const std::optional<int64_t> axis = graph::weightOutputChannelAxis(graph, id, 1);
    if (!axis) {
        return 0;
    }
    const std::vector<int64_t>& dims = weight.initializer->dims();
    const int64_t a = *axis < 0 ? *axis + static_cast<int64_t>(dims.size()) : *axis;
    if (a < 0 || a >= static_cast<int64_t>(dims.size())) {
        return 0;
    }
    int64_t out = dims[static_cast<size_t>(a)];
    if (node.opType == "ConvTranspose") {
        out *= node.intAttr("group", 1);
    }
    if (port == 1) {
        return node.opType == "ConvTranspose" && node.intAttr("group", 1) != 1 ? 0 : out;
    }
    const int64_t numel = graph.value(node.inputs[port]).initializer->numElements();
    return port == 2 && numel == out ? out : 0;
}

} // namespace

namespace {

/// Which section roles a (node, value) has: sliced by a section's mask on an axis.
struct Role {
    int outSection = -1;
    int64_t outAxis = -1;
    int inSection = -1;
    int64_t inAxis = -1;
};

using RoleMap = std::map<std::pair<size_t, size_t>, Role>;

RoleMap sectionRoles(const SectionDetection& detection) {
    RoleMap roles;
    for (size_t s = 0; s < detection.sections.size(); ++s) {
        for (const ChannelParameter& p : detection.sections[s].parameters) {
            Role& role = roles[{p.node.index(), p.value.index()}];
            if (p.role == ChannelRole::Output) {
                role.outSection = static_cast<int>(s);
                role.outAxis = p.axis;
            } else {
                role.inSection = static_cast<int>(s);
                role.inAxis = p.axis;
            }
        }
    }
    return roles;
}

/// Per node slot, the sections the node is a member of.
std::vector<std::vector<int>> sectionMembers(const graph::Graph& graph,
                                             const SectionDetection& detection) {
    std::vector<std::vector<int>> membersOf(graph.numNodeSlots());
    for (size_t s = 0; s < detection.sections.size(); ++s) {
        const PruningSection& section = detection.sections[s];
        membersOf[section.entry.index()].push_back(static_cast<int>(s));
        membersOf[section.exit.index()].push_back(static_cast<int>(s));
        for (const NodeId n : section.intermediates) {
            membersOf[n.index()].push_back(static_cast<int>(s));
        }
    }
    return membersOf;
}

bool isFloatConstant(const graph::Graph& graph, ValueId id) {
    return id.valid() && graph.value(id).isInitializer() &&
           graph.value(id).initializer->dtype() == graph::DataType::Float;
}

MemoryTerm makeTerm(const graph::Graph& graph, NodeId id, uint32_t port, const RoleMap& roles,
                    const std::vector<int64_t>& simdByNode) {
    const ValueId in = graph.node(id).inputs[port];
    const graph::TensorData& data = *graph.value(in).initializer;
    MemoryTerm term;
    term.node = id;
    term.value = in;
    term.numel = data.numElements();
    term.simd = id.index() < simdByNode.size() ? std::max<int64_t>(1, simdByNode[id.index()]) : 1;
    term.outSize = kernelOutSize(graph, id, port);
    auto it = roles.find({id.index(), in.index()});
    if (it == roles.end()) {
        return term;
    }
    const Role& role = it->second;
    if (role.outSection >= 0) {
        term.outSection = role.outSection;
        term.outSize = data.dims()[static_cast<size_t>(role.outAxis)];
    }
    if (role.inSection >= 0) {
        term.inSection = role.inSection;
        term.inSize = data.dims()[static_cast<size_t>(role.inAxis)];
    }
    return term;
}

} // namespace

MemoryCalculator::MemoryCalculator(const graph::Graph& graph, const SectionDetection& detection,
                                   const std::vector<int64_t>& simdByNode, bool padding)
    : m_padding(padding) {
    const size_t sections = detection.sections.size();
    m_termsBySection.resize(sections);
    m_memberTerms.resize(sections);
    const RoleMap roles = sectionRoles(detection);
    const std::vector<std::vector<int>> membersOf = sectionMembers(graph, detection);
    std::set<size_t> seen;
    for (const NodeId id : graph.nodeIds()) {
        for (uint32_t port = 0; port < graph.node(id).inputs.size(); ++port) {
            const ValueId in = graph.node(id).inputs[port];
            if (!isFloatConstant(graph, in) || !seen.insert(in.index()).second) {
                continue;
            }
            const MemoryTerm term = makeTerm(graph, id, port, roles, simdByNode);
            m_dense += term.numel;
            const size_t index = m_terms.size();
            if (term.outSection >= 0) {
                m_termsBySection[static_cast<size_t>(term.outSection)].push_back(index);
            }
            if (term.inSection >= 0 && term.inSection != term.outSection) {
                m_termsBySection[static_cast<size_t>(term.inSection)].push_back(index);
            }
            for (const int s : membersOf[id.index()]) {
                m_memberTerms[static_cast<size_t>(s)].push_back(index);
            }
            m_terms.push_back(term);
        }
    }
    std::vector<int64_t> all(sections);
    for (size_t s = 0; s < sections; ++s) {
        all[s] = detection.sections[s].channels;
    }
    reset(all);
}

int64_t MemoryCalculator::termParameters(const MemoryTerm& term,
                                         const std::vector<int64_t>& kept) const {
    int64_t base = term.numel;
    if (term.outSize > 0) {
        base /= term.outSize;
    }
    if (term.inSize > 0) {
        base /= term.inSize;
    }
    int64_t out = 1;
    if (term.outSize > 0) {
        out = term.outSection >= 0 ? kept[static_cast<size_t>(term.outSection)] : term.outSize;
        if (m_padding) {
            out = padded(out, term.simd);
        }
    }
    const int64_t in =
        term.inSize > 0
            ? (term.inSection >= 0 ? kept[static_cast<size_t>(term.inSection)] : term.inSize)
            : 1;
    return base * out * in;
}

int64_t MemoryCalculator::parameters(const std::vector<int64_t>& kept) const {
    int64_t total = 0;
    for (const MemoryTerm& term : m_terms) {
        total += termParameters(term, kept);
    }
    return total;
}

int64_t MemoryCalculator::sectionParameters(int s, const std::vector<int64_t>& kept) const {
    int64_t total = 0;
    for (const size_t index : m_memberTerms[static_cast<size_t>(s)]) {
        total += termParameters(m_terms[index], kept);
    }
    return total;
}

void MemoryCalculator::reset(const std::vector<int64_t>& kept) {
    m_kept = kept;
    m_current = parameters(m_kept);
}

void MemoryCalculator::setKept(int section, int64_t kept) {
    const std::vector<size_t>& affected = m_termsBySection[static_cast<size_t>(section)];
    int64_t before = 0;
    for (const size_t index : affected) {
        before += termParameters(m_terms[index], m_kept);
    }
    m_kept[static_cast<size_t>(section)] = kept;
    int64_t after = 0;
    for (const size_t index : affected) {
        after += termParameters(m_terms[index], m_kept);
    }
    m_current += after - before;
}

} // namespace qs::pruning
