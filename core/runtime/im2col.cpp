#include "core/runtime/im2col.h"

#include "core/runtime/parallel.h"

#include <algorithm>
#include <array>
#include <cstring>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace qs::runtime {

// Row (c, i, j), column (oy, ox) of the im2col matrix holds x[c, oy sh + i dh - pt, ox sw + j dw -
// pl] (zero outside). Within one output row the columns read one input row, so every function
// here walks rows of the matrix in runs that end at output-row boundaries.

namespace {

/// The input plane and offsets that im2col row `row` = (c, i, j) reads.
struct TapRow {
    int64_t channel;
    int64_t i;
    int64_t off; ///< input column of output column 0: j dw - pl

    TapRow(const Conv2d& p, int64_t row)
        : channel(row / (p.kh * p.kw))
        , i((row / p.kw) % p.kh)
        , off((row % p.kw) * p.dw - p.pl) {}

    /// Offset of the input row that output row oy reads, or -1 when it lies in the padding.
    int64_t inputRow(const Conv2d& p, int64_t oy) const {
        const int64_t iy = oy * p.sh + i * p.dh - p.pt;
        return (iy >= 0 && iy < p.h) ? (channel * p.h + iy) * p.w : -1;
    }
};

/// Copies output columns [ox, ox + count) of one im2col row (input row `src`, column offset
/// `off`; nullptr: the row lies in the padding) to `dst`: zeros, the in-image span, zeros.
void copyRun(const Conv2d& p, const float* src, int64_t off, int64_t ox, int64_t count,
             float* dst) {
    if (src == nullptr) {
        std::fill(dst, dst + count, 0.0F);
        return;
    }
    // Output column ox + t reads input column start + t sw; [t0, t1) lies inside the image.
    const int64_t start = ox * p.sw + off;
    // Ceiling division by the stride, without a divide for stride 1 (this runs per strip).
    const auto steps = [&p](int64_t distance) {
        return p.sw == 1 ? distance : (distance + p.sw - 1) / p.sw;
    };
    const int64_t t0 = std::min(count, start >= 0 ? 0 : steps(-start));
    const int64_t t1 = std::max(t0, std::min(count, start >= p.w ? 0 : steps(p.w - start)));
    for (int64_t t = 0; t < t0; ++t) {
        dst[t] = 0.0F;
    }
    // Plain loops, not std::copy/fill: runs are short, and a library call per run costs more
    // than the copy.
    if (p.sw == 1) {
        const float* in = src + start;
        for (int64_t t = t0; t < t1; ++t) {
            dst[t] = in[t];
        }
    } else {
        for (int64_t t = t0; t < t1; ++t) {
            dst[t] = src[start + t * p.sw];
        }
    }
    for (int64_t t = t1; t < count; ++t) {
        dst[t] = 0.0F;
    }
}

/// Calls fn(q, ox, count, src) for runs [q, q + count) of columns [p0, p1) of im2col row `tap`,
/// each within one output row (starting at output column ox) and no longer than `maxRun`
/// (strip boundaries at multiples of maxRun counted from p0). Walks positions incrementally:
/// runs are short, and a division per run would cost as much as the copy.
template <typename Fn>
void forEachRun(const Conv2d& p, const float* x, const TapRow& tap, int64_t p0, int64_t p1,
                int64_t maxRun, Fn fn) {
    int64_t oy = p0 / p.ow;
    int64_t ox = p0 % p.ow;
    int64_t inStrip = 0;
    int64_t in = tap.inputRow(p, oy);
    for (int64_t q = p0; q < p1;) {
        const int64_t count = std::min({p.ow - ox, maxRun - inStrip, p1 - q});
        fn(q, ox, count, in >= 0 ? x + in : nullptr);
        q += count;
        ox += count;
        inStrip += count;
        if (inStrip == maxRun) {
            inStrip = 0;
        }
        if (ox == p.ow) {
            ox = 0;
            in = tap.inputRow(p, ++oy);
        }
    }
}

/// Ceiling of a / b for a > -b (which the padding and phase offsets below satisfy).
int64_t ceilDiv(int64_t a, int64_t b) {
    return (a + b - 1) / b;
}

/// Floats a source row may be written past its end (whole vectors); each plane of the copy ends
/// in this much slack, so that threads filling neighbouring planes never overlap, and so that the
/// shallow kernel's whole-vector loads from a row's last entries stay inside the copy.
constexpr int64_t kRowSlack = 16;

int64_t roundUp8(int64_t n) {
    return (n + 7) / 8 * 8;
}

/// dst[X] = row[X - pl] for padded columns X in [0, width), zero outside the image, in whole
/// vectors (zeros up to the next multiple of 8): rows are short (9 floats at 7x7), and a library
/// call or two per row would cost more than the copy.
void padRow(const Conv2d& p, const float* row, int64_t width, float* dst) {
#if defined(__AVX2__)
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i before = _mm256_set1_epi32(-1);
    const __m256i end = _mm256_set1_epi32(static_cast<int>(p.w));
    for (int64_t x0 = 0; x0 < width; x0 += 8) {
        const __m256i column =
            _mm256_add_epi32(lane, _mm256_set1_epi32(static_cast<int>(x0 - p.pl)));
        const __m256i inside =
            _mm256_and_si256(_mm256_cmpgt_epi32(column, before), _mm256_cmpgt_epi32(end, column));
        // Masked-off lanes are not read, so the address may lie before the row.
        _mm256_storeu_ps(dst + x0, _mm256_maskload_ps(row + (x0 - p.pl), inside));
    }
#else
    for (int64_t col = 0; col < width; ++col) {
        const int64_t ix = col - p.pl;
        dst[col] = ix >= 0 && ix < p.w ? row[ix] : 0.0F;
    }
#endif
}

/// dst + f phaseLength, f < phases, holds padded[f], padded[f + sw], ... (phaseLength values,
/// possibly followed by up to 7 more: whole vectors; the phases are written in order, so an
/// overrun lands where a later write goes). `padded` must be readable up to sw phaseLength
/// floats, and 2 roundUp8(phaseLength) + 8 for sw = 2.
void splitPhases(const float* padded, int64_t sw, int64_t phases, int64_t phaseLength, float* dst) {
    for (int64_t f = 0; f < phases; ++f) {
        float* out = dst + f * phaseLength;
        int64_t i = 0;
#if defined(__AVX2__)
        if (sw == 2) {
            // 8 outputs from 16 inputs: the even lanes of each 128-bit half, then the halves
            // put in order.
            for (; i < phaseLength; i += 8) {
                const __m256 a = _mm256_loadu_ps(padded + f + 2 * i);
                const __m256 b = _mm256_loadu_ps(padded + f + 2 * i + 8);
                const __m256 even = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
                _mm256_storeu_ps(out + i, _mm256_castpd_ps(_mm256_permute4x64_pd(
                                              _mm256_castps_pd(even), _MM_SHUFFLE(3, 1, 2, 0))));
            }
            continue;
        }
#endif
        for (; i < phaseLength; ++i) {
            out[i] = padded[f + i * sw];
        }
    }
}

/// Rows a copy reads ahead of the one it copies. A strided copy reads every other row: too
/// sparse for the hardware prefetchers, it waited on memory for each row (ResNet-50's strided
/// 1x1 at batch 8: 3.5 ms of copies from memory against 0.6 from the caches).
constexpr int64_t kPrefetchRows = 16;

/// Asks for the cache lines of the `width` floats at `row`.
void prefetchRow(const float* row, int64_t width) {
    for (int64_t at = 0; at < width; at += 16) {
        __builtin_prefetch(row + at);
    }
}

/// How Im2colSource copies an image: `height` rows per plane, source row `rowOrigin` + row
/// `rowStep` of the image (padding rows outside it), each row padded to `width` columns and
/// split into `phases` phases of `phaseLength` (a plane row of phases x phaseLength floats).
struct SourceCopy {
    int64_t height;
    int64_t rowOrigin;
    int64_t rowStep;
    int64_t width;
    int64_t phases;
    int64_t phaseLength;

