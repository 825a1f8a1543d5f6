// Conv (ONNX since 1, auto_pad/dilations/group as in opset 11): N-d convolution with groups,
//   y[n, m, o] = b[m] + sum_{c in group(m)} sum_k x[n, c, o * s + k * d - pad_begin] * w[m, c, k].
// Fast kernel (1-D and 2-D): a packed GEMM per group (packed_gemm.h) whose B strips are im2col
// columns written straight from the image (a plain copy for pointwise convolutions), and a direct
// kernel for depthwise convolutions (conv_kernels.h); the reference is the plain N-d sum above.
// The executor may fuse a following Relu/Clip and a residual Add into its private copy of the
// node: y = clamp(conv + residual, qs_fused_min, qs_fused_max), residual = input 3; it also passes
// the weights packed once, at creation, as input 4. When only a channel Concat reads the output,
// run() may hand it a slice of the Concat's output to write instead (concat_in_place.h), which
// the GEMM and Winograd kernels write with an image stride (Conv2d::yImageStride).
// VJP: dx = col2im(W^T dy), dw = dy col^T (Eigen GEMMs), db = sum dy, each only when asked for;
// depthwise dx is the direct kernel with the flipped filter. With a fused activation dy is first
// zeroed where the output sits on a clamp bound.

#include "core/runtime/conv_backward.h"
#include "core/runtime/conv_geometry.h"
#include "core/runtime/conv_kernels.h"
#include "core/runtime/conv_samples.h"
#include "core/runtime/fused_tail.h"
#include "core/runtime/im2col.h"
#include "core/runtime/op_util.h"
#include "core/runtime/packed_gemm.h"
#include "core/runtime/parallel.h"
#include "core/runtime/scratch.h"
#include "core/runtime/shallow_conv.h"
#include "core/runtime/winograd.h"

#include <Eigen/Core>

#include <algorithm>
#include <cstring>
#include <limits>

namespace qs::runtime {
namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowMap = Eigen::Map<RowMatrix>;
using ConstRowMap = Eigen::Map<const RowMatrix>;
using StridedRowMap = Eigen::Map<RowMatrix, 0, Eigen::OuterStride<>>;

// Shape rule: x [N, C, D...], w [M, C / group, K...], b [M] -> y [N, M, O...].
struct ConvShape {
    ConvGeometry geo;
    int64_t batch = 0;
    int64_t channels = 0;
    int64_t filters = 0;
    int64_t group = 1;
    Shape outShape;
};

Result<ConvShape> inferShape(const OpContext& ctx) {
    QS_TRY(requireFloat(ctx, 0));
    QS_TRY(requireFloat(ctx, 1));
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    if (x.rank() < 3 || w.rank() != x.rank()) {
        return ctx.error(Errc::InvalidModel, "needs x of rank >= 3 and w of the same rank, got " +
                                                 shapeToString(x.shape()) + " and " +
                                                 shapeToString(w.shape()));
    }
    ConvShape s;
    s.batch = x.dim(0);
    s.channels = x.dim(1);
    s.filters = w.dim(0);
    s.group = ctx.intAttr("group", 1);
    if (s.group <= 0 || s.channels != w.dim(1) * s.group || s.filters % s.group != 0) {
        return ctx.error(Errc::InvalidModel, "x " + shapeToString(x.shape()) + ", w " +
                                                 shapeToString(w.shape()) + " and group " +
                                                 std::to_string(s.group) + " do not fit");
    }
    if (ctx.has(2) && ctx.input(2).numElements() != s.filters) {
        return ctx.error(Errc::InvalidModel, "bias has the wrong size");
    }
    if (ctx.has(3)) {
        QS_TRY(requireFloat(ctx, 3));
    }
    const std::vector<int64_t> spatial(x.shape().begin() + 2, x.shape().end());
    const std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
    const std::vector<int64_t> kernelAttr = ctx.intsAttr("kernel_shape");
    if (!kernelAttr.empty() && kernelAttr != kernel) {
        return ctx.error(Errc::InvalidModel, "kernel_shape disagrees with the weight");
    }
    QS_ASSIGN_OR_RETURN(s.geo, convGeometry(ctx, spatial, kernel));
    s.outShape = {s.batch, s.filters};
    s.outShape.insert(s.outShape.end(), s.geo.output.begin(), s.geo.output.end());
    if (ctx.has(3) && ctx.input(3).shape() != s.outShape) {
        return ctx.error(Errc::InvalidModel,
                         "the fused residual " + shapeToString(ctx.input(3).shape()) +
                             " does not match the output " + shapeToString(s.outShape));
    }
    return s;
}

/// The fused epilogue of the executor's private node (identity for a plain Conv).
ConvEpilogue epilogueOf(const OpContext& ctx) {
    ConvEpilogue e;
    e.bias = ctx.has(2) ? ctx.input(2).data<float>() : nullptr;
    e.residual = ctx.has(3) ? ctx.input(3).data<float>() : nullptr;
    e.lo = ctx.floatAttr(kFusedMinAttr, e.lo);
    e.hi = ctx.floatAttr(kFusedMaxAttr, e.hi);
    return e;
}

/// The element-wise tail the executor fused after the epilogue (empty for a plain Conv).
Result<FusedTail> tailOf(const OpContext& ctx) {
    const graph::Attribute* attr = ctx.node.attribute(kFusedTailAttr);
    if (attr == nullptr) {
        return FusedTail{};
    }
    const auto* encoded = std::get_if<std::vector<float>>(&attr->value);
    if (encoded == nullptr) {
        return ctx.error(Errc::InvalidArgument, "the fused tail is not a list of floats");
    }
    auto tail = decodeTail(*encoded);
    if (!tail.ok()) {
        return ctx.error(Errc::InvalidArgument, tail.error().message());
    }
    return std::move(*tail);
}

// Reference kernel: the defining sum, for any number of spatial dims.
/// Index helpers of the reference: row-major strides of the input, output and kernel windows.
struct WindowIndex {
    const ConvGeometry& g;
    std::vector<int64_t> inStrides = stridesOf(g.input);
    std::vector<int64_t> outStrides = stridesOf(g.output);
    std::vector<int64_t> kStrides = stridesOf(g.kernel);

