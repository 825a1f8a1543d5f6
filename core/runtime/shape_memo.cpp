#include "core/runtime/shape_memo.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <optional>
#include <string_view>

namespace qs::runtime {

using graph::NodeId;
using graph::ValueId;

namespace {

/// Ops whose outputs are not a function of their inputs alone (random draws, Dropout in
/// training mode) or that run subgraphs.
bool mayNotRepeat(const graph::Node& node) {
    static constexpr std::array<std::string_view, 10> kOps{
        "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
        "Multinomial",  "Bernoulli",     "Dropout",          "If",
        "Loop",         "Scan"};
    return !node.isDefaultDomain() || !node.implicitInputs.empty() ||
           std::find(kOps.begin(), kOps.end(), node.opType) != kOps.end();
}

bool isProbe(const graph::Node& node) {
    return node.isDefaultDomain() && node.opType == "Shape" && node.inputs.size() == 1 &&
           node.inputs[0].valid();
}

/// The probes behind every input of `node` (sorted), or nullopt when one input is a runtime
/// value that no memoizable step computes.
std::optional<std::vector<int>> inputProbes(const graph::Graph& graph, const graph::Node& node,
                                            const std::vector<bool>& known,
                                            const std::vector<std::vector<int>>& probesOfValue) {
    std::vector<int> probes;
    for (const ValueId in : node.inputs) {
        if (!in.valid() || graph.value(in).isInitializer()) {
            continue;
        }
        if (!known[in.index()]) {
            return std::nullopt;
        }
        std::vector<int> merged;
        std::set_union(probes.begin(), probes.end(), probesOfValue[in.index()].begin(),
                       probesOfValue[in.index()].end(), std::back_inserter(merged));
        probes = std::move(merged);
    }
    return probes;
}

bool producesGraphOutput(const graph::Graph& graph, const graph::Node& node) {
    return std::any_of(node.outputs.begin(), node.outputs.end(),
                       [&](ValueId out) { return out.valid() && graph.isOutput(out); });
}

} // namespace

ShapeMemoPlan ShapeMemoPlan::plan(const graph::Graph& graph, std::span<const NodeId> order,
                                  const std::vector<bool>& excluded) {
    ShapeMemoPlan p;
    p.m_memoizable.assign(order.size(), false);
    p.m_probe.assign(order.size(), -1);
    p.m_probesOf.resize(order.size());
    // Per value: whether a memoizable step computes it, and the probes it depends on.
    std::vector<bool> known(graph.numValues(), false);
    std::vector<std::vector<int>> probesOfValue(graph.numValues());
    for (size_t step = 0; step < order.size(); ++step) {
        const graph::Node& node = graph.node(order[step]);
        if (excluded[step] || mayNotRepeat(node) || producesGraphOutput(graph, node)) {
            continue;
        }
        std::optional<std::vector<int>> probes;
        if (isProbe(node)) {
            p.m_probe[step] = static_cast<int>(p.m_probeCount);
            probes = std::vector<int>{static_cast<int>(p.m_probeCount++)};
        } else {
            probes = inputProbes(graph, node, known, probesOfValue);
        }
        if (!probes) {
            continue;
        }
        p.m_memoizable[step] = true;
        for (const ValueId out : node.outputs) {
            if (out.valid()) {
                known[out.index()] = true;
                probesOfValue[out.index()] = *probes;
            }
        }
        p.m_probesOf[step] = std::move(*probes);
    }
    return p;
}

size_t ShapeMemoPlan::count() const {
    return static_cast<size_t>(std::count(m_memoizable.begin(), m_memoizable.end(), true));
}

std::shared_ptr<const ShapeMemoState> ShapeMemoCell::load() const {
    const std::lock_guard lock(m_mutex);
    return m_state;
}

void ShapeMemoCell::store(std::shared_ptr<const ShapeMemoState> state) {
    const std::lock_guard lock(m_mutex);
    m_state = std::move(state);
}

ShapeMemoRun::ShapeMemoRun(const ShapeMemoPlan& plan, std::shared_ptr<const ShapeMemoState> last)
    : m_plan(plan)
    , m_last(std::move(last))
    , m_same(plan.probes(), false) {}

ShapeMemoState& ShapeMemoRun::next() {
    if (!m_next) {
        m_next = m_last ? std::make_shared<ShapeMemoState>(*m_last)
                        : std::make_shared<ShapeMemoState>(
                              ShapeMemoState{std::vector<Shape>(m_plan.probes()),
                                             std::vector<bool>(m_plan.probes(), false),
                                             std::vector<std::vector<Tensor>>(m_plan.steps())});
    }
    return *m_next;
}

const std::vector<Tensor>* ShapeMemoRun::reusable(size_t step, const Tensor* probed) {
    const int probe = m_plan.probe(step);
    if (probe >= 0 && probed != nullptr) {
        const auto at = static_cast<size_t>(probe);
        const bool same =
            m_last && m_last->probedKnown[at] && m_last->probed[at] == probed->shape();
        m_same[at] = same;
        if (!same) {
            ShapeMemoState& state = next();
            state.probed[at] = probed->shape();
            state.probedKnown[at] = true;
        }
    }
    if (!m_last || m_last->outputs[step].empty()) {
        return nullptr;
    }
    for (const int p : m_plan.probesOf(step)) {
        if (!m_same[static_cast<size_t>(p)]) {
            return nullptr;
        }
    }
    return &m_last->outputs[step];
}

void ShapeMemoRun::record(size_t step, const std::vector<Tensor>& outputs) {
    const bool small = std::all_of(outputs.begin(), outputs.end(), [](const Tensor& t) {
        return !t.defined() || t.numElements() <= kMostKeptElements;
    });
    if (small) {
        next().outputs[step] = outputs;
    } else if (m_next || (m_last && !m_last->outputs[step].empty())) {
        next().outputs[step].clear();
    }
}

bool ShapeMemoRun::keeps(const Tensor& tensor) const {
    const auto holds = [&](const std::shared_ptr<const ShapeMemoState>& state) {
        return state && std::any_of(state->outputs.begin(), state->outputs.end(),
                                    [&](const std::vector<Tensor>& outputs) {
                                        return std::any_of(
                                            outputs.begin(), outputs.end(), [&](const Tensor& t) {
                                                return t.defined() &&
                                                       t.storageId() == tensor.storageId();
                                            });
                                    });
    };
    return tensor.defined() && tensor.storageId() != nullptr && (holds(m_last) || holds(m_next));
}

} // namespace qs::runtime
