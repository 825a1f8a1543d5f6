#include "core/runtime/executor.h"

#include "core/runtime/conv_backward.h"
#include "core/runtime/conv_kernels.h"
#include "core/runtime/fused_tail.h"
#include "core/runtime/gelu_fusion.h"
#include "core/runtime/layer_norm_fusion.h"
#include "core/runtime/matmul_bias_fusion.h"
#include "core/runtime/op_util.h"
#include "core/runtime/packed_gemm.h"
#include "core/runtime/parallel.h"
#include "core/runtime/processor_support.h"
#include "core/runtime/shallow_conv.h"
#include "core/runtime/type_dispatch.h"
#include "core/runtime/winograd.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>
#include <unordered_map>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace qs::runtime {

using graph::DataType;
using graph::NodeId;
using graph::ValueId;

namespace {

/// Counts the bytes of live buffers once per storage, so views (Reshape, Identity) are free.
/// A flat list: a forward holds a few dozen buffers at once, and a hash map's node per buffer
/// cost a tiny model's run more than its shape ops.
class LiveBytes {
public:
    void add(const Tensor& tensor) {
        if (!tensor.defined() || !tensor.writable()) {
            return;
        }
        const auto it = find(tensor.storageId());
        if (it != m_refs.end()) {
            ++it->count;
            return;
        }
        m_refs.push_back({tensor.storageId(), 1, tensor.byteSize()});
        m_current += m_refs.back().bytes;
        m_peak = std::max(m_peak, m_current);
    }

    void remove(const Tensor& tensor) {
        if (!tensor.defined() || !tensor.writable()) {
            return;
        }
        const auto it = find(tensor.storageId());
        if (it == m_refs.end()) {
            return;
        }
        if (--it->count == 0) {
            m_current -= it->bytes;
            *it = m_refs.back();
            m_refs.pop_back();
        }
    }

    size_t peak() const { return m_peak; }

private:
    struct Ref {
        const void* storage = nullptr;
        size_t count = 0;
        size_t bytes = 0;
    };

    std::vector<Ref>::iterator find(const void* storage) {
        return std::find_if(m_refs.begin(), m_refs.end(),
                            [storage](const Ref& ref) { return ref.storage == storage; });
    }

    std::vector<Ref> m_refs;
    size_t m_current = 0;
    size_t m_peak = 0;
};

Tensor toStorage(const Tensor& tensor, bool fp16) {
    if (fp16 && tensor.defined() && tensor.dtype() == DataType::Float) {
        return castTensor(tensor, DataType::Float16);
    }
    return tensor;
}

Tensor toCompute(const Tensor& tensor, bool fp16) {
    if (fp16 && tensor.defined() && tensor.dtype() == DataType::Float16) {
        return castTensor(tensor, DataType::Float);
    }
    return tensor;
}

Result<void> reportProgress(Progress* progress, size_t step, size_t steps,
                            const std::string& name) {
    if (progress == nullptr) {
        return success();
    }
    QS_TRY(checkCancelled(*progress));
    progress->report(static_cast<double>(step) / static_cast<double>(steps), name);
    return success();
}

void storeOutputs(const graph::Node& node, std::vector<Tensor>& outputs,
                  std::vector<Tensor>& values, LiveBytes& live) {
    for (size_t i = 0; i < node.outputs.size() && i < outputs.size(); ++i) {
        if (node.outputs[i].valid()) {
            values[node.outputs[i].index()] = std::move(outputs[i]);
            live.add(values[node.outputs[i].index()]);
        }
    }
}

/// Adds a VJP's input gradients into the running gradients of the inputs it was asked for.
void accumulateInputGrads(const graph::Node& node, uint64_t mask,
                          const std::vector<Tensor>& inputGrads, std::vector<Tensor>& grads) {
    for (size_t i = 0; i < node.inputs.size() && i < inputGrads.size() && i < 64; ++i) {
        const ValueId in = node.inputs[i];
        if (!in.valid() || !inputGrads[i].defined() || ((mask >> i) & 1U) == 0) {
            continue;
        }
        Tensor& slot = grads[in.index()];
        slot = slot.defined() ? addTensors(slot, inputGrads[i]) : inputGrads[i];
    }
}

/// Marks the `keep` values (every value when it is empty); an id outside the graph is an error.
Result<std::vector<bool>> keptValues(const graph::Graph& g, std::span<const ValueId> keep) {
    std::vector<bool> kept(g.numValues(), keep.empty());
    for (const ValueId id : keep) {
        if (!id.valid() || id.index() >= g.numValues()) {
            return Error(Errc::InvalidArgument, "backward: a kept value is not in the graph");
        }
        kept[id.index()] = true;
    }
    return kept;
}

/// Releases the gradients of the values not `kept`.
void dropUnkept(const std::vector<bool>& kept, std::vector<Tensor>& grads) {
    for (size_t i = 0; i < grads.size(); ++i) {
        if (!kept[i]) {
            grads[i] = Tensor();
        }
    }
}

/// Hands the gradients of plan[slot] to `onGradient` (nothing without a plan). Those without a
/// producer (initializers, graph inputs) are freed at once; the others are freed after their
/// producer's VJP has used them.
Result<void> handOver(const graph::Graph& g, const std::vector<std::vector<ValueId>>& plan,
                      size_t slot, std::vector<Tensor>& grads,
                      const std::function<Result<void>(ValueId, const Tensor&)>& onGradient) {
    if (plan.empty()) {
        return success();
    }
    for (const ValueId id : plan[slot]) {
        QS_TRY(onGradient(id, grads[id.index()]));
        if (!g.value(id).producer.valid()) {
            grads[id.index()] = Tensor();
        }
    }
    return success();
}

/// True for a float (or float16-stored) initializer: weights the backward can differentiate.
bool isFloatInitializer(const graph::Value& value) {
    return value.isInitializer() && (value.initializer->dtype() == DataType::Float ||
                                     value.initializer->dtype() == DataType::Float16);
}

/// Bit masks of the inputs of `node` whose gradients are wanted (activations some kept value
/// needs, kept float weight initializers) and of those wanted per sample.
std::pair<uint64_t, uint64_t> gradientMasks(const graph::Graph& g, const graph::Node& node,
                                            const std::vector<bool>& wanted,
                                            int64_t perSampleBatch) {
    uint64_t mask = 0;
    uint64_t perSample = 0;
    for (size_t i = 0; i < node.inputs.size() && i < 64; ++i) {
        const ValueId in = node.inputs[i];
        if (!in.valid() || !wanted[in.index()]) {
            continue;
        }
        const graph::Value& value = g.value(in);
        if (value.isInitializer() && !isFloatInitializer(value)) {
            continue;
        }
        mask |= uint64_t{1} << i;
        if (value.isInitializer() && perSampleBatch > 0) {
            perSample |= uint64_t{1} << i;
        }
    }
    return {mask, perSample};
}

/// Shapes the graph proves equal: known rank, every dim a number or a named symbol.
bool provablySameShape(const graph::TensorShape& a, const graph::TensorShape& b) {
    if (!a.rankKnown || !(a == b)) {
        return false;
    }
    return std::all_of(a.dims.begin(), a.dims.end(),
                       [](const graph::Dim& d) { return d.isKnown() || !d.symbol.empty(); });
}

/// The other operand r of `add` = Add(value, r), when the graph proves r, value and the sum
/// share one shape (no broadcasting to undo); invalid otherwise.
ValueId residualOf(const graph::Graph& g, const graph::Node& add, ValueId value) {
    if (add.opType != "Add" || !add.isDefaultDomain() || add.inputs.size() != 2 ||
        add.inputs[0] == add.inputs[1]) {
        return ValueId();
    }
    const ValueId residual = add.inputs[0] == value ? add.inputs[1] : add.inputs[0];
    const graph::TensorShape& shape = g.value(value).shape;
    if (!provablySameShape(g.value(residual).shape, shape) ||
        !provablySameShape(g.value(add.outputs[0]).shape, shape)) {
        return ValueId();
    }
    return residual;
}

/// The rank of a Conv's output: its weight's (0, so only rank-0 constants fuse, when the weight
/// is no initializer and the output's rank is unknown).
size_t convOutputRank(const graph::Graph& g, const graph::Node& conv) {
    const graph::TensorShape& shape = g.value(conv.outputs[0]).shape;
    if (shape.rankKnown) {
        return shape.rank();
    }
    if (conv.inputs.size() > 1 && conv.inputs[1].valid() &&
        g.value(conv.inputs[1]).isInitializer()) {
        return g.value(conv.inputs[1]).initializer->dims().size();
    }
    return 0;
}

/// Folds the element-wise tail after `last` into `fused` (fused_tail.h): its steps as an
/// attribute, its nodes into `absorbed`, and `last` moved to the tail's output.
void absorbTail(const graph::Graph& g, graph::Node& fused, ValueId& last,
                std::vector<NodeId>& absorbed) {
    const TailMatch tail = matchFusedTail(g, last, convOutputRank(g, fused));
    if (tail.steps.empty()) {
        return;
    }
    fused.attributes.push_back(
        graph::Attribute{std::string(kFusedTailAttr), encodeTail(tail.steps), {}});
    absorbed.insert(absorbed.end(), tail.absorbed.begin(), tail.absorbed.end());
    last = tail.last;
}

} // namespace