    /// Offset in the input plane that kernel tap k of output position o reads; false in padding.
    bool inputOffset(int64_t o, int64_t k, int64_t& offset) const {
        offset = 0;
        for (size_t d = 0; d < g.rank(); ++d) {
            const int64_t od = (o / outStrides[d]) % g.output[d];
            const int64_t kd = (k / kStrides[d]) % g.kernel[d];
            const int64_t pos = od * g.strides[d] + kd * g.dilations[d] - g.padsBegin[d];
            if (pos < 0 || pos >= g.input[d]) {
                return false;
            }
            offset += pos * inStrides[d];
        }
        return true;
    }
};

// Reference kernel: the defining sum, for any number of spatial dims, then the fused epilogue.
Result<std::vector<Tensor>> reference(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(ConvShape s, inferShape(ctx));
    const ConvGeometry& g = s.geo;
    const WindowIndex index{g};
    const float* x = ctx.input(0).data<float>();
    const float* w = ctx.input(1).data<float>();
    const ConvEpilogue e = epilogueOf(ctx);
    QS_ASSIGN_OR_RETURN(const FusedTail tail, tailOf(ctx));
    Tensor y = allocateFloat(s.outShape);
    float* out = y.mutableData<float>();
    const int64_t cPerGroup = s.channels / s.group;
    const int64_t inSize = shapeNumElements(g.input);
    const int64_t outSize = shapeNumElements(g.output);
    const int64_t kSize = shapeNumElements(g.kernel);
    const auto sum = [&](int64_t n, int64_t m, int64_t o) {
        const int64_t grp = m / (s.filters / s.group);
        double acc = e.bias != nullptr ? e.bias[m] : 0.0;
        for (int64_t c = 0; c < cPerGroup; ++c) {
            const float* xc = x + (n * s.channels + grp * cPerGroup + c) * inSize;
            const float* wc = w + (m * cPerGroup + c) * kSize;
            for (int64_t k = 0; k < kSize; ++k) {
                int64_t offset = 0;
                if (index.inputOffset(o, k, offset)) {
                    acc += static_cast<double>(xc[offset]) * wc[k];
                }
            }
        }
        return acc;
    };
    for (int64_t n = 0; n < s.batch; ++n) {
        for (int64_t m = 0; m < s.filters; ++m) {
            for (int64_t o = 0; o < outSize; ++o) {
                const int64_t i = (n * s.filters + m) * outSize + o;
                const double v = sum(n, m, o) + (e.residual != nullptr ? e.residual[i] : 0.0F);
                out[i] = std::min(std::max(static_cast<float>(v), e.lo), e.hi);
            }
        }
    }
    applyFusedTailReference(tail, out, y.numElements());
    return std::vector<Tensor>{y};
}

Conv2d as2d(const ConvShape& s) {
    const ConvGeometry& g = s.geo;
    const bool oneD = g.rank() == 1;
    const size_t last = g.rank() - 1;
    Conv2d p{};
    p.n = s.batch;
    p.c = s.channels;
    p.m = s.filters;
    p.group = s.group;
    p.h = oneD ? 1 : g.input[0];
    p.w = g.input[last];
    p.kh = oneD ? 1 : g.kernel[0];
    p.kw = g.kernel[last];
    p.sh = oneD ? 1 : g.strides[0];
    p.sw = g.strides[last];
    p.dh = oneD ? 1 : g.dilations[0];
    p.dw = g.dilations[last];
    p.pt = oneD ? 0 : g.padsBegin[0];
    p.pl = g.padsBegin[last];
    p.oh = oneD ? 1 : g.output[0];
    p.ow = g.output[last];
    return p;
}

/// This thread's buffer for Im2colSource's copy of an image. A function, not a thread_local
/// inside gemmConv2d: images run on pool threads, and a block-scope thread_local is constructed
/// (and later destroyed) only on threads that pass its declaration.
ScratchFloats& sourceCopyBuffer() {
    thread_local ScratchFloats copy;
    return copy;
}

/// Grouped convolution as one packed GEMM per (image, group): weights packed into row panels
/// (by the executor ahead of time, else here), B strips packed from the image (im2col on the fly,
/// from a padded copy unless pointwise: Im2colSource), the epilogue applied per finished tile.
void gemmConv2d(const Conv2d& p, const float* x, const float* w, const float* prepacked,
                const ConvEpilogue& e, float* y) {
    const int64_t pixels = p.outPixels();
    const int64_t rows = p.colRows();
    thread_local ScratchFloats packed;
    if (prepacked == nullptr) {
        float* weights =
            packed.get(static_cast<size_t>(packedGroupedWeightsSize(p.m, rows, p.group)));
        packGroupedWeights(w, p.m, rows, p.group, weights);
        prepacked = weights;
    }
    const int64_t panelSize = packedWeightsSize(p.mg(), rows);
    const auto image = [&](int64_t n) {
        for (int64_t grp = 0; grp < p.group; ++grp) {
            const float* xg = x + (n * p.c + grp * p.cg()) * p.h * p.w;
            const int64_t outOffset = (n * p.m + grp * p.mg()) * pixels;
            const GemmOutput out{y + n * p.outImageStride() + grp * p.mg() * pixels, pixels,
                                 e.residual != nullptr ? e.residual + outOffset : nullptr,
                                 grp * p.mg()};
            if (p.isPointwise() && packedGemmReadsBInPlace(p.mg(), pixels, pixels)) {
                packedGemmRowMajorB(p.mg(), pixels, rows, prepacked + grp * panelSize, xg, pixels,
                                    out, e);
                continue;
            }
            const Im2colSource source(p, xg, sourceCopyBuffer());
            const PackColumns pack = [&](int64_t j0, int64_t count, float* strips) {
                source.packStrips(j0, j0 + count, strips);
            };
            packedGemm(p.mg(), pixels, rows, prepacked + grp * panelSize, pack, out, e);
        }
    };
    // A batch that divides evenly over the threads splits by image: one wake-up per layer
    // instead of one per image and group, and each thread's panels stay in its own cache (small
    // planes, as in SqueezeNet's 13 x 13 layers, split poorly inside one product). Inside a chunk
    // the product runs inline on the same code path, so results do not depend on the split.
    const int threads = numThreads();
    if (threads > 1 && p.n % threads == 0) {
        parallelFor(p.n, 1, [&](int64_t begin, int64_t end) {
            for (int64_t n = begin; n < end; ++n) {
                image(n);
            }
        });
        return;
    }
    for (int64_t n = 0; n < p.n; ++n) {
        image(n);
    }
}

/// Weights the executor packed ahead of time (input 4 of its private node) as `expected` floats.
Result<const float*> prepackedWeights(const OpContext& ctx, int64_t expected) {
    if (!ctx.has(4)) {
        return nullptr;
    }
    const Tensor& packed = ctx.input(4);
    if (packed.dtype() != graph::DataType::Float || packed.numElements() != expected) {
        return ctx.error(Errc::InvalidArgument, "the prepacked weights do not fit the weights");
    }
    return packed.data<float>();
}

/// Winograd (winogradTileFor's variant) with the executor's transformed weights, else transformed
/// here.
Result<void> winogradForward(const OpContext& ctx, const Conv2d& p, const ConvEpilogue& e,
                             float* y) {
    QS_ASSIGN_OR_RETURN(const float* prepacked,
                        prepackedWeights(ctx, winogradWeightsSize(p.m, p.c)));
    thread_local ScratchFloats packed;
    if (prepacked == nullptr) {
        float* weights = packed.get(static_cast<size_t>(winogradWeightsSize(p.m, p.c)));
        packWinogradWeights(ctx.input(1).data<float>(), p.m, p.c, weights);
        prepacked = weights;
    }
    winogradConv2d(p, ctx.input(0).data<float>(), prepacked, e, y);
    return success();
}

/// Where forward writes: `data`, and `result`, what it returns.
struct ConvOutput {
    Tensor result;
    float* data = nullptr;
};

/// A slice of the Concat's output when run() offers one (ChannelSlice; `p` then gets its image
/// stride), else a tensor of its own. Not for the depthwise kernels, which write whole planes
/// densely, nor with a residual, whose layout the kernels take to be the output's. A slice's
/// `result` is shape-only: only the Concat reads the value, and it finds it in place.
ConvOutput convOutput(const OpContext& ctx, const ConvShape& s, const ConvEpilogue& e, Conv2d& p) {
    if (ctx.placeOutput && e.residual == nullptr && !p.isDepthwise()) {
        if (std::optional<ChannelSlice> slice = ctx.placeOutput(s.outShape)) {
            p.yImageStride = slice->buffer.dim(1) * p.outPixels();
            return {Tensor::withoutData(graph::DataType::Float, s.outShape),
                    slice->buffer.mutableData<float>() + slice->channel0 * p.outPixels()};
        }
    }
    Tensor y = allocateFloat(s.outShape);
    float* data = y.mutableData<float>();
    return {std::move(y), data};
}

// Fast kernel.
Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(ConvShape s, inferShape(ctx));
    if (s.geo.rank() > 2) {
        return reference(ctx);
    }
    Conv2d p = as2d(s);
    ConvEpilogue e = epilogueOf(ctx);
    QS_ASSIGN_OR_RETURN(const FusedTail tail, tailOf(ctx));
    ConvOutput y = convOutput(ctx, s, e, p);
    const float* x = ctx.input(0).data<float>();
    const float* w = ctx.input(1).data<float>();
    if (shallowConvApplies(p)) {
        e.tail = &tail;
        shallowConv2d(p, x, w, e, y.data);
        return std::vector<Tensor>{y.result};
    }
    if (winogradApplies(p)) {
        QS_TRY(winogradForward(ctx, p, e, y.data));
        if (p.yImageStride == 0) {
            applyFusedTail(tail, y.data, y.result.numElements());
        } else {
            for (int64_t n = 0; n < p.n; ++n) {
                applyFusedTail(tail, y.data + n * p.yImageStride, p.m * p.outPixels());
            }
        }
        return std::vector<Tensor>{y.result};
    }
    // The depthwise and GEMM kernels run the tail on each piece of output they finish, while it
    // is in cache.
    e.tail = &tail;
    if (p.isDepthwise()) {
        depthwiseConv2d(p, x, w, e, y.data);
    } else {
        QS_ASSIGN_OR_RETURN(
            const float* prepacked,
            prepackedWeights(ctx, packedGroupedWeightsSize(p.m, p.colRows(), p.group)));
        gemmConv2d(p, x, w, prepacked, e, y.data);
    }
    return std::vector<Tensor>{y.result};
}

