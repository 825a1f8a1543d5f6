#include "core/hessian/lfh_estimator.h"

#include "core/graph/metatype.h"
#include "core/runtime/parallel.h"
#include "core/runtime/sum_of_squares.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <random>
#include <set>

namespace qs::hessian {

using graph::ValueId;
using runtime::Shape;
using runtime::Tensor;

namespace {

/// Ops whose outputs carry no gradient: a Y behind one of them is refused.
bool isNonDifferentiableHead(const graph::Node& node) {
    return node.isDefaultDomain() && (node.opType == "ArgMax" || node.opType == "ArgMin" ||
                                      node.opType == "TopK" || node.opType == "NonMaxSuppression");
}

/// The ArgMax/TopK/NonMaxSuppression node `value` is computed from, if any.
const graph::Node* nonDifferentiableAncestor(const graph::Graph& graph, ValueId value) {
    std::vector<ValueId> stack{value};
    std::set<uint32_t> seen;
    while (!stack.empty()) {
        const ValueId id = stack.back();
        stack.pop_back();
        if (!seen.insert(id.index()).second) {
            continue;
        }
        const graph::Value& v = graph.value(id);
        if (!v.producer.valid()) {
            continue;
        }
        const graph::Node& node = graph.node(v.producer);
        if (isNonDifferentiableHead(node)) {
            return &node;
        }
        for (const ValueId in : node.inputs) {
            if (in.valid() && !graph.value(in).isInitializer()) {
                stack.push_back(in);
            }
        }
    }
    return nullptr;
}

bool isKernelOp(const graph::Node& node) {
    return node.isDefaultDomain() && (node.opType == "Conv" || node.opType == "ConvTranspose" ||
                                      node.opType == "Gemm" || node.opType == "MatMul");
}

/// The weight port of a kernel op whose input is a float initializer, or -1.
int weightPort(const graph::Graph& graph, graph::NodeId id) {
    const graph::Node& node = graph.node(id);
    if (!isKernelOp(node)) {
        return -1;
    }
    const std::vector<int> ports = graph::constantWeightPorts(graph, id);
    // Per-sample weight gradients exist for the second operand (Conv's W, Gemm's B, MatMul's B).
    if (ports.size() != 1 || ports[0] != 1) {
        return -1;
    }
    const graph::Value& w = graph.value(node.inputs[1]);
    return w.initializer->dtype() == graph::DataType::Float ? 1 : -1;
}

bool isOutput(const HessianOutputs& outputs, ValueId id) {
    return std::find(outputs.values.begin(), outputs.values.end(), id) != outputs.values.end();
}

/// The reason the graph proves axis 0 of `id` is not the samples axis, or "": the first runtime
/// input's axis 0 is a symbol (a dynamic batch) while the value's axis 0 is a fixed number or
/// another symbol (a sequence-first layout, a flattened batch). Unknown dims prove nothing; the
/// estimator checks the traced sizes anyway.
std::string notBatchFirst(const graph::Graph& graph, ValueId id) {
    const std::vector<ValueId> inputs = graph.runtimeInputs();
    if (inputs.empty()) {
        return {};
    }
    const graph::TensorShape& in = graph.value(inputs[0]).shape;
    const graph::TensorShape& shape = graph.value(id).shape;
    if (!in.rankKnown || in.rank() == 0 || in.dims[0].symbol.empty() || !shape.rankKnown ||
        shape.rank() == 0) {
        return {};
    }
    const graph::Dim& d = shape.dims[0];
    if (d.isKnown() || (!d.symbol.empty() && d.symbol != in.dims[0].symbol)) {
        return "axis 0 of '" + graph.value(id).name + "' is " +
               (d.isKnown() ? std::to_string(d.size) : "'" + d.symbol + "'") + ", not the batch '" +
               in.dims[0].symbol + "' of the model's input";
    }
    return {};
}

/// The tensor whose axis 0 must hold the samples for `node` to be a target of `mode`.
ValueId sampleCarrier(const graph::Node& node, HessianMode mode) {
    if (mode == HessianMode::Activation) {
        return node.outputs.empty() ? ValueId() : node.outputs[0];
    }
    // Weights mode: per-sample weight gradients split the data input by its axis 0 (Gemm's A'
    // rows; transA puts them on axis 1, which the graph cannot prove here).
    return node.inputs.empty() ? ValueId() : node.inputs[0];
}

/// splitmix64: decorrelates the per-sample seeds (seed, i) and (seed, i + 1).
uint64_t mixSeed(uint64_t seed, int64_t sample) {
    uint64_t z = seed + 0x9E3779B97F4A7C15ULL * (static_cast<uint64_t>(sample) + 1);
    z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31U);
}

/// Fills `count` floats with +-1 from `rng`, 64 signs per draw.
void fillRademacher(std::mt19937_64& rng, float* out, int64_t count) {
    for (int64_t i = 0; i < count; i += 64) {
        uint64_t bits = rng();
        const int64_t n = std::min<int64_t>(64, count - i);
        for (int64_t j = 0; j < n; ++j) {
            out[i + j] = (bits & 1U) != 0 ? 1.0F : -1.0F;
            bits >>= 1U;
        }
    }
}

/// Adds g^2 of one sample reduced by `granularity` into `scores` (size scoreSize).
void reduceSquares(HessianScoresGranularity granularity, const float* g, const Shape& shape,
                   int64_t channelAxis, std::vector<double>& scores) {
    const int64_t count = runtime::shapeNumElements(shape);
    std::fill(scores.begin(), scores.end(), 0.0);
    switch (granularity) {
    case HessianScoresGranularity::PerTensor: {
        scores[0] = runtime::sumOfSquares(g, count);
        return;
    }
    case HessianScoresGranularity::PerOutputChannel: {
        int64_t inner = 1;
        for (size_t d = static_cast<size_t>(channelAxis) + 1; d < shape.size(); ++d) {
            inner *= shape[d];
        }
        // Runs of `inner` elements per channel: no division per element (weights mode reduces
        // millions of them per sweep).
        const auto channels = static_cast<int64_t>(scores.size());
        const int64_t run = channels * inner;
        for (int64_t outer = 0; outer + run <= count; outer += run) {
            for (int64_t c = 0; c < channels; ++c) {
                scores[static_cast<size_t>(c)] +=
                    runtime::sumOfSquares(g + outer + c * inner, inner);
            }
        }
        return;
    }
    case HessianScoresGranularity::PerElement:
        for (int64_t i = 0; i < count; ++i) {
            scores[static_cast<size_t>(i)] = static_cast<double>(g[i]) * g[i];
        }
        return;
    }
}

/// Largest relative change of any target's mean score (MCT's convergence measure).
double maxRelativeChange(const std::vector<std::vector<std::vector<double>>>& means,
                         std::vector<double>& previous) {
    double worst = 0.0;
    for (size_t t = 0; t < means.size(); ++t) {
        double sum = 0.0;
        size_t count = 0;
        for (const std::vector<double>& sample : means[t]) {
            for (const double v : sample) {
                sum += v;
                ++count;
            }
        }
        const double mean = count > 0 ? sum / static_cast<double>(count) : 0.0;
        worst = std::max(worst, std::abs(mean - previous[t]) / (std::abs(mean) + 1e-6));
        previous[t] = mean;
    }
    return worst;
}

} // namespace

