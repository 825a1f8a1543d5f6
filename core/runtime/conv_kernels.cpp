#include "core/runtime/conv_kernels.h"

#include "core/runtime/depthwise_wide.h"
#include "core/runtime/fused_tail.h"
#include "core/runtime/packed_gemm.h"
#include "core/runtime/parallel.h"
#include "core/runtime/transpose8x8.h"

#include <Eigen/Core>

#ifdef __AVX2__
#include <immintrin.h>
#endif

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
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
    const auto weight = [&](int t) {
        if constexpr (kTaps > 0) {
            return localWeights[t];
        } else {
            return pset1<Packet>(w[t]);
        }
    };
    const auto offset = [&](int t) {
        if constexpr (kTaps > 0) {
            return localOffsets[static_cast<size_t>(t)];
        } else {
            return offsets[t];
        }
    };
    int64_t f = 0;
    // Four vectors at a time: four independent chains of multiply-adds share each tap's weight
    // and offset, so neither the adds' latency nor the loads of w and offsets bound the loop
    // (5x5 taps run here). Each output still sums its taps in order, as below.
    for (; f + 4 * kLanes <= count; f += 4 * kLanes) {
        Packet acc0 = pset1<Packet>(bias);
        Packet acc1 = acc0;
        Packet acc2 = acc0;
        Packet acc3 = acc0;
        for (int t = 0; t < n; ++t) {
            const Packet wt = weight(t);
            const float* s = src + offset(t) + f;
            acc0 = pmadd(wt, ploadu<Packet>(s), acc0);
            acc1 = pmadd(wt, ploadu<Packet>(s + kLanes), acc1);
            acc2 = pmadd(wt, ploadu<Packet>(s + 2 * kLanes), acc2);
            acc3 = pmadd(wt, ploadu<Packet>(s + 3 * kLanes), acc3);
        }
        pstoreu(out + f, acc0);
        pstoreu(out + f + kLanes, acc1);
        pstoreu(out + f + 2 * kLanes, acc2);
        pstoreu(out + f + 3 * kLanes, acc3);
    }
    for (; f + kLanes <= count; f += kLanes) {
        Packet acc = pset1<Packet>(bias);
        for (int t = 0; t < n; ++t) {
            acc = pmadd(weight(t), ploadu<Packet>(src + offset(t) + f), acc);
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

/// The 3x3 fast path along one axis (rows or columns): tap t of output index o reads input index
/// s o + t - pad = s (o + offset[t]) + phase[t], that is element o + offset[t] of the phase line
/// `phase[t]`, which holds input s m + phase[t] at index m (zero past the input) and has as many
/// elements as the output.
struct AxisTaps {
    std::array<int64_t, 3> phase{};
    std::array<int64_t, 3> offset{};
};

/// The taps of one axis, or nothing when a tap reaches further than one element either side, or
/// past the end of its phase line onto input data: the flat loop reads that neighbour as padding.
std::optional<AxisTaps> axisTaps(int64_t in, int64_t out, int64_t stride, int64_t pad) {
    if (stride < 1 || stride > 2) {
        return std::nullopt;
    }
    AxisTaps taps;
    for (size_t t = 0; t < 3; ++t) {
        const int64_t d = static_cast<int64_t>(t) - pad;
        const int64_t q = ((d % stride) + stride) % stride;
        const int64_t c = (d - q) / stride;
        if (c < -1 || c > 1 || (c == 1 && stride * out + q < in)) {
            return std::nullopt;
        }
        taps.phase[t] = q;
        taps.offset[t] = c;
    }
    return taps;
}

/// One pass of the 3x3 kernel over whole output rows: tap t = 3 i + j of flat output f reads
/// src[f + offsets[t]]; the flat index runs across row ends, so a tap that steps one column left
/// (right) of the output reads the previous (next) row there and is masked off in the first (last)
/// column.
struct Depthwise3x3Run {
    const float* src = nullptr;
    std::array<int64_t, 9> offsets{};
    const float* w = nullptr; ///< the channel's 9 weights
    float bias = 0.0F;
    const float* residual = nullptr; ///< same layout as y, or nullptr
    float lo = 0.0F;
    float hi = 0.0F;
    int64_t ow = 0;    ///< row length of the output
    int64_t count = 0; ///< outputs: whole rows
    float* y = nullptr;
    const float* lastColumns = nullptr; ///< columns of the last kLanes outputs
};

/// One output of the run, with its column `col`; kC<j> is the column offset of kernel column j.
template <int kC0, int kC1, int kC2>
float depthwise3x3Scalar(const Depthwise3x3Run& r, int64_t f, int64_t col) {
    const std::array<int, 3> shifts{kC0, kC1, kC2};
    float acc = r.bias;
    for (size_t j = 0; j < 3; ++j) {
        if ((shifts[j] < 0 && col == 0) || (shifts[j] > 0 && col == r.ow - 1)) {
            continue;
        }
        for (size_t i = 0; i < 3; ++i) {
            acc += r.w[3 * i + j] * r.src[f + r.offsets[3 * i + j]];
        }
    }
    acc += r.residual != nullptr ? r.residual[f] : 0.0F;
    return std::min(std::max(acc, r.lo), r.hi);
}

/// Keeps the kernel column's partial sum where its tap lies inside the row (kShift: -1 drops
/// column 0, +1 drops column ow - 1, 0 keeps all).
template <int kShift>
Packet maskColumn(const Packet& sum, const Packet& col, const Packet& lastCol) {
    using Eigen::internal::pand;
    using Eigen::internal::pcmp_lt;
    if constexpr (kShift < 0) {
        return pand(sum, pcmp_lt(Eigen::internal::pzero(col), col));
    } else if constexpr (kShift > 0) {
        return pand(sum, pcmp_lt(col, lastCol));
    } else {
        return sum;
    }
}

/// The 9 weights broadcast to packets (std::array drops Packet's alignment attribute).
struct TapPackets {
    Packet v[9]; // NOLINT(*-avoid-c-arrays)
};

template <int kC0, int kC1, int kC2>
void depthwise3x3(const Depthwise3x3Run& r) {
    using Eigen::internal::padd;
    using Eigen::internal::pand;
    using Eigen::internal::pcmp_le;
    using Eigen::internal::ploadu;
    using Eigen::internal::pmadd;
    using Eigen::internal::pmax;
    using Eigen::internal::pmin;
    using Eigen::internal::pmul;
    using Eigen::internal::pset1;
    using Eigen::internal::psub;
    const int64_t count = r.count;
    if (count < kLanes) {
        for (int64_t f = 0; f < count; ++f) {
            r.y[f] = depthwise3x3Scalar<kC0, kC1, kC2>(r, f, f % r.ow);
        }
        return;
    }
    // Everything the loop reads lives in locals: through `r` the compiler would reload it after
    // every store to y, which may alias any float.
    const float* src = r.src;
    const float* residual = r.residual;
    float* y = r.y;
    const std::array<int64_t, 9> o = r.offsets;
    TapPackets w{};
    for (size_t t = 0; t < 9; ++t) {
        w.v[t] = pset1<Packet>(r.w[t]);
    }
    const Packet bias = pset1<Packet>(r.bias);
    const Packet lo = pset1<Packet>(r.lo);
    const Packet hi = pset1<Packet>(r.hi);
    const Packet rowLength = pset1<Packet>(static_cast<float>(r.ow));
    const Packet lastCol = pset1<Packet>(static_cast<float>(r.ow - 1));
    // Advancing by kLanes columns wraps past the row end at most this many times.
    const int64_t wraps = 1 + (kLanes - 1) / r.ow;
    const auto store = [&](int64_t f, const Packet& col) {
        const float* in = src + f;
        const auto column = [&](size_t j) {
            Packet sum = pmul(w.v[j], ploadu<Packet>(in + o[j]));
            sum = pmadd(w.v[3 + j], ploadu<Packet>(in + o[3 + j]), sum);
            return pmadd(w.v[6 + j], ploadu<Packet>(in + o[6 + j]), sum);
        };
        Packet acc = padd(bias, maskColumn<kC0>(column(0), col, lastCol));
        acc = padd(acc, maskColumn<kC1>(column(1), col, lastCol));
        acc = padd(acc, maskColumn<kC2>(column(2), col, lastCol));
        if (residual != nullptr) {
            acc = padd(acc, ploadu<Packet>(residual + f));
        }
        Eigen::internal::pstoreu(y + f, pmin(pmax(acc, lo), hi));
    };
    // Vectors clear of both row ends (most of a wide row) skip the masks: nine multiply-adds in
    // three chains.
    const auto storeInterior = [&](int64_t f) {
        const float* in = src + f;
        const auto row = [&](size_t i, const Packet& start) {
            Packet sum = pmadd(w.v[3 * i], ploadu<Packet>(in + o[3 * i]), start);
            sum = pmadd(w.v[3 * i + 1], ploadu<Packet>(in + o[3 * i + 1]), sum);
            return pmadd(w.v[3 * i + 2], ploadu<Packet>(in + o[3 * i + 2]), sum);
        };
        const Packet zero = Eigen::internal::pzero(bias);
        Packet acc = padd(padd(row(0, bias), row(1, zero)), row(2, zero));
        if (residual != nullptr) {
            acc = padd(acc, ploadu<Packet>(residual + f));
        }
        Eigen::internal::pstoreu(y + f, pmin(pmax(acc, lo), hi));
    };
    const Packet lanes = Eigen::internal::plset<Packet>(0.0F);
    int64_t firstColumn = 0; // column of output f
    int64_t f = 0;
    for (; f + kLanes <= count; f += kLanes) {
        if (firstColumn >= 1 && firstColumn + kLanes < r.ow) {
            storeInterior(f);
        } else {
            Packet col = padd(pset1<Packet>(static_cast<float>(firstColumn)), lanes);
            for (int64_t k = 0; k < wraps; ++k) {
                col = psub(col, pand(pcmp_le(rowLength, col), rowLength));
            }
            store(f, col);
        }
        firstColumn += kLanes;
        while (firstColumn >= r.ow) {
            firstColumn -= r.ow;
        }
    }
    if (f < count) {
        // The last vector overlaps the previous one: it rewrites the same values.
        store(count - kLanes, ploadu<Packet>(r.lastColumns));
    }
}

using Depthwise3x3Fn = void (*)(const Depthwise3x3Run&);

/// The instance for the column offsets of `cols`, or nullptr for a combination without one.
Depthwise3x3Fn depthwise3x3For(const AxisTaps& cols) {
    const auto& c = cols.offset;
    if (c == std::array<int64_t, 3>{-1, 0, 1}) {
        return depthwise3x3<-1, 0, 1>;
    }
    if (c == std::array<int64_t, 3>{-1, 0, 0}) {
        return depthwise3x3<-1, 0, 0>;
    }
    if (c == std::array<int64_t, 3>{0, 0, 1}) {
        return depthwise3x3<0, 0, 1>;
    }
    if (c == std::array<int64_t, 3>{-1, -1, 0}) {
        return depthwise3x3<-1, -1, 0>;
    }
    return nullptr;
}

/// A 3x3 depthwise convolution (dilation 1, stride 1 or 2) as flat passes over whole output rows.
/// Stride 2 first splits each plane into its four stride phases; stride 1 with the output as large
/// as the input reads the input itself except near the top and bottom, where a staged copy with
/// zero rows stands in for the padding.
class Depthwise3x3 {
public:
    static std::optional<Depthwise3x3> plan(const Conv2d& p) {
        if (p.kh != 3 || p.kw != 3 || p.dh != 1 || p.dw != 1 || p.sh != p.sw) {
            return std::nullopt;
        }
        const auto rows = axisTaps(p.h, p.oh, p.sh, p.pt);
        const auto cols = axisTaps(p.w, p.ow, p.sw, p.pl);
        if (!rows || !cols) {
            return std::nullopt;
        }
        const Depthwise3x3Fn kernel = depthwise3x3For(*cols);
        if (kernel == nullptr) {
            return std::nullopt;
        }
        return Depthwise3x3(p, *rows, *cols, kernel);
    }

    /// Floats of staging buffer one channel needs.
    int64_t stagingSize() const { return m_p.sh * m_p.sw * blockSize(m_p.oh); }

    /// One plane: x [h, w] -> y [oh, ow], residual as y (or nullptr).
    void run(const float* x, const float* w, float bias, const float* residual, float lo, float hi,
             float* staging, float* y) const {
        Depthwise3x3Run r;
        r.w = w;
        r.bias = bias;
        r.lo = lo;
        r.hi = hi;
        r.ow = m_p.ow;
        r.lastColumns = m_lastColumns.data();
        const int64_t direct = directRows();
        const auto band = [&](int64_t r0, int64_t r1, bool staged) {
            if (r1 <= r0) {
                return;
            }
            if (staged) {
                stage(x, r0, r1, staging);
                r.src = staging;
                r.offsets = stagedOffsets(r1 - r0);
            } else {
                r.src = x + r0 * m_p.w;
                r.offsets = directOffsets();
            }
            r.residual = residual != nullptr ? residual + r0 * m_p.ow : nullptr;
            r.y = y + r0 * m_p.ow;
            r.count = (r1 - r0) * m_p.ow;
            m_kernel(r);
        };
        if (direct == 0) {
            band(0, m_p.oh, true);
            return;
        }
        band(0, 2, true);
        band(2, 2 + direct, false);
        band(2 + direct, m_p.oh, true);
    }

private:
    Depthwise3x3(const Conv2d& p, const AxisTaps& rows, const AxisTaps& cols, Depthwise3x3Fn kernel)
        : m_p(p)
        , m_rows(rows)
        , m_cols(cols)
        , m_kernel(kernel) {
        // Runs cover whole rows, so these depend on the row length only.
        for (int64_t l = 0; l < kLanes; ++l) {
            m_lastColumns[static_cast<size_t>(l)] =
                static_cast<float>((((l - kLanes) % p.ow) + p.ow) % p.ow);
        }
    }

    /// Below this many rows one staged band beats three runs.
    static constexpr int64_t kMinDirectRows = 16;

    /// Output rows [2, 2 + directRows()) read the input in place (stride 1, output as large as
    /// the input, so rows 1 .. h - 2 around them exist); 0 when the plane is too small.
    int64_t directRows() const {
        if (m_p.sh != 1 || m_p.h != m_p.oh || m_p.w != m_p.ow || m_p.oh < kMinDirectRows) {
            return 0;
        }
        return m_p.oh - 4;
    }

    std::array<int64_t, 9> directOffsets() const {
        std::array<int64_t, 9> offsets{};
        for (size_t t = 0; t < 9; ++t) {
            offsets[t] = (m_rows.offset[t / 3]) * m_p.w + m_cols.offset[t % 3];
        }
        return offsets;
    }

    /// One phase's lines for a band of `rows` output rows: phase rows r0 - 1 .. r1, after one
    /// leading zero and before one trailing zero (the masked reads one step past a line).
    int64_t blockSize(int64_t rows) const { return (rows + 2) * m_p.ow + 2; }

    std::array<int64_t, 9> stagedOffsets(int64_t rows) const {
        std::array<int64_t, 9> offsets{};
        for (size_t t = 0; t < 9; ++t) {
            const size_t i = t / 3;
            const size_t j = t % 3;
            const int64_t block = m_rows.phase[i] * m_p.sw + m_cols.phase[j];
            offsets[t] =
                block * blockSize(rows) + 1 + (m_rows.offset[i] + 1) * m_p.ow + m_cols.offset[j];
        }
        return offsets;
    }

    /// Fills every phase's lines for output rows [r0, r1): line m of phase (qr, qc) at phase row
    /// k holds x[s k + qr, s m + qc], zero outside the input.
    void stage(const float* x, int64_t r0, int64_t r1, float* staging) const {
        const int64_t s = m_p.sh;
        const int64_t ow = m_p.ow;
        const int64_t size = blockSize(r1 - r0);
        if (s == 1 && m_p.w == ow) {
            // The rows inside the image are contiguous lines already: one copy (small planes are
            // staged whole, and a call per line would cost more than the convolution).
            const int64_t first = std::max<int64_t>(r0 - 1, 0);
            const int64_t last = std::min(r1, m_p.h - 1);
            const auto line = [&](int64_t k) { return staging + 1 + (k - r0 + 1) * ow; };
            std::fill(staging, line(first), 0.0F);
            std::copy_n(x + first * ow, (last - first + 1) * ow, line(first));
            std::fill(line(last + 1), staging + size, 0.0F);
            return;
        }
        for (int64_t q = 0; q < s * s; ++q) {
            staging[q * size] = 0.0F;
            staging[q * size + size - 1] = 0.0F;
        }
        // Input rows in order (phase qr's line k is row s k + qr): every even row and then
        // every odd one streamed a cold plane twice, each pass skipping half its lines.
        for (int64_t k = r0 - 1; k <= r1; ++k) {
            for (int64_t qr = 0; qr < s; ++qr) {
                const int64_t iy = s * k + qr;
                float* line = staging + qr * s * size + 1 + (k - r0 + 1) * ow;
                if (iy < 0 || iy >= m_p.h) {
                    for (int64_t qc = 0; qc < s; ++qc) {
                        std::fill_n(line + qc * size, ow, 0.0F);
                    }
                    continue;
                }
                const float* src = x + iy * m_p.w;
                if (s == 1) {
                    const int64_t n = std::min(ow, m_p.w);
                    std::copy_n(src, n, line);
                    std::fill(line + n, line + ow, 0.0F);
                    continue;
                }
                splitColumns(src, m_p.w, ow, line, line + size);
            }
        }
    }

    /// even[m] = src[2 m], odd[m] = src[2 m + 1] for m < count, zero past the row's `width`.
    static void splitColumns(const float* src, int64_t width, int64_t count, float* even,
                             float* odd) {
        const int64_t pairs = std::min(count, width / 2);
        int64_t m = 0;
#ifdef __AVX2__
        // Rows of MobileNet-sized planes are short: whole vectors only, the last one overlapping
        // the one before (rewriting the same values), 128-bit ones below 8 pairs.
        if (pairs >= 8) {
            for (; m < pairs; m += 8) {
                splitColumns8(src, std::min(m, pairs - 8), even, odd);
            }
        } else if (pairs >= 4) {
            for (; m < pairs; m += 4) {
                splitColumns4(src, std::min(m, pairs - 4), even, odd);
            }
        }
#endif
        for (; m < pairs; ++m) {
            even[m] = src[2 * m];
            odd[m] = src[2 * m + 1];
        }
        for (m = pairs; m < count; ++m) {
            even[m] = 2 * m < width ? src[2 * m] : 0.0F;
            odd[m] = 2 * m + 1 < width ? src[2 * m + 1] : 0.0F;
        }
    }

#ifdef __AVX2__
    /// Pairs m .. m + 7: pick the even and odd columns within each 128-bit lane, then put the
    /// lanes' halves in order.
    static void splitColumns8(const float* src, int64_t m, float* even, float* odd) {
        const __m256 a = _mm256_loadu_ps(src + 2 * m);
        const __m256 b = _mm256_loadu_ps(src + 2 * m + 8);
        const __m256 evens = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
        const __m256 odds = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
        constexpr int kLaneOrder = _MM_SHUFFLE(3, 1, 2, 0);
        _mm256_storeu_ps(
            even + m, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(evens), kLaneOrder)));
        _mm256_storeu_ps(
            odd + m, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(odds), kLaneOrder)));
    }

    /// Pairs m .. m + 3.
    static void splitColumns4(const float* src, int64_t m, float* even, float* odd) {
        const __m128 a = _mm_loadu_ps(src + 2 * m);
        const __m128 b = _mm_loadu_ps(src + 2 * m + 4);
        _mm_storeu_ps(even + m, _mm_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)));
        _mm_storeu_ps(odd + m, _mm_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
    }