/// dw of `p` (summed, or per sample when the caller asks for it, or per sample reduced to its
/// row sums of squares: OpContext::rowSquaresMask).
Result<Tensor> weightGrad(const OpContext& ctx, const Conv2d& p, const float* dy) {
    const float* x = ctx.input(0).data<float>();
    const float* w = ctx.input(1).data<float>();
    const bool perSample = ctx.wantsPerSample(1);
    if (perSample && p.n != ctx.perSampleBatch) {
        return ctx.error(Errc::InvalidArgument, "per-sample weight gradients need the " +
                                                    std::to_string(ctx.perSampleBatch) +
                                                    " samples on axis 0 of the input, got " +
                                                    shapeToString(ctx.input(0).shape()));
    }
    if (ctx.wantsRowSquares(1) && !p.isDepthwise()) {
        Tensor squares = Tensor::allocate(graph::DataType::Double, {p.n, p.m});
        double* out = squares.mutableData<double>();
        if (winogradWeightGradApplies(p)) {
            winogradWeightGradRowSquares(p, x, dy, out);
        } else {
            gemmConvWeightGradRowSquares(p, x, dy, out);
        }
        return squares;
    }
    Shape shape = ctx.input(1).shape();
    if (perSample) {
        shape.insert(shape.begin(), p.n);
    }
    // The GEMM and Winograd kernels write every element; the depthwise one adds.
    Tensor dw =
        p.isDepthwise() ? Tensor::zeros(graph::DataType::Float, shape) : allocateFloat(shape);
    if (p.isDepthwise()) {
        depthwiseConvBackward(p, x, w, dy, nullptr, dw.mutableData<float>(), perSample);
    } else if (winogradWeightGradApplies(p)) {
        winogradWeightGrad(p, x, dy, dw.mutableData<float>(), perSample);
    } else {
        gemmConvWeightGrad(p, x, dy, dw.mutableData<float>(), perSample);
    }
    if (ctx.wantsRowSquares(1)) { // depthwise: a few floats per filter, reduced here
        Tensor squares = Tensor::allocate(graph::DataType::Double, {p.n, p.m});
        const int64_t rows = p.n * p.m;
        rowSumsOfSquares(dw.data<float>(), rows, rows == 0 ? 0 : dw.numElements() / rows,
                         squares.mutableData<double>());
        return squares;
    }
    return dw;
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor> outputs,
                                std::span<const Tensor> outputGrads) {
    QS_ASSIGN_OR_RETURN(ConvShape s, inferShape(ctx));
    if (s.geo.rank() > 2) {
        return ctx.error(Errc::Unsupported, "gradients of 3-D convolutions are not implemented");
    }
    if (ctx.node.attribute(kFusedTailAttr) != nullptr) {
        return ctx.error(Errc::Unsupported,
                         "the executor's fused element-wise tail has no VJP (backward sweeps "
                         "run the unfused graph)");
    }
    const Conv2d p = as2d(s);
    const float* w = ctx.input(1).data<float>();
    const Tensor sumGrad = gradientBeforeClamp(epilogueOf(ctx), outputs[0], outputGrads[0]);
    const float* dy = sumGrad.data<float>();
    std::vector<Tensor> grads(std::min<size_t>(ctx.numInputs(), 4));
    if (ctx.has(3) && ctx.wantsGrad(3)) {
        grads[3] = sumGrad;
    }
    if (ctx.wantsGrad(0)) {
        // dx's Winograd or GEMM weights, packed once by the executor for every sweep.
        const auto packedInput = [&](size_t index, int64_t size) {
            return ctx.has(index) && ctx.input(index).numElements() == size
                       ? ctx.input(index).data<float>()
                       : nullptr;
        };
        const WinogradTile swept = sweptInputGradTile(p.n, p.h, p.w, p.m, p.c);
        const PackedInputGradWeights packed{
            .winograd = packedInput(kWinogradInputGradWeightsInput,
                                    winogradInputGradWeightsSize(p.m, p.c, swept)),
            .winogradTile = swept,
            .gemm = packedInput(kGemmInputGradWeightsInput,
                                gemmInputGradWeightsSize(p.m, p.colRows(), p.group))};
        grads[0] = convInputGrad(p, ctx.input(0).shape(), w, dy, packed);
    }
    if (ctx.wantsGrad(1)) {
        QS_ASSIGN_OR_RETURN(grads[1], weightGrad(ctx, p, dy));
    }
    if (ctx.wantsPerSample(2) || ctx.wantsPerSample(3)) {
        return ctx.error(Errc::Unsupported, "per-sample gradients only for the weight input");
    }
    if (ctx.has(2) && ctx.wantsGrad(2)) {
        grads[2] = convBiasGrad(p, ctx.input(2).shape(), dy);
    }
    return grads;
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return convSamples(rng, reference);
}

const OpDef kConv{.opType = "Conv",
                  .domain = "",
                  .sinceVersion = 1,
                  .doc = "N-d convolution with groups, strides, dilations, pads and auto_pad",
                  .minInputs = 2,
                  .maxInputs = 3,
                  .forward = forward,
                  .reference = reference,
                  .vjp = vjp,
                  .samples = samples,
                  .perSampleWeightGrads = true,
                  .perSampleRowSquares = true,
                  // Winograd F(4x4, 3x3): a few 1e-6 of the rms (winograd.h), with a margin.
                  .roundingOfRms = 3e-5};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(conv, kConv)