Result<HessianOutputs> resolveOutputs(const graph::Graph& graph,
                                      const std::vector<std::string>& names) {
    std::vector<ValueId> chosen;
    if (names.empty()) {
        chosen = graph.outputs();
    }
    for (const std::string& name : names) {
        const std::optional<ValueId> id = graph.findValue(name);
        if (!id) {
            return Error(Errc::InvalidArgument, "no value named '" + name + "' in the model")
                .context("--output");
        }
        chosen.push_back(*id);
    }
    if (chosen.empty()) {
        return Error(Errc::InvalidModel, "the model has no outputs to differentiate");
    }
    HessianOutputs out;
    for (ValueId id : chosen) {
        const graph::Value& value = graph.value(id);
        if (const graph::Node* head = nonDifferentiableAncestor(graph, id)) {
            return Error(
                Errc::Unsupported,
                "output '" + value.name + "' comes from " + head->opType + " node '" + head->name +
                    "', which has no gradient; choose differentiable values with --output");
        }
        if (value.producer.valid()) {
            const graph::Node& producer = graph.node(value.producer);
            if (producer.isDefaultDomain() && producer.opType == "Softmax" &&
                !producer.inputs.empty()) {
                const ValueId logits = producer.inputs[0];
                out.notes.push_back("output '" + value.name + "' is produced by Softmax node '" +
                                    producer.name + "': differentiated at its input '" +
                                    graph.value(logits).name + "'");
                id = logits;
            }
        }
        const graph::Value& used = graph.value(id);
        if (used.dtype != graph::DataType::Float && used.dtype != graph::DataType::Undefined) {
            return Error(Errc::Unsupported, "output '" + used.name + "' is " +
                                                std::string(graph::dataTypeName(used.dtype)) +
                                                ", not float: it has no gradient");
        }
        if (!isOutput(out, id)) {
            out.values.push_back(id);
            out.names.push_back(used.name);
        }
    }
    return out;
}