#endif

    Conv2d m_p;
    AxisTaps m_rows;
    AxisTaps m_cols;
    Depthwise3x3Fn m_kernel;
    std::array<float, kLanes> m_lastColumns{};
};

/// dst[2 m] = even[m], dst[2 m + 1] = odd[m] for the first `width` elements of dst.
void interleave2(const float* even, const float* odd, int64_t width, float* dst) {
    int64_t m = 0;
#ifdef __AVX2__
    for (; 2 * m + 16 <= width; m += 8) {
        const __m256 a = _mm256_loadu_ps(even + m);
        const __m256 b = _mm256_loadu_ps(odd + m);
        // Pairs within each 128-bit lane, then the lanes in order.
        const __m256 low = _mm256_unpacklo_ps(a, b);
        const __m256 high = _mm256_unpackhi_ps(a, b);
        _mm256_storeu_ps(dst + 2 * m, _mm256_permute2f128_ps(low, high, 0x20));
        _mm256_storeu_ps(dst + 2 * m + 8, _mm256_permute2f128_ps(low, high, 0x31));
    }
#endif
    for (; 2 * m < width; ++m) {
        dst[2 * m] = even[m];
        if (2 * m + 1 < width) {
            dst[2 * m + 1] = odd[m];
        }
    }
}