Result<Executor> Executor::create(graph::Graph graph, ExecutorOptions options) {
    QS_TRY(checkProcessorSupport());
    Executor exec;
    exec.m_options = options;
    exec.m_graph = std::move(graph);
    exec.m_opset = exec.m_graph.opsetVersion();
    if (exec.m_opset <= 0) {
        exec.m_opset = 21;
    }
    QS_ASSIGN_OR_RETURN(exec.m_order, exec.m_graph.topologicalOrder());
    QS_TRY(exec.resolveOps());
    exec.wrapConstants();
    for (const ValueId id : exec.m_graph.runtimeInputs()) {
        exec.m_inputIds.push_back(id);
    }
    exec.planLifetimes();
    exec.planFusions();
    exec.planShapeMemo();
    exec.planConcatsInPlace();
    exec.prepackWeights();
    if (options.releasePackedWeights) {
        exec.releasePackedOriginals();
    }
    exec.m_inputGradWeights = std::make_shared<InputGradWeights>();
    exec.m_shapeMemo = std::make_shared<ShapeMemoCell>();
    return exec;
}

void Executor::planShapeMemo() {
    // A fused node's steps run as one op (or, unfused, as the chain's): never memoized.
    std::vector<bool> excluded(m_order.size(), false);
    for (size_t step = 0; step < m_order.size(); ++step) {
        excluded[step] = m_fusedAway[step] || m_fusedNodeOf[step] >= 0;
    }
    m_shapeMemoPlan = ShapeMemoPlan::plan(m_graph, m_order, excluded);
}

void Executor::planConcatsInPlace() {
    // Not in fp16 mode, where run() stores every output in half precision.
    if (m_options.fp16) {
        return;
    }
    std::vector<const graph::Node*> runs(m_order.size(), nullptr);
    std::vector<bool> skip(m_order.size(), false);
    for (size_t step = 0; step < m_order.size(); ++step) {
        // A step the shape memo may repeat never places its output (runOrReuse).
        skip[step] = m_shapeMemoPlan.memoizable(step);
        if (!m_fusedAway[step] && !skip[step]) {
            const graph::Node* fused = fusedNode(step);
            runs[step] = fused != nullptr ? fused : &m_graph.node(m_order[step]);
        }
    }
    m_concatPlan = ConcatInPlacePlan::build(m_graph, m_order, runs, skip);
}

Result<void> Executor::resolveOps() {
    for (const NodeId id : m_order) {
        const graph::Node& node = m_graph.node(id);
        const OpDef* def = findOp(node.opType, node.domain);
        if (def == nullptr) {
            std::string op = node.isDefaultDomain() ? node.opType : node.domain + "." + node.opType;
            return Error(Errc::Unsupported, "unsupported op " + op + " (node '" + node.name + "')");
        }
        const auto inputCount = static_cast<int>(node.inputs.size());
        if (inputCount < def->minInputs || inputCount > def->maxInputs) {
            return Error(Errc::InvalidModel, node.opType + " node '" + node.name + "' has " +
                                                 std::to_string(inputCount) + " inputs, expected " +
                                                 std::to_string(def->minInputs) + " to " +
                                                 std::to_string(def->maxInputs));
        }
        m_ops.push_back(def);
    }
    return success();
}

void Executor::wrapConstants() {
    m_constants.resize(m_graph.numValues());
    for (const ValueId id : m_graph.valueIds()) {
        const graph::Value& value = m_graph.value(id);
        if (!value.isInitializer()) {
            continue;
        }
        // int4/uint4 are unpacked into int8/uint8 by Tensor::wrap. Strings and exotic types stay
        // unwrapped: only an op that reads them would fail.
        const graph::DataType dtype = value.initializer->dtype();
        const bool subByte = dtype == graph::DataType::Int4 || dtype == graph::DataType::UInt4;
        if (isDispatchable(dtype) || subByte) {
            m_constants[id.index()] = toStorage(Tensor::wrap(value.initializer), m_options.fp16);
        }
    }
}

