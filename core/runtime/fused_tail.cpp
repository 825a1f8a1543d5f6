#include "core/runtime/fused_tail.h"

#include "core/runtime/packed_gemm.h"
#include "core/runtime/parallel.h"
#include "core/runtime/tensor.h"

#include <Eigen/Core>

#ifdef __AVX2__
#include <immintrin.h>
#endif

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>

namespace qs::runtime {

using graph::NodeId;
using graph::ValueId;

namespace {

constexpr int kLastOp = static_cast<int>(TailOp::mulSaved);

/// The only consumer of `id`, when it has exactly one and is no graph output.
std::optional<NodeId> soleConsumerId(const graph::Graph& g, ValueId id) {
    const graph::Value& value = g.value(id);
    if (value.consumers.size() != 1 || g.isOutput(id)) {
        return std::nullopt;
    }
    return value.consumers[0].node;
}

} // namespace

std::optional<float> scalarConstant(const graph::Graph& g, const graph::Node& node, size_t port,
                                    size_t rank) {
    if (port >= node.inputs.size() || !node.inputs[port].valid()) {
        return std::nullopt;
    }
    const graph::Value& value = g.value(node.inputs[port]);
    if (!value.isInitializer() || value.initializer->dtype() != graph::DataType::Float) {
        return std::nullopt;
    }
    const Tensor tensor = Tensor::wrap(value.initializer);
    if (tensor.numElements() != 1 || tensor.rank() > rank) {
        return std::nullopt;
    }
    return tensor.data<float>()[0];
}

namespace {

/// A binary op of `v` and a one-element constant, as a step.
std::optional<TailStep> scalarArithmeticStep(const graph::Graph& g, const graph::Node& node,
                                             ValueId v, size_t rank) {
    if (node.inputs.size() != 2 || node.inputs[0] == node.inputs[1]) {
        return std::nullopt;
    }
    const bool vFirst = node.inputs[0] == v;
    const std::optional<float> c = scalarConstant(g, node, vFirst ? 1 : 0, rank);
    if (!c) {
        return std::nullopt;
    }
    if (node.opType == "Mul") {
        return TailStep{TailOp::mulConst, *c};
    }
    if (node.opType == "Add") {
        return TailStep{TailOp::addConst, *c};
    }
    if (node.opType == "Sub") {
        return TailStep{vFirst ? TailOp::subConst : TailOp::subFromConst, *c};
    }
    if (node.opType == "Div" && vFirst) {
        return TailStep{TailOp::divConst, *c};
    }
    return std::nullopt;
}

/// The step `node` applies to its input `v`, when it is a one-output element-wise op of v alone.
std::optional<TailStep> unaryStep(const graph::Graph& g, const graph::Node& node, ValueId v,
                                  size_t rank) {
    if (!node.isDefaultDomain() || node.outputs.size() != 1 || node.inputs.empty()) {
        return std::nullopt;
    }
    const bool firstIsV = node.inputs[0] == v;
    if ((node.opType == "Relu" || node.opType == "Clip") && firstIsV) {
        const auto bounds = clampBounds(g, node, rank);
        if (!bounds) {
            return std::nullopt;
        }
        return TailStep{TailOp::clamp, bounds->first, bounds->second};
    }
    if (node.opType == "Sigmoid" && firstIsV) {
        return TailStep{TailOp::sigmoid};
    }
    if (node.opType == "HardSigmoid" && firstIsV) {
        return TailStep{TailOp::hardSigmoid, node.floatAttr("alpha", 0.2F),
                        node.floatAttr("beta", 0.5F)};
    }
    return scalarArithmeticStep(g, node, v, rank);
}

/// A self-gated activation at `v`: v feeds exactly a Mul(v, gate) and a chain of steps ending
/// in `gate`, whose only consumer is that Mul (SiLU: Sigmoid; decomposed HardSwish: Add 3, Clip).
std::optional<TailMatch> matchGate(const graph::Graph& g, ValueId v, size_t rank) {
    const graph::Value& value = g.value(v);
    if (value.consumers.size() != 2 || g.isOutput(v) ||
        value.consumers[0].node == value.consumers[1].node) {
        return std::nullopt;
    }
    for (size_t mulIndex = 0; mulIndex < 2; ++mulIndex) {
        const NodeId mulId = value.consumers[mulIndex].node;
        const graph::Node& mul = g.node(mulId);
        if (mul.opType != "Mul" || !mul.isDefaultDomain() || mul.inputs.size() != 2 ||
            mul.outputs.size() != 1 || mul.inputs[0] == mul.inputs[1]) {
            continue;
        }
        const ValueId gate = mul.inputs[0] == v ? mul.inputs[1] : mul.inputs[0];
        TailMatch match;
        match.steps.push_back({TailOp::save});
        ValueId cur = v;
        NodeId nextId = value.consumers[1 - mulIndex].node;
        bool closed = false;
        while (true) {
            const graph::Node& next = g.node(nextId);
            const std::optional<TailStep> step = unaryStep(g, next, cur, rank);
            if (!step) {
                break;
            }
            match.steps.push_back(*step);
            match.absorbed.push_back(nextId);
            cur = next.outputs[0];
            const std::optional<NodeId> after = soleConsumerId(g, cur);
            if (!after) {
                break;
            }
            if (*after == mulId) {
                closed = cur == gate;
                break;
            }
            nextId = *after;
        }
        if (!closed) {
            continue;
        }
        match.steps.push_back({TailOp::mulSaved});
        match.absorbed.push_back(mulId);
        match.last = mul.outputs[0];
        return match;
    }
    return std::nullopt;
}

float sigmoidReference(float v) {
    return static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(v))));
}

} // namespace

