// The executor: runs a Graph on runtime Tensors in a stable topological order. Creation checks
// every node against the op registry (an unsupported op is reported before anything runs) and
// plans buffer lifetimes: each intermediate tensor is released right after its last consumer, and
// a run reports the peak bytes of activations alive at once. run() also fuses, in private copies of
// the nodes, a Conv with a following residual Add and Relu/Clip (one pass over memory instead of
// three; the graph the caller sees is unchanged), runs a decomposed LayerNormalization or GELU as
// one node and adds a linear layer's bias inside its MatMul. For gradients, forwardWithTrace runs
// unfused, keeps every value, and backward walks the nodes in reverse, calling each op's
// vector-Jacobian product, for activations and weight initializers alike; one trace serves any
// number of backward sweeps (Hutchinson iterations reuse the forward pass of a batch).
#pragma once

#include "core/graph/graph.h"
#include "core/runtime/concat_in_place.h"
#include "core/runtime/op.h"
#include "core/runtime/shape_memo.h"
#include "core/runtime/tensor.h"
#include "core/support/progress.h"
#include "core/support/result.h"

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace qs::runtime {

struct ExecutorOptions {
    /// Store weights and activations as float16 between ops; kernels accumulate in float.
    bool fp16 = false;
    /// Forward only: once a Conv's weights are packed for its kernel (GEMM panels or Winograd),
    /// the originals are released when nothing else reads them; their values keep dtype and
    /// dims but no bytes, in graph() too. ONNX Runtime frees prepacked initializers the same
    /// way; without it a forward holds every Conv weight twice (resnet50: 90 MB more).
    /// forwardWithTrace() and backward() then fail. No effect with fp16, which packs nothing.
    bool releasePackedWeights = false;
};

/// Figures from one run.
struct RunStats {
    size_t peakActivationBytes = 0; ///< largest sum of live non-initializer buffers
    double seconds = 0.0;
    std::map<std::string, double> secondsByOpType; ///< filled when `profile` is set
    /// By node name, filled when `profile` is set; a fused chain counts under the name of its
    /// first node (a Conv's, a decomposed LayerNormalization's first ReduceMean).
    std::map<std::string, double> secondsByNode;
    /// The op each profiled node name ran: a fused chain's own (LayerNormalization, Gelu).
    std::map<std::string, std::string> opTypeByNode;
    bool profile = false; ///< set by the caller to time each op type
    /// Steps of shape arithmetic whose outputs came from the last run (shape_memo.h): the input
    /// shapes repeated.
    size_t reusedShapeSteps = 0;
    /// Concat inputs a Conv wrote into the Concat's output (concat_in_place.h), so the Concat
    /// did not copy them.
    size_t concatInputsPlaced = 0;
};

/// All values of one forward pass, kept for backward().
struct ForwardTrace {
    std::vector<Tensor> values; ///< indexed by ValueId::index(); undefined when never computed
    /// One TraceNote per step of the executor that traced it, shared by copies of the trace;
    /// null on a trace built by hand (its VJPs then derive everything on each sweep).
    std::shared_ptr<std::vector<TraceNote>> notes;
};

/// What one backward() sweep returns.
struct BackwardOptions {
    /// The values whose gradients are returned: activations, graph inputs or float weight
    /// initializers. Empty: every value reached, initializers included. Every other gradient is
    /// released as soon as its producer's VJP has used it, and only values computed from a kept
    /// one are differentiated at all.
    std::span<const graph::ValueId> keep;
    /// When > 0, the gradient of every kept initializer comes per sample: shape [B, ...its shape]
    /// with B = perSampleBatch, the samples on axis 0 of the trace (what weight-mode Hessians
    /// need). Only ops whose OpDef has perSampleWeightGrads (Conv, ConvTranspose, Gemm, MatMul)
    /// can give it; any other consumer of a kept initializer is an error naming the node.
    int64_t perSampleBatch = 0;
    /// With perSampleBatch: each kept initializer for which weightGradComesAsRowSquares() holds
    /// comes instead as its per-sample row sums of squares, Double [B, dim 0] (per sample and
    /// filter, the sum of the gradient's squares over every other axis): all that per-tensor and
    /// per-output-channel weight scores read, without the [B, ...weight] tensor written out and
    /// read back.
    bool perSampleRowSquares = false;
    RunStats* stats = nullptr; ///< with stats->profile set, times each op type's VJP
    /// When set, each kept value's gradient goes here instead of into the result: once per kept
    /// value, as soon as every consumer's VJP has added to it (undefined when none reached it);
    /// it is freed once the sweep is done with it and backward() returns none. A caller that
    /// reduces gradients (Hessian scores) reads each while it is still in cache, and a sweep
    /// holds a few of them at a time instead of all.
    std::function<Result<void>(graph::ValueId, const Tensor&)> onGradient;
};

class Executor {
public:
    /// Plans `graph` for execution. Fails with Unsupported naming the first node whose op is not
    /// registered, or InvalidModel on a cycle.
    static Result<Executor> create(graph::Graph graph, ExecutorOptions options = {});

    const graph::Graph& graph() const { return m_graph; }

    /// The inputs run() expects, in order: graph inputs that are not initializers.
    const std::vector<graph::ValueId>& inputIds() const { return m_inputIds; }

    /// Runs the graph; `inputs` follow inputIds(), the result follows graph().outputs().
    /// Checks input dtypes and ranks/static dims against the declared shapes.
    Result<std::vector<Tensor>> run(std::span<const Tensor> inputs, RunStats* stats = nullptr,
                                    Progress* progress = nullptr) const;

    /// Runs the graph keeping every value (for backward()).
    Result<ForwardTrace> forwardWithTrace(std::span<const Tensor> inputs) const;

    /// forwardWithTrace for backward() alone: Conv [+ Add] + Relu/Clip chains run fused, as run()
    /// runs them, and the values inside a chain (the Conv's and the Add's outputs), which no VJP
    /// reads (Relu's and Clip's read their output), are kept shape-only (Tensor::withoutData).
    /// Less time and fresh memory than the full trace, the same gradients; a caller that reads
    /// activations from the trace needs forwardWithTrace.
    Result<ForwardTrace> forwardForBackward(std::span<const Tensor> inputs) const;

    /// Back-propagates `seeds` (gradient of a scalar loss w.r.t. some values) through the trace
    /// and returns the gradients `options` asks for, indexed by ValueId::index(); undefined where
    /// no gradient flows.
    Result<std::vector<Tensor>> backward(const ForwardTrace& trace,
                                         std::span<const std::pair<graph::ValueId, Tensor>> seeds,
                                         const BackwardOptions& options) const;

    /// True when `weight` is an initializer read by one node alone, as the weight input (1) of an
    /// op whose VJP can reduce it to row sums of squares (Conv): BackwardOptions::
    /// perSampleRowSquares then applies to it.
    bool weightGradComesAsRowSquares(graph::ValueId weight) const;

    /// backward() keeping `keep` (empty: everything reached).
    Result<std::vector<Tensor>> backward(const ForwardTrace& trace,
                                         std::span<const std::pair<graph::ValueId, Tensor>> seeds,
                                         std::span<const graph::ValueId> keep = {},
                                         RunStats* stats = nullptr) const {
        return backward(trace, seeds, BackwardOptions{.keep = keep, .stats = stats});
    }

private:
    Executor() = default;

    Result<void> resolveOps();

    void wrapConstants();

    void planLifetimes();

    Result<void> bindInputs(std::span<const Tensor> inputs, std::vector<Tensor>& values) const;

    /// Runs `node` for step `step`; with `placements` (run()), a Conv whose output a planned
    /// Concat alone reads writes it into the Concat's output.
    Result<std::vector<Tensor>> runNode(const graph::Node& node, size_t step,
                                        const std::vector<Tensor>& values,
                                        ConcatInPlaceRun* placements = nullptr) const;

    Result<std::vector<Tensor>> graphOutputs(const std::vector<Tensor>& values) const;

    /// run()'s step `step`: `node`'s outputs from the last run when the shape memo has them for
    /// these shapes (counted in `reused`), a planned Concat's output from `placements`, else
    /// computed (and timed into `stats`).
    Result<std::vector<Tensor>> runOrReuse(size_t step, const graph::Node& node,
                                           const std::vector<Tensor>& values, ShapeMemoRun& memo,
                                           RunStats* stats, size_t& reused,
                                           ConcatInPlaceRun& placements) const;

    /// Back-propagates through one step, asking its VJP only for the gradients of `wanted`
    /// inputs, and releases its outputs' gradients but the `retained` ones; false when no
    /// gradient reached it or none of its inputs' is wanted.
    /// OpContext::rowSquaresMask of `node` when BackwardOptions::perSampleRowSquares is `asked`.
    uint64_t rowSquaresMask(const graph::Node& node, uint64_t perSample, bool asked) const;
    Result<bool> backwardStep(size_t step, const ForwardTrace& trace, std::vector<Tensor>& grads,
                              const std::vector<bool>& retained, const std::vector<bool>& wanted,
                              const BackwardOptions& options) const;

    /// The dx weights of Conv step `step` (weights `w`), packed on first use for Winograd or the
    /// GEMM, and the VJP input they go to (kWinogradInputGradWeightsInput or
    /// kGemmInputGradWeightsInput); undefined for a depthwise Conv or weights not the executor's.
    std::pair<Tensor, size_t> inputGradWeights(size_t step, const Tensor& x, const Tensor& w) const;

    /// For BackwardOptions::onGradient: per step, the kept values whose gradient is complete
    /// once that step has run; the last slot (m_order.size()) holds those complete from the start.
    std::vector<std::vector<graph::ValueId>>
    handOverPlan(std::span<const graph::ValueId> keep) const;

    /// Values whose gradient backward() needs: the kept ones and every value computed from one.
    std::vector<bool> wantedGradients(const std::vector<bool>& kept) const;

    /// Plans the fusions run() uses (see fusion in executor.cpp).
    void planFusions();

    /// planFusions' Conv chains, decomposed LayerNormalizations and GELUs, and MatMul biases;
    /// `stepOf` per node and `producedAt` per value (-1: graph input or initializer) index the
    /// steps.
    void planConvFusions(const std::vector<int64_t>& stepOf,
                         const std::vector<int64_t>& producedAt);
    void planLayerNormFusions(const std::vector<int64_t>& stepOf,
                              const std::vector<int64_t>& producedAt);
    void planGeluFusions(const std::vector<int64_t>& stepOf);
    void planMatMulBiasFusions(const std::vector<int64_t>& stepOf);

    /// Plans which steps run() may take from the last run (shape_memo.h); after planFusions.
    void planShapeMemo();

    /// Plans the Concats whose Conv inputs run() writes in place (concat_in_place.h); after
    /// planShapeMemo.
    void planConcatsInPlace();

    /// Packs the weights of GEMM-based Conv steps once (see packed_gemm.h).
    void prepackWeights();

    /// releasePackedWeights: drops the Conv weights only packed copies read.
    void releasePackedOriginals();

    /// forwardWithTrace (every step on its own) or, with `fuseChains`, forwardForBackward.
    Result<ForwardTrace> tracedForward(std::span<const Tensor> inputs, bool fuseChains) const;

    /// The fused node forwardForBackward runs for `step`: a fused Conv without an element-wise
    /// tail, or nullptr.
    const graph::Node* traceFusedNode(size_t step) const;

    /// forwardForBackward: the values inside the fused chain of Conv step `step` (whose output is
    /// `output`) shape-only in `trace`, and the chain's absorbed steps marked `skipped`.
    void keepChainShapes(size_t step, const Tensor& output, ForwardTrace& trace,
                         std::vector<bool>& skipped) const;

    /// A step's fused node, or nullptr.
    const graph::Node* fusedNode(size_t step) const;

    /// What run() runs for step `step`: its fused node, or its own node when there is none or
    /// fusedNodeRuns says no (the chain's steps are then marked in `unfused`).
    const graph::Node& nodeToRun(size_t step, const std::vector<Tensor>& values,
                                 std::vector<bool>& unfused) const;

    /// True when step `step`'s fused node (fusedNode) computes what its chain would for the
    /// inputs in `values`; false sends run() through the chain's own steps.
    bool fusedNodeRuns(size_t step, const std::vector<Tensor>& values) const;

    /// Records `fused` (running `op`) as step `step`'s node and marks the `absorbed` steps as
    /// computed by it; `traceable`: forwardForBackward may run it too.
    void addFusedNode(size_t step, graph::Node fused, const OpDef* op, bool traceable,
                      std::span<const graph::NodeId> absorbed, const std::vector<int64_t>& stepOf);

    graph::Graph m_graph;
    ExecutorOptions m_options;
    std::vector<graph::NodeId> m_order;
    std::vector<const OpDef*> m_ops;                  ///< per step
    std::vector<std::vector<graph::ValueId>> m_frees; ///< values released after each step
    std::vector<graph::ValueId> m_inputIds;
    /// Conv nodes with their epilogue folded in; decomposed LayerNormalizations and GELUs as one
    /// node; MatMuls with their bias.
    std::vector<graph::Node> m_fusedNodes;
    std::vector<const OpDef*> m_fusedOps; ///< per fused node: the op it runs
    std::vector<bool> m_fusedTraceable;   ///< per fused node: forwardForBackward runs it fused
    std::vector<int> m_fusedNodeOf;       ///< per step: index into m_fusedNodes, or -1
    std::vector<bool> m_fusedAway;        ///< per step: computed by an earlier fused node
    std::vector<std::vector<size_t>> m_fusedChainSteps; ///< per fused node: the steps it absorbs
    std::vector<Tensor> m_packedWeights; ///< per step: a Conv's packed weights, or undefined
    bool m_weightsReleased = false;      ///< releasePackedOriginals() dropped some weight

    /// Per step: a Conv's dx weights (packWinogradInputGradWeights or packGemmInputGradWeights),
    /// packed on the first backward sweep that needs them and shared by copies of the executor;
    /// Winograd weights per variant (sweptInputGradTile depends on the batch).
    struct InputGradWeights {
        std::mutex mutex;
        std::vector<std::array<Tensor, 2>> packed; ///< [F(2x2, 3x3) or GEMM, F(4x4, 3x3)]
    };

    std::shared_ptr<InputGradWeights> m_inputGradWeights;
    ShapeMemoPlan m_shapeMemoPlan;
    ConcatInPlacePlan m_concatPlan;
    std::shared_ptr<ShapeMemoCell> m_shapeMemo; ///< shared by copies of the executor
    std::vector<Tensor> m_constants; ///< initializers wrapped once, indexed by ValueId::index()
    int64_t m_opset = 21;
};

/// Element-wise a + b into a new tensor (same shapes, float); for gradient accumulation.
Tensor addTensors(const Tensor& a, const Tensor& b);

} // namespace qs::runtime