// Lifetime plan: a value dies after the last step that reads it, unless it is a graph output.
void Executor::planLifetimes() {
    const graph::Graph& g = m_graph;
    std::vector<int64_t> lastUse(g.numValues(), -1);
    const auto use = [&](ValueId id, size_t step) {
        lastUse[id.index()] = std::max(lastUse[id.index()], static_cast<int64_t>(step));
    };
    for (size_t step = 0; step < m_order.size(); ++step) {
        const graph::Node& node = g.node(m_order[step]);
        for (const ValueId in : node.inputs) {
            if (in.valid()) {
                use(in, step);
            }
        }
        for (const ValueId in : node.implicitInputs) {
            use(in, step);
        }
        // An output nobody reads dies right after its producer.
        for (const ValueId out : node.outputs) {
            if (out.valid()) {
                use(out, step);
            }
        }
    }
    for (const ValueId out : g.outputs()) {
        lastUse[out.index()] = std::numeric_limits<int64_t>::max();
    }
    m_frees.resize(m_order.size());
    for (size_t index = 0; index < lastUse.size(); ++index) {
        const int64_t step = lastUse[index];
        const ValueId id(static_cast<uint32_t>(index));
        if (step >= 0 && step < static_cast<int64_t>(m_order.size()) &&
            !g.value(id).isInitializer()) {
            m_frees[static_cast<size_t>(step)].push_back(id);
        }
    }
}

namespace {

/// The fields of the Conv kernel's geometry that `node` (weights `w`) fixes alone: kernel,
/// strides, dilations, channels and group (a 1-D convolution as one row); none for other ranks.
std::optional<Conv2d> weightGeometry(const graph::Node& node, const Tensor& w) {
    if (w.rank() != 3 && w.rank() != 4) {
        return std::nullopt;
    }
    const bool flat = w.rank() == 3;
    const auto pair = [&node, flat](std::string_view name) {
        std::vector<int64_t> v = node.intsAttr(name);
        if (v.empty()) {
            return std::array<int64_t, 2>{1, 1};
        }
        if (flat && v.size() == 1) {
            return std::array<int64_t, 2>{1, v[0]};
        }
        return v.size() == 2 && !flat ? std::array<int64_t, 2>{v[0], v[1]}
                                      : std::array<int64_t, 2>{0, 0};
    };
    const auto strides = pair("strides");
    const auto dilations = pair("dilations");
    Conv2d p{};
    p.m = w.dim(0);
    p.c = w.dim(1) * node.intAttr("group", 1);
    p.group = node.intAttr("group", 1);
    p.kh = flat ? 1 : w.dim(2);
    p.kw = flat ? w.dim(2) : w.dim(3);
    p.sh = strides[0];
    p.sw = strides[1];
    p.dh = dilations[0];
    p.dw = dilations[1];
    return p;
}

/// Whether the Conv kernels run `node` (weights `w`) through Winograd (forward, or dx's
/// convolution in a backward sweep), decided from the attributes alone.
bool runsAsWinograd(const graph::Node& node, const Tensor& w) {
    const std::optional<Conv2d> geometry = weightGeometry(node, w);
    return geometry && w.rank() == 4 && winogradApplies(*geometry);
}

/// A MatMul's or Gemm's 2-D weight B as the packed GEMM's strips of B [k x n] (of B^T when
/// `transposed`: B is then [n x k]), so that no call packs it again; none for any other B.
Tensor weightStrips(const Tensor& b, bool transposed) {
    if (!b.defined() || b.dtype() != DataType::Float || b.rank() != 2 || b.numElements() == 0) {
        return {};
    }
    const int64_t k = transposed ? b.dim(1) : b.dim(0);
    const int64_t n = transposed ? b.dim(0) : b.dim(1);
    Tensor strips = allocateFloat({packedStripsSize(k, n)});
    if (transposed) {
        packTransposedRowMajorStrips(b.data<float>(), k, k, n, strips.mutableData<float>());
    } else {
        packRowMajorStrips(b.data<float>(), n, k, n, strips.mutableData<float>());
    }
    return strips;
}

} // namespace

// Weights of Conv steps that run as a GEMM (not depthwise) are packed into the GEMM's panel
// layout here, once, and reach the kernel as input 4 (a MatMul's or Gemm's 2-D weight as B strips);
// in fp16 mode the kernel must see the rounded weights, so it packs them itself.
void Executor::prepackWeights() {
    m_packedWeights.assign(m_order.size(), Tensor());
    if (m_options.fp16) {
        return;
    }
    for (size_t step = 0; step < m_order.size(); ++step) {
        const graph::Node& node = m_graph.node(m_order[step]);
        if (!node.isDefaultDomain() || node.inputs.size() < 2 || !node.inputs[1].valid()) {
            continue;
        }
        if (node.opType == "MatMul") {
            m_packedWeights[step] = weightStrips(m_constants[node.inputs[1].index()], false);
            continue;
        }
        if (node.opType == "Gemm") {
            // The kernel takes the strips only with alpha 1 and no transA (gemm.cpp).
            if (node.intAttr("transA", 0) == 0 && node.floatAttr("alpha", 1.0F) == 1.0F) {
                m_packedWeights[step] = weightStrips(m_constants[node.inputs[1].index()],
                                                     node.intAttr("transB", 0) != 0);
            }
            continue;
        }
        if (node.opType != "Conv") {
            continue;
        }
        const Tensor& w = m_constants[node.inputs[1].index()];
        const int64_t group = node.intAttr("group", 1);
        if (!w.defined() || w.dtype() != DataType::Float || w.rank() < 3 || w.rank() > 4 ||
            group <= 0 || w.dim(0) % group != 0 || (w.dim(1) == 1 && w.dim(0) == group)) {
            continue;
        }
        const std::optional<Conv2d> geometry = weightGeometry(node, w);
        if (geometry && shallowConvApplies(*geometry)) {
            continue; // the shallow kernel reads the weights as they are
        }
        if (runsAsWinograd(node, w)) {
            Tensor packed = allocateFloat({winogradWeightsSize(w.dim(0), w.dim(1))});
            packWinogradWeights(w.data<float>(), w.dim(0), w.dim(1), packed.mutableData<float>());
            m_packedWeights[step] = std::move(packed);
            continue;
        }
        const int64_t depth = w.numElements() / w.dim(0);
        Tensor packed = allocateFloat({packedGroupedWeightsSize(w.dim(0), depth, group)});
        packGroupedWeights(w.data<float>(), w.dim(0), depth, group, packed.mutableData<float>());
        m_packedWeights[step] = std::move(packed);
    }
}

namespace {

/// What forwardWithTrace() and backward() say on an executor made with releasePackedWeights.
Error releasedWeightsError() {
    return Error(Errc::InvalidArgument,
                 "this executor released its packed Conv weights (forward only): gradients need "
                 "an executor created without releasePackedWeights");
}

} // namespace

