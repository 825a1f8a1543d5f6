// Concat without copies: a Conv whose output only a channel Concat (axis 1) reads writes it
// straight into its channels of the Concat's output, and the Concat copies only the inputs no
// Conv placed (SqueezeNet's Fire modules, ShuffleNet's and Inception's branches). Each image of
// such an input sits in the output at the stride of a whole output image, which the Conv kernels
// write with (Conv2d::yImageStride). Only run() places outputs: a traced forward keeps every
// value whole, for the VJPs and for callers that read activations.
#pragma once

#include "core/graph/graph.h"
#include "core/runtime/op.h"
#include "core/runtime/tensor.h"
#include "core/support/result.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace qs::runtime {

/// The Concats run() fills in place, fixed when the executor is created.
class ConcatInPlacePlan {
public:
    /// One planned Concat.
    struct Concat {
        size_t step = 0;
        std::vector<graph::ValueId> inputs; ///< in the Concat's order
        std::vector<int64_t> channel0;      ///< per input: its first channel in the output
        int64_t channels = 0;               ///< of the output

        /// Channels of input `i`.
        int64_t channelsOf(size_t i) const {
            return (i + 1 < inputs.size() ? channel0[i + 1] : channels) - channel0[i];
        }
    };

    ConcatInPlacePlan() = default;

    /// Plans every float Concat along axis 1 of `g` (steps in `order`) whose inputs all have
    /// channel counts fixed by the graph (a Conv's by its weight's first dim, others by their
    /// declared shape), each a distinct value no graph output is and nothing else reads, at
    /// least one of them computed by a Conv: by `runs[step]`, the node run() runs for a step
    /// (a fused Conv chain's node for the chain's last value), or nullptr for steps run()
    /// computes otherwise. Steps in `skip` are left alone (run() may take their outputs from
    /// the last run).
    static ConcatInPlacePlan build(const graph::Graph& g, std::span<const graph::NodeId> order,
                                   std::span<const graph::Node* const> runs,
                                   const std::vector<bool>& skip);

    bool empty() const { return m_concats.empty(); }

    const std::vector<Concat>& concats() const { return m_concats; }

    /// The planned Concat at `step`, or -1.
    int concatAt(size_t step) const;

    /// (Concat, input) that value `id` is planned for, or nullopt.
    std::optional<std::pair<size_t, size_t>> slotOf(graph::ValueId id) const;

private:
    std::vector<Concat> m_concats;
    std::vector<int> m_concatOfStep;                ///< per step: index into m_concats, or -1
    std::vector<std::pair<int, int>> m_slotOfValue; ///< per value: (concat, input), or -1s
};

/// One run()'s Concat outputs: allocated on the first placement, handed over by finish().
class ConcatInPlaceRun {
public:
    explicit ConcatInPlaceRun(const ConcatInPlacePlan& plan);

    /// The slice value `id` (output 0 of the node being run, of shape `shape`) goes to, or
    /// nullopt when it is not planned, `shape` has other channels than planned or does not fit
    /// the output the first placement of its Concat allocated, or `id` was placed already.
    /// Allocates that output (see takeAllocated): it then lives from the first placed Conv on,
    /// longer than the Concat's output did (a branch's other steps run in between).
    std::optional<ChannelSlice> place(graph::ValueId id, const Shape& shape);

    /// For the live-bytes count, which holds this run's reference to a Concat's output from
    /// place() to finish(): an output place() allocated since the last call, or undefined.
    Tensor takeAllocated();

    /// An output finish() handed over since the last call (this run no longer refers to it), or
    /// undefined.
    Tensor takeHandedOver();

    /// For planned Concat step `step` (`concat`, its node): its output, with the inputs no Conv
    /// placed copied in from `values`; nullopt when nothing was placed this run (the Concat runs
    /// as usual). An input whose channels the graph declared wrongly gets a new output joined
    /// from the placed slices and the inputs; one whose other dims do not fit is an error naming
    /// the node, as Concat's own.
    Result<std::optional<Tensor>> finish(size_t step, const graph::Node& concat,
                                         const std::vector<Tensor>& values);

    /// Inputs placed so far this run.
    size_t placed() const { return m_placed; }

private:
    struct Output {
        Tensor buffer;
        std::vector<bool> placed; ///< per input
    };

    const ConcatInPlacePlan& m_plan;
    std::vector<Output> m_outputs; ///< per planned Concat
    Tensor m_allocated;
    Tensor m_handedOver;
    size_t m_placed = 0;
};

} // namespace qs::runtime
