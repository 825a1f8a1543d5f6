// Resize (ONNX since 10; roi/scales/sizes inputs since 11): nearest, (multi)linear and (multi)cubic
// interpolation over any dims. Each output coordinate maps back to the input through
// coordinate_transformation_mode (half_pixel, pytorch_half_pixel, align_corners, asymmetric,
// tf_half_pixel_for_nn, tf_crop_and_resize with roi and extrapolation_value; opset 10 behaves as
// asymmetric), nearest_mode picks the sample, linear
// mode blends the two neighbours per resized dim with weights 1 - t and t, cubic mode the four
// neighbours with Keys' kernel (cubic_coeff_a, exclude_outside). Output dim = floor(in * scale) or
// sizes (times the roi's length for tf_crop_and_resize). antialias and axes are rejected. VJP: each
// output's gradient goes back to the samples it blended, with the same weights. The usual case
// (NCHW, only H and W resized, nothing outside the input) runs plane by plane on the pool's
// threads with the same sums in the same order as the generic path (a test compares them).

#include "core/runtime/index_map.h"
#include "core/runtime/parallel.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace qs::runtime {
namespace {

struct Tap {
    int64_t index;
    float weight;
};

struct ResizePlan {
    Shape outShape;
    /// Per dim, per output coordinate; empty where tf_crop_and_resize maps outside the input
    /// (the output element is then extrapolation_value).
    std::vector<std::vector<std::vector<Tap>>> taps;
    float extrapolationValue = 0.0F;
};

struct ResizeAttributes {
    std::string mode;
    std::string transform;
    std::string nearestMode;
    double cubicA = -0.75;
    bool excludeOutside = false;
    float extrapolationValue = 0.0F;
};

Result<ResizeAttributes> readAttributes(const OpContext& ctx) {
    ResizeAttributes a;
    a.mode = ctx.stringAttr("mode", "nearest");
    a.transform = ctx.stringAttr("coordinate_transformation_mode",
                                 ctx.opset < 11 ? "asymmetric" : "half_pixel");
    a.nearestMode = ctx.stringAttr("nearest_mode", "round_prefer_floor");
    a.cubicA = static_cast<double>(ctx.floatAttr("cubic_coeff_a", -0.75F));
    a.excludeOutside = ctx.intAttr("exclude_outside", 0) != 0;
    a.extrapolationValue = ctx.floatAttr("extrapolation_value", 0.0F);
    if (a.mode != "nearest" && a.mode != "linear" && a.mode != "cubic") {
        return ctx.error(Errc::Unsupported,
                         "mode '" + a.mode + "' is not supported (nearest, linear, cubic)");
    }
    if (ctx.intAttr("antialias", 0) != 0 || ctx.hasAttr("axes")) {
        return ctx.error(Errc::Unsupported, "antialias and axes are not supported");
    }
    if (a.transform != "half_pixel" && a.transform != "pytorch_half_pixel" &&
        a.transform != "align_corners" && a.transform != "asymmetric" &&
        a.transform != "tf_half_pixel_for_nn" && a.transform != "tf_crop_and_resize") {
        return ctx.error(Errc::Unsupported,
                         "coordinate_transformation_mode '" + a.transform + "' is not supported");
    }
    return a;
}

/// How one dim maps: sizes, scale, and for tf_crop_and_resize the roi's start and end (fractions
/// of the input).
struct DimMapping {
    int64_t inDim = 0;
    int64_t outDim = 0;
    double scale = 1.0;
    bool fromSizes = false;
    double roiStart = 0.0;
    double roiEnd = 1.0;
};

/// The input coordinate output coordinate `o` maps back to along one dim
/// (coordinate_transformation_mode in the specification).
double sourceCoordinate(const std::string& transform, const DimMapping& m, int64_t o) {
    const auto out = static_cast<double>(o);
    const int64_t inDim = m.inDim;
    const int64_t outDim = m.outDim;
    const double scale = m.scale;
    if (transform == "tf_crop_and_resize") {
        const double span = static_cast<double>(inDim - 1);
        return outDim > 1 ? m.roiStart * span + out * (m.roiEnd - m.roiStart) * span /
                                                    static_cast<double>(outDim - 1)
                          : 0.5 * (m.roiStart + m.roiEnd) * span;
    }
    if (transform == "half_pixel") {
        return (out + 0.5) / scale - 0.5;
    }
    if (transform == "pytorch_half_pixel") {
        return outDim > 1 ? (out + 0.5) / scale - 0.5 : 0.0;
    }
    if (transform == "tf_half_pixel_for_nn") {
        return (out + 0.5) / scale;
    }
    if (transform == "align_corners") {
        // The specification's length_resized is in * scale, unrounded, when scales are given.
        const double resized =
            m.fromSizes ? static_cast<double>(outDim) : static_cast<double>(inDim) * scale;
        return outDim == 1 ? 0.0 : out * static_cast<double>(inDim - 1) / (resized - 1.0);
    }
    return out / scale; // asymmetric
}

std::vector<Tap> nearestTaps(double x, const std::string& nearestMode, int64_t inDim) {
    double pick = 0.0;
    const double frac = x - std::floor(x);
    if (nearestMode == "floor") {
        pick = std::floor(x);
    } else if (nearestMode == "ceil") {
        pick = std::ceil(x);
    } else if (nearestMode == "round_prefer_ceil") {
        pick = frac == 0.5 ? std::ceil(x) : std::round(x);
    } else {
        pick = frac == 0.5 ? std::floor(x) : std::round(x);
    }
    return {{std::clamp<int64_t>(static_cast<int64_t>(pick), 0, inDim - 1), 1.0F}};
}

std::vector<Tap> linearTaps(double x, int64_t inDim) {
    x = std::clamp(x, 0.0, static_cast<double>(inDim - 1));
    const auto i0 = static_cast<int64_t>(std::floor(x));
    const int64_t i1 = std::min(i0 + 1, inDim - 1);
    const auto t = static_cast<float>(x - static_cast<double>(i0));
    std::vector<Tap> taps{{i0, 1.0F - t}};
    if (i1 != i0 && t != 0.0F) {
        taps.push_back({i1, t});
    }
    return taps;
}

/// Keys' cubic convolution (R. Keys, "Cubic convolution interpolation for digital image
/// processing", 1981) with parameter a over the neighbours floor(x) - 1 .. floor(x) + 2. Samples
/// outside the input repeat the edge, or with exclude_outside get weight 0 and the others are
/// renormalised to sum 1.
std::vector<Tap> cubicTaps(double x, int64_t inDim, double a, bool excludeOutside) {
    const double base = std::floor(x);
    const double t = x - base;
    auto kernel = [a](double d) {
        d = std::abs(d);
        if (d <= 1.0) {
            return ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0;
        }
        if (d < 2.0) {
            return ((a * d - 5.0 * a) * d + 8.0 * a) * d - 4.0 * a;
        }
        return 0.0;
    };
    std::vector<Tap> taps;
    double total = 0.0;
    for (int k = -1; k <= 2; ++k) {
        const auto index = static_cast<int64_t>(base) + k;
        const bool outside = index < 0 || index >= inDim;
        const double weight = excludeOutside && outside ? 0.0 : kernel(t - k);
        total += weight;
        taps.push_back({std::clamp<int64_t>(index, 0, inDim - 1), static_cast<float>(weight)});
    }
    if (excludeOutside && total != 0.0) {
        for (Tap& tap : taps) {
            tap.weight = static_cast<float>(tap.weight / total);
        }
    }
    return taps;
}

/// Output sizes from input 3, or scales from input 2 (input 1 before opset 11).
Result<void> readScalesOrSizes(const OpContext& ctx, std::vector<float>& scales, Shape& sizes) {
    const Shape& in = ctx.input(0).shape();
    const size_t scalesPort = ctx.opset < 11 ? 1 : 2;
    if (ctx.has(3) && ctx.input(3).numElements() > 0) {
        sizes = toInt64Vector(ctx.input(3));
    } else if (ctx.has(scalesPort) && ctx.input(scalesPort).numElements() > 0) {
        const Tensor s = castTensor(ctx.input(scalesPort), graph::DataType::Float);
        scales.assign(s.data<float>(), s.data<float>() + s.numElements());
    }
    if ((sizes.empty() && scales.size() != in.size()) ||
        (!sizes.empty() && sizes.size() != in.size())) {
        return ctx.error(Errc::InvalidModel, "scales or sizes must have one entry per dim");
    }
    return success();
}

/// tf_crop_and_resize's roi (input 1): starts then ends, one per dim, as fractions of the input.
Result<std::vector<double>> readRoi(const OpContext& ctx) {
    const size_t rank = ctx.input(0).rank();
    if (ctx.opset < 11 || !ctx.has(1) ||
        ctx.input(1).numElements() != 2 * static_cast<int64_t>(rank)) {
        return ctx.error(Errc::InvalidModel,
                         "tf_crop_and_resize needs roi (input 1) with 2 x rank values");
    }
    const Tensor roi = castTensor(ctx.input(1), graph::DataType::Double);
    return std::vector<double>(roi.data<double>(), roi.data<double>() + roi.numElements());
}

/// The mapping of dim d: output size from sizes, or floor(in * roi length * scale).
DimMapping mapDim(const Shape& in, size_t d, const std::vector<float>& scales, const Shape& sizes,
                  const std::vector<double>& roi) {
    DimMapping m;
    m.inDim = in[d];
    m.fromSizes = !sizes.empty();
    if (!roi.empty()) {
        m.roiStart = roi[d];
        m.roiEnd = roi[d + in.size()];
    }
    const double roiLength = roi.empty() ? 1.0 : m.roiEnd - m.roiStart;
    m.outDim =
        m.fromSizes
            ? sizes[d]
            : static_cast<int64_t>(std::floor(static_cast<double>(in[d]) * roiLength * scales[d]));
    m.scale = m.fromSizes ? static_cast<double>(m.outDim) / static_cast<double>(in[d]) : scales[d];
    return m;
}

Result<ResizePlan> makePlan(const OpContext& ctx) {
    QS_TRY(requireFloat(ctx, 0));
    const Shape& in = ctx.input(0).shape();
    QS_ASSIGN_OR_RETURN(const ResizeAttributes attrs, readAttributes(ctx));
    std::vector<float> scales;
    Shape sizes;
    QS_TRY(readScalesOrSizes(ctx, scales, sizes));
    const bool crop = attrs.transform == "tf_crop_and_resize";
    std::vector<double> roi;
    if (crop) {
        QS_ASSIGN_OR_RETURN(roi, readRoi(ctx));
    }
    ResizePlan plan;
    plan.extrapolationValue = attrs.extrapolationValue;
    plan.taps.resize(in.size());
    for (size_t d = 0; d < in.size(); ++d) {
        const DimMapping m = mapDim(in, d, scales, sizes, roi);
        plan.outShape.push_back(m.outDim);
        for (int64_t o = 0; o < m.outDim; ++o) {
            const double x = sourceCoordinate(attrs.transform, m, o);
            if (crop && (x < 0.0 || x > static_cast<double>(in[d] - 1))) {
                plan.taps[d].emplace_back();
            } else if (attrs.mode == "nearest") {
                plan.taps[d].push_back(nearestTaps(x, attrs.nearestMode, in[d]));
            } else if (attrs.mode == "linear") {
                plan.taps[d].push_back(linearTaps(x, in[d]));
            } else {
                plan.taps[d].push_back(cubicTaps(x, in[d], attrs.cubicA, attrs.excludeOutside));
            }
        }
    }
    return plan;
}

/// Calls fn(outFlat, inFlat, weight) for every tap of every output element, and outside(outFlat)
/// for the elements that map outside the input (tf_crop_and_resize).
template <typename Fn, typename Outside>
void forEachTap(const ResizePlan& plan, const Shape& in, Fn&& fn, Outside&& outside) {
    const std::vector<int64_t> strides = stridesOf(in);
    const size_t rank = in.size();
    forEachCoordinate(plan.outShape, [&](int64_t flat, const std::vector<int64_t>& c) {
        for (size_t d = 0; d < rank; ++d) {
            if (plan.taps[d][static_cast<size_t>(c[d])].empty()) {
                outside(flat);
                return;
            }
        }
        // Odometer over the taps of each dim (1 to 4 per dim).
        std::vector<size_t> pick(rank, 0);
        while (true) {
            int64_t offset = 0;
            float weight = 1.0F;
            for (size_t d = 0; d < rank; ++d) {
                const Tap& tap = plan.taps[d][static_cast<size_t>(c[d])][pick[d]];
                offset += tap.index * strides[d];
                weight *= tap.weight;
            }
            fn(flat, offset, weight);
            size_t d = rank;
            while (d-- > 0) {
                if (++pick[d] < plan.taps[d][static_cast<size_t>(c[d])].size()) {
                    break;
                }
                pick[d] = 0;
            }
            if (d == static_cast<size_t>(-1)) {
                break;
            }
        }
    });
}

/// True when dims 0 and 1 are copied (one tap of weight 1 at the same index) and every output
/// coordinate of dims 2 and 3 maps inside the input: the plane-by-plane case.
bool resizesPlanesOnly(const ResizePlan& plan, const Shape& in) {
    if (in.size() != 4) {
        return false;
    }
    for (size_t d = 0; d < 2; ++d) {
        if (plan.outShape[d] != in[d]) {
            return false;
        }
        for (int64_t o = 0; o < in[d]; ++o) {
            const std::vector<Tap>& taps = plan.taps[d][static_cast<size_t>(o)];
            if (taps.size() != 1 || taps[0].index != o || taps[0].weight != 1.0F) {
                return false;
            }
        }
    }
    for (size_t d = 2; d < 4; ++d) {
        for (const std::vector<Tap>& taps : plan.taps[d]) {
            if (taps.empty()) {
                return false;
            }
        }
    }
    return true;
}

/// The plane-by-plane case: onPlane(plane) on the thread that takes the plane, then
/// onElement(plane, outIndex, tapsH, tapsW) for each of its output elements in order (outIndex
/// within the plane); the planes split over the threads.
template <typename OnPlane, typename OnElement>
void forEachPlaneElement(const ResizePlan& plan, const Shape& in, OnPlane&& onPlane,
                         OnElement&& onElement) {
    const int64_t outH = plan.outShape[2];
    const int64_t outW = plan.outShape[3];
    parallelFor(in[0] * in[1], 1, [&](int64_t begin, int64_t end) {
        for (int64_t plane = begin; plane < end; ++plane) {
            onPlane(plane);
            for (int64_t oh = 0; oh < outH; ++oh) {
                const std::vector<Tap>& th = plan.taps[2][static_cast<size_t>(oh)];
                for (int64_t ow = 0; ow < outW; ++ow) {
                    onElement(plane, oh * outW + ow, th, plan.taps[3][static_cast<size_t>(ow)]);
                }
            }
        }
    });
}

/// forEachTap's sums for the plane-by-plane case: per output element, the taps of H (outer) and
/// W (inner) in order, each weighted by w_h * w_w (the generic odometer's 1 * 1 * w_h * w_w).
void resizePlanes(const ResizePlan& plan, const Shape& in, const float* x, float* y) {
    const int64_t inPlane = in[2] * in[3];
    const int64_t outPlane = plan.outShape[2] * plan.outShape[3];
    forEachPlaneElement(
        plan, in, [](int64_t) {},
        [&](int64_t plane, int64_t o, const std::vector<Tap>& th, const std::vector<Tap>& tw) {
            const float* src = x + plane * inPlane;
            float sum = 0.0F;
            for (const Tap& h : th) {
                const float* row = src + h.index * in[3];
                for (const Tap& w : tw) {
                    sum += h.weight * w.weight * row[w.index];
                }
            }
            y[plane * outPlane + o] = sum;
        });
}

/// The VJP of resizePlanes: each output element's taps scattered into its plane of dx in
/// forEachTap's order (so the sums are the generic VJP's, bit for bit), planes on the threads.
void resizePlanesVjp(const ResizePlan& plan, const Shape& in, const float* dy, float* dx) {
    const int64_t inPlane = in[2] * in[3];
    const int64_t outPlane = plan.outShape[2] * plan.outShape[3];
    forEachPlaneElement(
        plan, in,
        [&](int64_t plane) { std::fill(dx + plane * inPlane, dx + (plane + 1) * inPlane, 0.0F); },
        [&](int64_t plane, int64_t o, const std::vector<Tap>& th, const std::vector<Tap>& tw) {
            const float g = dy[plane * outPlane + o];
            float* dst = dx + plane * inPlane;
            for (const Tap& h : th) {
                float* row = dst + h.index * in[3];
                for (const Tap& w : tw) {
                    row[w.index] += h.weight * w.weight * g;
                }
            }
        });
}

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(ResizePlan plan, makePlan(ctx));
    if (resizesPlanesOnly(plan, ctx.input(0).shape())) {
        Tensor y = Tensor::allocate(graph::DataType::Float, plan.outShape);
        resizePlanes(plan, ctx.input(0).shape(), ctx.input(0).data<float>(),
                     y.mutableData<float>());
        return std::vector<Tensor>{y};
    }
    Tensor y = Tensor::zeros(graph::DataType::Float, plan.outShape);
    const float* x = ctx.input(0).data<float>();
    float* py = y.mutableData<float>();
    forEachTap(
        plan, ctx.input(0).shape(), [&](int64_t out, int64_t in, float w) { py[out] += w * x[in]; },
        [&](int64_t out) { py[out] = plan.extrapolationValue; });
    return std::vector<Tensor>{y};
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor>,
                                std::span<const Tensor> outputGrads) {
    QS_ASSIGN_OR_RETURN(ResizePlan plan, makePlan(ctx));
    std::vector<Tensor> grads(ctx.numInputs());
    if (resizesPlanesOnly(plan, ctx.input(0).shape())) {
        grads[0] = Tensor::allocate(graph::DataType::Float, ctx.input(0).shape());
        resizePlanesVjp(plan, ctx.input(0).shape(), outputGrads[0].data<float>(),
                        grads[0].mutableData<float>());
        return grads;
    }
    Tensor dx = Tensor::zeros(graph::DataType::Float, ctx.input(0).shape());
    const float* dy = outputGrads[0].data<float>();
    float* pdx = dx.mutableData<float>();
    // Extrapolated elements do not depend on x.
    forEachTap(
        plan, ctx.input(0).shape(),
        [&](int64_t out, int64_t in, float w) { pdx[in] += w * dy[out]; }, [](int64_t) {});
    grads[0] = dx;
    return grads;
}