void Executor::releasePackedOriginals() {
    std::vector<bool> packedStep(m_graph.numNodes(), false);
    std::vector<bool> readElsewhere(m_graph.numValues(), false);
    for (size_t step = 0; step < m_order.size(); ++step) {
        const graph::Node& node = m_graph.node(m_order[step]);
        packedStep[m_order[step].index()] =
            m_packedWeights[step].defined() && node.opType == "Conv";
        for (const ValueId in : node.implicitInputs) {
            readElsewhere[in.index()] = true;
        }
    }
    for (const ValueId out : m_graph.outputs()) {
        readElsewhere[out.index()] = true;
    }
    bool released = false;
    for (const ValueId id : m_graph.valueIds()) {
        graph::Value& value = m_graph.value(id);
        if (!value.isInitializer() || value.consumers.empty() || readElsewhere[id.index()]) {
            continue;
        }
        // Conv kernels with packed weights read only the weight's dims (ops/conv.cpp).
        const bool onlyPacked = std::ranges::all_of(value.consumers, [&](const graph::Use& use) {
            return use.port == 1 && packedStep[use.node.index()];
        });
        if (!onlyPacked) {
            continue;
        }
        const graph::TensorPtr& bytes = value.initializer;
        value.initializer =
            std::make_shared<const graph::TensorData>(bytes->dtype(), bytes->dims(), std::string());
        m_constants[id.index()] =
            Tensor::withoutData(m_constants[id.index()].dtype(), m_constants[id.index()].shape());
        released = true;
    }
    m_weightsReleased = released;
#if defined(__GLIBC__)
    // The weights' bytes were allocated while parsing, among smaller blocks: hand the freed
    // pages back to the system instead of keeping them in the heap.
    if (released) {
        malloc_trim(0);
    }
#endif
}

// Fusion: Conv -> [Add(conv, r)] -> [Relu | Clip with constant bounds] -> [element-wise tail]
// runs as one Conv whose epilogue adds r and clamps (conv_kernels.h), then applies the tail
// (fused_tail.h: SiLU, decomposed HardSwish, scalar affine steps). Each fused value must feed only
// the next node of the chain and be no graph output; r must be computed before the Conv runs and
// have the Conv output's shape (proved from the graph's shapes; the kernel checks it again).
// Then decomposed LayerNormalizations (layer_norm_fusion.h) and GELUs (gelu_fusion.h) run as one
// node, and a MatMul by a weight adds the bias of the Add after it (matmul_bias_fusion.h).
// Values freed by the skipped steps are still freed there, so the lifetime plan stays valid.
void Executor::planFusions() {
    const graph::Graph& g = m_graph;
    m_fusedNodeOf.assign(m_order.size(), -1);
    m_fusedAway.assign(m_order.size(), false);
    std::vector<int64_t> stepOf(g.numNodes(), -1);
    std::vector<int64_t> producedAt(g.numValues(), -1); // -1: graph input or initializer
    for (size_t step = 0; step < m_order.size(); ++step) {
        stepOf[m_order[step].index()] = static_cast<int64_t>(step);
        for (const ValueId out : g.node(m_order[step]).outputs) {
            if (out.valid()) {
                producedAt[out.index()] = static_cast<int64_t>(step);
            }
        }
    }
    planConvFusions(stepOf, producedAt);
    planLayerNormFusions(stepOf, producedAt);
    planGeluFusions(stepOf);
    planMatMulBiasFusions(stepOf);
}

void Executor::planConvFusions(const std::vector<int64_t>& stepOf,
                               const std::vector<int64_t>& producedAt) {
    const graph::Graph& g = m_graph;
    for (size_t step = 0; step < m_order.size(); ++step) {
        const graph::Node& conv = g.node(m_order[step]);
        if (conv.opType != "Conv" || !conv.isDefaultDomain() || conv.outputs.empty()) {
            continue;
        }
        graph::Node fused = conv;
        ValueId last = conv.outputs[0];
        std::vector<NodeId> absorbed;
        const graph::Node* next = soleConsumer(g, last);
        const ValueId residual = next != nullptr ? residualOf(g, *next, last) : ValueId();
        if (residual.valid() && producedAt[residual.index()] < static_cast<int64_t>(step)) {
            fused.inputs.resize(3);
            fused.inputs.push_back(residual);
            absorbed.push_back(g.value(last).consumers[0].node);
            last = next->outputs[0];
            next = soleConsumer(g, last);
        }
        const auto bounds =
            next != nullptr ? clampBounds(g, *next, convOutputRank(g, conv)) : std::nullopt;
        if (bounds) {
            fused.attributes.push_back(floatAttribute(std::string(kFusedMinAttr), bounds->first));
            fused.attributes.push_back(floatAttribute(std::string(kFusedMaxAttr), bounds->second));
            absorbed.push_back(g.value(last).consumers[0].node);
            last = next->outputs[0];
        }
        // Not in fp16 mode: unfused, every step would round to half precision and read constants
        // rounded to it.
        if (!m_options.fp16) {
            absorbTail(g, fused, last, absorbed);
        }
        if (absorbed.empty()) {
            continue;
        }
        fused.outputs = {last};
        // Without a tail, the chain's VJPs (Add's, Relu's, Clip's, the Conv's own) read no value
        // inside it: forwardForBackward runs it fused too.
        const bool traceable =
            std::none_of(fused.attributes.begin(), fused.attributes.end(),
                         [](const graph::Attribute& a) { return a.name == kFusedTailAttr; });
        addFusedNode(step, std::move(fused), m_ops[step], traceable, absorbed, stepOf);
    }
}

void Executor::planLayerNormFusions(const std::vector<int64_t>& stepOf,
                                    const std::vector<int64_t>& producedAt) {
    const graph::Graph& g = m_graph;
    // Not in fp16 mode, as tails; nor for gradients: Div's VJP reads the centred x and the
    // standard deviation, which the fused node never materialises.
    const OpDef* layerNorm = findOp("LayerNormalization");
    for (size_t step = 0; step < m_order.size() && !m_options.fp16 && layerNorm != nullptr;
         ++step) {
        if (m_fusedAway[step] || m_fusedNodeOf[step] >= 0) {
            continue;
        }
        const std::optional<LayerNormMatch> match = matchDecomposedLayerNorm(g, m_order[step]);
        // Scale and bias computed by an earlier node (an Identity of the initializer) must be
        // ready when the chain's first step runs.
        const auto ready = [&](ValueId id) {
            return !id.valid() || producedAt[id.index()] < static_cast<int64_t>(step);
        };
        if (!match || !ready(match->scale) || !ready(match->bias) ||
            std::any_of(match->absorbed.begin(), match->absorbed.end(), [&](NodeId id) {
                const auto at = static_cast<size_t>(stepOf[id.index()]);
                return m_fusedAway[at] || m_fusedNodeOf[at] >= 0;
            })) {
            continue;
        }
        graph::Node fused;
        fused.name = g.node(m_order[step]).name;
        fused.opType = "LayerNormalization";
        fused.inputs = {match->input, match->scale};
        if (match->bias.valid()) {
            fused.inputs.push_back(match->bias);
        }
        fused.outputs = {match->output};
        fused.attributes = {intAttribute("axis", -1), floatAttribute("epsilon", match->epsilon)};
        addFusedNode(step, std::move(fused), layerNorm, false, match->absorbed, stepOf);
    }
}

