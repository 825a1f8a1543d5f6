#include "core/runtime/conv_kernels.h"

#include "core/runtime/parallel.h"

#include <Eigen/Core>

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

namespace qs::runtime {
namespace {

using Packet = Eigen::internal::packet_traits<float>::type;
constexpr int64_t kLanes = Eigen::internal::packet_traits<float>::size;

/// y[i] = clamp(src[i] + bias + residual[i], lo, hi) over one row (src may be y).
void epilogueRow(const float* src, float bias, const float* residual, float lo, float hi,
                 int64_t count, float* y) {
    using Eigen::internal::padd;
    using Eigen::internal::ploadu;
    using Eigen::internal::pmax;
    using Eigen::internal::pmin;
    using Eigen::internal::pset1;
    using Eigen::internal::pstoreu;
    const Packet b = pset1<Packet>(bias);
    const Packet l = pset1<Packet>(lo);
    const Packet h = pset1<Packet>(hi);
    int64_t i = 0;
    for (; i + kLanes <= count; i += kLanes) {
        Packet v = padd(ploadu<Packet>(src + i), b);
        if (residual != nullptr) {
            v = padd(v, ploadu<Packet>(residual + i));
        }
        pstoreu(y + i, pmin(pmax(v, l), h));
    }
    for (; i < count; ++i) {
        const float v = src[i] + bias + (residual != nullptr ? residual[i] : 0.0F);
        y[i] = std::min(std::max(v, lo), hi);
    }
}

/// Splits one input row, shifted right by `pad` zero columns, into its even and odd padded
/// columns (stride-2 phases), two at a time so the compiler vectorises the pairs.
void deinterleave2(const float* src, int64_t width, int64_t pad, float* even, float* odd) {
    // Padded column pad + ix goes to phase (pad + ix) % 2 at index (pad + ix) / 2.
    int64_t ix = 0;
    if (pad % 2 == 1) {
        odd[pad / 2] = src[0];
        ix = 1;
    }
    float* evenOut = even + (pad + ix) / 2;
    float* oddOut = odd + (pad + ix) / 2;
    const int64_t pairs = (width - ix) / 2;
    const float* in = src + ix;
    for (int64_t k = 0; k < pairs; ++k) {
        evenOut[k] = in[2 * k];
        oddOut[k] = in[2 * k + 1];
    }
    if ((width - ix) % 2 == 1) {
        evenOut[pairs] = src[width - 1];
    }
}

/// A zero-padded copy of one input plane split into sh x sw phase planes: phase (qy, qx) holds the
/// padded pixels (qy + sh a, qx + sw b) at row a, column b, all phases sharing one row length.
/// Tap (i, j) of output pixel (oy, ox) then sits in phase (i dh mod sh, j dw mod sw) at row
/// oy + i dh div sh, column ox + j dw div sw: with the output laid out at the same row length,
/// every tap is the output index plus a constant, so one flat vector loop covers all rows.
struct PhasePlanes {
    int64_t rowLength = 0; ///< columns per phase row (>= ow, the tail is scratch)
    int64_t phaseRows = 0;
    std::vector<int64_t> tapOffsets; ///< per tap (i, j), row-major over the kernel

    explicit PhasePlanes(const Conv2d& p) {
        const int64_t reachX = ((p.kw - 1) * p.dw) / p.sw;
        const int64_t reachY = ((p.kh - 1) * p.dh) / p.sh;
        rowLength = std::max(p.ow + reachX, (p.w + p.pl + p.sw - 1) / p.sw);
        phaseRows = std::max(p.oh + reachY, (p.h + p.pt + p.sh - 1) / p.sh);
        for (int64_t i = 0; i < p.kh; ++i) {
            for (int64_t j = 0; j < p.kw; ++j) {
                const int64_t phase = ((i * p.dh) % p.sh) * p.sw + (j * p.dw) % p.sw;
                tapOffsets.push_back(phase * phaseSize() + ((i * p.dh) / p.sh) * rowLength +
                                     (j * p.dw) / p.sw);
            }
        }
    }

    int64_t phaseSize() const { return phaseRows * rowLength; }

    int64_t size(const Conv2d& p) const { return p.sh * p.sw * phaseSize(); }

    /// Outputs of the flat loop: rows of rowLength, the last one only ow long.
    int64_t flatOutputs(const Conv2d& p) const { return (p.oh - 1) * rowLength + p.ow; }

