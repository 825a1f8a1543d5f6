#include "core/runtime/concat_in_place.h"

#include "core/runtime/fused_tail.h"
#include "core/runtime/parallel.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

namespace qs::runtime {

using graph::ValueId;

namespace {

/// Channels of Conv node `conv`'s output: its weight's first dim, when the graph fixes it.
int64_t convFilters(const graph::Graph& g, const graph::Node& conv) {
    if (conv.inputs.size() < 2 || !conv.inputs[1].valid()) {
        return 0;
    }
    const graph::Value& weight = g.value(conv.inputs[1]);
    if (weight.isInitializer()) {
        return weight.initializer->dims().empty() ? 0 : weight.initializer->dims()[0];
    }
    const graph::TensorShape& shape = weight.shape;
    return shape.rankKnown && shape.rank() > 0 && shape.dims[0].isKnown() ? shape.dims[0].size : 0;
}

/// Dim 1 of `value` as declared, or 0.
int64_t declaredChannels(const graph::Value& value) {
    const graph::TensorShape& shape = value.shape;
    return shape.rankKnown && shape.rank() >= 2 && shape.dims[1].isKnown() ? shape.dims[1].size : 0;
}

/// `shape` with dim 1 set to `channels`.
Shape withChannels(Shape shape, int64_t channels) {
    shape[1] = channels;
    return shape;
}

/// Channels [from0, from0 + count) of `from` into channels [to0, to0 + count) of `to` (both
/// [N, channels, inner...] with the same N and inner dims), on the threads in pieces of about
/// 64 KiB (at batch 1 an input is one long run).
void copyChannels(const Tensor& from, int64_t from0, int64_t count, Tensor& to, int64_t to0) {
    constexpr int64_t kPiece = int64_t{16} << 10; // floats
    const int64_t images = std::max<int64_t>(1, from.dim(0));
    const int64_t inner = from.numElements() / images / std::max<int64_t>(1, from.dim(1));
    const int64_t run = count * inner;
    const int64_t fromStride = from.numElements() / images;
    const int64_t toStride = to.numElements() / images;
    const float* src = from.data<float>() + from0 * inner;
    float* dst = to.mutableData<float>() + to0 * inner;
    const int64_t piecesPerImage = std::max<int64_t>(1, (run + kPiece - 1) / kPiece);
    parallelFor(images * piecesPerImage, 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            const int64_t n = i / piecesPerImage;
            const int64_t at = (i % piecesPerImage) * kPiece;
            const int64_t piece = std::min(kPiece, run - at);
            if (piece > 0) {
                std::memcpy(dst + n * toStride + at, src + n * fromStride + at,
                            static_cast<size_t>(piece) * sizeof(float));
            }
        }
    });
}

/// True when `input` holds floats shaped as `full` but for dim 1.
bool fitsBesideChannels(const Tensor& input, const Shape& full) {
    // No data is wrong only when there are elements (a batch of 0 has none).
    if (input.dtype() != graph::DataType::Float ||
        (input.rawData() == nullptr && input.numElements() != 0) || input.rank() != full.size()) {
        return false;
    }
    for (size_t d = 0; d < full.size(); ++d) {
        if (d != 1 && input.shape()[d] != full[d]) {
            return false;
        }
    }
    return true;
}

/// True when `id` is a node's output that only one input of one node reads (soleConsumer: no
/// graph output either) and not known to be other than float.
bool readOnceByANode(const graph::Graph& g, ValueId id) {
    if (!id.valid()) {
        return false;
    }
    const graph::Value& value = g.value(id);
    return value.producer.valid() && soleConsumer(g, id) != nullptr &&
           (value.dtype == graph::DataType::Undefined || value.dtype == graph::DataType::Float);
}

/// The plan of Concat `node` (step `step`), or nullopt; `convOf` per value as in build().
std::optional<ConcatInPlacePlan::Concat> planConcat(const graph::Graph& g, const graph::Node& node,
                                                    size_t step,
                                                    const std::vector<const graph::Node*>& convOf) {
    if (node.opType != "Concat" || !node.isDefaultDomain() || node.intAttr("axis", 0) != 1 ||
        node.outputs.empty() || !node.outputs[0].valid()) {
        return std::nullopt;
    }
    ConcatInPlacePlan::Concat concat{.step = step};
    bool anyConv = false;
    for (const ValueId in : node.inputs) {
        if (!readOnceByANode(g, in)) {
            return std::nullopt;
        }
        const graph::Node* conv = convOf[in.index()];
        const int64_t channels =
            conv != nullptr ? convFilters(g, *conv) : declaredChannels(g.value(in));
        if (channels <= 0) {
            return std::nullopt;
        }
        anyConv = anyConv || conv != nullptr;
        concat.inputs.push_back(in);
        concat.channel0.push_back(concat.channels);
        concat.channels += channels;
    }
    return anyConv ? std::optional(std::move(concat)) : std::nullopt;
}

} // namespace