void Executor::planGeluFusions(const std::vector<int64_t>& stepOf) {
    // Not in fp16 mode nor for gradients, as LayerNormalization.
    const OpDef* gelu = findOp("Gelu");
    if (m_options.fp16 || gelu == nullptr) {
        return;
    }
    // Over values, graph inputs included: a chain starts at the value it gates.
    for (const ValueId x : m_graph.valueIds()) {
        const std::optional<GeluMatch> match = matchDecomposedGelu(m_graph, x);
        if (!match) {
            continue;
        }
        // The chain runs at its first step (x * 0.5 may come before the Div).
        std::vector<size_t> steps;
        for (const NodeId id : match->nodes) {
            steps.push_back(static_cast<size_t>(stepOf[id.index()]));
        }
        const size_t head = *std::min_element(steps.begin(), steps.end());
        if (std::any_of(steps.begin(), steps.end(),
                        [&](size_t at) { return m_fusedAway[at] || m_fusedNodeOf[at] >= 0; })) {
            continue;
        }
        graph::Node fused;
        fused.name = m_graph.node(m_order[head]).name;
        fused.opType = "Gelu";
        fused.inputs = {match->input};
        fused.outputs = {match->output};
        std::vector<NodeId> absorbed;
        std::copy_if(match->nodes.begin(), match->nodes.end(), std::back_inserter(absorbed),
                     [&](NodeId id) { return static_cast<size_t>(stepOf[id.index()]) != head; });
        addFusedNode(head, std::move(fused), gelu, false, absorbed, stepOf);
    }
}

void Executor::planMatMulBiasFusions(const std::vector<int64_t>& stepOf) {
    // Not in fp16 mode: the unfused Add rounds the product to half precision first. Not for
    // gradients (MatMul's VJP knows no bias), so forwardForBackward runs the two steps.
    for (size_t step = 0; step < m_order.size() && !m_options.fp16; ++step) {
        if (m_fusedAway[step] || m_fusedNodeOf[step] >= 0) {
            continue;
        }
        const std::optional<MatMulBiasMatch> match = matchMatMulBias(m_graph, m_order[step]);
        if (!match || m_fusedAway[static_cast<size_t>(stepOf[match->add.index()])]) {
            continue;
        }
        graph::Node fused = m_graph.node(m_order[step]);
        fused.inputs.push_back(match->bias); // kMatMulBiasInput
        fused.outputs = {match->output};
        const std::array<NodeId, 1> absorbed{match->add};
        addFusedNode(step, std::move(fused), m_ops[step], false, absorbed, stepOf);
    }
}

void Executor::addFusedNode(size_t step, graph::Node fused, const OpDef* op, bool traceable,
                            std::span<const NodeId> absorbed, const std::vector<int64_t>& stepOf) {
    m_fusedNodeOf[step] = static_cast<int>(m_fusedNodes.size());
    m_fusedNodes.push_back(std::move(fused));
    m_fusedOps.push_back(op);
    m_fusedTraceable.push_back(traceable);
    std::vector<size_t>& chain = m_fusedChainSteps.emplace_back();
    for (const NodeId id : absorbed) {
        chain.push_back(static_cast<size_t>(stepOf[id.index()]));
        m_fusedAway[chain.back()] = true;
    }
}

const graph::Node& Executor::nodeToRun(size_t step, const std::vector<Tensor>& values,
                                       std::vector<bool>& unfused) const {
    const graph::Node* fused = fusedNode(step);
    if (fused == nullptr) {
        return m_graph.node(m_order[step]);
    }
    if (fusedNodeRuns(step, values)) {
        return *fused;
    }
    unfused.resize(m_order.size(), false);
    for (const size_t absorbed : m_fusedChainSteps[static_cast<size_t>(m_fusedNodeOf[step])]) {
        unfused[absorbed] = true;
    }
    return m_graph.node(m_order[step]);
}

bool Executor::fusedNodeRuns(size_t step, const std::vector<Tensor>& values) const {
    const auto index = static_cast<size_t>(m_fusedNodeOf[step]);
    if (m_fusedOps[index] == m_ops[step]) {
        // A Conv chain (its kernel checks the residual's shape itself) or a MatMul with its bias
        // (whose shapes the initializers fix).
        return true;
    }
    const graph::Node& node = m_fusedNodes[index];
    if (node.opType == "Gelu") { // its float kernel; the chain computes in x's own type
        return values[node.inputs[0].index()].dtype() == DataType::Float;
    }
    // A decomposed LayerNormalization, matched on shapes the graph may not know.
    const Tensor* bias = node.inputs.size() > 2 ? &values[node.inputs[2].index()] : nullptr;
    return layerNormChainRuns(values[node.inputs[0].index()], values[node.inputs[1].index()], bias);
}

const graph::Node* Executor::fusedNode(size_t step) const {
    const int index = m_fusedNodeOf[step];
    return index < 0 ? nullptr : &m_fusedNodes[static_cast<size_t>(index)];
}

Result<void> Executor::bindInputs(std::span<const Tensor> inputs,
                                  std::vector<Tensor>& values) const {
    if (inputs.size() != m_inputIds.size()) {
        return Error(Errc::InvalidArgument, "the model takes " + std::to_string(m_inputIds.size()) +
                                                " inputs, got " + std::to_string(inputs.size()));
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
        const graph::Value& value = m_graph.value(m_inputIds[i]);
        const Tensor& tensor = inputs[i];
        const std::string where = "input '" + value.name + "'";
        if (value.dtype != DataType::Undefined && tensor.dtype() != value.dtype) {
            return Error(Errc::InvalidArgument,
                         "expects " + std::string(graph::dataTypeName(value.dtype)) + ", got " +
                             std::string(graph::dataTypeName(tensor.dtype())))
                .context(where);
        }
        if (value.shape.rankKnown) {
            bool matches = value.shape.rank() == tensor.rank();
            for (size_t d = 0; matches && d < tensor.rank(); ++d) {
                const graph::Dim& dim = value.shape.dims[d];
                matches = !dim.isKnown() || dim.size == tensor.shape()[d];
            }
            if (!matches) {
                return Error(Errc::InvalidArgument, "expects shape " + value.shape.toString() +
                                                        ", got " + shapeToString(tensor.shape()))
                    .context(where);
            }
        }
        values[m_inputIds[i].index()] = toStorage(tensor, m_options.fp16);
    }
    return success();
}