    int64_t rowStride() const { return phases * phaseLength; }

    int64_t plane() const { return height * rowStride() + kRowSlack; }

    /// Plane after plane (threads split the channels).
    void fill(const Conv2d& p, const float* x, int64_t channels, float* copy) const {
        parallelFor(channels, 1, [&](int64_t begin, int64_t end) {
            // Room for padRow's whole vectors and splitPhases' reads (every phase entry, even
            // past `width`; whole vectors for stride 2).
            std::vector<float> padded(
                static_cast<size_t>(roundUp8(std::max(width, p.sw * phaseLength)) +
                                    2 * roundUp8(phaseLength) + 8),
                0.0F);
            for (int64_t c = begin; c < end; ++c) {
                for (int64_t row = 0; row < height; ++row) {
                    float* dst = copy + c * plane() + row * rowStride();
                    const int64_t iy = rowOrigin + row * rowStep;
                    // Rows of the next planes once this one's run out; never past the image.
                    const int64_t ahead = std::clamp<int64_t>(
                        c * p.h + iy + kPrefetchRows * rowStep, 0, channels * p.h - 1);
                    prefetchRow(x + ahead * p.w, std::min(width, p.w));
                    if (iy < 0 || iy >= p.h) {
                        std::fill(dst, dst + rowStride(), 0.0F);
                    } else if (p.sw == 1) {
                        padRow(p, x + (c * p.h + iy) * p.w, width, dst);
                    } else {
                        padRow(p, x + (c * p.h + iy) * p.w, width, padded.data());
                        splitPhases(padded.data(), p.sw, phases, phaseLength, dst);
                    }
                }
            }
        });
    }
};

/// One run of a strip: strip columns [begin, end) read source offset `offset` + column (never
/// negative: column t is output pixel q0 + t, at least t pixels and so t floats into the source).
struct StripRun {
    int64_t begin;
    int64_t end;
    int64_t offset;
};

/// Writes every row of one strip made of several runs (a strip across output rows, or the
/// last, narrower strip of a block): each run's columns loaded from its source, zeros elsewhere.
void packRuns(const float* data, const std::vector<int64_t>& rowOffsets, const StripRun* runs,
              int64_t count, float* dst) {
#if defined(__AVX2__)
    // Masked loads: columns outside a run are neither read nor kept.
    __m256i masks[2 * kStripWidth]; // NOLINT(*-avoid-c-arrays): std::array drops the alignment
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (int64_t k = 0; k < count; ++k) {
        for (int half = 0; half < 2; ++half) {
            const __m256i column = _mm256_add_epi32(lane, _mm256_set1_epi32(8 * half));
            const __m256i from = _mm256_set1_epi32(static_cast<int>(runs[k].begin));
            const __m256i to = _mm256_set1_epi32(static_cast<int>(runs[k].end));
            masks[2 * k + half] = _mm256_andnot_si256(_mm256_cmpgt_epi32(from, column),
                                                      _mm256_cmpgt_epi32(to, column));
        }
    }
    for (int64_t r = 0; r < static_cast<int64_t>(rowOffsets.size()); ++r) {
        const float* row = data + rowOffsets[static_cast<size_t>(r)];
        __m256 lo = _mm256_setzero_ps();
        __m256 hi = _mm256_setzero_ps();
        for (int64_t k = 0; k < count; ++k) {
            const float* src = row + runs[k].offset;
            lo = _mm256_or_ps(lo, _mm256_maskload_ps(src, masks[2 * k]));
            hi = _mm256_or_ps(hi, _mm256_maskload_ps(src + 8, masks[2 * k + 1]));
        }
        _mm256_storeu_ps(dst + r * kStripWidth, lo);
        _mm256_storeu_ps(dst + r * kStripWidth + 8, hi);
    }
#else
    for (int64_t r = 0; r < static_cast<int64_t>(rowOffsets.size()); ++r) {
        const float* row = data + rowOffsets[static_cast<size_t>(r)];
        float* out = dst + r * kStripWidth;
        std::fill(out, out + kStripWidth, 0.0F);
        for (int64_t k = 0; k < count; ++k) {
            for (int64_t t = runs[k].begin; t < runs[k].end; ++t) {
                out[t] = row[runs[k].offset + t];
            }
        }
    }
#endif
}

} // namespace