const graph::Node* soleConsumer(const graph::Graph& g, ValueId id) {
    const std::optional<NodeId> consumer = soleConsumerId(g, id);
    return consumer ? &g.node(*consumer) : nullptr;
}

std::optional<std::pair<float, float>> clampBounds(const graph::Graph& g, const graph::Node& node,
                                                   size_t rank) {
    constexpr float kInf = std::numeric_limits<float>::infinity();
    if (!node.isDefaultDomain()) {
        return std::nullopt;
    }
    if (node.opType == "Relu") {
        return std::pair{0.0F, kInf};
    }
    if (node.opType != "Clip") {
        return std::nullopt;
    }
    std::pair bounds{node.floatAttr("min", -kInf), node.floatAttr("max", kInf)};
    for (size_t port = 1; port < node.inputs.size(); ++port) {
        if (!node.inputs[port].valid()) {
            continue;
        }
        const std::optional<float> bound = scalarConstant(g, node, port, rank);
        if (!bound) {
            return std::nullopt;
        }
        (port == 1 ? bounds.first : bounds.second) = *bound;
    }
    return bounds;
}

std::vector<float> encodeTail(const FusedTail& tail) {
    std::vector<float> out;
    out.reserve(tail.size() * 3);
    for (const TailStep& step : tail) {
        out.push_back(static_cast<float>(static_cast<int>(step.op)));
        out.push_back(step.a);
        out.push_back(step.b);
    }
    return out;
}

Result<FusedTail> decodeTail(std::span<const float> encoded) {
    if (encoded.size() % 3 != 0) {
        return Error(Errc::InvalidArgument, "a fused tail holds three numbers per step, got " +
                                                std::to_string(encoded.size()));
    }
    FusedTail tail;
    bool saved = false;
    for (size_t i = 0; i < encoded.size(); i += 3) {
        const float code = encoded[i];
        if (!(code >= 0.0F && code <= static_cast<float>(kLastOp)) || code != std::floor(code)) {
            return Error(Errc::InvalidArgument, "unknown fused tail op " + std::to_string(code) +
                                                    " at step " + std::to_string(i / 3));
        }
        const auto op = static_cast<TailOp>(static_cast<int>(code));
        if (op == TailOp::mulSaved && !saved) {
            return Error(Errc::InvalidArgument, "fused tail step " + std::to_string(i / 3) +
                                                    " multiplies by a value "
                                                    "never saved");
        }
        saved = saved || op == TailOp::save;
        tail.push_back({op, encoded[i + 1], encoded[i + 2]});
    }
    return tail;
}