/// dx of a 3x3, stride-2 depthwise convolution by phases: dx[2 a + rho, 2 b + pi] gets the taps
/// (i, j) with i = rho + pt and j = pi + pl modulo 2, each from dy[a + dr, b + dc] with
/// dr = (rho + pt - i) / 2 and dc = (pi + pl - j) / 2, both in {-1, 0, 1}. So the four phases take
/// 1, 2, 2 and 4 taps, 9 multiply-adds per 4 inputs, where correlating with the flipped kernel
/// after spreading dy by the stride costs 9 per input. dy is read from a copy with a zero border.
class DepthwiseStride2InputGrad {
public:
    explicit DepthwiseStride2InputGrad(const Conv2d& p)
        : m_p(p) {
        m_halfWidth = (p.w + 1) / 2;
        m_stagedRows = std::max(p.oh, (p.h + 1) / 2) + 2;
        // One zero column each side, and a vector's slack for the last, overlapping loads.
        m_rowLength = std::max(p.ow, m_halfWidth) + 2 + kLanes;
        for (int64_t rho = 0; rho < 2; ++rho) {
            for (int64_t pi = 0; pi < 2; ++pi) {
                Phase& phase = m_phases[static_cast<size_t>(rho * 2 + pi)];
                size_t n = 0;
                for (int64_t i = (rho + p.pt) % 2; i < 3; i += 2) {
                    for (int64_t j = (pi + p.pl) % 2; j < 3; j += 2) {
                        phase.taps[n] = i * 3 + j;
                        phase.offsets[n] =
                            ((rho + p.pt - i) / 2 + 1) * m_rowLength + (pi + p.pl - j) / 2 + 1;
                        ++n;
                    }
                }
                // Unused taps read the border with weight 0.
                for (; n < 4; ++n) {
                    phase.taps[n] = -1;
                    phase.offsets[n] = 0;
                }
            }
        }
    }

