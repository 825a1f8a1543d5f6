// Gemm (ONNX since 7; C optional since 11): Y = alpha * A' B' + beta * C, with A' = A or A^T
// (transA), B' = B or B^T (transB), C broadcast to [M, N]. Fast kernel: for a weight B with
// alpha 1 and no transA, the packed GEMM on the strips of B' the executor packed (input 4); else
// Eigen GEMM on row-major maps, split over columns of Y; reference: the triple loop. VJP: dA' =
// alpha dY B'^T, dB' = alpha A'^T dY, dC = beta dY summed back to C's shape.

#include "core/runtime/op_util.h"
#include "core/runtime/packed_gemm.h"
#include "core/runtime/parallel.h"

#include <Eigen/Core>

#include <algorithm>

namespace qs::runtime {
namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstRowMap = Eigen::Map<const RowMatrix>;

struct GemmShape {
    int64_t m = 0;
    int64_t k = 0;
    int64_t n = 0;
    bool transA = false;
    bool transB = false;
    float alpha = 1.0F;
    float beta = 1.0F;
};

// Shape rule: A [M, K] (or [K, M]), B [K, N] (or [N, K]) -> Y [M, N].
Result<GemmShape> inferShape(const OpContext& ctx) {
    QS_TRY(requireFloat(ctx, 0));
    QS_TRY(requireFloat(ctx, 1));
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    if (a.rank() != 2 || b.rank() != 2) {
        return ctx.error(Errc::InvalidModel, "A and B must be matrices");
    }
    GemmShape s;
    s.transA = ctx.intAttr("transA", 0) != 0;
    s.transB = ctx.intAttr("transB", 0) != 0;
    s.alpha = ctx.floatAttr("alpha", 1.0F);
    s.beta = ctx.floatAttr("beta", 1.0F);
    s.m = s.transA ? a.dim(1) : a.dim(0);
    s.k = s.transA ? a.dim(0) : a.dim(1);
    s.n = s.transB ? b.dim(0) : b.dim(1);
    const int64_t kb = s.transB ? b.dim(1) : b.dim(0);
    if (kb != s.k) {
        return ctx.error(Errc::InvalidModel,
                         "inner dimensions differ: " + shapeToString(a.shape()) + " and " +
                             shapeToString(b.shape()));
    }
    if (ctx.has(2)) {
        QS_TRY(requireFloat(ctx, 2));
        auto plan = makeBroadcastPlan({ctx.input(2).shape(), {s.m, s.n}});
        if (!plan.ok() || plan->outShape != Shape{s.m, s.n}) {
            return ctx.error(Errc::InvalidModel, "C does not broadcast to [M, N]");
        }
    }
    return s;
}

/// Y = beta * C broadcast to [M, N] (zero without C), element by element: the reference's.
Tensor broadcastOutput(const OpContext& ctx, const GemmShape& s) {
    Tensor y = Tensor::zeros(graph::DataType::Float, {s.m, s.n});
    if (ctx.has(2) && s.beta != 0.0F) {
        const Tensor& c = ctx.input(2);
        auto plan = makeBroadcastPlan({{s.m, s.n}, c.shape()});
        const float* pc = c.data<float>();
        float* py = y.mutableData<float>();
        forEachBroadcast(*plan,
                         [&](int64_t i, const int64_t* off) { py[i] = s.beta * pc[off[1]]; });
    }
    return y;
}

/// broadcastOutput for the fast kernel: a bias row (C of [N] or [1, N]), the usual C, is copied
/// row by row; the index computation per element took 5 % of a small transformer's forward.
Tensor initialOutput(const OpContext& ctx, const GemmShape& s) {
    // [N], [1, N], and a scalar when N is 1.
    const bool biasRow =
        ctx.has(2) && s.beta != 0.0F && ctx.input(2).numElements() == s.n &&
        (ctx.input(2).rank() <= 1 || (ctx.input(2).rank() == 2 && ctx.input(2).dim(0) == 1));
    if (!biasRow) {
        return broadcastOutput(ctx, s);
    }
    const float* pc = ctx.input(2).data<float>();
    Tensor y = Tensor::allocate(graph::DataType::Float, {s.m, s.n});
    float* py = y.mutableData<float>();
    for (int64_t i = 0; i < s.m; ++i) {
        std::transform(pc, pc + s.n, py + i * s.n, [&](float v) { return s.beta * v; });
    }
    return y;
}

Result<std::vector<Tensor>> reference(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(GemmShape s, inferShape(ctx));
    Tensor y = broadcastOutput(ctx, s);
    const float* a = ctx.input(0).data<float>();
    const float* b = ctx.input(1).data<float>();
    float* py = y.mutableData<float>();
    for (int64_t i = 0; i < s.m; ++i) {
        for (int64_t j = 0; j < s.n; ++j) {
            double acc = 0.0;
            for (int64_t p = 0; p < s.k; ++p) {
                const float av = s.transA ? a[p * s.m + i] : a[i * s.k + p];
                const float bv = s.transB ? b[j * s.k + p] : b[p * s.n + j];
                acc += static_cast<double>(av) * bv;
            }
            py[i * s.n + j] += s.alpha * static_cast<float>(acc);
        }
    }
    return std::vector<Tensor>{y};
}

/// The strips of B' the executor packed (input 4 of its private node, for a weight B when alpha
/// is 1 and A is not transposed), or nullptr.
Result<const float*> prepackedStrips(const OpContext& ctx, const GemmShape& s) {
    if (!ctx.has(4)) {
        return nullptr;
    }
    const Tensor& strips = ctx.input(4);
    if (s.transA || s.alpha != 1.0F || strips.dtype() != graph::DataType::Float ||
        strips.numElements() != packedStripsSize(s.k, s.n)) {
        return ctx.error(Errc::InvalidArgument, "the prepacked strips do not fit B");
    }
    return strips.data<float>();
}

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(GemmShape s, inferShape(ctx));
    QS_ASSIGN_OR_RETURN(const float* strips, prepackedStrips(ctx, s));
    Tensor y = initialOutput(ctx, s);
    if (strips != nullptr && s.m >= kGemmRows) { // a batch-1 classifier (M = 1) stays on Eigen
        gemmPrepackedB(s.m, s.n, s.k, ctx.input(0).data<float>(), s.k, strips,
                       GemmOutput{.c = y.mutableData<float>(), .ldc = s.n, .accumulate = true});
        return std::vector<Tensor>{y};
    }
    const ConstRowMap a(ctx.input(0).data<float>(), ctx.input(0).dim(0), ctx.input(0).dim(1));
    const ConstRowMap b(ctx.input(1).data<float>(), ctx.input(1).dim(0), ctx.input(1).dim(1));
    float* py = y.mutableData<float>();
    // Split over output columns: batch-1 classifiers have M = 1 and a large N.
    parallelFor(s.n, minChunkForWork(s.m * s.k, 64), [&](int64_t j0, int64_t j1) {
        Eigen::Map<RowMatrix, 0, Eigen::OuterStride<>> block(py + j0, s.m, j1 - j0,
                                                             Eigen::OuterStride<>(s.n));
        const int64_t cols = j1 - j0;
        if (s.transA && s.transB) {
            block.noalias() += s.alpha * (a.transpose() * b.middleRows(j0, cols).transpose());
        } else if (s.transA) {
            block.noalias() += s.alpha * (a.transpose() * b.middleCols(j0, cols));
        } else if (s.transB) {
            block.noalias() += s.alpha * (a * b.middleRows(j0, cols).transpose());
        } else {
            block.noalias() += s.alpha * (a * b.middleCols(j0, cols));
        }
    });
    return std::vector<Tensor>{y};
}