TailMatch matchFusedTail(const graph::Graph& g, ValueId from, size_t rank) {
    TailMatch match;
    match.last = from;
    while (true) {
        if (std::optional<TailMatch> gate = matchGate(g, match.last, rank)) {
            match.steps.insert(match.steps.end(), gate->steps.begin(), gate->steps.end());
            match.absorbed.insert(match.absorbed.end(), gate->absorbed.begin(),
                                  gate->absorbed.end());
            match.last = gate->last;
            continue;
        }
        const std::optional<NodeId> nextId = soleConsumerId(g, match.last);
        if (!nextId) {
            break;
        }
        const graph::Node& next = g.node(*nextId);
        const std::optional<TailStep> step = unaryStep(g, next, match.last, rank);
        if (!step) {
            break;
        }
        match.steps.push_back(*step);
        match.absorbed.push_back(*nextId);
        match.last = next.outputs[0];
    }
    return match;
}

namespace {

// 4 KiB of v and 4 KiB of the saved copy: both stay in L1 while every step runs over them.
constexpr int64_t kTailBlock = 1024;

#ifdef __AVX2__
/// Eigen's logistic for x >= -9: 1/2 + c p(c^2) / q(c^2), c = min(x, kLogisticBound), with p of
/// degree 4 and q of degree 5 (highest coefficient first).
constexpr float kLogisticBound = 15.7243833541870117F;
constexpr std::array<float, 5> kLogisticP{4.37031012579801e-11F, 1.15627324459942e-07F,
                                          6.08574864600143e-05F, 8.51377133304701e-03F,
                                          2.48287947061529e-01F};
constexpr std::array<float, 6> kLogisticQ{6.10247389755681e-13F, 5.76102136993427e-09F,
                                          6.29106785017040e-06F, 1.70198817374094e-03F,
                                          1.16817656904453e-01F, 9.93151921023180e-01F};

/// Eigen's logistic (a rational function of degree 9 over 10 for x >= -9, exp(x) below), with
/// its division as a reciprocal estimate refined by one Newton step: the division was a third of
/// the step's time, and the refined quotient is within 2 ulp of it.
// Always inlined: called from two places, it was not, and reloaded its constants per vector.
[[gnu::always_inline]] inline __m256 sigmoidPacket(__m256 x) {
    const __m256 small = _mm256_cmp_ps(x, _mm256_set1_ps(-9.0F), _CMP_LT_OQ);
    // The bound first: min returns its second operand for a NaN, which must stay NaN.
    const __m256 c = _mm256_min_ps(_mm256_set1_ps(kLogisticBound), x);
    const __m256 c2 = _mm256_mul_ps(c, c);
    __m256 p = _mm256_fmadd_ps(c2, _mm256_set1_ps(kLogisticP[0]), _mm256_set1_ps(kLogisticP[1]));
    for (size_t i = 2; i < kLogisticP.size(); ++i) {
        p = _mm256_fmadd_ps(c2, p, _mm256_set1_ps(kLogisticP[i]));
    }
    p = _mm256_mul_ps(c, p);
    __m256 q = _mm256_fmadd_ps(c2, _mm256_set1_ps(kLogisticQ[0]), _mm256_set1_ps(kLogisticQ[1]));
    for (size_t i = 2; i < kLogisticQ.size(); ++i) {
        q = _mm256_fmadd_ps(c2, q, _mm256_set1_ps(kLogisticQ[i]));
    }
    __m256 r = _mm256_rcp_ps(q);
    r = _mm256_mul_ps(r, _mm256_fnmadd_ps(q, r, _mm256_set1_ps(2.0F)));
    const __m256 logistic = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(0.5F));
    if (_mm256_movemask_ps(small) == 0) {
        return logistic;
    }
    // Below -9 the logistic is exp(x) to float precision: Eigen's vectorised exp, as in Eigen's.
    return _mm256_blendv_ps(logistic, Eigen::internal::pexp<Eigen::internal::Packet8f>(x), small);
}
#endif

#ifdef __AVX2__
/// sigmoidPacket times x when `gated` (SiLU's save, sigmoid, multiply by the saved value, in
/// registers: the product rounds as the multiply step's did).
template <bool kGated>
[[gnu::always_inline]] inline __m256 tailPacket(__m256 x) {
    const __m256 s = sigmoidPacket(x);
    return kGated ? _mm256_mul_ps(x, s) : s;
}

