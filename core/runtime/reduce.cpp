#include "core/runtime/reduce.h"

#include "core/runtime/parallel.h"

#ifdef __AVX2__
#include <immintrin.h>
#endif

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

namespace qs::runtime {

Result<ReducePlan> makeReducePlanForAxes(const Shape& shape, const std::vector<int64_t>& axes,
                                         bool keepDims) {
    const auto rank = static_cast<int64_t>(shape.size());
    std::vector<bool> reduced(shape.size(), false);
    for (int64_t axis : axes) {
        if (axis < -rank || axis >= std::max<int64_t>(rank, 1)) {
            return Error(Errc::InvalidModel, "reduction axis " + std::to_string(axis) +
                                                 " is out of range for rank " +
                                                 std::to_string(rank));
        }
        if (rank > 0) {
            reduced[static_cast<size_t>(axis < 0 ? axis + rank : axis)] = true;
        }
    }
    ReducePlan r;
    for (size_t d = 0; d < shape.size(); ++d) {
        r.keptShape.push_back(reduced[d] ? 1 : shape[d]);
        if (reduced[d]) {
            r.groupSize *= shape[d];
            if (keepDims) {
                r.outShape.push_back(1);
            }
        } else {
            r.outShape.push_back(shape[d]);
        }
    }
    QS_ASSIGN_OR_RETURN(r.plan, makeBroadcastPlan({shape, r.keptShape}));
    return r;
}

Result<ReducePlan> makeReducePlan(const OpContext& ctx, bool axesFromInput) {
    const Shape& shape = ctx.input(0).shape();
    std::vector<int64_t> axes =
        axesFromInput ? (ctx.has(1) ? toInt64Vector(ctx.input(1)) : std::vector<int64_t>{})
                      : ctx.intsAttr("axes");
    const bool keepDims = ctx.intAttr("keepdims", 1) != 0;
    if (axes.empty()) {
        if (ctx.intAttr("noop_with_empty_axes", 0) != 0) {
            return makeReducePlanForAxes(shape, {}, keepDims);
        }
        for (size_t d = 0; d < shape.size(); ++d) {
            axes.push_back(static_cast<int64_t>(d));
        }
    }
    auto plan = makeReducePlanForAxes(shape, axes, keepDims);
    if (!plan.ok()) {
        return ctx.error(Errc::InvalidModel, plan.error().message());
    }
    return plan;
}

} // namespace qs::runtime