void im2col(const Conv2d& p, const float* x, int64_t p0, int64_t p1, float* col) {
    const int64_t width = p1 - p0;
    for (int64_t row = 0; row < p.colRows(); ++row) {
        const TapRow tap(p, row);
        float* dst = col + row * width;
        forEachRun(p, x, tap, p0, p1, width,
                   [&](int64_t q, int64_t ox, int64_t count, const float* src) {
                       copyRun(p, src, tap.off, ox, count, dst + (q - p0));
                   });
    }
}

Im2colSource::Im2colSource(const Conv2d& p, const float* x, ScratchFloats& storage) {
    const int64_t channels = p.cg();
    const int64_t pixels = p.outPixels();
    m_rowOffsets.resize(static_cast<size_t>(p.colRows()));
    if (p.isPointwise()) {
        // Row c of the im2col matrix is channel c.
        for (int64_t c = 0; c < channels; ++c) {
            m_rowOffsets[static_cast<size_t>(c)] = c * pixels;
        }
        m_data = x;
        m_rowStep = p.ow;
        m_runLength = pixels;
        return;
    }
    if (p.kh * p.kw == 1) {
        // Row c is channel c sampled at the output pixels: a copy of the pixels read, output
        // row after output row (phase 0 of each padded input row).
        const SourceCopy layout{p.oh, -p.pt, p.sh, (p.ow - 1) * p.sw + 1, 1, p.ow};
        float* copy = storage.get(static_cast<size_t>(channels * layout.plane()));
        layout.fill(p, x, channels, copy);
        for (int64_t c = 0; c < channels; ++c) {
            m_rowOffsets[static_cast<size_t>(c)] = c * layout.plane();
        }
        m_data = copy;
        m_rowStep = p.ow;
        m_runLength = pixels;
        return;
    }
    // Padded rows Y = oy sh + i dh and columns X = ox sw + j dw, columns split by X mod sw:
    // tap (c, i, j) of output pixel (oy, ox) sits in plane c, row oy sh + i dh, phase (j dw) mod
    // sw, index ox + (j dw) div sw — contiguous in ox.
    const int64_t width = (p.ow - 1) * p.sw + (p.kw - 1) * p.dw + 1;
    const SourceCopy layout{
        (p.oh - 1) * p.sh + (p.kh - 1) * p.dh + 1, -p.pt, 1, width, p.sw, ceilDiv(width, p.sw)};
    float* copy = storage.get(static_cast<size_t>(channels * layout.plane()));
    layout.fill(p, x, channels, copy);
    std::vector<int64_t> tapOffsets;
    for (int64_t i = 0; i < p.kh; ++i) {
        for (int64_t j = 0; j < p.kw; ++j) {
            const int64_t reach = j * p.dw;
            tapOffsets.push_back(i * p.dh * layout.rowStride() +
                                 (reach % p.sw) * layout.phaseLength + reach / p.sw);
        }
    }
    auto offset = m_rowOffsets.begin();
    for (int64_t c = 0; c < channels; ++c) {
        for (const int64_t tap : tapOffsets) {
            *offset++ = c * layout.plane() + tap;
        }
    }
    m_data = copy;
    m_rowStep = p.sh * layout.rowStride();
    m_runLength = p.ow;
}

