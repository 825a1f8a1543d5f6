#include "core/pruning/prune_graph.h"

#include "core/pruning/axis_split.h"

#include <numeric>

namespace qs::pruning {

graph::TensorPtr sliceAlong(const graph::TensorData& data, int64_t axis,
                            const std::vector<int64_t>& keep) {
    std::vector<int64_t> dims = data.dims();
    const auto [outer, size, inner] = splitAt(dims, axis);
    const std::span<const float> in = data.as<float>();
    std::vector<float> out;
    out.reserve(static_cast<size_t>(outer * inner) * keep.size());
    for (int64_t o = 0; o < outer; ++o) {
        for (const int64_t c : keep) {
            const auto begin = static_cast<size_t>((o * size + c) * inner);
            out.insert(out.end(), in.begin() + static_cast<std::ptrdiff_t>(begin),
                       in.begin() +
                           static_cast<std::ptrdiff_t>(begin + static_cast<size_t>(inner)));
        }
    }
    dims[static_cast<size_t>(axis)] = static_cast<int64_t>(keep.size());
    return graph::TensorData::fromValues<float>(data.dtype(), std::move(dims),
                                                std::span<const float>(out));
}

namespace {

/// Slices section `section`'s constants to `keep` and sets the kept count on its flow values.
void pruneSection(graph::Graph& pruned, const PruningSection& section,
                  const std::vector<int64_t>& keep) {
    for (const ChannelParameter& p : section.parameters) {
        graph::Value& value = pruned.value(p.value);
        value.initializer = sliceAlong(*value.initializer, p.axis, keep);
        value.shape = graph::TensorShape::ofDims(value.initializer->dims());
    }
    const auto kept = static_cast<int64_t>(keep.size());
    for (const graph::ValueId flow : section.flowValues) {
        graph::TensorShape& shape = pruned.value(flow).shape;
        const auto rank = static_cast<int64_t>(shape.rank());
        const int64_t axis = section.flowAxis < 0 ? section.flowAxis + rank : section.flowAxis;
        if (shape.rankKnown && axis >= 0 && axis < rank) {
            shape.dims[static_cast<size_t>(axis)] = graph::Dim::known(kept);
        }
    }
}

} // namespace

Result<graph::Graph> buildPrunedGraph(const graph::Graph& graph, const SectionDetection& detection,
                                      const std::vector<std::vector<uint8_t>>& masks) {
    if (masks.size() != detection.sections.size()) {
        return Error(Errc::Internal, "one mask per pruning section expected");
    }
    graph::Graph pruned = graph;
    for (size_t s = 0; s < masks.size(); ++s) {
        const PruningSection& section = detection.sections[s];
        const std::vector<uint8_t>& mask = masks[s];
        const std::string& entry = graph.node(section.entry).name;
        if (static_cast<int64_t>(mask.size()) != section.channels) {
            return Error(Errc::Internal, "mask of '" + entry + "' has " +
                                             std::to_string(mask.size()) + " channels");
        }
        std::vector<int64_t> keep;
        for (size_t c = 0; c < mask.size(); ++c) {
            if (mask[c] != 0) {
                keep.push_back(static_cast<int64_t>(c));
            }
        }
        if (keep.empty()) {
            return Error(Errc::InvalidArgument, "mask of '" + entry + "' keeps no channel");
        }
        if (keep.size() < mask.size()) {
            pruneSection(pruned, section, keep);
        }
    }
    QS_TRY(graph::verify(pruned).context("pruned graph"));
    return pruned;
}

} // namespace qs::pruning
