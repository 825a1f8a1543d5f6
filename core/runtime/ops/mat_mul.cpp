// MatMul (ONNX since 9): numpy matmul. Rank-1 operands are promoted ([K] -> [1, K] on the left,
// [K, 1] on the right) and the promoted dim removed from the result; leading (batch) dims
// broadcast. Fast kernel: one Eigen GEMM per batch; reference: the triple loop. VJP: dA = dY B^T,
// dB = A^T dY, each summed over the batch dims its operand was broadcast along.

#include "core/runtime/op_util.h"
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

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(MatMulShape s, inferShape(ctx));
    const float* a = ctx.input(0).data<float>();
    const float* b = ctx.input(1).data<float>();
    Tensor y = allocateFloat(s.outShape);
    float* py = y.mutableData<float>();
    std::vector<std::array<int64_t, 3>> batches;
    forEachBatch(s, [&](int64_t o, int64_t ia, int64_t ib) { batches.push_back({o, ia, ib}); });
    if (batches.size() > 1) {
        parallelFor(static_cast<int64_t>(batches.size()), 1, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) {
                const auto [o, ia, ib] = batches[static_cast<size_t>(i)];
                RowMap(py + o * s.m * s.n, s.m, s.n).noalias() =
                    ConstRowMap(a + ia * s.m * s.k, s.m, s.k) *
                    ConstRowMap(b + ib * s.k * s.n, s.k, s.n);
            }
        });
    } else {
        const ConstRowMap am(a, s.m, s.k);
        const ConstRowMap bm(b, s.k, s.n);
        parallelFor(s.n, 64, [&](int64_t j0, int64_t j1) {
            Eigen::Map<RowMatrix, 0, Eigen::OuterStride<>>(py + j0, s.m, j1 - j0,
                                                           Eigen::OuterStride<>(s.n))
                .noalias() = am * bm.middleCols(j0, j1 - j0);
        });
    }
    return std::vector<Tensor>{y};
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor>,
                                std::span<const Tensor> outputGrads) {
    QS_ASSIGN_OR_RETURN(MatMulShape s, inferShape(ctx));
    const float* a = ctx.input(0).data<float>();
    const float* b = ctx.input(1).data<float>();
    const float* dy = outputGrads[0].data<float>();
    Tensor da = Tensor::zeros(graph::DataType::Float, ctx.input(0).shape());
    Tensor db = Tensor::zeros(graph::DataType::Float, ctx.input(1).shape());
    float* pda = da.mutableData<float>();
    float* pdb = db.mutableData<float>();
    const bool wantB = ctx.wantsGrad(1);
    forEachBatch(s, [&](int64_t o, int64_t ia, int64_t ib) {
        const ConstRowMap g(dy + o * s.m * s.n, s.m, s.n);
        RowMap(pda + ia * s.m * s.k, s.m, s.k).noalias() +=
            g * ConstRowMap(b + ib * s.k * s.n, s.k, s.n).transpose();
        if (wantB) {
            RowMap(pdb + ib * s.k * s.n, s.k, s.n).noalias() +=
                ConstRowMap(a + ia * s.m * s.k, s.m, s.k).transpose() * g;
        }
    });
    return std::vector<Tensor>{da, wantB ? db : Tensor()};
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {
        {"2-D", {}, {randomTensor(rng, {3, 4}), randomTensor(rng, {4, 5})}, {}},
        {"batched broadcast",
         {},
         {randomTensor(rng, {2, 1, 3, 4}), randomTensor(rng, {3, 4, 2})},
         {}},
        {"vector times matrix", {}, {randomTensor(rng, {4}), randomTensor(rng, {2, 4, 3})}, {}},
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
                    .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(mat_mul, kMatMul)