    void fill(const Conv2d& p, const float* x, float* buffer) const {
        std::fill(buffer, buffer + size(p), 0.0F);
        for (int64_t iy = 0; iy < p.h; ++iy) {
            const int64_t row = iy + p.pt;
            float* phaseRow = buffer + (row % p.sh) * p.sw * phaseSize() + (row / p.sh) * rowLength;
            const float* src = x + iy * p.w;
            if (p.sw == 1) {
                std::memcpy(phaseRow + p.pl, src, static_cast<size_t>(p.w) * sizeof(float));
                continue;
            }
            if (p.sw == 2) {
                deinterleave2(src, p.w, p.pl, phaseRow, phaseRow + phaseSize());
                continue;
            }
            for (int64_t qx = 0; qx < p.sw; ++qx) {
                // First input column whose padded column falls in phase qx.
                const int64_t ix0 = (((qx - p.pl) % p.sw) + p.sw) % p.sw;
                float* dst = phaseRow + qx * phaseSize() + (ix0 + p.pl) / p.sw;
                for (int64_t ix = ix0; ix < p.w; ix += p.sw) {
                    *dst++ = src[ix];
                }
            }
        }
    }
};

/// out[f] = bias + sum_t w[t] src[f + offset[t]] over f in [0, count); kTaps > 0 fixes the tap
/// count at compile time (3x3: 9) so the tap loop unrolls.
template <int kTaps>
void depthwiseFlat(const float* src, const int64_t* offsets, int taps, const float* w, float bias,
                   int64_t count, float* out) {
    using Eigen::internal::ploadu;
    using Eigen::internal::pmadd;
    using Eigen::internal::pset1;
    using Eigen::internal::pstoreu;
    const int n = kTaps > 0 ? kTaps : taps;
    // With the tap count fixed, offsets and weights live in registers instead of being reloaded
    // after every store (the compiler cannot prove `out` does not alias them).
    constexpr size_t kSlots = kTaps > 0 ? kTaps : 1;
    std::array<int64_t, kSlots> localOffsets{};
    Packet localWeights[kSlots]; // NOLINT(*-avoid-c-arrays): std::array drops Packet's alignment
    if constexpr (kTaps > 0) {
        for (int t = 0; t < kTaps; ++t) {
            localOffsets[static_cast<size_t>(t)] = offsets[t];
            localWeights[t] = pset1<Packet>(w[t]);
        }
    }
    int64_t f = 0;
    for (; f + kLanes <= count; f += kLanes) {
        Packet acc = pset1<Packet>(bias);
        for (int t = 0; t < n; ++t) {
            if constexpr (kTaps > 0) {
                acc = pmadd(localWeights[t],
                            ploadu<Packet>(src + localOffsets[static_cast<size_t>(t)] + f), acc);
            } else {
                acc = pmadd(pset1<Packet>(w[t]), ploadu<Packet>(src + offsets[t] + f), acc);
            }
        }
        pstoreu(out + f, acc);
    }
    for (; f < count; ++f) {
        float acc = bias;
        for (int t = 0; t < n; ++t) {
            acc += w[t] * src[offsets[t] + f];
        }
        out[f] = acc;
    }
}

} // namespace

void applyEpilogue(const ConvEpilogue& epilogue, int64_t channel0, int64_t rows, int64_t ld,
                   int64_t p0, int64_t p1, float* y, const float* residual) {
    for (int64_t r = 0; r < rows; ++r) {
        const float bias = epilogue.bias != nullptr ? epilogue.bias[channel0 + r] : 0.0F;
        const float* res = residual != nullptr ? residual + r * ld + p0 : nullptr;
        float* row = y + r * ld + p0;
        epilogueRow(row, bias, res, epilogue.lo, epilogue.hi, p1 - p0, row);
    }
}

void depthwiseConv2d(const Conv2d& p, const float* x, const float* w, const ConvEpilogue& epilogue,
                     float* y) {
    const PhasePlanes planes(p);
    const auto taps = static_cast<int>(planes.tapOffsets.size());
    const int64_t flat = planes.flatOutputs(p);
    parallelFor(p.n * p.c, 1, [&](int64_t begin, int64_t end) {
        std::vector<float> buffer(static_cast<size_t>(planes.size(p)));
        std::vector<float> acc(static_cast<size_t>(flat));
        for (int64_t nc = begin; nc < end; ++nc) {
            const int64_t c = nc % p.c;
            planes.fill(p, x + nc * p.h * p.w, buffer.data());
            const float bias = epilogue.bias != nullptr ? epilogue.bias[c] : 0.0F;
            const float* wc = w + c * taps;
            if (taps == 9) {
                depthwiseFlat<9>(buffer.data(), planes.tapOffsets.data(), taps, wc, bias, flat,
                                 acc.data());
            } else {
                depthwiseFlat<0>(buffer.data(), planes.tapOffsets.data(), taps, wc, bias, flat,
                                 acc.data());
            }
            const int64_t plane = nc * p.outPixels();
            for (int64_t oy = 0; oy < p.oh; ++oy) {
                const float* res =
                    epilogue.residual != nullptr ? epilogue.residual + plane + oy * p.ow : nullptr;
                epilogueRow(acc.data() + oy * planes.rowLength, 0.0F, res, epilogue.lo, epilogue.hi,
                            p.ow, y + plane + oy * p.ow);
            }
        }
    });
}

} // namespace qs::runtime
