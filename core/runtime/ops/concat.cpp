// Concat (ONNX since 4): joins the inputs along `axis`; all other dims must agree. Any element
// type. VJP: dy split back into the inputs' extents.

#include "core/runtime/op_util.h"
#include "core/runtime/parallel.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace qs::runtime {
namespace {

struct ConcatShape {
    int64_t axis = 0;
    int64_t outer = 1;
    int64_t inner = 1; ///< elements per unit of the concat axis
    Shape outShape;
};

// Shape rule: sum of the inputs' sizes along axis.
Result<ConcatShape> inferShape(const OpContext& ctx) {
    const Shape& first = ctx.input(0).shape();
    ConcatShape s;
    QS_ASSIGN_OR_RETURN(
        s.axis, normalizeAxis(ctx.intAttr("axis", 0), static_cast<int64_t>(first.size()), ctx));
    s.outShape = first;
    s.outShape[static_cast<size_t>(s.axis)] = 0;
    for (size_t i = 0; i < ctx.numInputs(); ++i) {
        const Shape& shape = ctx.input(i).shape();
        bool fits = shape.size() == first.size() && ctx.input(i).dtype() == ctx.input(0).dtype();
        for (size_t d = 0; fits && d < shape.size(); ++d) {
            fits = static_cast<int64_t>(d) == s.axis || shape[d] == first[d];
        }
        if (!fits) {
            return ctx.error(Errc::InvalidModel, "input " + std::to_string(i) + " " +
                                                     shapeToString(shape) + " does not fit " +
                                                     shapeToString(first));
        }
        s.outShape[static_cast<size_t>(s.axis)] += shape[static_cast<size_t>(s.axis)];
    }
    for (int64_t d = 0; d < s.axis; ++d) {
        s.outer *= first[static_cast<size_t>(d)];
    }
    for (size_t d = static_cast<size_t>(s.axis) + 1; d < first.size(); ++d) {
        s.inner *= first[d];
    }
    return s;
}

/// The rows of one input: `outer` runs of `bytes`, from src to dst, each side advancing by its
/// stride (forward: the input's row, then the output's; the VJP the other way round).
struct Rows {
    const std::byte* src;
    std::byte* dst;
    size_t srcStride;
    size_t dstStride;
    size_t bytes;
};

/// Copies every input's rows on the threads, in pieces of about kPiece bytes: by outer index when
/// there are many rows, by pieces of the rows when there are few and long ones (a Fire module's
/// concat of 8 x 128 x 55 x 55 floats, or any concat at batch 1, took as long on two threads as on
/// one).
void copyRows(const std::vector<Rows>& inputs, int64_t outer) {
    constexpr size_t kPiece = size_t{64} << 10;
    size_t perOuter = 0;
    for (const Rows& rows : inputs) {
        perOuter += rows.bytes;
    }
    if (perOuter == 0 || outer <= 0) {
        return;
    }
    if (outer >= 64) {
        const auto minChunk = static_cast<int64_t>(std::max<size_t>(1, kPiece / perOuter));
        parallelFor(outer, minChunk, [&](int64_t begin, int64_t end) {
            for (int64_t o = begin; o < end; ++o) {
                const auto at = static_cast<size_t>(o);
                for (const Rows& rows : inputs) {
                    std::memcpy(rows.dst + at * rows.dstStride, rows.src + at * rows.srcStride,
                                rows.bytes);
                }
            }
        });
        return;
    }

    struct Piece {
        const std::byte* src;
        std::byte* dst;
        size_t bytes;
    };

    std::vector<Piece> pieces; // at most 64 rows per input, each cut into pieces
    for (const Rows& rows : inputs) {
        for (int64_t o = 0; o < outer; ++o) {
            const auto row = static_cast<size_t>(o);
            for (size_t at = 0; at < rows.bytes; at += kPiece) {
                pieces.push_back({rows.src + row * rows.srcStride + at,
                                  rows.dst + row * rows.dstStride + at,
                                  std::min(kPiece, rows.bytes - at)});
            }
        }
    }
    parallelFor(static_cast<int64_t>(pieces.size()), 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            const Piece& piece = pieces[static_cast<size_t>(i)];
            std::memcpy(piece.dst, piece.src, piece.bytes);
        }
    });
}

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(ConcatShape s, inferShape(ctx));
    Tensor y = Tensor::allocate(ctx.input(0).dtype(), s.outShape);
    const size_t elem = runtimeElementSize(y.dtype());
    auto* dst = static_cast<std::byte*>(y.mutableRawData());
    const auto outRow = static_cast<size_t>(s.outShape[static_cast<size_t>(s.axis)] * s.inner);
    std::vector<Rows> inputs;
    size_t offset = 0;
    for (size_t i = 0; i < ctx.numInputs(); ++i) {
        const Tensor& x = ctx.input(i);
        const auto row = static_cast<size_t>(x.shape()[static_cast<size_t>(s.axis)] * s.inner);
        inputs.push_back({static_cast<const std::byte*>(x.rawData()), dst + offset * elem,
                          row * elem, outRow * elem, row * elem});
        offset += row;
    }
    copyRows(inputs, s.outer);
    return std::vector<Tensor>{y};
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor>,
                                std::span<const Tensor> outputGrads) {
    QS_ASSIGN_OR_RETURN(ConcatShape s, inferShape(ctx));
    const auto* dy = reinterpret_cast<const std::byte*>(outputGrads[0].data<float>());
    const auto outRow = static_cast<size_t>(s.outShape[static_cast<size_t>(s.axis)] * s.inner);
    std::vector<Tensor> grads;
    std::vector<Rows> inputs;
    size_t offset = 0;
    for (size_t i = 0; i < ctx.numInputs(); ++i) {
        Tensor dx = allocateFloat(ctx.input(i).shape());
        const auto row =
            static_cast<size_t>(ctx.input(i).shape()[static_cast<size_t>(s.axis)] * s.inner);
        inputs.push_back({dy + offset * sizeof(float),
                          reinterpret_cast<std::byte*>(dx.mutableData<float>()),
                          outRow * sizeof(float), row * sizeof(float), row * sizeof(float)});
        offset += row;
        grads.push_back(dx);
    }
    copyRows(inputs, s.outer);
    return grads;
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {
        {"axis 1",
         {intAttribute("axis", 1)},
         {randomTensor(rng, {2, 1, 3}), randomTensor(rng, {2, 3, 3}), randomTensor(rng, {2, 2, 3})},
         {}}};
}

const OpDef kConcat{.opType = "Concat",
                    .domain = "",
                    .sinceVersion = 4,
                    .doc = "join along an axis",
                    .minInputs = 1,
                    .maxInputs = 1 << 16,
                    .forward = forward,
                    .reference = nullptr,
                    .vjp = vjp,
                    .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(concat, kConcat)
