#include "core/runtime/shallow_conv.h"

#include "core/runtime/fused_tail.h"
#include "core/runtime/packed_gemm.h"
#include "core/runtime/parallel.h"
#include "core/runtime/scratch.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace qs::runtime {

#if defined(__x86_64__)
namespace {

constexpr int64_t kLanes = 16;
/// Output channels per register block, and vectors of output pixels per block: 24 sums, the
/// vectors of one im2col row and a broadcast weight in the 32 registers.
constexpr int kBlockChannels = 6;
constexpr int kBlockVectors = 4;

/// Where a vector's lanes go: lane l to output + l, for the lanes set in `lanes`.
struct StorePiece {
    int64_t output = 0;
    __mmask16 lanes = 0;
};

/// Sixteen consecutive entries of every im2col row, from `source` on: output pixels in up to
/// three output rows (the pieces; lanes of no piece fall in the source's padding columns).
struct VectorSpot {
    int64_t source = 0;
    std::array<StorePiece, 3> pieces{};
};

/// The vectors of one output plane, in the order of its pixels, padded with empty spots to whole
/// blocks of kBlockVectors. The source's pixels sit in runs (output rows) of runLength() at a
/// stride of rowStep(): either each run is cut into vectors (its last one partial), or, where
/// that wastes more lanes (stride 1, where the stride only adds the kernel's padding columns),
/// the vectors sweep the whole strided range and drop the lanes between runs.
std::vector<VectorSpot> vectorSpots(const Conv2d& p, const Im2colSource& source) {
    const int64_t run = source.runLength();
    const int64_t runs = p.outPixels() / run;
    const int64_t step = runs > 1 ? source.rowStep() : run;
    const int64_t perRun = runs * ((run + kLanes - 1) / kLanes);
    const int64_t span = (runs - 1) * step + run;
    // Sweeping needs runs of at least half a vector: a vector then meets at most three runs.
    const bool sweep = step >= kLanes / 2 && (span + kLanes - 1) / kLanes < perRun;
    std::vector<VectorSpot> spots;
    const auto add = [&](int64_t first, int64_t count) {
        VectorSpot spot;
        spot.source = first;
        size_t piece = 0;
        // Lanes [l, l + length) of the vector are run t's pixels u .. u + length - 1.
        for (int64_t l = 0; l < count;) {
            const int64_t t = (first + l) / step;
            const int64_t u = (first + l) % step;
            const int64_t next = std::min(count, l + step - u); // the lanes up to the next run
            if (u < run) {
                const int64_t length = std::min(next - l, run - u);
                const auto mask =
                    static_cast<__mmask16>(((1U << length) - 1U) << static_cast<unsigned>(l));
                spot.pieces[piece++] = {t * run + u - l, mask};
            }
            l = next;
        }
        spots.push_back(spot);
    };
    if (sweep) {
        for (int64_t q = 0; q < span; q += kLanes) {
            add(q, std::min(kLanes, span - q));
        }
    } else {
        for (int64_t t = 0; t < runs; ++t) {
            for (int64_t u = 0; u < run; u += kLanes) {
                add(t * step + u, std::min(kLanes, run - u));
            }
        }
    }
    while (spots.size() % kBlockVectors != 0) {
        spots.push_back({});
    }
    return spots;
}

/// What every block of one image shares.
struct ImageArgs {
    const float* source = nullptr; ///< Im2colSource::data()
    const int64_t* rowOffsets = nullptr;
    int64_t depth = 0;               ///< im2col rows
    const float* w = nullptr;        ///< [m x depth]
    const float* bias = nullptr;     ///< per output channel, or nullptr
    const float* residual = nullptr; ///< this image's, dense [m x pixels], or nullptr
    float lo = 0.0F;
    float hi = 0.0F;
    float* y = nullptr; ///< this image's output, [m x pixels]
    int64_t pixels = 0;
};

/// The sums of one block, kChannels output channels by kBlockVectors vectors.
template <int kChannels>
struct BlockSums {
    // NOLINTNEXTLINE(*-avoid-c-arrays): registers, indexed by unrolled constants
    __m512 acc[kChannels][kBlockVectors];
};

/// Bias, residual, clamp (min(hi, max(lo, v)) keeps NaN, as the GEMM's tiles do) and a masked
/// store of each vector's pieces.
template <int kChannels>
__attribute__((target("avx512f"), always_inline)) inline void
storeBlock(const ImageArgs& a, const VectorSpot* spots, int64_t channel0,
           const BlockSums<kChannels>& sums) {
    const __m512 lo = _mm512_set1_ps(a.lo);
    const __m512 hi = _mm512_set1_ps(a.hi);
    constexpr __mmask16 kAll = 0xFFFF;
    const int64_t first = channel0 * a.pixels;
#pragma GCC unroll 4
    for (int v = 0; v < kBlockVectors; ++v) {
        for (const StorePiece& piece : spots[v].pieces) {
            if (piece.lanes == 0) {
                break;
            }
            float* y = a.y + first + piece.output;
            const float* residual =
                a.residual != nullptr ? a.residual + first + piece.output : nullptr;
#pragma GCC unroll 8
            for (int o = 0; o < kChannels; ++o) {
                __m512 value = sums.acc[o][v];
                if (residual != nullptr) {
                    value = _mm512_add_ps(
                        value, _mm512_maskz_loadu_ps(piece.lanes, residual + o * a.pixels));
                }
                value = _mm512_mask_max_ps(value, kAll, lo, value);
                _mm512_mask_storeu_ps(y + o * a.pixels, piece.lanes,
                                      _mm512_mask_min_ps(value, kAll, hi, value));
            }
        }
    }
}

/// Output channels [channel0, channel0 + kChannels) at the kBlockVectors spots from `spots`:
/// the bias, the sums over every im2col row (whole vectors: lanes past a run read the copy's
/// next entries, and no store keeps them), then storeBlock.
template <int kChannels>
__attribute__((target("avx512f"))) void block(const ImageArgs& a, const VectorSpot* spots,
                                              int64_t channel0) {
    BlockSums<kChannels> sums;
#pragma GCC unroll 8
    for (int o = 0; o < kChannels; ++o) {
        const __m512 start =
            a.bias != nullptr ? _mm512_set1_ps(a.bias[channel0 + o]) : _mm512_setzero_ps();
#pragma GCC unroll 4
        for (int v = 0; v < kBlockVectors; ++v) {
            sums.acc[o][v] = start;
        }
    }
    const float* w = a.w + channel0 * a.depth;
    for (int64_t r = 0; r < a.depth; ++r) {
        const float* row = a.source + a.rowOffsets[r];
        // NOLINTNEXTLINE(*-avoid-c-arrays): registers
        __m512 x[kBlockVectors];
#pragma GCC unroll 4
        for (int v = 0; v < kBlockVectors; ++v) {
            x[v] = _mm512_loadu_ps(row + spots[v].source);
        }
#pragma GCC unroll 8
        for (int o = 0; o < kChannels; ++o) {
            const __m512 weight = _mm512_set1_ps(w[o * a.depth + r]);
#pragma GCC unroll 4
            for (int v = 0; v < kBlockVectors; ++v) {
                sums.acc[o][v] = _mm512_fmadd_ps(weight, x[v], sums.acc[o][v]);
            }
        }
    }
    storeBlock(a, spots, channel0, sums);
}

using BlockFn = void (*)(const ImageArgs&, const VectorSpot*, int64_t);

/// The block kernel for `channels` (1 to kBlockChannels) output channels.
BlockFn blockFor(int64_t channels) {
    switch (channels) {
    case 1:
        return block<1>;
    case 2:
        return block<2>;
    case 3:
        return block<3>;
    case 4:
        return block<4>;
    case 5:
        return block<5>;
    default:
        return block<kBlockChannels>;
    }
}

/// Blocks a span holds: one group of filters runs over a span's blocks before the next group
/// (the span's input stays in L2 meanwhile).
constexpr int64_t kSpanBlocks = 32;

/// Blocks of spots [first, last) of one image, span by span, each span one group of filters
/// after the other, then the tail over the pixels they wrote. Every group of each block in turn
/// instead wrote to all the filters' planes at once: SqueezeNet's stem (64 planes of 12321
/// outputs) took 6-8 ms at two threads and batch 8 that way, against 3.3-3.9 through the GEMM.
void runBlocks(const Conv2d& p, const ImageArgs& a, const std::vector<VectorSpot>& spots,
               int64_t first, int64_t last, const FusedTail* tail) {
    for (int64_t span = first; span < last; span += kSpanBlocks) {
        const int64_t spanEnd = std::min(last, span + kSpanBlocks);
        for (int64_t m0 = 0; m0 < p.m; m0 += kBlockChannels) {
            const BlockFn run = blockFor(std::min<int64_t>(kBlockChannels, p.m - m0));
            for (int64_t b = span; b < spanEnd; ++b) {
                run(a, spots.data() + b * kBlockVectors, m0);
            }
        }
    }
    if (tail == nullptr || tail->empty() || first >= last) {
        return;
    }
    // Spots follow the plane in order: the pixels written are one range per channel.
    int64_t begin = -1;
    int64_t end = 0;
    for (int64_t s = first * kBlockVectors; s < last * kBlockVectors; ++s) {
        for (const StorePiece& piece : spots[static_cast<size_t>(s)].pieces) {
            if (piece.lanes != 0) {
                const int lowest = __builtin_ctz(piece.lanes);
                const int past = 16 - __builtin_clz(static_cast<unsigned>(piece.lanes) << 16U);
                begin = begin < 0 ? piece.output + lowest : begin;
                end = piece.output + past;
            }
        }
    }
    if (begin < 0) {
        return;
    }
    for (int64_t o = 0; o < p.m; ++o) {
        applyFusedTailHere(*tail, a.y + o * a.pixels + begin, end - begin);
    }
}

/// One image: its padded copy, then its blocks over the threads (inline inside a chunk).
void image(const Conv2d& p, const float* x, const float* w, const ConvEpilogue& e, float* y,
           int64_t n) {
    thread_local ScratchFloats storage;
    const Im2colSource source(p, x + n * p.c * p.h * p.w, storage);
    const std::vector<VectorSpot> spots = vectorSpots(p, source);
    ImageArgs a;
    a.source = source.data();
    a.rowOffsets = source.rowOffsets().data();
    a.depth = p.colRows();
    a.w = w;
    a.bias = e.bias;
    a.residual = e.residual != nullptr ? e.residual + n * p.m * p.outPixels() : nullptr;
    a.lo = e.lo;
    a.hi = e.hi;
    a.y = y + n * p.outImageStride();
    a.pixels = p.outPixels();
    const auto blocks = static_cast<int64_t>(spots.size()) / kBlockVectors;
    const int64_t workPerBlock = p.m * a.depth * kBlockVectors * kLanes;
    parallelFor(blocks, minChunkForWork(workPerBlock),
                [&](int64_t begin, int64_t end) { runBlocks(p, a, spots, begin, end, e.tail); });
}

} // namespace

bool shallowConvApplies(const Conv2d& p) {
    return wideGemmKernelActive() && p.group == 1 && p.kh * p.kw > 1 &&
           p.colRows() <= kShallowConvMaxDepth && p.m > 0;
}

void shallowConv2d(const Conv2d& p, const float* x, const float* w, const ConvEpilogue& epilogue,
                   float* y) {
    // As the GEMM path: a batch that divides evenly over the threads splits by image.
    const int threads = numThreads();
    if (threads > 1 && p.n % threads == 0) {
        parallelFor(p.n, 1, [&](int64_t begin, int64_t end) {
            for (int64_t n = begin; n < end; ++n) {
                image(p, x, w, epilogue, y, n);
            }
        });
        return;
    }
    for (int64_t n = 0; n < p.n; ++n) {
        image(p, x, w, epilogue, y, n);
    }
}

#else

bool shallowConvApplies(const Conv2d& /*p*/) {
    return false;
}

void shallowConv2d(const Conv2d& /*p*/, const float* /*x*/, const float* /*w*/,
                   const ConvEpilogue& /*epilogue*/, float* /*y*/) {}

#endif

} // namespace qs::runtime