std::vector<OpSample> samples(std::mt19937& rng) {
    const Tensor scales = Tensor::fromVector<float>({4}, {1.0F, 1.0F, 2.0F, 1.5F});
    return {{"linear half_pixel",
             {stringAttribute("mode", "linear")},
             {randomTensor(rng, {1, 2, 3, 4}), Tensor(), scales},
             {0}},
            {"nearest sizes",
             {},
             {randomTensor(rng, {1, 1, 3, 3}), Tensor(), Tensor(), int64Tensor<int>({1, 1, 5, 2})},
             {0}},
            {"linear tf_crop_and_resize, partly outside",
             {stringAttribute("mode", "linear"),
              stringAttribute("coordinate_transformation_mode", "tf_crop_and_resize"),
              floatAttribute("extrapolation_value", 2.0F)},
             {randomTensor(rng, {1, 1, 4, 4}),
              Tensor::fromVector<float>({8}, {0.0F, 0.0F, 0.3F, -0.2F, 1.0F, 1.0F, 0.7F, 0.9F}),
              Tensor(), int64Tensor<int>({1, 1, 3, 4})},
             {0}},
            {"cubic align_corners",
             {stringAttribute("mode", "cubic"),
              stringAttribute("coordinate_transformation_mode", "align_corners")},
             {randomTensor(rng, {1, 1, 4, 4}), Tensor(), scales},
             {0}},
            {"cubic a=-0.5 exclude_outside downsample",
             {stringAttribute("mode", "cubic"), floatAttribute("cubic_coeff_a", -0.5F),
              intAttribute("exclude_outside", 1)},
             {randomTensor(rng, {1, 1, 5, 5}), Tensor(), Tensor(), int64Tensor<int>({1, 1, 3, 2})},
             {0}}};
}

const OpDef kResize{.opType = "Resize",
                    .domain = "",
                    .sinceVersion = 10,
                    .doc = "nearest, linear or cubic resampling",
                    .minInputs = 1,
                    .maxInputs = 4,
                    .forward = forward,
                    .reference = nullptr,
                    .vjp = vjp,
                    .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(resize, kResize)