    int64_t scratchSize() const {
        return m_stagedRows * m_rowLength + 4 * m_halfWidth + 4 * kLanes;
    }

    void run(const float* w, const float* dy, float* scratch, float* dx) const {
        float* staged = scratch;
        stage(dy, staged);
        // Phase lines for one dx row pair's two column phases, padded to whole vectors.
        const int64_t lineLength = ((m_halfWidth + kLanes - 1) / kLanes) * kLanes;
        float* evenLine = staged + m_stagedRows * m_rowLength;
        float* oddLine = evenLine + lineLength;
        for (int64_t a = 0; 2 * a < m_p.h; ++a) {
            for (int64_t rho = 0; rho < 2 && 2 * a + rho < m_p.h; ++rho) {
                const float* base = staged + a * m_rowLength;
                phaseLine(m_phases[static_cast<size_t>(rho * 2)], w, base, lineLength, evenLine);
                phaseLine(m_phases[static_cast<size_t>(rho * 2 + 1)], w, base, lineLength, oddLine);
                interleave2(evenLine, oddLine, m_p.w, dx + (2 * a + rho) * m_p.w);
            }
        }
    }

private:
    struct Phase {
        std::array<int64_t, 4> taps{};    ///< kernel tap, -1 for none
        std::array<int64_t, 4> offsets{}; ///< in the staged dy, from row a, column b
    };