Result<std::vector<Tensor>> Executor::runNode(const graph::Node& node, size_t step,
                                              const std::vector<Tensor>& values,
                                              ConcatInPlaceRun* placements) const {
    std::vector<Tensor> inputs;
    inputs.reserve(node.inputs.size());
    for (const ValueId in : node.inputs) {
        if (!in.valid()) {
            inputs.emplace_back();
            continue;
        }
        const Tensor& tensor = values[in.index()];
        if (!tensor.defined()) {
            return Error(Errc::InvalidModel,
                         "value '" + m_graph.value(in).name + "' is read before it is computed")
                .context(node.opType + " node '" + node.name + "'");
        }
        inputs.push_back(toCompute(tensor, m_options.fp16));
    }
    if (m_packedWeights[step].defined()) {
        inputs.resize(4);
        inputs.push_back(m_packedWeights[step]);
    }
    OpContext ctx{node, inputs, m_opset};
    if (placements != nullptr && node.opType == "Conv" && !node.outputs.empty() &&
        m_concatPlan.slotOf(node.outputs[0])) {
        ctx.placeOutput = [placements, &node](const Shape& shape) {
            return placements->place(node.outputs[0], shape);
        };
    }
    // A fused node may run another op than the step's own (a decomposed LayerNormalization).
    const int fusedIndex = m_fusedNodeOf[step];
    const OpDef* op = fusedIndex >= 0 && &node == &m_fusedNodes[static_cast<size_t>(fusedIndex)]
                          ? m_fusedOps[static_cast<size_t>(fusedIndex)]
                          : m_ops[step];
    QS_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, op->forward(ctx));
    if (outputs.size() < node.outputs.size()) {
        // Trailing optional outputs (Dropout's mask, BatchNorm's running stats) may be skipped
        // only when nothing reads them.
        for (size_t i = outputs.size(); i < node.outputs.size(); ++i) {
            if (node.outputs[i].valid() && !m_graph.value(node.outputs[i]).consumers.empty()) {
                return ctx.error(Errc::Unsupported,
                                 "output " + std::to_string(i) + " is not computed");
            }
        }
    }
    for (Tensor& out : outputs) {
        out = toStorage(out, m_options.fp16);
    }
    return outputs;
}

Result<std::vector<Tensor>> Executor::graphOutputs(const std::vector<Tensor>& values) const {
    std::vector<Tensor> results;
    for (const ValueId out : m_graph.outputs()) {
        if (!values[out.index()].defined()) {
            return Error(Errc::InvalidModel,
                         "graph output '" + m_graph.value(out).name + "' is never computed");
        }
        results.push_back(toCompute(values[out.index()], m_options.fp16));
    }
    return results;
}

Result<std::vector<Tensor>> Executor::runOrReuse(size_t step, const graph::Node& node,
                                                 const std::vector<Tensor>& values,
                                                 ShapeMemoRun& memo, RunStats* stats,
                                                 size_t& reused,
                                                 ConcatInPlaceRun& placements) const {
    const bool memoizable = m_shapeMemoPlan.memoizable(step);
    const std::vector<Tensor>* kept =
        memoizable
            ? memo.reusable(step, m_shapeMemoPlan.probe(step) >= 0 ? &values[node.inputs[0].index()]
                                                                   : nullptr)
            : nullptr;
    if (kept != nullptr) {
        reused += 1;
        return *kept;
    }
    const auto opStart = std::chrono::steady_clock::now();
    std::vector<Tensor> outputs;
    if (m_concatPlan.concatAt(step) >= 0) {
        QS_ASSIGN_OR_RETURN(std::optional<Tensor> joined, placements.finish(step, node, values));
        if (joined) {
            outputs.push_back(std::move(*joined));
        }
    }
    if (outputs.empty()) {
        // A step the memo may repeat keeps an output of its own: the memo would hand a placed
        // one back shape-only.
        QS_ASSIGN_OR_RETURN(outputs,
                            runNode(node, step, values, memoizable ? nullptr : &placements));
    }
    if (stats != nullptr && stats->profile) {
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - opStart).count();
        stats->secondsByOpType[node.opType] += seconds;
        stats->secondsByNode[node.name] += seconds;
        stats->opTypeByNode[node.name] = node.opType;
    }
    if (memoizable) {
        memo.record(step, outputs);
    }
    return outputs;
}

Result<std::vector<Tensor>> Executor::run(std::span<const Tensor> inputs, RunStats* stats,
                                          Progress* progress) const {
    const auto start = std::chrono::steady_clock::now();
    std::vector<Tensor> values = m_constants;
    QS_TRY(bindInputs(inputs, values));
    LiveBytes live;
    for (const ValueId id : m_inputIds) {
        live.add(values[id.index()]);
    }
    const auto freeDead = [&](size_t step) {
        for (const ValueId dead : m_frees[step]) {
            live.remove(values[dead.index()]);
            values[dead.index()] = Tensor();
        }
    };
    // Steps of fused chains that run unfused this time (fusedNodeRuns said no).
    std::vector<bool> unfused;
    ShapeMemoRun memo(m_shapeMemoPlan, m_shapeMemo->load());
    ConcatInPlaceRun placements(m_concatPlan);
    size_t reused = 0;
    for (size_t step = 0; step < m_order.size(); ++step) {
        QS_TRY(reportProgress(progress, step, m_order.size(), m_graph.node(m_order[step]).name));
        if (m_fusedAway[step] && (unfused.empty() || !unfused[step])) {
            freeDead(step);
            continue;
        }
        const graph::Node& node = nodeToRun(step, values, unfused);
        QS_ASSIGN_OR_RETURN(std::vector<Tensor> outputs,
                            runOrReuse(step, node, values, memo, stats, reused, placements));
        // A Concat's output is live from the first Conv that writes into it.
        live.add(placements.takeAllocated());
        storeOutputs(node, outputs, values, live);
        live.remove(placements.takeHandedOver());
        freeDead(step);
    }
    QS_ASSIGN_OR_RETURN(std::vector<Tensor> results, graphOutputs(values));
    for (Tensor& result : results) {
        if (memo.keeps(result)) { // a view of kept shape arithmetic: the caller gets its own
            result = result.clone();
        }
    }
    if (std::shared_ptr<const ShapeMemoState> changed = memo.changed()) {
        m_shapeMemo->store(std::move(changed));
    }
    if (stats != nullptr) {
        stats->reusedShapeSteps = reused;
        stats->concatInputsPlaced = placements.placed();
        stats->peakActivationBytes = live.peak();
        stats->seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    return results;
}

namespace {

/// A step's outputs into the trace's values.
void keepOutputs(const graph::Node& node, std::vector<Tensor>& outputs,
                 std::vector<Tensor>& values) {
    for (size_t i = 0; i < node.outputs.size() && i < outputs.size(); ++i) {
        if (node.outputs[i].valid()) {
            values[node.outputs[i].index()] = std::move(outputs[i]);
        }
    }
}

} // namespace

Result<ForwardTrace> Executor::forwardWithTrace(std::span<const Tensor> inputs) const {
    return tracedForward(inputs, false);
}

Result<ForwardTrace> Executor::forwardForBackward(std::span<const Tensor> inputs) const {
    return tracedForward(inputs, true);
}

const graph::Node* Executor::traceFusedNode(size_t step) const {
    const int index = m_fusedNodeOf[step];
    return index >= 0 && m_fusedTraceable[static_cast<size_t>(index)]
               ? &m_fusedNodes[static_cast<size_t>(index)]
               : nullptr;
}

void Executor::keepChainShapes(size_t step, const Tensor& output, ForwardTrace& trace,
                               std::vector<bool>& skipped) const {
    // The chain's values (the Conv's sum, the Add's) have the output's shape (residualOf proved
    // it) and no data: backward() reads only their shapes.
    const Tensor placeholder = Tensor::withoutData(output.dtype(), output.shape());
    ValueId inside = m_graph.node(m_order[step]).outputs[0];
    for (const size_t absorbed : m_fusedChainSteps[static_cast<size_t>(m_fusedNodeOf[step])]) {
        trace.values[inside.index()] = placeholder;
        skipped[absorbed] = true;
        inside = m_graph.node(m_order[absorbed]).outputs[0];
    }
}

Result<ForwardTrace> Executor::tracedForward(std::span<const Tensor> inputs,
                                             bool fuseChains) const {
    if (m_weightsReleased) {
        return releasedWeightsError();
    }
    ForwardTrace trace;
    trace.values = m_constants;
    trace.notes = std::make_shared<std::vector<TraceNote>>(m_order.size());
    QS_TRY(bindInputs(inputs, trace.values));
    // Steps absorbed by a chain that runs fused here: skipped, their outputs shape-only.
    std::vector<bool> skipped(m_order.size(), false);
    for (size_t step = 0; step < m_order.size(); ++step) {
        if (skipped[step]) {
            continue;
        }
        const graph::Node* fused = fuseChains ? traceFusedNode(step) : nullptr;
        const graph::Node& node = fused != nullptr ? *fused : m_graph.node(m_order[step]);
        QS_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, runNode(node, step, trace.values));
        if (fused != nullptr) {
            keepChainShapes(step, outputs[0], trace, skipped);
        }
        keepOutputs(node, outputs, trace.values);
    }
    return trace;
}

