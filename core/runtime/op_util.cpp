#include "core/runtime/op_util.h"

#include <algorithm>
#include <cmath>

namespace qs::runtime {

namespace {

/// Every shape padded with leading 1s to `rank` (numpy rule).
std::vector<Shape> padToRank(const std::vector<Shape>& shapes, size_t rank) {
    std::vector<Shape> padded;
    padded.reserve(shapes.size());
    for (const Shape& shape : shapes) {
        Shape p(rank - shape.size(), 1);
        p.insert(p.end(), shape.begin(), shape.end());
        padded.push_back(std::move(p));
    }
    return padded;
}

/// The output size of dim `d`, or -1 when two inputs disagree (neither being 1). A zero-sized
/// input dim makes the output dim zero.
int64_t broadcastDim(const std::vector<Shape>& padded, size_t d) {
    int64_t size = 1;
    bool zero = false;
    for (const Shape& shape : padded) {
        zero = zero || shape[d] == 0;
        if (shape[d] == 1) {
            continue;
        }
        if (size != 1 && size != shape[d]) {
            return -1;
        }
        size = shape[d];
    }
    return zero ? 0 : size;
}

/// Drops size-1 output dims and merges neighbours whose broadcast pattern (which inputs span the
/// dim) is equal; fills dims and, per collapsed dim, the pattern.
void collapseDims(const Shape& outShape, const std::vector<Shape>& padded,
                  std::vector<int64_t>& dims, std::vector<std::vector<bool>>& patterns) {
    for (size_t d = 0; d < outShape.size(); ++d) {
        if (outShape[d] == 1) {
            continue;
        }
        std::vector<bool> pattern;
        pattern.reserve(padded.size());
        for (const Shape& shape : padded) {
            pattern.push_back(shape[d] != 1);
        }
        if (!patterns.empty() && patterns.back() == pattern) {
            dims.back() *= outShape[d];
        } else {
            dims.push_back(outShape[d]);
            patterns.push_back(std::move(pattern));
        }
    }
    if (dims.empty()) {
        dims.push_back(1);
        patterns.emplace_back(padded.size(), false);
    }
}

} // namespace

Result<BroadcastPlan> makeBroadcastPlan(const std::vector<Shape>& shapes) {
    size_t rank = 0;
    for (const Shape& shape : shapes) {
        rank = std::max(rank, shape.size());
    }
    const std::vector<Shape> padded = padToRank(shapes, rank);
    BroadcastPlan plan;
    plan.outShape.assign(rank, 1);
    for (size_t d = 0; d < rank; ++d) {
        plan.outShape[d] = broadcastDim(padded, d);
        if (plan.outShape[d] < 0) {
            std::string text;
            for (const Shape& s : shapes) {
                text += (text.empty() ? "" : " and ") + shapeToString(s);
            }
            return Error(Errc::InvalidModel, "shapes " + text + " do not broadcast");
        }
    }
    std::vector<std::vector<bool>> patterns;
    collapseDims(plan.outShape, padded, plan.dims, patterns);
    plan.strides.assign(shapes.size(), std::vector<int64_t>(plan.dims.size(), 0));
    for (size_t k = 0; k < shapes.size(); ++k) {
        int64_t stride = 1;
        for (size_t d = plan.dims.size(); d-- > 0;) {
            if (patterns[d][k]) {
                plan.strides[k][d] = stride;
                stride *= plan.dims[d];
            }
        }
    }
    return plan;
}

Tensor reduceToShape(const Tensor& grad, const Shape& shape) {
    if (grad.shape() == shape) {
        return grad;
    }
    Tensor out = Tensor::zeros(graph::DataType::Float, shape);
    auto plan = makeBroadcastPlan({grad.shape(), shape});
    QS_CHECK(plan.ok(), "gradient shape does not broadcast to the input shape");
    const float* g = grad.data<float>();
    float* dst = out.mutableData<float>();
    forEachBroadcast(*plan,
                     [&](int64_t index, const int64_t* offsets) { dst[offsets[1]] += g[index]; });
    return out;
}

Result<int64_t> normalizeAxis(int64_t axis, int64_t rank, const OpContext& ctx) {
    const int64_t normalized = axis < 0 ? axis + rank : axis;
    if (normalized < 0 || normalized >= std::max<int64_t>(rank, 1)) {
        return ctx.error(Errc::InvalidModel, "axis " + std::to_string(axis) +
                                                 " is out of range for rank " +
                                                 std::to_string(rank));
    }
    return normalized;
}

std::vector<int64_t> stridesOf(const Shape& shape) {
    std::vector<int64_t> strides(shape.size(), 1);
    for (size_t d = shape.size(); d-- > 1;) {
        strides[d - 1] = strides[d] * shape[d];
    }
    return strides;
}

double rootMeanSquare(const Tensor& t) {
    const int64_t count = t.numElements();
    if (count == 0) {
        return 0.0;
    }
    double squares = 0.0;
    for (int64_t i = 0; i < count; ++i) {
        const double v = t.elementAsDouble(i);
        squares += v * v;
    }
    return std::sqrt(squares / static_cast<double>(count));
}

Tensor randomTensor(std::mt19937& rng, Shape shape, float lo, float hi) {
    Tensor out = Tensor::allocate(graph::DataType::Float, std::move(shape));
    std::uniform_real_distribution<float> dist(lo, hi);
    float* data = out.mutableData<float>();
    for (int64_t i = 0; i < out.numElements(); ++i) {
        data[i] = dist(rng);
    }
    return out;
}

Tensor randomAwayFromZero(std::mt19937& rng, Shape shape, float margin) {
    Tensor out = randomTensor(rng, std::move(shape), margin, 1.0F);
    std::bernoulli_distribution sign(0.5);
    float* data = out.mutableData<float>();
    for (int64_t i = 0; i < out.numElements(); ++i) {
        if (sign(rng)) {
            data[i] = -data[i];
        }
    }
    return out;
}

Tensor randomBools(std::mt19937& rng, Shape shape) {
    Tensor out = Tensor::allocate(graph::DataType::Bool, std::move(shape));
    std::bernoulli_distribution coin(0.5);
    bool* data = out.mutableData<bool>();
    for (int64_t i = 0; i < out.numElements(); ++i) {
        data[i] = coin(rng);
    }
    return out;
}

Tensor randomDistinct(std::mt19937& rng, Shape shape) {
    Tensor out = Tensor::allocate(graph::DataType::Float, std::move(shape));
    float* data = out.mutableData<float>();
    const int64_t count = out.numElements();
    for (int64_t i = 0; i < count; ++i) {
        data[i] = -1.0F + 0.05F * static_cast<float>(i);
    }
    std::shuffle(data, data + count, rng);
    return out;
}

std::vector<Tensor> viewVjp(const OpContext& ctx, std::span<const Tensor> outputGrads) {
    std::vector<Tensor> grads(ctx.numInputs());
    grads[0] = outputGrads[0].reshaped(ctx.input(0).shape());
    return grads;
}

Result<void> requireFloat(const OpContext& ctx, size_t index) {
    if (!ctx.has(index) || ctx.input(index).dtype() != graph::DataType::Float) {
        return ctx.error(Errc::Unsupported,
                         "input " + std::to_string(index) + " must be float32, got " +
                             std::string(ctx.has(index)
                                             ? graph::dataTypeName(ctx.input(index).dtype())
                                             : "nothing"));
    }
    return success();
}

} // namespace qs::runtime