    /// out[b] = sum over the phase's taps of w[tap] staged[b + offset], whole vectors.
    static void phaseLine(const Phase& phase, const float* w, const float* base, int64_t count,
                          float* out) {
        using Eigen::internal::ploadu;
        using Eigen::internal::pmadd;
        using Eigen::internal::pset1;
        using Eigen::internal::pstoreu;
        const auto weight = [&](size_t t) {
            return pset1<Packet>(phase.taps[t] < 0 ? 0.0F : w[phase.taps[t]]);
        };
        const Packet w0 = weight(0);
        const Packet w1 = weight(1);
        const Packet w2 = weight(2);
        const Packet w3 = weight(3);
        const std::array<int64_t, 4> o = phase.offsets;
        for (int64_t b = 0; b < count; b += kLanes) {
            Packet acc = Eigen::internal::pmul(w0, ploadu<Packet>(base + b + o[0]));
            acc = pmadd(w1, ploadu<Packet>(base + b + o[1]), acc);
            acc = pmadd(w2, ploadu<Packet>(base + b + o[2]), acc);
            acc = pmadd(w3, ploadu<Packet>(base + b + o[3]), acc);
            pstoreu(out + b, acc);
        }
    }

    /// dy with a zero border: dy[r, c] at staged[(r + 1) rowLength + c + 1].
    void stage(const float* dy, float* staged) const {
        std::fill_n(staged, m_stagedRows * m_rowLength, 0.0F);
        for (int64_t r = 0; r < m_p.oh; ++r) {
            std::copy_n(dy + r * m_p.ow, m_p.ow, staged + (r + 1) * m_rowLength + 1);
        }
    }

    Conv2d m_p;
    int64_t m_halfWidth = 0;
    int64_t m_stagedRows = 0;
    int64_t m_rowLength = 0;
    std::array<Phase, 4> m_phases{};
};

#if defined(__AVX2__) && defined(__FMA__)
/// Where the channel-blocked depthwise kernel reads and writes: staged pixels of `block` lanes,
/// rows `cols` pixels long.
struct BlockedGeometry {
    const Conv2d& p;
    int64_t cols;
    int64_t block;
};

