// MatMul (ONNX since 9): numpy matmul. Rank-1 operands are promoted ([K] -> [1, K] on the left,
// [K, 1] on the right) and the promoted dim removed from the result; leading (batch) dims
// broadcast. Fast kernel: with a 2-D B, A's batch dims are folded into its rows, and a weight B
// runs on the packed GEMM with the strips the executor packed; else one Eigen GEMM per batch;
// reference: the triple loop. VJP: dA = dY B^T, dB = A^T dY, each summed over the
// batch dims its operand was broadcast along. The executor's private node of a linear layer
// carries the bias of the Add after it as input 2, added to the product (matmul_bias_fusion.h).

#include "core/runtime/matmul_bias_fusion.h"
#include "core/runtime/op_util.h"
#include "core/runtime/packed_gemm.h"
#include "core/runtime/parallel.h"

#include <Eigen/Core>

namespace qs::runtime {
namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstRowMap = Eigen::Map<const RowMatrix>;
using RowMap = Eigen::Map<RowMatrix>;

struct MatMulShape {
    int64_t m = 0;
    int64_t k = 0;
    int64_t n = 0;
    Shape aBatch; ///< A's batch dims
    Shape bBatch;
    BroadcastPlan batch; ///< over {outBatch, aBatch, bBatch}
    Shape outShape;
};

// Shape rule: [..., M, K] x [..., K, N] -> [broadcast(...), M, N], minus promoted dims.
Result<MatMulShape> inferShape(const OpContext& ctx) {
    QS_TRY(requireFloat(ctx, 0));
    QS_TRY(requireFloat(ctx, 1));
    Shape a = ctx.input(0).shape();
    Shape b = ctx.input(1).shape();
    if (a.empty() || b.empty()) {
        return ctx.error(Errc::InvalidModel, "operands must have rank >= 1");
    }
    const bool aVector = a.size() == 1;
    const bool bVector = b.size() == 1;
    if (aVector) {
        a.insert(a.begin(), 1);
    }
    if (bVector) {
        b.push_back(1);
    }
    MatMulShape s;
    s.m = a[a.size() - 2];
    s.k = a.back();
    s.n = b.back();
    if (b[b.size() - 2] != s.k) {
        return ctx.error(Errc::InvalidModel,
                         "inner dimensions differ: " + shapeToString(ctx.input(0).shape()) +
                             " and " + shapeToString(ctx.input(1).shape()));
    }
    s.aBatch.assign(a.begin(), a.end() - 2);
    s.bBatch.assign(b.begin(), b.end() - 2);
    auto batchPlan = makeBroadcastPlan({s.aBatch, s.bBatch});
    if (!batchPlan.ok()) {
        return ctx.error(Errc::InvalidModel, batchPlan.error().message());
    }
    const Shape outBatch = batchPlan->outShape;
    QS_ASSIGN_OR_RETURN(s.batch, makeBroadcastPlan({outBatch, s.aBatch, s.bBatch}));
    s.outShape = outBatch;
    if (!aVector) {
        s.outShape.push_back(s.m);
    }
    if (!bVector) {
        s.outShape.push_back(s.n);
    }
    return s;
}

/// With a B that has no batch (a weight), A's batch dims are more rows of one GEMM: [..., M, K]
/// is [prod(...) M, K] in memory, as the output is. One [32 B, 128] x [128, 384] product instead
/// of 32 products of B rows (a transformer's sequence-first projections) keeps the kernel busy.
Result<void> foldBatchIntoRows(MatMulShape& s) {
    if (s.aBatch.empty() || shapeNumElements(s.bBatch) != 1) {
        return {};
    }
    s.m *= shapeNumElements(s.aBatch);
    s.aBatch.clear();
    s.bBatch.clear();
    QS_ASSIGN_OR_RETURN(s.batch, makeBroadcastPlan({Shape{}, Shape{}, Shape{}}));
    return {};
}

/// Calls fn(outBatch, aBatch, bBatch) for every output batch.
template <typename Fn>
void forEachBatch(const MatMulShape& s, Fn&& fn) {
    forEachBroadcast(s.batch, [&](int64_t, const int64_t* off) { fn(off[0], off[1], off[2]); });
}

Result<std::vector<Tensor>> reference(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(MatMulShape s, inferShape(ctx));
    const float* a = ctx.input(0).data<float>();
    const float* b = ctx.input(1).data<float>();
    Tensor y = allocateFloat(s.outShape);
    float* py = y.mutableData<float>();
    forEachBatch(s, [&](int64_t o, int64_t ia, int64_t ib) {
        for (int64_t i = 0; i < s.m; ++i) {
            for (int64_t j = 0; j < s.n; ++j) {
                double acc = 0.0;
                for (int64_t p = 0; p < s.k; ++p) {
                    acc += static_cast<double>(a[ia * s.m * s.k + i * s.k + p]) *
                           b[ib * s.k * s.n + p * s.n + j];
                }
                py[o * s.m * s.n + i * s.n + j] = static_cast<float>(acc);
            }
        }
    });
    return std::vector<Tensor>{y};
}

/// B's strips as the executor packed them (input 4 of its private node, for a 2-D weight B), or
/// nullptr.
Result<const float*> prepackedStrips(const OpContext& ctx, const MatMulShape& s) {
    if (!ctx.has(4)) {
        return nullptr;
    }
    const Tensor& strips = ctx.input(4);
    if (ctx.input(1).rank() != 2 || strips.dtype() != graph::DataType::Float ||
        strips.numElements() != packedStripsSize(s.k, s.n)) {
        return ctx.error(Errc::InvalidArgument, "the prepacked strips do not fit B");
    }
    return strips.data<float>();
}

/// y [..., n] += bias [n], when the executor's private node carries one (matmul_bias_fusion.h):
/// the sum the unfused Add computes, while y is in cache.
Result<void> addBias(const OpContext& ctx, int64_t n, Tensor& y) {
    if (!ctx.has(kMatMulBiasInput)) {
        return success();
    }
    const Tensor& bias = ctx.input(kMatMulBiasInput);
    if (bias.dtype() != graph::DataType::Float || bias.numElements() != n) {
        return ctx.error(Errc::InvalidArgument, "the fused bias does not fit the output");
    }
    const float* b = bias.data<float>();
    float* py = y.mutableData<float>();
    const int64_t rows = y.numElements() / std::max<int64_t>(n, 1);
    for (int64_t row = 0; row < rows; ++row) {
        float* out = py + row * n;
        for (int64_t j = 0; j < n; ++j) {
            out[j] += b[j];
        }
    }
    return success();
}

Result<std::vector<Tensor>> product(const OpContext& ctx);

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(std::vector<Tensor> out, product(ctx));
    QS_TRY(addBias(ctx, out[0].rank() > 0 ? out[0].dim(-1) : 1, out[0]));
    return out;
}