Result<EstimatorTarget> resolveTarget(const graph::Graph& graph, const std::string& name,
                                      HessianMode mode, const HessianOutputs& outputs) {
    const std::optional<graph::NodeId> id = graph.findNode(name);
    if (!id) {
        return Error(Errc::Usage, "no node named '" + name + "' in the model").context("target");
    }
    const graph::Node& node = graph.node(*id);
    const ValueId carrier = sampleCarrier(node, mode);
    if (carrier.valid()) {
        const std::string reason = notBatchFirst(graph, carrier);
        if (!reason.empty()) {
            return Error(Errc::Unsupported, reason + ": its scores cannot be split per sample")
                .context("target node '" + name + "'");
        }
    }
    EstimatorTarget target;
    target.node = name;
    if (mode == HessianMode::Activation) {
        if (node.outputs.empty() || !node.outputs[0].valid()) {
            return Error(Errc::InvalidArgument, "target node '" + name + "' has no output");
        }
        target.tensor = node.outputs[0];
        target.tensorName = graph.value(target.tensor).name;
        if (isOutput(outputs, target.tensor)) {
            return Error(Errc::InvalidArgument,
                         "target node '" + name + "' produces '" + target.tensorName +
                             "', which is itself a differentiated output (Y): its Jacobian is "
                             "the identity; choose another target or other --output values");
        }
        // MatMul outputs keep their channels last ([B, S, C]); everything else is NCHW.
        const bool matMul = node.isDefaultDomain() && node.opType == "MatMul";
        target.channelAxis = matMul ? kLastAxis : 0;
        return target;
    }
    const int port = weightPort(graph, *id);
    if (port < 0) {
        return Error(Errc::InvalidArgument,
                     "target node '" + name + "' (" + node.opType +
                         ") has no float weight initializer on its weight input; weights mode "
                         "scores Conv, ConvTranspose, Gemm and MatMul weights");
    }
    target.weights = true;
    target.tensor = node.inputs[static_cast<size_t>(port)];
    target.tensorName = graph.value(target.tensor).name;
    target.channelAxis = graph::weightOutputChannelAxis(graph, *id, port).value_or(0);
    return target;
}

std::vector<std::string> defaultTargetNodes(const graph::Graph& graph, HessianMode mode,
                                            const HessianOutputs& outputs,
                                            std::vector<std::string>& notes) {
    std::vector<std::string> names;
    const auto order = graph.topologicalOrder();
    const std::vector<graph::NodeId> ids = order.ok() ? *order : graph.nodeIds();
    for (const graph::NodeId id : ids) {
        const graph::Node& node = graph.node(id);
        if (!isKernelOp(node)) {
            continue;
        }
        const ValueId carrier = sampleCarrier(node, mode);
        const std::string reason = carrier.valid() ? notBatchFirst(graph, carrier) : "";
        if (!reason.empty()) {
            notes.push_back("node '" + node.name + "' is left out: " + reason);
            continue;
        }
        if (mode == HessianMode::Weights) {
            if (weightPort(graph, id) >= 0) {
                names.push_back(node.name);
            }
            continue;
        }
        if (!node.outputs.empty() && isOutput(outputs, node.outputs[0])) {
            notes.push_back("node '" + node.name + "' is left out: its output '" +
                            graph.value(node.outputs[0]).name + "' is a differentiated output");
            continue;
        }
        names.push_back(node.name);
    }
    return names;
}