// out[oy ow + ox] = clamp(bias + sum over taps of weight[tap] staged[tap's pixel]), four outputs
// of a row at a time so that each tap's weight feeds four independent chains, for blocks of 8
// channels (AVX2) or 16 (AVX-512, where the processor has it). kKw > 0 fixes the kernel width so
// the column loop unrolls. The two are one loop over vector types: each output sums its taps in
// the same order either way. Clamped as the GEMM's tiles are: min(hi, max(lo, v)) keeps NaN.
#define QS_DEPTHWISE_BLOCK_LOOP(VEC, LOAD, FMA, STORE_CLAMPED)                                     \
    const Conv2d& p = g.p;                                                                         \
    const int64_t kw = kKw > 0 ? kKw : p.kw;                                                       \
    const int64_t rowStride = g.cols * g.block;                                                    \
    const int64_t colStep = p.sw * g.block;                                                        \
    const int64_t tapStep = p.dw * g.block;                                                        \
    const VEC b = LOAD(bias);                                                                      \
    for (int64_t oy = 0; oy < p.oh; ++oy) {                                                        \
        const float* rowBase = staged + oy * p.sh * rowStride;                                     \
        float* outRow = out + oy * p.ow * g.block;                                                 \
        int64_t ox = 0;                                                                            \
        for (; ox + 4 <= p.ow; ox += 4) {                                                          \
            VEC a0 = b;                                                                            \
            VEC a1 = b;                                                                            \
            VEC a2 = b;                                                                            \
            VEC a3 = b;                                                                            \
            for (int64_t ky = 0; ky < p.kh; ++ky) {                                                \
                const float* in = rowBase + ky * p.dh * rowStride + ox * colStep;                  \
                const float* wk = weights + ky * kw * g.block;                                     \
                for (int64_t kx = 0; kx < kw; ++kx) {                                              \
                    const VEC wt = LOAD(wk + kx * g.block);                                        \
                    const float* s = in + kx * tapStep;                                            \
                    a0 = FMA(wt, LOAD(s), a0);                                                     \
                    a1 = FMA(wt, LOAD(s + colStep), a1);                                           \
                    a2 = FMA(wt, LOAD(s + 2 * colStep), a2);                                       \
                    a3 = FMA(wt, LOAD(s + 3 * colStep), a3);                                       \
                }                                                                                  \
            }                                                                                      \
            STORE_CLAMPED(outRow + ox * g.block, a0);                                              \
            STORE_CLAMPED(outRow + (ox + 1) * g.block, a1);                                        \
            STORE_CLAMPED(outRow + (ox + 2) * g.block, a2);                                        \
            STORE_CLAMPED(outRow + (ox + 3) * g.block, a3);                                        \
        }                                                                                          \
        for (; ox < p.ow; ++ox) {                                                                  \
            VEC a = b;                                                                             \
            for (int64_t ky = 0; ky < p.kh; ++ky) {                                                \
                const float* in = rowBase + ky * p.dh * rowStride + ox * colStep;                  \
                const float* wk = weights + ky * kw * g.block;                                     \
                for (int64_t kx = 0; kx < kw; ++kx) {                                              \
                    a = FMA(LOAD(wk + kx * g.block), LOAD(in + kx * tapStep), a);                  \
                }                                                                                  \
            }                                                                                      \
            STORE_CLAMPED(outRow + ox * g.block, a);                                               \
        }                                                                                          \
    }

template <int kKw>
void convolveBlock8(const BlockedGeometry& g, const float* staged, const float* weights,
                    const float* bias, float lo, float hi, float* out) {
    const __m256 lower = _mm256_set1_ps(lo);
    const __m256 upper = _mm256_set1_ps(hi);
#define QS_STORE8(dst, v) _mm256_storeu_ps(dst, _mm256_min_ps(upper, _mm256_max_ps(lower, v)))
    QS_DEPTHWISE_BLOCK_LOOP(__m256, _mm256_loadu_ps, _mm256_fmadd_ps, QS_STORE8)
#undef QS_STORE8
}

template <int kKw>
__attribute__((target("avx512f"))) void
convolveBlock16(const BlockedGeometry& g, const float* staged, const float* weights,
                const float* bias, float lo, float hi, float* out) {
    const __m512 lower = _mm512_set1_ps(lo);
    const __m512 upper = _mm512_set1_ps(hi);
#define QS_STORE16(dst, v) _mm512_storeu_ps(dst, _mm512_min_ps(upper, _mm512_max_ps(lower, v)))
    QS_DEPTHWISE_BLOCK_LOOP(__m512, _mm512_loadu_ps, _mm512_fmadd_ps, QS_STORE16)
#undef QS_STORE16
}

#undef QS_DEPTHWISE_BLOCK_LOOP

/// A depthwise convolution over blocks of 8 channels (16 where the processor has AVX-512) of one
/// image: the block's planes are staged interleaved, [row][column][channel] with their zero
/// padding, so that one vector holds one pixel of the block and every tap of every output is one
/// whole-vector multiply-add. The flat loop instead spends lanes on the padding columns between
/// rows and, with strides, on phase copies: a third of its outputs on 7x7 planes of 5x5 kernels
/// (EfficientNet's last stages) fall in the padding. The outputs go back to planes by 8x8
/// transposes, the epilogue and the tail while they are in L1.
class DepthwiseChannelBlocked {
public:
    DepthwiseChannelBlocked(const Conv2d& p, int64_t block)
        : m_p(p)
        , m_block(block) {
        // Every input pixel has a place, and every tap of every output lies inside.
        m_rows = std::max((p.oh - 1) * p.sh + (p.kh - 1) * p.dh + 1, p.pt + p.h);
        m_cols = std::max((p.ow - 1) * p.sw + (p.kw - 1) * p.dw + 1, p.pl + p.w);
        m_pixelOffsets.resize(static_cast<size_t>(p.h * p.w));
        for (int64_t iy = 0; iy < p.h; ++iy) {
            for (int64_t ix = 0; ix < p.w; ++ix) {
                m_pixelOffsets[static_cast<size_t>(iy * p.w + ix)] =
                    ((iy + p.pt) * m_cols + ix + p.pl) * block;
            }
        }
    }