void Im2colSource::packStrips(int64_t p0, int64_t p1, float* strips) const {
    const auto rows = static_cast<int64_t>(m_rowOffsets.size());
    for (int64_t q0 = p0; q0 < p1; q0 += kStripWidth) {
        const int64_t width = std::min(kStripWidth, p1 - q0);
        float* dst = strips + ((q0 - p0) / kStripWidth) * rows * kStripWidth;
        // The strip's columns in runs within one output row.
        std::array<StripRun, kStripWidth> runs{};
        int64_t count = 0;
        int64_t oy = q0 / m_runLength;
        int64_t ox = q0 % m_runLength;
        for (int64_t t = 0; t < width; ox = 0, ++oy) {
            const int64_t length = std::min(width - t, m_runLength - ox);
            runs[static_cast<size_t>(count++)] = {t, t + length, oy * m_rowStep + ox - t};
            t += length;
        }
        if (count == 1 && width == kStripWidth) {
            // The common case, one run over the whole strip: a fixed-length copy per row.
            const float* src = m_data + runs[0].offset;
            for (int64_t r = 0; r < rows; ++r) {
                std::memcpy(dst + r * kStripWidth, src + m_rowOffsets[static_cast<size_t>(r)],
                            kStripWidth * sizeof(float));
            }
            continue;
        }
        packRuns(m_data, m_rowOffsets, runs.data(), count, dst);
    }
}

void col2im(const Conv2d& p, const float* col, float* dx) {
    const int64_t width = p.outPixels();
    for (int64_t row = 0; row < p.colRows(); ++row) {
        const TapRow tap(p, row);
        const float* src = col + row * width;
        for (int64_t oy = 0; oy < p.oh; ++oy) {
            const int64_t in = tap.inputRow(p, oy);
            if (in < 0) {
                continue;
            }
            float* dst = dx + in;
            for (int64_t ox = 0; ox < p.ow; ++ox) {
                const int64_t ix = ox * p.sw + tap.off;
                if (ix >= 0 && ix < p.w) {
                    dst[ix] += src[oy * p.ow + ox];
                }
            }
        }
    }
}

} // namespace qs::runtime
