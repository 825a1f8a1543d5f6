// MemoryCalculator (reference/mct-hessian-pruning.md §2.6): the weight memory of a graph under
// per-section kept-channel counts, in FP32 bytes (4 per parameter), as MCT counts it — every float
// initializer once; section members sliced by their masks (entry out, intermediates per channel,
// exit in), so a node that is the exit of one section and the entry of the next counts once with
// (in = previous mask, out = own mask), which is MCT's shared-node correction; with SIMD padding
// every parameter indexed by output channels counts ceil(kept / SIMD) * SIMD channels.
//
// Only the counts matter (which channels are kept does not), so the graph is reduced once to
// terms, one per initializer; the greedy updates one section at a time and the calculator keeps
// the total incrementally from that section's terms (MCT recounts the whole graph per group).
#pragma once

#include "core/pruning/pruning_section.h"

#include <cstdint>
#include <vector>

namespace qs::pruning {

inline constexpr int64_t kFp32BytesPerParameter = 4;

/// One float initializer: `numel` elements, optionally indexed by output channels (`outSize`
/// of them, kept by `outSection`'s mask or all when -1) and by a section's input channels.
struct MemoryTerm {
    graph::NodeId node;
    graph::ValueId value;
    int64_t numel = 0;
    int64_t outSize = 0; ///< 0: no output-channel axis
    int outSection = -1;
    int64_t inSize = 0; ///< 0: not sliced on input channels
    int inSection = -1;
    int64_t simd = 1; ///< the node's SIMD size (padding of the output-channel axis)
};

class MemoryCalculator {
public:
    /// `simdByNode`: the SIMD size per node slot (1 where none); `padding`: MCT's
    /// is_simd_padding.
    MemoryCalculator(const graph::Graph& graph, const SectionDetection& detection,
                     const std::vector<int64_t>& simdByNode, bool padding);

    /// Σ numel of every float initializer, unpadded: the dense reference of a "50 %" target.
    int64_t denseParameters() const { return m_dense; }

    /// Parameters (padded if asked) with `kept[s]` channels kept in section s: a full recount.
    int64_t parameters(const std::vector<int64_t>& kept) const;

    /// The parameters of the terms of section `s`'s members (entry, intermediates, exit).
    int64_t sectionParameters(int s, const std::vector<int64_t>& kept) const;

    /// Incremental use: start from `kept`, then change one section at a time.
    void reset(const std::vector<int64_t>& kept);
    void setKept(int section, int64_t kept);

    int64_t current() const { return m_current; }

    const std::vector<int64_t>& kept() const { return m_kept; }

    const std::vector<MemoryTerm>& terms() const { return m_terms; }

    bool padding() const { return m_padding; }

private:
    int64_t termParameters(const MemoryTerm& term, const std::vector<int64_t>& kept) const;

    std::vector<MemoryTerm> m_terms;
    std::vector<std::vector<size_t>> m_termsBySection; ///< terms whose count depends on s
    std::vector<std::vector<size_t>> m_memberTerms;    ///< terms of s's member nodes
    int64_t m_dense = 0;
    bool m_padding = false;
    std::vector<int64_t> m_kept;
    int64_t m_current = 0;
};

} // namespace qs::pruning