    /// Whether this kernel beats the flat loops on `p`: rows of up to 16 outputs against the 3x3
    /// fast path (`fast3x3`), which wastes nothing on wider rows; up to 28 against the phase
    /// planes, whose padding columns still cost a sixth of 28-wide rows of 5x5 kernels (measured
    /// on EfficientNet-B0 and MobileNetV2's layers, tests/bench/qs_runtime_bench).
    static bool suits(const Conv2d& p, bool fast3x3) {
        return p.c >= 8 && p.ow <= (fast3x3 ? 16 : 28);
    }

    /// Channels per block: 16 with the AVX-512 kernels on (wideGemmKernelActive) and that many
    /// channels, else 8.
    static int64_t blockFor(const Conv2d& p) {
        return wideGemmKernelActive() && p.c >= 16 ? 16 : 8;
    }

    int64_t scratchSize() const {
        return (m_rows * m_cols + m_p.outPixels() + m_p.kh * m_p.kw + 1) * m_block;
    }

    /// `channels` (<= the block) consecutive channels of one image: x, y and residual (nullptr
    /// for none) point at the first one's plane, w at its taps, bias at its bias (or nullptr).
    void run(const float* x, const float* w, const float* bias, int64_t channels, float lo,
             float hi, const float* residual, const FusedTail* tail, float* scratch,
             float* y) const {
        const int64_t taps = m_p.kh * m_p.kw;
        float* staged = scratch;
        float* out = staged + m_rows * m_cols * m_block;
        float* weights = out + m_p.outPixels() * m_block;
        float* biases = weights + taps * m_block;
        for (int64_t t = 0; t < taps; ++t) {
            for (int64_t l = 0; l < m_block; ++l) {
                weights[t * m_block + l] = l < channels ? w[l * taps + t] : 0.0F;
            }
        }
        for (int64_t l = 0; l < m_block; ++l) {
            biases[l] = l < channels && bias != nullptr ? bias[l] : 0.0F;
        }
        stage(x, channels, staged);
        // A residual comes before the clamp: then both wait for the planes.
        const bool clampHere = residual == nullptr;
        const float convLo = clampHere ? lo : -std::numeric_limits<float>::infinity();
        const float convHi = clampHere ? hi : std::numeric_limits<float>::infinity();
        const BlockedGeometry g{m_p, m_cols, m_block};
        if (m_block == 16) {
            if (m_p.kw == 3) {
                convolveBlock16<3>(g, staged, weights, biases, convLo, convHi, out);
            } else if (m_p.kw == 5) {
                convolveBlock16<5>(g, staged, weights, biases, convLo, convHi, out);
            } else {
                convolveBlock16<0>(g, staged, weights, biases, convLo, convHi, out);
            }
        } else if (m_p.kw == 3) {
            convolveBlock8<3>(g, staged, weights, biases, convLo, convHi, out);
        } else if (m_p.kw == 5) {
            convolveBlock8<5>(g, staged, weights, biases, convLo, convHi, out);
        } else {
            convolveBlock8<0>(g, staged, weights, biases, convLo, convHi, out);
        }
        unstage(out, channels, y);
        const int64_t count = channels * m_p.outPixels();
        if (!clampHere) {
            epilogueRow(y, 0.0F, residual, lo, hi, count, y);
        }
        if (tail != nullptr && !tail->empty()) {
            applyFusedTailHere(*tail, y, count);
        }
    }

private:
    /// The staged block: zero padding, then every input pixel at m_pixelOffsets.
    void stage(const float* x, int64_t channels, float* staged) const {
        const int64_t plane = m_p.h * m_p.w;
        const int64_t b = m_block;
        // Zero only the padding: rows above and below the input, columns left and right of it.
        std::fill_n(staged, m_p.pt * m_cols * b, 0.0F);
        std::fill(staged + (m_p.pt + m_p.h) * m_cols * b, staged + m_rows * m_cols * b, 0.0F);
        for (int64_t r = m_p.pt; r < m_p.pt + m_p.h; ++r) {
            float* row = staged + r * m_cols * b;
            std::fill_n(row, m_p.pl * b, 0.0F);
            std::fill(row + (m_p.pl + m_p.w) * b, row + m_cols * b, 0.0F);
        }
        int64_t i = 0;
        if (channels == b) {
            // Pixels i .. i + 7 of 8 channels at a time to their staged places.
            for (; i + 8 <= plane; i += 8) {
                for (int64_t half = 0; half < b; half += 8) {
                    const Vectors8 t = transposeRegisters8x8(x + half * plane + i, plane);
                    for (size_t k = 0; k < 8; ++k) {
                        _mm256_storeu_ps(staged + m_pixelOffsets[static_cast<size_t>(i) + k] + half,
                                         t.v[k]);
                    }
                }
            }
        }
        for (; i < plane; ++i) {
            float* pixel = staged + m_pixelOffsets[static_cast<size_t>(i)];
            for (int64_t l = 0; l < b; ++l) {
                pixel[l] = l < channels ? x[l * plane + i] : 0.0F;
            }
        }
    }

