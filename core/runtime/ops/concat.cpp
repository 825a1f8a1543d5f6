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

/// One run of bytes from an input to the output (or back, for the VJP).
struct Run {
    const std::byte* src;
    std::byte* dst;
    size_t bytes;
};

/// Copies the runs on the threads, cut into pieces of at most kPiece bytes so that a concat of a
/// few large inputs (batch 1) splits as well as one of many small rows: a Fire module's concat
/// of 8 x 128 x 55 x 55 floats took as long on two threads as on one.
void copyRuns(const std::vector<Run>& runs) {
    constexpr size_t kPiece = size_t{64} << 10;
    std::vector<Run> pieces;
    for (const Run& run : runs) {
        for (size_t at = 0; at < run.bytes; at += kPiece) {
            pieces.push_back({run.src + at, run.dst + at, std::min(kPiece, run.bytes - at)});
        }
    }
    size_t total = 0;
    for (const Run& piece : pieces) {
        total += piece.bytes;
    }
    // About 64 KiB per chunk: smaller copies are not worth a second thread.
    const auto count = static_cast<int64_t>(pieces.size());
    const int64_t perChunk =
        count == 0 ? 1
                   : std::max<int64_t>(
                         1, static_cast<int64_t>((kPiece * count) / std::max<size_t>(total, 1)));
    parallelFor(count, perChunk, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            const Run& piece = pieces[static_cast<size_t>(i)];
            std::memcpy(piece.dst, piece.src, piece.bytes);
        }
    });
}

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(ConcatShape s, inferShape(ctx));
    Tensor y = Tensor::allocate(ctx.input(0).dtype(), s.outShape);
    const size_t elem = runtimeElementSize(y.dtype());
    auto* dst = static_cast<std::byte*>(y.mutableRawData());
    const int64_t outRow = s.outShape[static_cast<size_t>(s.axis)] * s.inner;
    std::vector<Run> runs;
    int64_t offset = 0;
    for (size_t i = 0; i < ctx.numInputs(); ++i) {
        const Tensor& x = ctx.input(i);
        const int64_t row = x.shape()[static_cast<size_t>(s.axis)] * s.inner;
        const auto* src = static_cast<const std::byte*>(x.rawData());
        for (int64_t o = 0; o < s.outer && row > 0; ++o) {
            runs.push_back({src + static_cast<size_t>(o * row) * elem,
                            dst + static_cast<size_t>(o * outRow + offset) * elem,
                            static_cast<size_t>(row) * elem});
        }
        offset += row;
    }
    copyRuns(runs);
    return std::vector<Tensor>{y};
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor>,
                                std::span<const Tensor> outputGrads) {
    QS_ASSIGN_OR_RETURN(ConcatShape s, inferShape(ctx));
    const auto* dy = reinterpret_cast<const std::byte*>(outputGrads[0].data<float>());
    const int64_t outRow = s.outShape[static_cast<size_t>(s.axis)] * s.inner;
    std::vector<Tensor> grads;
    std::vector<Run> runs;
    int64_t offset = 0;
    for (size_t i = 0; i < ctx.numInputs(); ++i) {
        Tensor dx = allocateFloat(ctx.input(i).shape());
        auto* dst = reinterpret_cast<std::byte*>(dx.mutableData<float>());
        const int64_t row = ctx.input(i).shape()[static_cast<size_t>(s.axis)] * s.inner;
        for (int64_t o = 0; o < s.outer && row > 0; ++o) {
            runs.push_back({dy + static_cast<size_t>(o * outRow + offset) * sizeof(float),
                            dst + static_cast<size_t>(o * row) * sizeof(float),
                            static_cast<size_t>(row) * sizeof(float)});
        }
        offset += row;
        grads.push_back(dx);
    }
    copyRuns(runs);
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