Result<std::vector<Tensor>> product(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(MatMulShape s, inferShape(ctx));
    QS_TRY(foldBatchIntoRows(s));
    QS_ASSIGN_OR_RETURN(const float* strips, prepackedStrips(ctx, s));
    const float* a = ctx.input(0).data<float>();
    const float* b = ctx.input(1).data<float>();
    Tensor y = allocateFloat(s.outShape);
    float* py = y.mutableData<float>();
    if (s.m * s.n * s.k == 0) {
        std::fill_n(py, y.numElements(), 0.0F);
        return std::vector<Tensor>{y};
    }
    if (strips != nullptr && s.m >= kGemmRows) {
        // A weight: the packed GEMM (the AVX-512 tile where the processor has one) on the
        // executor's strips, A's batch dims folded into its rows. Fewer rows than a panel (a
        // vector times a matrix) would waste most of each tile: Eigen then.
        gemmPrepackedB(s.m, s.n, s.k, a, s.k, strips, GemmOutput{.c = py, .ldc = s.n});
        return std::vector<Tensor>{y};
    }
    // Products of two activations (attention's scores and context) on Eigen's GEMM, which packs
    // both sides itself and beat the packed kernel at 32 x 32 x 32.
    std::vector<std::array<int64_t, 3>> batches;
    forEachBatch(s, [&](int64_t o, int64_t ia, int64_t ib) { batches.push_back({o, ia, ib}); });
    if (batches.size() > 1) {
        parallelFor(static_cast<int64_t>(batches.size()), minChunkForWork(s.m * s.n * s.k),
                    [&](int64_t begin, int64_t end) {
                        for (int64_t i = begin; i < end; ++i) {
                            const auto [o, ia, ib] = batches[static_cast<size_t>(i)];
                            RowMap(py + o * s.m * s.n, s.m, s.n).noalias() =
                                ConstRowMap(a + ia * s.m * s.k, s.m, s.k) *
                                ConstRowMap(b + ib * s.k * s.n, s.k, s.n);
                        }
                    });
        return std::vector<Tensor>{y};
    }
    const ConstRowMap am(a, s.m, s.k);
    const ConstRowMap bm(b, s.k, s.n);
    parallelFor(s.n, minChunkForWork(s.m * s.k, 64), [&](int64_t j0, int64_t j1) {
        Eigen::Map<RowMatrix, 0, Eigen::OuterStride<>>(py + j0, s.m, j1 - j0,
                                                       Eigen::OuterStride<>(s.n))
            .noalias() = am * bm.middleCols(j0, j1 - j0);
    });
    return std::vector<Tensor>{y};
}