    /// out[pixel][lane] back to y[lane][pixel] for the block's channels.
    void unstage(const float* out, int64_t channels, float* y) const {
        const int64_t plane = m_p.outPixels();
        const int64_t b = m_block;
        int64_t i = 0;
        if (channels == b) {
            for (; i + 8 <= plane; i += 8) {
                for (int64_t half = 0; half < b; half += 8) {
                    const Vectors8 t = transposeRegisters8x8(out + i * b + half, b);
                    for (int64_t k = 0; k < 8; ++k) {
                        _mm256_storeu_ps(y + (half + k) * plane + i, t.v[k]);
                    }
                }
            }
        }
        for (; i < plane; ++i) {
            for (int64_t l = 0; l < channels; ++l) {
                y[l * plane + i] = out[i * b + l];
            }
        }
    }

    Conv2d m_p;
    int64_t m_block;
    int64_t m_rows = 0;                  ///< staged rows
    int64_t m_cols = 0;                  ///< staged columns
    std::vector<int64_t> m_pixelOffsets; ///< per input pixel, its staged place
};

/// Floats of a cache line.
constexpr int64_t kCacheLineFloats = 16;

/// Every image's channels in blocks through DepthwiseChannelBlocked.
void depthwiseChannelBlockedConv2d(const Conv2d& p, const float* x, const float* w,
                                   const ConvEpilogue& epilogue, float* y) {
    const int64_t block = DepthwiseChannelBlocked::blockFor(p);
    const DepthwiseChannelBlocked kernel(p, block);
    const int64_t blocks = (p.c + block - 1) / block;
    const int64_t taps = p.kh * p.kw;
    parallelFor(p.n * blocks, 1, [&](int64_t begin, int64_t end) {
        // Aligned to a cache line: the block's whole-vector loads and stores split lines
        // otherwise, and malloc's 16-byte alignment made each layer's speed a matter of luck (a
        // MobileNetV2 14x14 layer 0.030 or 0.040 ms with the same code).
        std::vector<float> storage(static_cast<size_t>(kernel.scratchSize() + kCacheLineFloats));
        void* start = storage.data();
        size_t space = storage.size() * sizeof(float);
        auto* scratch = static_cast<float*>(std::align(
            kCacheLineFloats * sizeof(float), kernel.scratchSize() * sizeof(float), start, space));
        for (int64_t nb = begin; nb < end; ++nb) {
            const int64_t n = nb / blocks;
            const int64_t c0 = (nb % blocks) * block;
            const int64_t channels = std::min(block, p.c - c0);
            const int64_t plane = n * p.c + c0;
            const float* residual =
                epilogue.residual != nullptr ? epilogue.residual + plane * p.outPixels() : nullptr;
            kernel.run(x + plane * p.h * p.w, w + c0 * taps,
                       epilogue.bias != nullptr ? epilogue.bias + c0 : nullptr, channels,
                       epilogue.lo, epilogue.hi, residual, epilogue.tail, scratch,
                       y + plane * p.outPixels());
        }
    });
}
#endif

/// Every plane through the 3x3 fast path.
void depthwise3x3Conv2d(const Depthwise3x3& fast, const Conv2d& p, const float* x, const float* w,
                        const ConvEpilogue& epilogue, float* y) {
    parallelFor(p.n * p.c, 1, [&](int64_t begin, int64_t end) {
        std::vector<float> staging(static_cast<size_t>(fast.stagingSize()));
        for (int64_t nc = begin; nc < end; ++nc) {
            const int64_t c = nc % p.c;
            const float* res =
                epilogue.residual != nullptr ? epilogue.residual + nc * p.outPixels() : nullptr;
            fast.run(x + nc * p.h * p.w, w + c * 9,
                     epilogue.bias != nullptr ? epilogue.bias[c] : 0.0F, res, epilogue.lo,
                     epilogue.hi, staging.data(), y + nc * p.outPixels());
            if (hasTail(epilogue)) {
                applyFusedTailHere(*epilogue.tail, y + nc * p.outPixels(), p.outPixels());
            }
        }
    });
}

/// Every plane through its zero-padded phase planes, then the epilogue row by row.
void depthwisePhasePlanes(const Conv2d& p, const float* x, const float* w,
                          const ConvEpilogue& epilogue, float* y) {
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
            if (hasTail(epilogue)) {
                applyFusedTailHere(*epilogue.tail, y + plane, p.outPixels());
            }
        }
    });
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
    if (depthwiseConv2dWide(p, x, w, epilogue, y)) {
        return;
    }
    const auto fast = Depthwise3x3::plan(p);
#if defined(__AVX2__) && defined(__FMA__)
    if (DepthwiseChannelBlocked::suits(p, fast.has_value())) {
        depthwiseChannelBlockedConv2d(p, x, w, epilogue, y);
        return;
    }
#endif
    if (fast) {
        depthwise3x3Conv2d(*fast, p, x, w, epilogue, y);
    } else {
        depthwisePhasePlanes(p, x, w, epilogue, y);
    }
}

bool depthwiseInputGradStride2(const Conv2d& p, const float* w, const float* dy, float* dx) {
    if (p.kh != 3 || p.kw != 3 || p.sh != 2 || p.sw != 2 || p.dh != 1 || p.dw != 1 || p.pt < 0 ||
        p.pt > 1 || p.pl < 0 || p.pl > 1) {
        return false;
    }
    const DepthwiseStride2InputGrad kernel(p);
    parallelFor(p.n * p.c, 1, [&](int64_t begin, int64_t end) {
        std::vector<float> scratch(static_cast<size_t>(kernel.scratchSize()));
        for (int64_t nc = begin; nc < end; ++nc) {
            kernel.run(w + (nc % p.c) * 9, dy + nc * p.outPixels(), scratch.data(),
                       dx + nc * p.h * p.w);
        }
    });
    return true;
}

} // namespace qs::runtime