ConcatInPlacePlan ConcatInPlacePlan::build(const graph::Graph& g,
                                           std::span<const graph::NodeId> order,
                                           std::span<const graph::Node* const> runs,
                                           const std::vector<bool>& skip) {
    ConcatInPlacePlan plan;
    plan.m_concatOfStep.assign(order.size(), -1);
    plan.m_slotOfValue.assign(g.numValues(), {-1, -1});
    // Per value: the Conv node run() runs to compute it as its output 0, or nullptr.
    std::vector<const graph::Node*> convOf(g.numValues(), nullptr);
    for (const graph::Node* node : runs) {
        if (node != nullptr && node->opType == "Conv" && node->isDefaultDomain() &&
            !node->outputs.empty() && node->outputs[0].valid()) {
            convOf[node->outputs[0].index()] = node;
        }
    }
    for (size_t step = 0; step < order.size(); ++step) {
        std::optional<Concat> concat =
            skip[step] ? std::nullopt : planConcat(g, g.node(order[step]), step, convOf);
        if (!concat) {
            continue;
        }
        const auto index = static_cast<int>(plan.m_concats.size());
        plan.m_concatOfStep[step] = index;
        for (size_t i = 0; i < concat->inputs.size(); ++i) {
            plan.m_slotOfValue[concat->inputs[i].index()] = {index, static_cast<int>(i)};
        }
        plan.m_concats.push_back(std::move(*concat));
    }
    return plan;
}

int ConcatInPlacePlan::concatAt(size_t step) const {
    return step < m_concatOfStep.size() ? m_concatOfStep[step] : -1;
}

std::optional<std::pair<size_t, size_t>> ConcatInPlacePlan::slotOf(ValueId id) const {
    if (!id.valid() || id.index() >= m_slotOfValue.size() || m_slotOfValue[id.index()].first < 0) {
        return std::nullopt;
    }
    const auto [concat, input] = m_slotOfValue[id.index()];
    return std::pair{static_cast<size_t>(concat), static_cast<size_t>(input)};
}

ConcatInPlaceRun::ConcatInPlaceRun(const ConcatInPlacePlan& plan)
    : m_plan(plan)
    , m_outputs(plan.concats().size()) {}

std::optional<ChannelSlice> ConcatInPlaceRun::place(ValueId id, const Shape& shape) {
    const auto slot = m_plan.slotOf(id);
    if (!slot || shape.size() < 2) {
        return std::nullopt;
    }
    const auto& [index, input] = *slot;
    const ConcatInPlacePlan::Concat& concat = m_plan.concats()[index];
    const int64_t channel0 = concat.channel0[input];
    const int64_t channels = concat.channelsOf(input);
    Output& out = m_outputs[index];
    if (shape[1] != channels) {
        return std::nullopt;
    }
    if (!out.buffer.defined()) {
        out.buffer = Tensor::allocate(graph::DataType::Float, withChannels(shape, concat.channels));
        out.placed.assign(concat.inputs.size(), false);
        m_allocated = out.buffer;
    } else if (out.buffer.shape() != withChannels(shape, concat.channels) || out.placed[input]) {
        return std::nullopt;
    }
    out.placed[input] = true;
    ++m_placed;
    return ChannelSlice{.buffer = out.buffer, .channel0 = channel0};
}

Tensor ConcatInPlaceRun::takeAllocated() {
    return std::exchange(m_allocated, Tensor());
}

Result<std::optional<Tensor>> ConcatInPlaceRun::finish(size_t step, const graph::Node& concat,
                                                       const std::vector<Tensor>& values) {
    const int index = m_plan.concatAt(step);
    if (index < 0 || !m_outputs[static_cast<size_t>(index)].buffer.defined()) {
        return std::optional<Tensor>();
    }
    Output& out = m_outputs[static_cast<size_t>(index)];
    const ConcatInPlacePlan::Concat& plan = m_plan.concats()[static_cast<size_t>(index)];
    const Shape full = out.buffer.shape(); // out.buffer is handed over below
    // Channels per input: the plan's for the placed ones, the tensor's for the others.
    std::vector<int64_t> channels(plan.inputs.size());
    bool asPlanned = true;
    for (size_t i = 0; i < plan.inputs.size(); ++i) {
        const int64_t planned = plan.channelsOf(i);
        channels[i] = planned;
        if (out.placed[i]) {
            continue;
        }
        const Tensor& input = values[plan.inputs[i].index()];
        if (!fitsBesideChannels(input, full)) {
            return Error(Errc::InvalidModel, "input " + std::to_string(i) + " " +
                                                 shapeToString(input.shape()) + " does not fit " +
                                                 shapeToString(withChannels(full, planned)))
                .context("Concat node '" + concat.name + "'");
        }
        channels[i] = input.dim(1);
        asPlanned = asPlanned && channels[i] == planned;
    }
    Tensor buffer = std::exchange(out.buffer, Tensor());
    m_handedOver = buffer;
    // A declared channel count the model's tensors contradict: joined anew, placed slices too.
    Tensor joined = buffer;
    if (!asPlanned) {
        int64_t total = 0;
        for (const int64_t c : channels) {
            total += c;
        }
        joined = Tensor::allocate(graph::DataType::Float, withChannels(full, total));
    }
    int64_t channel = 0;
    for (size_t i = 0; i < plan.inputs.size(); ++i) {
        if (!out.placed[i]) {
            copyChannels(values[plan.inputs[i].index()], 0, channels[i], joined, channel);
        } else if (!asPlanned) {
            copyChannels(buffer, plan.channel0[i], channels[i], joined, channel);
        }
        channel += channels[i];
    }
    return std::optional<Tensor>(std::move(joined));
}

Tensor ConcatInPlaceRun::takeHandedOver() {
    return std::exchange(m_handedOver, Tensor());
}

} // namespace qs::runtime