Tensor addTensors(const Tensor& a, const Tensor& b) {
    QS_ASSERT(a.shape() == b.shape() && a.dtype() == DataType::Float &&
                  b.dtype() == DataType::Float,
              "gradient accumulation needs equal float shapes");
    Tensor out = Tensor::allocate(DataType::Float, a.shape());
    const float* pa = a.data<float>();
    const float* pb = b.data<float>();
    float* po = out.mutableData<float>();
    // On the threads: a residual block's input gradient is a whole activation.
    parallelFor(a.numElements(), 1 << 14, [=](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            po[i] = pa[i] + pb[i];
        }
    });
    return out;
}

namespace {

/// Step `step`'s note on `trace`, when the trace keeps one per step of a plan of `steps` steps.
TraceNote* noteOf(const ForwardTrace& trace, size_t step, size_t steps) {
    return trace.notes != nullptr && trace.notes->size() == steps ? &(*trace.notes)[step] : nullptr;
}

/// Moves the gradients of `node`'s outputs that are released after its step out of `grads`,
/// leaving `outputGrads` their only holder; returns OpContext::reusableOutputGrads: those nothing
/// else shares (not a caller's seed, not kept), which the VJP may turn into an input's gradient.
uint64_t handOverOutputGrads(const graph::Node& node, const std::vector<bool>& retained,
                             const std::vector<Tensor>& outputGrads, std::vector<Tensor>& grads) {
    uint64_t reusable = 0;
    for (size_t i = 0; i < node.outputs.size() && i < 64; ++i) {
        const ValueId out = node.outputs[i];
        if (out.valid() && !retained[out.index()]) {
            grads[out.index()] = Tensor();
            reusable |= outputGrads[i].soleOwner() ? uint64_t{1} << i : 0;
        }
    }
    return reusable;
}

} // namespace

std::pair<Tensor, size_t> Executor::inputGradWeights(size_t step, const Tensor& x,
                                                     const Tensor& w) const {
    const graph::Node& node = m_graph.node(m_order[step]);
    if (node.opType != "Conv" || !node.isDefaultDomain() || node.inputs.size() < 2 ||
        !node.inputs[1].valid()) {
        return {};
    }
    // Only the executor's own float weights are cached: a trace a caller built with other weights
    // (or fp16 mode's per-call float copies) packs them on each call, in the VJP.
    const Tensor& own = m_constants[node.inputs[1].index()];
    if (!own.defined() || own.dtype() != DataType::Float || w.dtype() != DataType::Float ||
        own.data<float>() != w.data<float>() || w.rank() < 3) {
        return {};
    }
    const int64_t group = node.intAttr("group", 1);
    const bool winograd = runsAsWinograd(node, w);
    // Depthwise dx runs its direct kernel, without packed weights.
    if (!winograd && w.dim(1) == 1 && w.dim(0) == group) {
        return {};
    }
    const WinogradTile tile =
        winograd && x.rank() == 4
            ? sweptInputGradTile(x.dim(0), x.dim(2), x.dim(3), w.dim(0), w.dim(1))
            : WinogradTile::f2x2;
    const std::lock_guard lock(m_inputGradWeights->mutex);
    auto& packed = m_inputGradWeights->packed;
    if (packed.size() != m_order.size()) {
        packed.assign(m_order.size(), {});
    }
    Tensor& slot = packed[step][tile == WinogradTile::f4x4 ? 1 : 0];
    if (!slot.defined()) {
        if (winograd) {
            slot = allocateFloat({winogradInputGradWeightsSize(w.dim(0), w.dim(1), tile)});
            packWinogradInputGradWeights(w.data<float>(), w.dim(0), w.dim(1),
                                         slot.mutableData<float>(), tile);
        } else {
            const int64_t depth = w.numElements() / w.dim(0);
            slot = allocateFloat({gemmInputGradWeightsSize(w.dim(0), depth, group)});
            packGemmInputGradWeights(w.data<float>(), w.dim(0), depth, group,
                                     slot.mutableData<float>());
        }
    }
    return {slot, winograd ? kWinogradInputGradWeightsInput : kGemmInputGradWeightsInput};
}

