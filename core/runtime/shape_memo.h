// Shape arithmetic computed once per input shape. Exporters of dynamic-shape models (PyTorch's
// transformers among them) compute Reshape targets and slice bounds at run time: Shape,
// Gather, Unsqueeze, Concat, Cast, Mul... of the shapes of activations, half of tiny_bert's nodes
// and a tenth of its forward at batch 1. Their outputs depend on nothing but initializers and the
// shapes (not the data) of the values Shape nodes read. The executor keeps them from one run to
// the next and takes them again while every Shape node they depend on reads the same shape as
// last time: a value whose shape depends on data (Range of a computed limit) is probed like any
// other, so a new shape recomputes what depends on it. A graph output that shares storage with a
// kept tensor (an Identity or Reshape of one) is returned as a copy.
#pragma once

#include "core/graph/graph.h"
#include "core/runtime/tensor.h"

#include <memory>
#include <mutex>
#include <span>
#include <vector>

namespace qs::runtime {

/// Which steps of an executor's order are shape arithmetic, and which Shape steps (probes) each
/// depends on.
class ShapeMemoPlan {
public:
    ShapeMemoPlan() = default;

    /// Over the steps `order` of `graph`; steps marked in `excluded` (the executor's fused nodes
    /// and the steps they absorb) are never memoized, nor is a step producing a graph output.
    /// A step qualifies when it is a Shape node, or a deterministic default-domain op
    /// without subgraphs whose every input is an initializer or the output of a qualifying step.
    static ShapeMemoPlan plan(const graph::Graph& graph, std::span<const graph::NodeId> order,
                              const std::vector<bool>& excluded);

    bool memoizable(size_t step) const { return step < m_probesOf.size() && m_memoizable[step]; }

    /// The step's index among the probes (Shape steps), or -1.
    int probe(size_t step) const { return m_probe[step]; }

    /// The probes a memoizable step's outputs depend on (sorted).
    std::span<const int> probesOf(size_t step) const { return m_probesOf[step]; }

    size_t probes() const { return m_probeCount; }

    size_t steps() const { return m_probesOf.size(); }

    /// How many steps are memoizable.
    size_t count() const;

private:
    std::vector<bool> m_memoizable;
    std::vector<int> m_probe;
    std::vector<std::vector<int>> m_probesOf;
    size_t m_probeCount = 0;
};

/// What one run kept: the shape each probe read and the outputs of each memoizable step (empty
/// for a step whose outputs are too large to keep).
struct ShapeMemoState {
    std::vector<Shape> probed;
    std::vector<bool> probedKnown;
    std::vector<std::vector<Tensor>> outputs; ///< per step
};

/// The state shared by an executor and its copies: each run reads the last published one and
/// publishes its own when it computed anything anew.
class ShapeMemoCell {
public:
    std::shared_ptr<const ShapeMemoState> load() const;
    void store(std::shared_ptr<const ShapeMemoState> state);

private:
    mutable std::mutex m_mutex;
    std::shared_ptr<const ShapeMemoState> m_state;
};

/// One run's use of the memo, step by step in order.
class ShapeMemoRun {
public:
    /// Outputs of more elements than this are recomputed on every run rather than kept.
    static constexpr int64_t kMostKeptElements = int64_t{1} << 16;

    ShapeMemoRun(const ShapeMemoPlan& plan, std::shared_ptr<const ShapeMemoState> last);

    /// Before memoizable step `step` runs (`probed`: the input a probe step reads, else nullptr):
    /// the outputs kept from the last run when every probe the step depends on has read the same
    /// shape in this run as then, else nullptr.
    const std::vector<Tensor>* reusable(size_t step, const Tensor* probed);

    /// After memoizable step `step` computed `outputs` (reusable() gave nothing).
    void record(size_t step, const std::vector<Tensor>& outputs);

    /// Whether `tensor` shares storage with an output the memo keeps (last run's or this one's):
    /// a caller may write into what run() returns.
    bool keeps(const Tensor& tensor) const;

    /// The state to publish after a successful run, or nullptr when it reused everything.
    std::shared_ptr<const ShapeMemoState> changed() { return m_next; }

private:
    /// The next state, started from the last one the first time this run departs from it.
    ShapeMemoState& next();

    const ShapeMemoPlan& m_plan;
    std::shared_ptr<const ShapeMemoState> m_last;
    std::shared_ptr<ShapeMemoState> m_next;
    std::vector<bool> m_same; ///< per probe: read the same shape as in the last run
};

} // namespace qs::runtime