int64_t scoreSize(HessianScoresGranularity granularity, const Shape& shape, int64_t channelAxis) {
    switch (granularity) {
    case HessianScoresGranularity::PerTensor:
        return 1;
    case HessianScoresGranularity::PerOutputChannel:
        return shape.empty() ? 1 : shape[static_cast<size_t>(channelAxis)];
    case HessianScoresGranularity::PerElement:
        return runtime::shapeNumElements(shape);
    }
    return 1;
}

namespace {

/// The [B, ...] shape of every Y value; each must hold the batch on axis 0.
Result<std::vector<Shape>> outputShapes(const runtime::ForwardTrace& trace,
                                        const HessianOutputs& outputs, int64_t batch) {
    std::vector<Shape> shapes;
    for (size_t o = 0; o < outputs.values.size(); ++o) {
        const Tensor& y = trace.values[outputs.values[o].index()];
        if (!y.defined() || y.rank() == 0 || y.dim(0) != batch) {
            return Error(Errc::Unsupported,
                         "output '" + outputs.names[o] + "' has shape " +
                             (y.defined() ? runtime::shapeToString(y.shape()) : "?") +
                             ", not the " + std::to_string(batch) + " samples on axis 0");
        }
        shapes.push_back(y.shape());
    }
    return shapes;
}

/// Sizes result.scores/shapes for `target` and returns its channel axis.
Result<int64_t> prepareTarget(const runtime::ForwardTrace& trace, const EstimatorTarget& target,
                              HessianScoresGranularity granularity, int64_t batch,
                              BatchScores& result) {
    const Tensor& traced = trace.values[target.tensor.index()];
    Shape shape = traced.shape();
    if (!target.weights) {
        if (traced.rank() == 0 || traced.dim(0) != batch) {
            return Error(Errc::Unsupported, "its output " + runtime::shapeToString(shape) +
                                                " does not hold the " + std::to_string(batch) +
                                                " samples on axis 0")
                .context("target node '" + target.node + "'");
        }
        shape.erase(shape.begin());
    }
    const auto rank = static_cast<int64_t>(shape.size());
    const int64_t axis =
        target.channelAxis == kLastAxis ? std::max<int64_t>(0, rank - 1) : target.channelAxis;
    if (axis < 0 || (rank > 0 && axis >= rank)) {
        return Error(Errc::Unsupported, "no channel axis " + std::to_string(axis) + " in " +
                                            runtime::shapeToString(shape))
            .context("target node '" + target.node + "'");
    }
    const int64_t size = scoreSize(granularity, shape, axis);
    result.scores.emplace_back(static_cast<size_t>(batch),
                               std::vector<double>(static_cast<size_t>(size), 0.0));
    result.shapes.push_back(shape);
    return axis;
}

/// prepareTarget for every target, in order: their channel axes; `keep` gets their tensors.
Result<std::vector<int64_t>> prepareTargets(const runtime::ForwardTrace& trace,
                                            std::span<const EstimatorTarget> targets,
                                            HessianScoresGranularity granularity, int64_t batch,
                                            BatchScores& result, std::vector<ValueId>& keep) {
    std::vector<int64_t> axes;
    for (const EstimatorTarget& target : targets) {
        QS_ASSIGN_OR_RETURN(const int64_t axis,
                            prepareTarget(trace, target, granularity, batch, result));
        axes.push_back(axis);
        keep.push_back(target.tensor);
    }
    return axes;
}

/// One generator per sample, seeded by (seed, sample index): a sample's draws do not depend on
/// its batch.
std::vector<std::mt19937_64> sampleGenerators(uint64_t seed, std::span<const int64_t> indices) {
    std::vector<std::mt19937_64> rngs;
    for (const int64_t index : indices) {
        rngs.emplace_back(mixSeed(seed, index));
    }
    return rngs;
}

/// Target indices by tensor index (tied weights: several nodes, one initializer).
std::vector<std::vector<size_t>> targetsByTensor(size_t values,
                                                 std::span<const EstimatorTarget> targets) {
    std::vector<std::vector<size_t>> of(values);
    for (size_t t = 0; t < targets.size(); ++t) {
        of[targets[t].tensor.index()].push_back(t);
    }
    return of;
}

/// True for weight targets when every one that the executor can hand over as row sums of
/// squares (Executor::weightGradComesAsRowSquares) needs no more of its per-sample gradient:
/// per-tensor scores, or per-channel ones whose channel axis is the weight's axis 0.
bool rowSquaresServe(const runtime::Executor& executor, std::span<const EstimatorTarget> targets,
                     std::span<const int64_t> axes, HessianScoresGranularity granularity) {
    if (targets.empty() || !targets[0].weights ||
        granularity == HessianScoresGranularity::PerElement) {
        return false;
    }
    for (size_t t = 0; t < targets.size(); ++t) {
        if (granularity == HessianScoresGranularity::PerOutputChannel && axes[t] != 0 &&
            executor.weightGradComesAsRowSquares(targets[t].tensor)) {
            return false;
        }
    }
    return true;
}

/// One Rademacher seed per Y value, sample b's rows drawn from rngs[b].
std::vector<std::pair<ValueId, Tensor>> drawSeeds(const HessianOutputs& outputs,
                                                  const std::vector<Shape>& shapes,
                                                  std::vector<std::mt19937_64>& rngs) {
    const auto batch = static_cast<int64_t>(rngs.size());
    std::vector<std::pair<ValueId, Tensor>> seeds;
    for (size_t o = 0; o < shapes.size(); ++o) {
        seeds.emplace_back(outputs.values[o], Tensor::allocate(graph::DataType::Float, shapes[o]));
    }
    for (int64_t b = 0; b < batch; ++b) {
        for (size_t o = 0; o < shapes.size(); ++o) {
            const int64_t row = runtime::shapeNumElements(shapes[o]) / batch;
            fillRademacher(rngs[static_cast<size_t>(b)],
                           seeds[o].second.mutableData<float>() + b * row, row);
        }
    }
    return seeds;
}

/// The scores of one sample from its row sums of squares (BackwardOptions::perSampleRowSquares:
/// `rows` of them, one per index along the weight's axis 0, which rowSquaresServe made the
/// channel axis of per-channel scores).
void reduceRowSquares(HessianScoresGranularity granularity, const double* rowSquares, int64_t rows,
                      std::vector<double>& scores) {
    if (granularity == HessianScoresGranularity::PerTensor) {
        scores[0] = std::accumulate(rowSquares, rowSquares + rows, 0.0);
        return;
    }
    std::copy(rowSquares, rowSquares + rows, scores.begin());
}

/// Folds iteration `it`'s g of target t into the running means of its samples: g is the
/// target's gradient [B, ...shape], or (Double) its per-sample row sums of squares [B, shape[0]].
Result<void> accumulate(const Tensor& g, const EstimatorTarget& target, size_t t, int64_t axis,
                        HessianScoresGranularity granularity, int it, int64_t batch,
                        BatchScores& result) {
    const Shape& shape = result.shapes[t];
    const bool rowSquares = g.defined() && g.dtype() == graph::DataType::Double;
    const int64_t per =
        rowSquares ? (shape.empty() ? 1 : shape[0]) : runtime::shapeNumElements(shape);
    if (g.defined() && g.numElements() != per * batch) {
        return Error(Errc::Internal, "gradient " + runtime::shapeToString(g.shape()) +
                                         " does not hold " + std::to_string(batch) +
                                         " samples of " + runtime::shapeToString(shape))
            .context("target node '" + target.node + "'");
    }
    const double weight = 1.0 / (it + 1);
    // Samples on the threads (each has its own means): weights mode squares millions of
    // per-sample gradient elements per sweep.
    runtime::parallelFor(batch, 1, [&](int64_t b0, int64_t b1) {
        std::vector<double> squares;
        for (int64_t b = b0; b < b1; ++b) {
            std::vector<double>& mean = result.scores[t][static_cast<size_t>(b)];
            squares.assign(mean.size(), 0.0);
            if (rowSquares) {
                reduceRowSquares(granularity, g.data<double>() + b * per, per, squares);
            } else if (g.defined()) { // no path from this target to Y: the score stays 0
                reduceSquares(granularity, g.data<float>() + b * per, shape, axis, squares);
            }
            for (size_t i = 0; i < mean.size(); ++i) {
                mean[i] += (squares[i] - mean[i]) * weight;
            }
        }
    });
    return success();
}

} // namespace