/// rcp_ps of 16 lanes as two 8-lane estimates: AVX-512's rcp14 rounds otherwise, and each
/// element must come out as on an AVX2 machine's path.
__attribute__((target("avx512f"))) inline __m512 reciprocalEstimate16(__m512 q) {
    const __m256 lo = _mm256_rcp_ps(_mm512_castps512_ps256(q));
    const __m256 hi =
        _mm256_rcp_ps(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(q), 1)));
    return _mm512_castpd_ps(
        _mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(lo)), _mm256_castps_pd(hi), 1));
}

/// sigmoidPacket (times x when `gated`) on 16 lanes: the same operations lane for lane, so the
/// bits equal the 8-lane path's; AVX-512 halves the instructions per element.
template <bool kGated>
__attribute__((target("avx512f"))) inline __m512 tailPacket16(__m512 x) {
    const __mmask16 small = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-9.0F), _CMP_LT_OQ);
    const __m512 c = _mm512_min_ps(_mm512_set1_ps(kLogisticBound), x);
    const __m512 c2 = _mm512_mul_ps(c, c);
    __m512 p = _mm512_fmadd_ps(c2, _mm512_set1_ps(kLogisticP[0]), _mm512_set1_ps(kLogisticP[1]));
    for (size_t i = 2; i < kLogisticP.size(); ++i) {
        p = _mm512_fmadd_ps(c2, p, _mm512_set1_ps(kLogisticP[i]));
    }
    p = _mm512_mul_ps(c, p);
    __m512 q = _mm512_fmadd_ps(c2, _mm512_set1_ps(kLogisticQ[0]), _mm512_set1_ps(kLogisticQ[1]));
    for (size_t i = 2; i < kLogisticQ.size(); ++i) {
        q = _mm512_fmadd_ps(c2, q, _mm512_set1_ps(kLogisticQ[i]));
    }
    __m512 r = reciprocalEstimate16(q);
    r = _mm512_mul_ps(r, _mm512_fnmadd_ps(q, r, _mm512_set1_ps(2.0F)));
    __m512 s = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(0.5F));
    if (small != 0) {
        // exp(x) below -9 by the 8-lane path's own function, half by half.
        alignas(64) std::array<float, 16> lanes{};
        _mm512_store_ps(lanes.data(), x);
        for (int h = 0; h < 16; h += 8) {
            _mm256_store_ps(lanes.data() + h, Eigen::internal::pexp<Eigen::internal::Packet8f>(
                                                  _mm256_load_ps(lanes.data() + h)));
        }
        s = _mm512_mask_blend_ps(small, s, _mm512_load_ps(lanes.data()));
    }
    return kGated ? _mm512_mul_ps(x, s) : s;
}

template <bool kGated>
__attribute__((target("avx512f"))) int64_t tailBlock16(float* v, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        _mm512_storeu_ps(v + i, tailPacket16<kGated>(_mm512_loadu_ps(v + i)));
    }
    return i;
}

/// Sigmoid (times x when `gated`) over v[0, n).
template <bool kGated>
void sigmoidTail(float* v, int64_t n) {
    int64_t i = wideGemmKernelActive() ? tailBlock16<kGated>(v, n) : 0;
    for (; i + 8 <= n; i += 8) {
        _mm256_storeu_ps(v + i, tailPacket<kGated>(_mm256_loadu_ps(v + i)));
    }
    if (i < n) {
        // The last few through the same packet function: where blocks end depends on the
        // thread count and the tensor's size, and every element must round alike.
        alignas(32) std::array<float, 8> rest{};
        std::copy(v + i, v + n, rest.begin());
        _mm256_store_ps(rest.data(), tailPacket<kGated>(_mm256_load_ps(rest.data())));
        std::copy(rest.begin(), rest.begin() + (n - i), v + i);
    }
}