/// dB per sample for a 2-D B: A seen as [N, R, K] (samples on axis 0), G as [N, R, N'], so
/// dB_n = A_n^T G_n, one GEMM per sample, samples split over the threads.
Result<Tensor> perSampleGradB(const OpContext& ctx, const MatMulShape& s, const float* a,
                              const float* dy) {
    const Tensor& ta = ctx.input(0);
    const int64_t samples = ctx.perSampleBatch;
    if (ctx.input(1).rank() != 2 || ta.rank() < 2 || ta.dim(0) != samples) {
        return ctx.error(Errc::InvalidArgument,
                         "per-sample weight gradients need A with the " + std::to_string(samples) +
                             " samples on axis 0 and a 2-D B, got " + shapeToString(ta.shape()) +
                             " and " + shapeToString(ctx.input(1).shape()));
    }
    const int64_t rows = ta.numElements() / (samples * s.k);
    Tensor db = allocateFloat({samples, s.k, s.n});
    float* pdb = db.mutableData<float>();
    parallelFor(samples, 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            RowMap(pdb + i * s.k * s.n, s.k, s.n).noalias() =
                ConstRowMap(a + i * rows * s.k, rows, s.k).transpose() *
                ConstRowMap(dy + i * rows * s.n, rows, s.n);
        }
    });
    Shape shape = ctx.input(1).shape();
    shape.insert(shape.begin(), samples);
    return db.reshaped(shape);
}

/// Number of elements of a batch shape.
int64_t batchCount(const Shape& batch) {
    return shapeNumElements(batch);
}