/// A weight streamed from memory costs about what this many multiply-adds from the caches do: a
/// classifier's dA at batch 1 (a product with one row) reads megabytes of B for few products,
/// and counting its multiply-adds alone kept it on one thread.
constexpr int64_t kStreamedWeightWork = 16;

/// dA = alpha dY B'^T, or its transpose for transA; products of the maps, no transposed copies
/// (a classifier's B is megabytes), split over the threads by A's columns (rows for transA), so
/// each thread reads its own part of B.
Tensor inputGradA(const GemmShape& s, const ConstRowMap& b, const ConstRowMap& dy,
                  const Shape& shape) {
    Tensor da = allocateFloat(shape);
    Eigen::Map<RowMatrix> out(da.mutableData<float>(), shape[0], shape[1]);
    const int64_t workPerK = std::max(s.m, kStreamedWeightWork) * s.n;
    parallelFor(s.k, minChunkForWork(workPerK, 16), [&](int64_t k0, int64_t k1) {
        const int64_t count = k1 - k0;
        // B'^T's columns [k0, k1): B's columns for transB, its rows otherwise.
        if (!s.transA && s.transB) {
            out.middleCols(k0, count).noalias() = s.alpha * (dy * b.middleCols(k0, count));
        } else if (!s.transA) {
            out.middleCols(k0, count).noalias() =
                s.alpha * (dy * b.middleRows(k0, count).transpose());
        } else if (s.transB) {
            out.middleRows(k0, count).noalias() =
                s.alpha * (b.middleCols(k0, count).transpose() * dy.transpose());
        } else {
            out.middleRows(k0, count).noalias() =
                s.alpha * (b.middleRows(k0, count) * dy.transpose());
        }
    });
    return da;
}

/// dB = alpha A'^T dY, or its transpose (alpha dY^T A') for transB.
Tensor inputGradB(const GemmShape& s, const ConstRowMap& a, const ConstRowMap& dy,
                  const Shape& shape) {
    Tensor db = allocateFloat(shape);
    Eigen::Map<RowMatrix> out(db.mutableData<float>(), shape[0], shape[1]);
    if (!s.transB && s.transA) {
        out.noalias() = s.alpha * (a * dy);
    } else if (!s.transB) {
        out.noalias() = s.alpha * (a.transpose() * dy);
    } else if (s.transA) {
        out.noalias() = s.alpha * (dy.transpose() * a.transpose());
    } else {
        out.noalias() = s.alpha * (dy.transpose() * a);
    }
    return db;
}

