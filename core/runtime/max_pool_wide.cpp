#include "core/runtime/max_pool_wide.h"

#include "core/runtime/packed_gemm.h"
#include "core/runtime/parallel.h"
#include "core/runtime/wide_rows.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <vector>

namespace qs::runtime {

#if defined(__x86_64__)
namespace {

using wide_rows::kLanes;

/// Chunks of 16 outputs per segment of an output row: a segment's folded row (two vectors per
/// chunk and the first lane of one more) stays in registers.
constexpr int64_t kSegmentChunks = 4;
constexpr int64_t kSegmentVectors = 2 * kSegmentChunks + 1;

/// One segment of every output row: outputs [column0, column0 + outputs), whose windows read
/// input columns from inputColumn0 (2 column0 - left) on, vector v under loads[v].
struct Segment {
    int64_t column0 = 0;
    int64_t outputs = 0;
    int64_t inputColumn0 = 0;
    std::array<uint16_t, kSegmentVectors> loads{};
};

std::vector<Segment> segmentsOf(int64_t width, int64_t outWidth, int64_t left) {
    std::vector<Segment> segments;
    for (int64_t column0 = 0; column0 < outWidth; column0 += kSegmentChunks * kLanes) {
        Segment s;
        s.column0 = column0;
        s.outputs = std::min(kSegmentChunks * kLanes, outWidth - column0);
        s.inputColumn0 = 2 * column0 - left;
        // Windows of 3 read the first lane of the vector after the chunks' two each.
        const int64_t chunkVectors = 2 * ((s.outputs + kLanes - 1) / kLanes);
        for (int64_t v = 0; v < kSegmentVectors; ++v) {
            const int64_t first = s.inputColumn0 + v * kLanes; // input column of lane 0
            const int64_t lanes = v < chunkVectors ? kLanes : (v == chunkVectors ? 1 : 0);
            s.loads[static_cast<size_t>(v)] =
                wide_rows::laneMask(-first, std::min(lanes, width - first));
        }
        segments.push_back(s);
    }
    return segments;
}

/// The lane-wise maximum: b where a is NaN (maxps returns its second operand then). The masked
/// form with every lane on: GCC 12 warns of the undefined pass-through inside the unmasked one.
__attribute__((target("avx512f"))) inline __m512 maxLanes(__m512 a, __m512 b) {
    constexpr __mmask16 kAll = 0xFFFF;
    return _mm512_mask_max_ps(b, kAll, a, b);
}

/// The input rows of one output row's windows, clipped to the plane.
struct WindowRows {
    const float* first = nullptr; ///< the top row's column 0
    int64_t count = 0;
    int64_t width = 0;
};

/// kChunks chunks of one output row's segment: the window rows folded vector by vector (a
/// maximum per lane, the input first, so that a NaN input leaves the running maximum), then per
/// chunk the maximum of the folded row's even, odd and (windows of 3) next-even columns.
template <int kChunks, int kKw>
__attribute__((target("avx512f"))) void poolSegment(const WindowRows& rows, const Segment& s,
                                                    const wide_rows::InputBounds& in, float* out) {
    constexpr int kVectors = 2 * kChunks + (kKw == 3 ? 1 : 0);
    const __m512 lowest = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
    // NOLINTNEXTLINE(*-avoid-c-arrays): every index is a constant once unrolled: registers
    __m512 folded[kVectors];
#pragma GCC unroll 9
    for (int v = 0; v < kVectors; ++v) {
        folded[v] = lowest;
    }
    for (int64_t r = 0; r < rows.count; ++r) {
        const float* row = rows.first + r * rows.width + s.inputColumn0;
#pragma GCC unroll 9
        for (int v = 0; v < kVectors; ++v) {
            const uint16_t lanes = s.loads[static_cast<size_t>(v)];
            if (lanes != 0) {
                const __m512 x = wide_rows::loadLanes(lanes, row + v * kLanes, in, lowest);
                folded[v] = maxLanes(x, folded[v]);
            }
        }
    }
#pragma GCC unroll 4
    for (int c = 0; c < kChunks; ++c) {
        const __m512 even = wide_rows::evenLanes(folded[2 * c], folded[2 * c + 1]);
        const __m512 odd = wide_rows::oddLanes(folded[2 * c], folded[2 * c + 1]);
        __m512 m = maxLanes(even, odd);
        if constexpr (kKw == 3) {
            // Columns 2 l + 2: even's lanes 1-15, then the next vector's lane 0.
            m = maxLanes(m, wide_rows::shiftLanes(folded[2 * c + 2], even, 1));
        }
        wide_rows::storeLanes(wide_rows::laneMask(0, s.outputs - c * kLanes), out + c * kLanes, m);
    }
}

template <int kKw>
void poolSegmentOf(const WindowRows& rows, const Segment& s, const wide_rows::InputBounds& in,
                   float* out) {
    switch ((s.outputs + kLanes - 1) / kLanes) {
    case 1:
        poolSegment<1, kKw>(rows, s, in, out);
        return;
    case 2:
        poolSegment<2, kKw>(rows, s, in, out);
        return;
    case 3:
        poolSegment<3, kKw>(rows, s, in, out);
        return;
    default:
        poolSegment<kSegmentChunks, kKw>(rows, s, in, out);
        return;
    }
}

/// The window geometry of one plane's output rows.
struct PlaneRows {
    int64_t h = 0;
    int64_t w = 0;
    int64_t oh = 0;
    int64_t ow = 0;
    int64_t strideH = 0;
    int64_t kh = 0;
    int64_t padTop = 0;
};

/// A whole plane whose output rows are one segment (at most 64 outputs: SqueezeNet's
/// 111 -> 55, 55 -> 27 and 27 -> 13 layers): the rows in a loop here, each input row folded through
/// masked loads (a masked load never touches its other lanes, so no bounds are checked), then
/// poolSegment's shuffles per chunk. Row by row through poolSegmentOf, the call and a bounds check
/// per load cost more than the maxima on small planes: the 27 x 27 layer took 0.062 ms against
/// ONNX Runtime's 0.027 at one thread.
template <int kChunks, int kKw>
__attribute__((target("avx512f"))) void segmentPlane(const float* xp, const PlaneRows& d,
                                                     const Segment& s, float* yp) {
    constexpr int kVectors = 2 * kChunks + (kKw == 3 ? 1 : 0);
    const __m512 lowest = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
    for (int64_t oy = 0; oy < d.oh; ++oy) {
        const int64_t top = oy * d.strideH - d.padTop;
        const int64_t r1 = std::min(d.h, top + d.kh);
        // NOLINTNEXTLINE(*-avoid-c-arrays): every index is a constant once unrolled: registers
        __m512 folded[kVectors];
#pragma GCC unroll 9
        for (int v = 0; v < kVectors; ++v) {
            folded[v] = lowest;
        }
        for (int64_t r = std::max<int64_t>(0, top); r < r1; ++r) {
            const float* row = xp + r * d.w + s.inputColumn0;
#pragma GCC unroll 9
            for (int v = 0; v < kVectors; ++v) {
                const auto lanes = static_cast<__mmask16>(s.loads[static_cast<size_t>(v)]);
                folded[v] =
                    maxLanes(_mm512_mask_loadu_ps(lowest, lanes, row + v * kLanes), folded[v]);
            }
        }
#pragma GCC unroll 4
        for (int c = 0; c < kChunks; ++c) {
            const __m512 even = wide_rows::evenLanes(folded[2 * c], folded[2 * c + 1]);
            __m512 m = maxLanes(even, wide_rows::oddLanes(folded[2 * c], folded[2 * c + 1]));
            if constexpr (kKw == 3) {
                m = maxLanes(m, wide_rows::shiftLanes(folded[2 * c + 2], even, 1));
            }
            wide_rows::storeLanes(wide_rows::laneMask(0, s.outputs - c * kLanes),
                                  yp + oy * d.ow + c * kLanes, m);
        }
    }
}

using PlaneFn = void (*)(const float*, const PlaneRows&, const Segment&, float*);

/// segmentPlane for a segment of `outputs` outputs and windows kKw wide.
template <int kKw>
PlaneFn segmentPlaneFor(int64_t outputs) {
    switch ((outputs + kLanes - 1) / kLanes) {
    case 1:
        return segmentPlane<1, kKw>;
    case 2:
        return segmentPlane<2, kKw>;
    case 3:
        return segmentPlane<3, kKw>;
    default:
        return segmentPlane<kSegmentChunks, kKw>;
    }
}

} // namespace

bool maxPool2dWide(const PoolShape& s, const float* x, float* y) {
    const ConvGeometry& g = s.geo;
    const bool suits =
        g.rank() == 2 && g.strides[1] == 2 && (g.kernel[1] == 2 || g.kernel[1] == 3) &&
        g.dilations[0] == 1 && g.dilations[1] == 1 &&
        std::all_of(g.padsBegin.begin(), g.padsBegin.end(), [](int64_t p) { return p >= 0; }) &&
        std::all_of(g.padsEnd.begin(), g.padsEnd.end(), [](int64_t p) { return p >= 0; });
    if (!suits || !wideGemmKernelActive()) {
        return false;
    }
    const int64_t h = g.input[0];
    const int64_t w = g.input[1];
    const int64_t oh = g.output[0];
    const int64_t ow = g.output[1];
    const std::vector<Segment> segments = segmentsOf(w, ow, g.padsBegin[1]);
    if (segments.size() == 1) {
        const PlaneRows rows{h, w, oh, ow, g.strides[0], g.kernel[0], g.padsBegin[0]};
        const PlaneFn plane = g.kernel[1] == 3 ? segmentPlaneFor<3>(ow) : segmentPlaneFor<2>(ow);
        parallelFor(s.planes, 1, [&](int64_t begin, int64_t end) {
            for (int64_t index = begin; index < end; ++index) {
                plane(x + index * s.inSize, rows, segments[0], y + index * s.outSize);
            }
        });
        return true;
    }
    const wide_rows::InputBounds in{x, x + s.planes * s.inSize};
    parallelFor(s.planes, 1, [&](int64_t begin, int64_t end) {
        for (int64_t plane = begin; plane < end; ++plane) {
            const float* xp = x + plane * s.inSize;
            for (int64_t oy = 0; oy < oh; ++oy) {
                const int64_t top = oy * g.strides[0] - g.padsBegin[0];
                const int64_t r0 = std::max<int64_t>(0, top);
                const int64_t r1 = std::min(h, top + g.kernel[0]);
                const WindowRows rows{xp + r0 * w, std::max<int64_t>(0, r1 - r0), w};
                float* out = y + plane * s.outSize + oy * ow;
                for (const Segment& segment : segments) {
                    if (g.kernel[1] == 3) {
                        poolSegmentOf<3>(rows, segment, in, out + segment.column0);
                    } else {
                        poolSegmentOf<2>(rows, segment, in, out + segment.column0);
                    }
                }
            }
        }
    });
    return true;
}

#else

bool maxPool2dWide(const PoolShape& /*s*/, const float* /*x*/, float* /*y*/) {
    return false;
}

#endif

} // namespace qs::runtime