Result<bool> Executor::backwardStep(size_t step, const ForwardTrace& trace,
                                    std::vector<Tensor>& grads, const std::vector<bool>& retained,
                                    const std::vector<bool>& wanted,
                                    const BackwardOptions& options) const {
    const graph::Node& node = m_graph.node(m_order[step]);
    const auto traced = [&](ValueId id) {
        return id.valid() ? toCompute(trace.values[id.index()], true) : Tensor();
    };
    std::vector<Tensor> outputs;
    std::vector<Tensor> outputGrads;
    bool any = false;
    for (const ValueId out : node.outputs) {
        outputs.push_back(traced(out));
        outputGrads.push_back(out.valid() ? grads[out.index()] : Tensor());
        any = any || outputGrads.back().defined();
    }
    if (!any || m_ops[step]->vjp == nullptr) {
        return false;
    }
    // This node was the only producer of its outputs' gradients' consumers: release them.
    const auto releaseOutputGrads = [&] {
        for (const ValueId out : node.outputs) {
            if (out.valid() && !retained[out.index()]) {
                grads[out.index()] = Tensor();
            }
        }
    };
    const auto [mask, perSample] = gradientMasks(m_graph, node, wanted, options.perSampleBatch);
    if (mask == 0) {
        releaseOutputGrads();
        return false;
    }
    if (perSample != 0 && !m_ops[step]->perSampleWeightGrads) {
        return Error(Errc::Unsupported,
                     "per-sample weight gradients are not implemented for " + node.opType)
            .context(node.opType + " node '" + node.name + "'");
    }
    std::vector<Tensor> inputs;
    for (const ValueId in : node.inputs) {
        inputs.push_back(traced(in));
    }
    if ((mask & 1U) != 0 && inputs.size() >= 2) {
        if (auto [packed, index] = inputGradWeights(step, inputs[0], inputs[1]); packed.defined()) {
            inputs.resize(index);
            inputs.push_back(std::move(packed));
        }
    }
    OpContext ctx{node, inputs, m_opset, mask};
    ctx.reusableOutputGrads = handOverOutputGrads(node, retained, outputGrads, grads);
    ctx.traceNote = noteOf(trace, step, m_order.size());
    ctx.perSampleMask = perSample;
    ctx.perSampleBatch = options.perSampleBatch;
    ctx.rowSquaresMask = rowSquaresMask(node, perSample, options.perSampleRowSquares);
    RunStats* stats = options.stats;
    const auto opStart = std::chrono::steady_clock::now();
    QS_ASSIGN_OR_RETURN(std::vector<Tensor> inputGrads,
                        m_ops[step]->vjp(ctx, outputs, outputGrads));
    if (stats != nullptr && stats->profile) {
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - opStart).count();
        stats->secondsByOpType[node.opType] += seconds;
        stats->secondsByNode[node.name] += seconds;
    }
    releaseOutputGrads();
    accumulateInputGrads(node, mask, inputGrads, grads);
    return true;
}

bool Executor::weightGradComesAsRowSquares(ValueId weight) const {
    if (!weight.valid() || weight.index() >= m_graph.numValues()) {
        return false;
    }
    const graph::Value& value = m_graph.value(weight);
    const std::vector<ValueId>& outputs = m_graph.outputs();
    if (!value.isInitializer() || value.consumers.size() != 1 || value.consumers[0].port != 1 ||
        std::find(outputs.begin(), outputs.end(), weight) != outputs.end()) {
        return false; // a graph output's own seed would be added to the squares
    }
    const auto step = std::find(m_order.begin(), m_order.end(), value.consumers[0].node);
    return step != m_order.end() &&
           m_ops[static_cast<size_t>(step - m_order.begin())]->perSampleRowSquares;
}

uint64_t Executor::rowSquaresMask(const graph::Node& node, uint64_t perSample, bool asked) const {
    const bool reduced = asked && node.inputs.size() > 1 && ((perSample >> 1) & 1U) != 0 &&
                         weightGradComesAsRowSquares(node.inputs[1]);
    return reduced ? uint64_t{1} << 1 : 0;
}

std::vector<std::vector<ValueId>> Executor::handOverPlan(std::span<const ValueId> keep) const {
    // A gradient is complete once its first consumer's step (the last to run backwards) is
    // done; one no step consumes is complete from the start (slot m_order.size()).
    std::vector<size_t> first(m_graph.numValues(), m_order.size());
    for (size_t step = m_order.size(); step-- > 0;) {
        for (const ValueId in : m_graph.node(m_order[step]).inputs) {
            if (in.valid()) {
                first[in.index()] = step;
            }
        }
    }
    const std::vector<ValueId> all = keep.empty() ? m_graph.valueIds() : std::vector<ValueId>();
    std::vector<std::vector<ValueId>> plan(m_order.size() + 1);
    std::vector<bool> listed(m_graph.numValues(), false);
    for (const ValueId id : keep.empty() ? std::span<const ValueId>(all) : keep) {
        if (!listed[id.index()]) {
            listed[id.index()] = true;
            plan[first[id.index()]].push_back(id);
        }
    }
    return plan;
}

Result<std::vector<Tensor>> Executor::backward(const ForwardTrace& trace,
                                               std::span<const std::pair<ValueId, Tensor>> seeds,
                                               const BackwardOptions& options) const {
    if (m_weightsReleased) {
        return releasedWeightsError();
    }
    std::vector<Tensor> grads(m_graph.numValues());
    QS_ASSIGN_OR_RETURN(const std::vector<bool> kept, keptValues(m_graph, options.keep));
    for (const auto& [id, grad] : seeds) {
        Tensor g = toCompute(grad, true);
        grads[id.index()] = grads[id.index()].defined() ? addTensors(grads[id.index()], g) : g;
    }
    const std::vector<bool> wanted = wantedGradients(kept);
    const std::vector<std::vector<ValueId>> plan =
        options.onGradient ? handOverPlan(options.keep) : std::vector<std::vector<ValueId>>();
    // Handed-over gradients are released like any other.
    const std::vector<bool> retained =
        options.onGradient ? std::vector<bool>(m_graph.numValues(), false) : kept;
    QS_TRY(handOver(m_graph, plan, m_order.size(), grads, options.onGradient));
    for (size_t step = m_order.size(); step-- > 0;) {
        QS_TRY(backwardStep(step, trace, grads, retained, wanted, options));
        QS_TRY(handOver(m_graph, plan, step, grads, options.onGradient));
    }
    if (options.onGradient) {
        return std::vector<Tensor>(m_graph.numValues()); // every kept one was handed over
    }
    if (!options.keep.empty()) {
        dropUnkept(kept, grads); // seeds of values nobody kept are no answer either
    }
    return grads;
}

std::vector<bool> Executor::wantedGradients(const std::vector<bool>& kept) const {
    // A kept value's gradient flows back through every value computed from it (its
    // descendants), so those are wanted; any other (e.g. a graph input nobody keeps) is not.
    // Initializers are wanted only when kept (an unkept weight needs no gradient).
    std::vector<bool> wanted = kept;
    for (const ValueId id : m_graph.valueIds()) {
        if (m_graph.value(id).isInitializer() && !isFloatInitializer(m_graph.value(id))) {
            wanted[id.index()] = false;
        }
    }
    for (const NodeId id : m_order) {
        const graph::Node& node = m_graph.node(id);
        const bool fromWanted =
            std::any_of(node.inputs.begin(), node.inputs.end(),
                        [&](ValueId in) { return in.valid() && wanted[in.index()]; });
        for (const ValueId out : node.outputs) {
            if (out.valid() && fromWanted) {
                wanted[out.index()] = true;
            }
        }
    }
    return wanted;
}

} // namespace qs::runtime