Result<BatchScores> estimateBatch(const runtime::Executor& executor, std::span<const Tensor> inputs,
                                  std::span<const int64_t> sampleIndices,
                                  std::span<const EstimatorTarget> targets,
                                  const HessianOutputs& outputs, const EstimatorSettings& settings,
                                  Progress& progress, const std::function<void(int)>& onSweep) {
    QS_ASSIGN_OR_RETURN(const runtime::ForwardTrace trace, executor.forwardForBackward(inputs));
    return estimateBatch(executor, trace, sampleIndices, targets, outputs, settings, progress,
                         onSweep);
}

Result<BatchScores> estimateBatch(const runtime::Executor& executor,
                                  const runtime::ForwardTrace& trace,
                                  std::span<const int64_t> sampleIndices,
                                  std::span<const EstimatorTarget> targets,
                                  const HessianOutputs& outputs, const EstimatorSettings& settings,
                                  Progress& progress, const std::function<void(int)>& onSweep) {
    const auto batch = static_cast<int64_t>(sampleIndices.size());
    if (targets.empty()) {
        return BatchScores{}; // an empty keep would ask the sweep for every gradient
    }
    QS_ASSIGN_OR_RETURN(const std::vector<Shape> yShapes, outputShapes(trace, outputs, batch));
    BatchScores result;
    std::vector<ValueId> keep;
    QS_ASSIGN_OR_RETURN(const std::vector<int64_t> axes,
                        prepareTargets(trace, targets, settings.granularity, batch, result, keep));
    std::vector<std::mt19937_64> rngs = sampleGenerators(settings.seed, sampleIndices);
    const bool weights = !targets.empty() && targets[0].weights;
    const std::vector<std::vector<size_t>> targetsOf =
        targetsByTensor(executor.graph().numValues(), targets);
    int it = 0;
    // Each target's g is squared as soon as the sweep completes it, while it is in cache.
    const runtime::BackwardOptions backward{
        .keep = keep,
        .perSampleBatch = weights ? batch : 0,
        .perSampleRowSquares = rowSquaresServe(executor, targets, axes, settings.granularity),
        .onGradient = [&](ValueId id, const Tensor& g) -> Result<void> {
            for (const size_t t : targetsOf[id.index()]) {
                QS_TRY(
                    accumulate(g, targets[t], t, axes[t], settings.granularity, it, batch, result));
            }
            return success();
        }};
    std::vector<double> previous(targets.size(), 0.0);
    for (; it < settings.iterations; ++it) {
        if (progress.isCancelled()) {
            return Error(Errc::Cancelled, "cancelled");
        }
        const std::vector<std::pair<ValueId, Tensor>> seeds = drawSeeds(outputs, yShapes, rngs);
        QS_TRY(executor.backward(trace, seeds, backward));
        result.iterationsRun = it + 1;
        onSweep(it + 1);
        const double change = maxRelativeChange(result.scores, previous);
        if (settings.earlyStop && it + 1 > kMinHessianIterations && change < settings.tolerance) {
            break;
        }
    }
    return result;
}

} // namespace qs::hessian