/// dA = dY B^T per batch: batches split over the threads when each writes its own slice, the
/// rows of dA when there is one batch.
Tensor inputGradA(const OpContext& ctx, const MatMulShape& s,
                  const std::vector<std::array<int64_t, 3>>& batches, const float* b,
                  const float* dy) {
    const auto count = static_cast<int64_t>(batches.size());
    Tensor da = Tensor::zeros(graph::DataType::Float, ctx.input(0).shape());
    float* pda = da.mutableData<float>();
    const auto gradA = [&](int64_t i) {
        const auto [o, ia, ib] = batches[static_cast<size_t>(i)];
        RowMap(pda + ia * s.m * s.k, s.m, s.k).noalias() +=
            ConstRowMap(dy + o * s.m * s.n, s.m, s.n) *
            ConstRowMap(b + ib * s.k * s.n, s.k, s.n).transpose();
    };
    if (batchCount(s.aBatch) == count && count > 1) { // every batch writes its own slice
        parallelFor(count, 1, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) {
                gradA(i);
            }
        });
    } else if (count == 1) { // rows of dA split over the threads
        parallelFor(s.m, 16, [&](int64_t r0, int64_t r1) {
            RowMap(pda + r0 * s.k, r1 - r0, s.k).noalias() =
                ConstRowMap(dy + r0 * s.n, r1 - r0, s.n) * ConstRowMap(b, s.k, s.n).transpose();
        });
    } else {
        for (int64_t i = 0; i < count; ++i) {
            gradA(i);
        }
    }
    return da;
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor>,
                                std::span<const Tensor> outputGrads) {
    QS_ASSIGN_OR_RETURN(MatMulShape s, inferShape(ctx));
    QS_TRY(foldBatchIntoRows(s));
    const float* a = ctx.input(0).data<float>();
    const float* b = ctx.input(1).data<float>();
    const float* dy = outputGrads[0].data<float>();
    std::vector<std::array<int64_t, 3>> batches;
    forEachBatch(s, [&](int64_t o, int64_t ia, int64_t ib) { batches.push_back({o, ia, ib}); });
    const auto count = static_cast<int64_t>(batches.size());
    std::vector<Tensor> grads(2);
    if (ctx.wantsPerSample(0)) {
        return ctx.error(Errc::Unsupported, "per-sample gradients only for the weight input B");
    }
    if (ctx.wantsGrad(0)) {
        grads[0] = inputGradA(ctx, s, batches, b, dy);
    }
    if (ctx.wantsPerSample(1)) {
        QS_ASSIGN_OR_RETURN(grads[1], perSampleGradB(ctx, s, a, dy));
    } else if (ctx.wantsGrad(1)) {
        Tensor db = Tensor::zeros(graph::DataType::Float, ctx.input(1).shape());
        float* pdb = db.mutableData<float>();
        if (batchCount(s.bBatch) == 1 && batchCount(s.aBatch) == count) {
            // A weight: dB = A^T G over all batches at once, columns split over the threads.
            const ConstRowMap am(a, count * s.m, s.k);
            const ConstRowMap gm(dy, count * s.m, s.n);
            parallelFor(s.n, 32, [&](int64_t j0, int64_t j1) {
                Eigen::Map<RowMatrix, 0, Eigen::OuterStride<>>(pdb + j0, s.k, j1 - j0,
                                                               Eigen::OuterStride<>(s.n))
                    .noalias() = am.transpose() * gm.middleCols(j0, j1 - j0);
            });
        } else {
            for (const auto& [o, ia, ib] : batches) {
                RowMap(pdb + ib * s.k * s.n, s.k, s.n).noalias() +=
                    ConstRowMap(a + ia * s.m * s.k, s.m, s.k).transpose() *
                    ConstRowMap(dy + o * s.m * s.n, s.m, s.n);
            }
        }
        grads[1] = db;
    }
    return grads;
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {
        {"2-D", {}, {randomTensor(rng, {3, 4}), randomTensor(rng, {4, 5})}, {}},
        {"batched broadcast",
         {},
         {randomTensor(rng, {2, 1, 3, 4}), randomTensor(rng, {3, 4, 2})},
         {}},
        {"vector times matrix", {}, {randomTensor(rng, {4}), randomTensor(rng, {2, 4, 3})}, {}},
        // A's batch dims fold into its rows: B has none, or only dims of 1.
        {"batched A, 2-D B", {}, {randomTensor(rng, {2, 3, 4}), randomTensor(rng, {4, 5})}, {}},
        {"batched A, B of one batch",
         {},
         {randomTensor(rng, {2, 1, 3, 4}), randomTensor(rng, {1, 4, 5})},
         {}},
        {"matrix times vector", {}, {randomTensor(rng, {3, 4}), randomTensor(rng, {4})}, {}},
    };
}

const OpDef kMatMul{.opType = "MatMul",
                    .domain = "",
                    .sinceVersion = 9,
                    .doc = "numpy matmul with batch broadcasting",
                    .minInputs = 2,
                    .maxInputs = 2,
                    .forward = forward,
                    .reference = reference,
                    .vjp = vjp,
                    .samples = samples,
                    .perSampleWeightGrads = true};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(mat_mul, kMatMul)