/// Whether steps [i, i + 3) are SiLU's save, sigmoid, multiply by the saved value, and no later
/// step reads the saved value before another save (the one pass saves nothing).
bool isSiluAt(const FusedTail& tail, size_t i) {
    if (i + 2 >= tail.size() || tail[i].op != TailOp::save || tail[i + 1].op != TailOp::sigmoid ||
        tail[i + 2].op != TailOp::mulSaved) {
        return false;
    }
    for (size_t j = i + 3; j < tail.size(); ++j) {
        if (tail[j].op == TailOp::save) {
            return true;
        }
        if (tail[j].op == TailOp::mulSaved) {
            return false;
        }
    }
    return true;
}
#endif

void sigmoidBlock(float* v, int64_t n) {
#ifdef __AVX2__
    sigmoidTail<false>(v, n);
#else
    // Sigmoid's own fast kernel, Eigen's logistic, whose scalar and packet paths agree.
    Eigen::Map<Eigen::ArrayXf> all(v, n);
    all = all.logistic();
#endif
}

/// One step over one block; each arithmetic step is the unfused op's float expression.
void runStep(const TailStep& step, float* v, float* saved, int64_t n) {
    const float a = step.a;
    const float b = step.b;
    switch (step.op) {
    case TailOp::mulConst:
        std::transform(v, v + n, v, [a](float x) { return x * a; });
        break;
    case TailOp::addConst:
        std::transform(v, v + n, v, [a](float x) { return x + a; });
        break;
    case TailOp::subConst:
        std::transform(v, v + n, v, [a](float x) { return x - a; });
        break;
    case TailOp::subFromConst:
        std::transform(v, v + n, v, [a](float x) { return a - x; });
        break;
    case TailOp::divConst:
        std::transform(v, v + n, v, [a](float x) { return x / a; });
        break;
    case TailOp::clamp:
        std::transform(v, v + n, v, [a, b](float x) { return std::min(std::max(x, a), b); });
        break;
    case TailOp::hardSigmoid:
        std::transform(v, v + n, v,
                       [a, b](float x) { return std::max(0.0F, std::min(1.0F, a * x + b)); });
        break;
    case TailOp::sigmoid:
        sigmoidBlock(v, n);
        break;
    case TailOp::save:
        std::copy(v, v + n, saved);
        break;
    case TailOp::mulSaved:
        std::transform(saved, saved + n, v, v, [](float s, float x) { return s * x; });
        break;
    }
}

} // namespace

void applyFusedTail(const FusedTail& tail, float* y, int64_t count) {
    if (tail.empty()) {
        return;
    }
    parallelFor(count, kTailBlock * 16, [&](int64_t begin, int64_t end) {
        applyFusedTailHere(tail, y + begin, end - begin);
    });
}

void applyFusedTailHere(const FusedTail& tail, float* y, int64_t count) {
    if (tail.empty()) {
        return;
    }
    alignas(64) float saved[kTailBlock];
    for (int64_t b0 = 0; b0 < count; b0 += kTailBlock) {
        const int64_t n = std::min(kTailBlock, count - b0);
        for (size_t i = 0; i < tail.size(); ++i) {
#ifdef __AVX2__
            if (isSiluAt(tail, i)) { // one pass instead of three: the copy and product were half
                sigmoidTail<true>(y + b0, n);
                i += 2;
                continue;
            }
#endif
            runStep(tail[i], y + b0, saved, n);
        }
    }
}

void applyFusedTailReference(const FusedTail& tail, float* y, int64_t count) {
    for (int64_t i = 0; i < count; ++i) {
        float v = y[i];
        float s = 0.0F;
        for (const TailStep& step : tail) {
            switch (step.op) {
            case TailOp::mulConst:
                v *= step.a;
                break;
            case TailOp::addConst:
                v += step.a;
                break;
            case TailOp::subConst:
                v -= step.a;
                break;
            case TailOp::subFromConst:
                v = step.a - v;
                break;
            case TailOp::divConst:
                v /= step.a;
                break;
            case TailOp::clamp:
                v = std::min(std::max(v, step.a), step.b);
                break;
            case TailOp::hardSigmoid:
                v = std::max(0.0F, std::min(1.0F, step.a * v + step.b));
                break;
            case TailOp::sigmoid:
                v = sigmoidReference(v);
                break;
            case TailOp::save:
                s = v;
                break;
            case TailOp::mulSaved:
                v = s * v;
                break;
            }
        }
        y[i] = v;
    }
}

} // namespace qs::runtime