/// dB' per row of A' (one sample per row): dB_i = alpha a'_i^T dy_i, or its transpose for
/// transB; [M, ...B's shape], rows split over the threads.
Tensor perSampleGradB(const GemmShape& s, const ConstRowMap& a, const ConstRowMap& dy,
                      const Shape& shape) {
    Shape out = shape;
    out.insert(out.begin(), s.m);
    Tensor db = allocateFloat(out);
    float* pdb = db.mutableData<float>();
    parallelFor(s.m, 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            // Row i of A' as a column: A' = A (row i) or A^T (column i of A).
            Eigen::VectorXf ai = s.transA ? Eigen::VectorXf(a.col(i)) : Eigen::VectorXf(a.row(i));
            const auto gi = dy.row(i);
            Eigen::Map<RowMatrix> slot(pdb + i * s.k * s.n, shape[0], shape[1]);
            if (s.transB) {
                slot.noalias() = s.alpha * (gi.transpose() * ai.transpose());
            } else {
                slot.noalias() = s.alpha * (ai * gi);
            }
        }
    });
    return db;
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor>,
                                std::span<const Tensor> outputGrads) {
    QS_ASSIGN_OR_RETURN(GemmShape s, inferShape(ctx));
    const ConstRowMap a(ctx.input(0).data<float>(), ctx.input(0).dim(0), ctx.input(0).dim(1));
    const ConstRowMap b(ctx.input(1).data<float>(), ctx.input(1).dim(0), ctx.input(1).dim(1));
    const ConstRowMap dy(outputGrads[0].data<float>(), s.m, s.n);
    std::vector<Tensor> grads(ctx.numInputs());
    if (ctx.wantsGrad(0)) {
        grads[0] = inputGradA(s, b, dy, ctx.input(0).shape());
    }
    if (ctx.wantsPerSample(0) || ctx.wantsPerSample(2)) {
        return ctx.error(Errc::Unsupported, "per-sample gradients only for the weight input B");
    }
    if (ctx.wantsPerSample(1)) {
        if (s.m != ctx.perSampleBatch) {
            return ctx.error(Errc::InvalidArgument,
                             "per-sample weight gradients need one sample per row of A', got " +
                                 std::to_string(s.m) + " rows for " +
                                 std::to_string(ctx.perSampleBatch) + " samples");
        }
        grads[1] = perSampleGradB(s, a, dy, ctx.input(1).shape());
    } else if (ctx.wantsGrad(1)) {
        grads[1] = inputGradB(s, a, dy, ctx.input(1).shape());
    }
    if (ctx.has(2) && ctx.wantsGrad(2)) {
        Tensor dc = reduceToShape(outputGrads[0], ctx.input(2).shape());
        Tensor scaled = allocateFloat(dc.shape());
        for (int64_t i = 0; i < dc.numElements(); ++i) {
            scaled.mutableData<float>()[i] = s.beta * dc.data<float>()[i];
        }
        grads[2] = scaled;
    }
    return grads;
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {
        {"plain with C row",
         {},
         {randomTensor(rng, {3, 4}), randomTensor(rng, {4, 5}), randomTensor(rng, {5})},
         {}},
        {"transB alpha beta",
         {intAttribute("transB", 1), floatAttribute("alpha", 0.5F), floatAttribute("beta", 2.0F)},
         {randomTensor(rng, {2, 4}), randomTensor(rng, {3, 4}), randomTensor(rng, {2, 3})},
         {}},
        {"transA no C",
         {intAttribute("transA", 1)},
         {randomTensor(rng, {4, 2}), randomTensor(rng, {4, 3})},
         {}},
        {"bias row [1, N], beta 0.5",
         {floatAttribute("beta", 0.5F)},
         {randomTensor(rng, {3, 4}), randomTensor(rng, {4, 5}), randomTensor(rng, {1, 5})},
         {}},
        {"scalar C, N = 1",
         {floatAttribute("beta", 2.0F)},
         {randomTensor(rng, {3, 4}), randomTensor(rng, {4, 1}), Tensor::scalar<float>(0.75F)},
         {}},
        {"transA transB alpha",
         {intAttribute("transA", 1), intAttribute("transB", 1), floatAttribute("alpha", -1.5F)},
         {randomTensor(rng, {4, 2}), randomTensor(rng, {3, 4}), randomTensor(rng, {2, 1})},
         {}},
    };
}

const OpDef kGemm{.opType = "Gemm",
                  .domain = "",
                  .sinceVersion = 7,
                  .doc = "alpha * A' B' + beta * C",
                  .minInputs = 2,
                  .maxInputs = 3,
                  .forward = forward,
                  .reference = reference,
                  .vjp = vjp,
                  .samples = samples,
                  .perSampleWeightGrads = true};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(gemm, kGemm)
