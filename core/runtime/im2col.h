// im2col / col2im for 1-D and 2-D convolutions (a 1-D input has height 1): the layout
// transforms that turn Conv into a GEMM (Conv forward through Im2colSource, which writes the
// packed GEMM's B strips directly; ConvTranspose backward) and col2im back (Conv backward,
// ConvTranspose forward).
#pragma once

#include "core/runtime/scratch.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace qs::runtime {

/// 1-D and 2-D convolutions seen as 2-D (a 1-D input has height 1).
struct Conv2d {
    int64_t n, c, h, w, m, kh, kw, sh, sw, dh, dw, pt, pl, oh, ow, group;
    /// Floats from one image's output to the next's: 0 for a tensor of its own (m x outPixels),
    /// more when the output is a slice of a Concat's (ChannelSlice). Residuals stay dense.
    int64_t yImageStride = 0;

    int64_t outImageStride() const { return yImageStride != 0 ? yImageStride : m * oh * ow; }

    int64_t cg() const { return c / group; }

    int64_t mg() const { return m / group; }

    int64_t colRows() const { return cg() * kh * kw; }

    int64_t outPixels() const { return oh * ow; }

    /// A 1x1 stride-1 convolution without pads: its im2col matrix is the image itself (with end
    /// pads the output would be larger than the input).
    bool isPointwise() const {
        return kh == 1 && kw == 1 && sh == 1 && sw == 1 && pt == 0 && pl == 0 && oh == h && ow == w;
    }

    bool isDepthwise() const { return cg() == 1 && mg() == 1; }
};

/// Columns [p0, p1) of the im2col matrix of one group of one image (see im2col.cpp).
void im2col(const Conv2d& p, const float* x, int64_t p0, int64_t p1, float* col);

/// Columns per strip of Im2colSource::packStrips (the GEMM micro-tile width, kGemmCols).
inline constexpr int64_t kStripWidth = 16;

/// One image (one group) of a Conv laid out so that the im2col matrix reads it in contiguous runs:
/// entry (row r, output pixel oy ow + ox) sits at data[rowOffset(r) + oy rowStep + ox]. A
/// pointwise convolution reads the image itself; a 1x1 kernel with strides or pads a copy of the
/// pixels it reads; any other kernel a zero-padded copy whose columns are split into phases modulo
/// the stride (as the depthwise kernel's), so that neither padding nor strides are left for the
/// per-strip copies, the packing's inner loop.
class Im2colSource {
public:
    /// Prepares x (channels cg() x h x w) for p; a copy goes to `storage`, which must outlive
    /// this source and stay untouched while it is used.
    Im2colSource(const Conv2d& p, const float* x, ScratchFloats& storage);

    /// Columns [p0, p1) of the im2col matrix as strips of kStripWidth columns: strip s holds, row
    /// after row, columns p0 + s kStripWidth .. + kStripWidth - 1 (zero past p1) — the packed B
    /// layout of packed_gemm.h. Thread-safe.
    void packStrips(int64_t p0, int64_t p1, float* strips) const;

    /// Entry (row r, output pixel t runLength() + u, u < runLength()) of the im2col matrix sits
    /// at data()[rowOffsets()[r] + t rowStep() + u]: runs of runLength() contiguous pixels.
    const float* data() const { return m_data; }

    const std::vector<int64_t>& rowOffsets() const { return m_rowOffsets; }

    int64_t rowStep() const { return m_rowStep; }

    int64_t runLength() const { return m_runLength; }

private:
    const float* m_data = nullptr;
    std::vector<int64_t> m_rowOffsets; ///< per im2col row (c, i, j)
    int64_t m_rowStep = 0;             ///< between output rows
    int64_t m_runLength = 0;           ///< output pixels per contiguous run: ow, or all of them
};

/// Adds the im2col matrix `col` (all output pixels) back into the image gradient `dx`.
void col2im(const Conv2d& p, const float* col, float* dx);

} // namespace qs::runtime