namespace qs::runtime {
namespace {

bool isFloatOrDouble(graph::DataType dtype) {
    return dtype == graph::DataType::Float || dtype == graph::DataType::Double;
}

template <typename T>
std::vector<double> maximaOf(const ReducePlan& r, const T* x) {
    std::vector<double> maxima(static_cast<size_t>(shapeNumElements(r.outShape)),
                               -std::numeric_limits<double>::infinity());
    forEachReduced(r, [&](int64_t in, int64_t out) {
        double& m = maxima[static_cast<size_t>(out)];
        m = std::max(m, static_cast<double>(x[in]));
    });
    return maxima;
}

/// True when every output element reduces a contiguous run of groupSize input elements: the
/// reduced axes (those of size > 1) all come after the kept ones, as in a LayerNorm's mean over
/// the last axis.
bool reducesTrailingRuns(const ReducePlan& r, const Shape& inputShape) {
    bool reducing = false;
    for (size_t d = 0; d < inputShape.size(); ++d) {
        const bool reduced = r.keptShape[d] == 1 && inputShape[d] != 1;
        if (reducing && !reduced && inputShape[d] != 1) {
            return false;
        }
        reducing = reducing || reduced;
    }
    return true;
}

/// An input seen as [outer, group, inner] whose middle axis is the reduced one (the reduced axes
/// of size > 1 are adjacent, with kept axes of size > 1 after them), as in a mean over the tokens
/// of [batch, tokens, features].
struct MiddleAxis {
    int64_t outer = 1;
    int64_t group = 1;
    int64_t inner = 1;
};

std::optional<MiddleAxis> reducesAMiddleAxis(const ReducePlan& r, const Shape& inputShape) {
    MiddleAxis m;
    int stage = 0; // 0: kept axes before, 1: reduced axes, 2: kept axes after
    for (size_t d = 0; d < inputShape.size(); ++d) {
        if (inputShape[d] == 1) {
            continue;
        }
        const bool reduced = r.keptShape[d] == 1;
        if (reduced && stage == 2) {
            return std::nullopt;
        }
        stage = reduced ? 1 : (stage == 0 ? 0 : 2);
        (stage == 0 ? m.outer : (stage == 1 ? m.group : m.inner)) *= inputShape[d];
    }
    // A zero-size kept axis (no outputs) is left to the generic loop.
    if (stage != 2 || m.outer == 0 || m.inner == 0) {
        return std::nullopt;
    }
    return m;
}

/// Sums runs [begin, end) of `group` elements (run o at x + o * group) into out[o], four runs
/// at a time: four independent chains instead of one, each added in element order, so every sum
/// is the generic loop's to the bit. Returns the first run left (fewer than four remain).
template <typename T>
int64_t sumRunsByFour(const T* x, int64_t group, double init, int64_t begin, int64_t end,
                      double* out) {
    int64_t o = begin;
    for (; o + 4 <= end; o += 4) {
        const T* r = x + o * group;
        std::array<double, 4> s{init, init, init, init};
        for (int64_t i = 0; i < group; ++i) {
            for (size_t k = 0; k < 4; ++k) {
                s[k] += static_cast<double>(r[static_cast<int64_t>(k) * group + i]);
            }
        }
        std::copy(s.begin(), s.end(), out + o);
    }
    return o;
}

/// The fold of a run of floats by std::max or std::min (kind.extremum), from kind.init: eight
/// lanes at a time, then the lanes. MAXPS(x, acc) is x > acc ? x : acc, std::max(acc, x) itself
/// (MINPS likewise), so a NaN never replaces and equal values keep the first. The lanes change
/// which of two equal values comes first, which only a zero shows (-0 or +0): a zero result is
/// folded again in order. Any other result is the generic loop's to the bit.
double extremumOfRun(const float* run, int64_t n, const ReduceKind& kind) {
    double acc = kind.init;
    int64_t i = 0;
    bool inLanes = false;
#ifdef __AVX2__
    if (n >= 32) {
        inLanes = true;
        const bool max = kind.extremum > 0;
        const auto step = [max](const float* p, __m256 a) {
            const __m256 x = _mm256_loadu_ps(p);
            return max ? _mm256_max_ps(x, a) : _mm256_min_ps(x, a);
        };
        __m256 a0 = _mm256_set1_ps(static_cast<float>(kind.init));
        __m256 a1 = a0;
        __m256 a2 = a0;
        __m256 a3 = a0;
        for (; i + 32 <= n; i += 32) {
            a0 = step(run + i, a0);
            a1 = step(run + i + 8, a1);
            a2 = step(run + i + 16, a2);
            a3 = step(run + i + 24, a3);
        }
        alignas(32) std::array<float, 32> lanes{};
        _mm256_store_ps(lanes.data(), a0);
        _mm256_store_ps(lanes.data() + 8, a1);
        _mm256_store_ps(lanes.data() + 16, a2);
        _mm256_store_ps(lanes.data() + 24, a3);
        for (const float lane : lanes) {
            acc = kind.fold(acc, static_cast<double>(lane));
        }
    }
#endif
    for (; i < n; ++i) {
        acc = kind.fold(acc, static_cast<double>(run[i]));
    }
    if (acc == 0.0 && inLanes) {
        acc = kind.init;
        for (int64_t j = 0; j < n; ++j) {
            acc = kind.fold(acc, static_cast<double>(run[j]));
        }
    }
    return acc;
}

/// ReduceMax / ReduceMin over runs of floats: run by run on the threads, or, with fewer runs
/// than threads, each run in pieces on the threads whose results are folded in order (the
/// first of equal values stays the first).
void reduceFloatRunsToExtremum(const float* x, int64_t group, const ReduceKind& kind,
                               std::vector<double>& acc) {
    const auto outputs = static_cast<int64_t>(acc.size());
    constexpr int64_t kPiece = int64_t{1} << 16;
    if (outputs >= numThreads() || group < 2 * kPiece) {
        parallelFor(outputs, std::max<int64_t>(1, 16384 / group), [&](int64_t begin, int64_t end) {
            for (int64_t o = begin; o < end; ++o) {
                acc[static_cast<size_t>(o)] = extremumOfRun(x + o * group, group, kind);
            }
        });
        return;
    }
    const int64_t pieces = (group + kPiece - 1) / kPiece;
    std::vector<double> partial(static_cast<size_t>(pieces));
    for (int64_t o = 0; o < outputs; ++o) {
        const float* run = x + o * group;
        parallelFor(pieces, 1, [&](int64_t begin, int64_t end) {
            for (int64_t p = begin; p < end; ++p) {
                const int64_t first = p * kPiece;
                partial[static_cast<size_t>(p)] =
                    extremumOfRun(run + first, std::min(kPiece, group - first), kind);
            }
        });
        double value = kind.init;
        for (const double piece : partial) {
            value = kind.fold(value, piece);
        }
        acc[static_cast<size_t>(o)] = value;
    }
}

/// Run by run on the threads, each run folded in the order the generic loop folds it, so the
/// results are the same; the odometer per element cost more than the fold.
template <typename T>
void reduceTrailingRuns(const T* x, int64_t group, const ReduceKind& kind,
                        std::vector<double>& acc) {
    if constexpr (std::is_same_v<T, float>) {
        if (kind.extremum != 0) {
            reduceFloatRunsToExtremum(x, group, kind, acc);
            return;
        }
    }
    parallelFor(static_cast<int64_t>(acc.size()), std::max<int64_t>(1, 16384 / group),
                [&](int64_t begin, int64_t end) {
                    int64_t o = begin;
                    if (kind.plainSum) {
                        o = sumRunsByFour(x, group, kind.init, begin, end, acc.data());
                    }
                    for (; o < end; ++o) {
                        double sum = kind.init;
                        const T* run = x + o * group;
                        for (int64_t i = 0; i < group; ++i) {
                            sum = kind.fold(sum, static_cast<double>(run[i]));
                        }
                        acc[static_cast<size_t>(o)] = sum;
                    }
                });
}

/// Row by row into a row of accumulators: each output still folds its elements in the generic
/// loop's order (along the reduced axis), and a plain sum vectorises.
template <typename T>
void reduceMiddleAxis(const T* x, const MiddleAxis& m, const ReduceKind& kind,
                      std::vector<double>& acc) {
    const auto addRow = [&kind](const T* row, int64_t inner, double* out) {
        if (kind.plainSum) {
            for (int64_t j = 0; j < inner; ++j) {
                out[j] += static_cast<double>(row[j]);
            }
            return;
        }
        for (int64_t j = 0; j < inner; ++j) {
            out[j] = kind.fold(out[j], static_cast<double>(row[j]));
        }
    };
    parallelFor(m.outer, std::max<int64_t>(1, 16384 / (m.group * m.inner)),
                [&](int64_t begin, int64_t end) {
                    for (int64_t o = begin; o < end; ++o) {
                        const T* block = x + o * m.group * m.inner;
                        for (int64_t g = 0; g < m.group; ++g) {
                            addRow(block + g * m.inner, m.inner, acc.data() + o * m.inner);
                        }
                    }
                });
}

template <typename T>
Tensor reduceTyped(const ReducePlan& r, const Tensor& input, const ReduceKind& kind) {
    const T* x = input.data<T>();
    std::vector<double> shift;
    if (kind.shiftByMax) {
        shift = maximaOf(r, x);
    }
    std::vector<double> acc(static_cast<size_t>(shapeNumElements(r.outShape)), kind.init);
    // An empty reduced axis (groupSize 0) leaves every output at init: the generic loop.
    const bool fast = !kind.shiftByMax && r.groupSize > 0;
    const auto middle = fast ? reducesAMiddleAxis(r, input.shape()) : std::nullopt;
    if (fast && reducesTrailingRuns(r, input.shape())) {
        reduceTrailingRuns(x, r.groupSize, kind, acc);
    } else if (middle) {
        reduceMiddleAxis(x, *middle, kind, acc);
    } else {
        forEachReduced(r, [&](int64_t in, int64_t out) {
            const auto o = static_cast<size_t>(out);
            const double value = static_cast<double>(x[in]) - (kind.shiftByMax ? shift[o] : 0.0);
            acc[o] = kind.fold(acc[o], value);
        });
    }
    Tensor y = Tensor::allocate(input.dtype(), r.outShape);
    T* py = y.mutableData<T>();
    const auto n = static_cast<double>(r.groupSize);
    for (size_t i = 0; i < acc.size(); ++i) {
        double value = kind.finish != nullptr ? kind.finish(acc[i], n) : acc[i];
        if (kind.shiftByMax) {
            value += shift[i];
        }
        py[i] = static_cast<T>(value);
    }
    return y;
}

template <typename T>
Tensor reduceGradTyped(const ReducePlan& r, const ReduceKind& kind, const Tensor& input,
                       const Tensor& output, const Tensor& outputGrad) {
    const T* x = input.data<T>();
    const T* y = output.data<T>();
    const T* dy = outputGrad.data<T>();
    Tensor dx = Tensor::zeros(input.dtype(), input.shape());
    T* pdx = dx.mutableData<T>();
    if (kind.grad != nullptr) {
        const auto n = static_cast<double>(r.groupSize);
        forEachReduced(r, [&](int64_t in, int64_t out) {
            pdx[in] = static_cast<T>(kind.grad(x[in], y[out], dy[out], n));
        });
        return dx;
    }
    // Extremum: the gradient goes to the first element equal to y.
    std::vector<bool> taken(static_cast<size_t>(output.numElements()), false);
    forEachReduced(r, [&](int64_t in, int64_t out) {
        if (!taken[static_cast<size_t>(out)] && x[in] == y[out]) {
            taken[static_cast<size_t>(out)] = true;
            pdx[in] = dy[out];
        }
    });
    return dx;
}

} // namespace

Result<ReducePlan> makeReduceOpPlan(const OpContext& ctx) {
    if (!ctx.has(0) || !isFloatOrDouble(ctx.input(0).dtype())) {
        return ctx.error(
            Errc::Unsupported,
            "input 0 must be float32 or float64, got " +
                std::string(ctx.has(0) ? graph::dataTypeName(ctx.input(0).dtype()) : "nothing"));
    }
    // Axes come from the attribute in older opsets and from input 1 in newer ones.
    return makeReducePlan(ctx, !ctx.hasAttr("axes"));
}

Result<std::vector<Tensor>> reduceForward(const OpContext& ctx, const ReduceKind& kind) {
    QS_ASSIGN_OR_RETURN(ReducePlan r, makeReduceOpPlan(ctx));
    const Tensor& x = ctx.input(0);
    return std::vector<Tensor>{x.dtype() == graph::DataType::Double
                                   ? reduceTyped<double>(r, x, kind)
                                   : reduceTyped<float>(r, x, kind)};
}

Result<std::vector<Tensor>> reduceVjp(const OpContext& ctx, const ReduceKind& kind,
                                      std::span<const Tensor> outputs,
                                      std::span<const Tensor> outputGrads) {
    QS_ASSIGN_OR_RETURN(ReducePlan r, makeReduceOpPlan(ctx));
    const Tensor& x = ctx.input(0);
    std::vector<Tensor> grads(ctx.numInputs());
    if (!outputGrads[0].defined()) {
        grads[0] = Tensor::zeros(x.dtype(), x.shape());
        return grads;
    }
    if (outputGrads[0].dtype() != x.dtype()) {
        return ctx.error(Errc::InvalidArgument, "the output gradient's type differs from x's");
    }
    grads[0] = x.dtype() == graph::DataType::Double
                   ? reduceGradTyped<double>(r, kind, x, outputs[0], outputGrads[0])
                   : reduceGradTyped<float>(r, kind, x, outputs[0], outputGrads[0]);
    return grads;
}

namespace {

std::vector<OpSample> makeReduceSamples(std::mt19937& rng, bool distinct) {
    auto input = [&](Shape shape) {
        return distinct ? randomDistinct(rng, std::move(shape))
                        : randomTensor(rng, std::move(shape), 0.1F, 1.0F);
    };
    std::vector<OpSample> samples;
    samples.push_back({"axes 1 keepdims", {intsAttribute("axes", {1})}, {input({2, 3, 4})}, {0}});
    samples.push_back({"axes 0,-1 no keepdims",
                       {intsAttribute("axes", {0, -1}), intAttribute("keepdims", 0)},
                       {input({2, 3, 4})},
                       {0}});
    samples.push_back({"all axes", {}, {input({3, 4})}, {0}});
    samples.push_back({"axes as input", {}, {input({2, 3}), int64Tensor<int64_t>({-1})}, {0}});
    return samples;
}

} // namespace

std::vector<OpSample> reduceSamples(std::mt19937& rng) {
    return makeReduceSamples(rng, false);
}

std::vector<OpSample> reduceSamplesDistinct(std::mt19937& rng) {
    return makeReduceSamples(rng, true);
}

} // namespace qs::runtime
