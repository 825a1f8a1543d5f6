// Resize (ONNX since 10; roi/scales/sizes inputs since 11): nearest and (multi)linear
// interpolation over any dims. Each output coordinate maps back to the input through
// coordinate_transformation_mode (half_pixel, pytorch_half_pixel, align_corners, asymmetric;
// opset 10 behaves as asymmetric), nearest_mode picks the sample, linear mode blends the two
// neighbours per resized dim with weights 1 - t and t. Output dim = floor(in * scale) or sizes.
// cubic, tf_crop_and_resize, antialias and axes are rejected. VJP: each output's gradient goes
// back to the samples it blended, with the same weights.

#include "core/runtime/index_map.h"

#include <cmath>

namespace qs::runtime {
namespace {

struct Tap {
    int64_t index;
    float weight;
};

struct ResizePlan {
    Shape outShape;
    std::vector<std::vector<std::vector<Tap>>> taps; ///< per dim, per output coordinate
};

Result<ResizePlan> makePlan(const OpContext& ctx) {
    QS_TRY(requireFloat(ctx, 0));
    const Shape& in = ctx.input(0).shape();
    const std::string mode = ctx.stringAttr("mode", "nearest");
    const std::string transform = ctx.stringAttr("coordinate_transformation_mode",
                                                 ctx.opset < 11 ? "asymmetric" : "half_pixel");
    const std::string nearestMode = ctx.stringAttr("nearest_mode", "round_prefer_floor");
    if (mode != "nearest" && mode != "linear") {
        return ctx.error(Errc::Unsupported,
                         "mode '" + mode + "' is not supported (nearest, linear)");
    }
    if (ctx.intAttr("antialias", 0) != 0 || ctx.hasAttr("axes")) {
        return ctx.error(Errc::Unsupported, "antialias and axes are not supported");
    }
    if (transform != "half_pixel" && transform != "pytorch_half_pixel" &&
        transform != "align_corners" && transform != "asymmetric") {
        return ctx.error(Errc::Unsupported, "coordinate_transformation_mode '" + transform + "'");
    }
    const size_t scalesPort = ctx.opset < 11 ? 1 : 2;
    std::vector<float> scales;
    Shape sizes;
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
    ResizePlan plan;
    plan.taps.resize(in.size());
    for (size_t d = 0; d < in.size(); ++d) {
        const int64_t out =
            sizes.empty() ? static_cast<int64_t>(std::floor(static_cast<double>(in[d]) * scales[d]))
                          : sizes[d];
        const double scale =
            sizes.empty() ? scales[d] : static_cast<double>(out) / static_cast<double>(in[d]);
        plan.outShape.push_back(out);
        for (int64_t o = 0; o < out; ++o) {
            double x = 0.0;
            if (transform == "half_pixel") {
                x = (static_cast<double>(o) + 0.5) / scale - 0.5;
            } else if (transform == "pytorch_half_pixel") {
                x = out > 1 ? (static_cast<double>(o) + 0.5) / scale - 0.5 : 0.0;
            } else if (transform == "align_corners") {
                // The specification's length_resized is in * scale, unrounded, when scales are
                // given.
                const double resized =
                    sizes.empty() ? static_cast<double>(in[d]) * scale : static_cast<double>(out);
                x = out == 1
                        ? 0.0
                        : static_cast<double>(o) * static_cast<double>(in[d] - 1) / (resized - 1.0);
            } else {
                x = static_cast<double>(o) / scale;
            }
            std::vector<Tap> taps;
            if (mode == "nearest") {
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
                taps.push_back(
                    {std::clamp<int64_t>(static_cast<int64_t>(pick), 0, in[d] - 1), 1.0F});
            } else {
                x = std::clamp(x, 0.0, static_cast<double>(in[d] - 1));
                const auto i0 = static_cast<int64_t>(std::floor(x));
                const int64_t i1 = std::min(i0 + 1, in[d] - 1);
                const auto t = static_cast<float>(x - static_cast<double>(i0));
                taps.push_back({i0, 1.0F - t});
                if (i1 != i0 && t != 0.0F) {
                    taps.push_back({i1, t});
                }
            }
            plan.taps[d].push_back(std::move(taps));
        }
    }
    return plan;
}

/// Calls fn(outFlat, inFlat, weight) for every tap of every output element.
template <typename Fn>
void forEachTap(const ResizePlan& plan, const Shape& in, Fn&& fn) {
    const std::vector<int64_t> strides = stridesOf(in);
    const size_t rank = in.size();
    forEachCoordinate(plan.outShape, [&](int64_t flat, const std::vector<int64_t>& c) {
        // Odometer over the taps of each dim (1 or 2 per dim).
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

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(ResizePlan plan, makePlan(ctx));
    Tensor y = Tensor::zeros(graph::DataType::Float, plan.outShape);
    const float* x = ctx.input(0).data<float>();
    float* py = y.mutableData<float>();
    forEachTap(plan, ctx.input(0).shape(),
               [&](int64_t out, int64_t in, float w) { py[out] += w * x[in]; });
    return std::vector<Tensor>{y};
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor>,
                                std::span<const Tensor> outputGrads) {
    QS_ASSIGN_OR_RETURN(ResizePlan plan, makePlan(ctx));
    Tensor dx = Tensor::zeros(graph::DataType::Float, ctx.input(0).shape());
    const float* dy = outputGrads[0].data<float>();
    float* pdx = dx.mutableData<float>();
    forEachTap(plan, ctx.input(0).shape(),
               [&](int64_t out, int64_t in, float w) { pdx[in] += w * dy[out]; });
    std::vector<Tensor> grads(ctx.numInputs());
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
             {0}}};
}

const OpDef kResize{.opType = "Resize",
                    .domain = "",
                    .sinceVersion = 10,
                    .doc = "nearest or linear resampling",
                    .minInputs = 1,
                    .maxInputs = 4,
                    .forward = forward,
                    .reference = nullptr,
                    .vjp = vjp,
                    .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(resize, kResize)
