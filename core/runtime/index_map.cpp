#include "core/runtime/index_map.h"

#include "core/runtime/parallel.h"
#include "core/runtime/transpose8x8.h"

#ifdef __AVX2__
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstring>

namespace qs::runtime {

Tensor gatherByIndex(const Tensor& src, Shape outShape, const std::vector<int64_t>& index,
                     const Tensor* fill) {
    Tensor out = Tensor::allocate(src.dtype(), std::move(outShape));
    const size_t size = runtimeElementSize(src.dtype());
    const auto* from = static_cast<const std::byte*>(src.rawData());
    auto* to = static_cast<std::byte*>(out.mutableRawData());
    std::byte zero[16] = {};
    const std::byte* fillBytes =
        fill != nullptr && fill->defined() ? static_cast<const std::byte*>(fill->rawData()) : zero;
    for (size_t i = 0; i < index.size(); ++i) {
        const std::byte* source =
            index[i] >= 0 ? from + static_cast<size_t>(index[i]) * size : fillBytes;
        std::memcpy(to + i * size, source, size);
    }
    return out;
}

Tensor scatterAddByIndex(const Tensor& grad, const Shape& srcShape,
                         const std::vector<int64_t>& index) {
    Tensor out = Tensor::zeros(graph::DataType::Float, srcShape);
    const float* g = grad.data<float>();
    float* dst = out.mutableData<float>();
    for (size_t i = 0; i < index.size(); ++i) {
        if (index[i] >= 0) {
            dst[index[i]] += g[i];
        }
    }
    return out;
}

namespace {

// Drops unit dims and merges neighbours that form one run on both sides (H and W of an NCHW
// channel slice, or the axes a permutation keeps together), so the loops below see few, long axes.
StridedCopy collapse(const StridedCopy& copy) {
    StridedCopy out;
    for (size_t d = 0; d < copy.dims.size(); ++d) {
        const int64_t n = copy.dims[d];
        if (n == 1) {
            continue;
        }
        if (!out.dims.empty() && out.srcStrides.back() == copy.srcStrides[d] * n &&
            out.dstStrides.back() == copy.dstStrides[d] * n) {
            out.dims.back() *= n;
            out.srcStrides.back() = copy.srcStrides[d];
            out.dstStrides.back() = copy.dstStrides[d];
            continue;
        }
        out.dims.push_back(n);
        out.srcStrides.push_back(copy.srcStrides[d]);
        out.dstStrides.push_back(copy.dstStrides[d]);
    }
    if (out.dims.empty()) {
        out = {{1}, {1}, {1}};
    }
    return out;
}

// Edge of the square tiles of a 2-D transpose: 8 x 8 elements read 8 cache lines and write 8.
// With 16, a transpose whose rows lie 4 KiB apart (attention's [S, B x H, d] -> [B x H, d, S])
// read 16 lines of one L1 set, more than its 12 ways.
constexpr int64_t kTile = 8;

#ifdef __AVX2__
/// dst row c = src column c of an 8 x 8 block of floats; rows `srcRow` and `dstRow` bytes apart
/// (multiples of 4: only 4-byte elements come here).
void transpose8x8(const std::byte* src, int64_t srcRow, std::byte* dst, int64_t dstRow) {
    const Vectors8 t = transposeRegisters8x8(reinterpret_cast<const float*>(src),
                                             srcRow / static_cast<int64_t>(sizeof(float)));
    for (int64_t c = 0; c < 8; ++c) {
        _mm256_storeu_ps(reinterpret_cast<float*>(dst + c * dstRow), t.v[c]);
    }
}
#endif

// The copy of one "row" (the innermost axis, plus a second axis for a 2-D transpose), for elements
// of Size bytes (0: `size` bytes, known at run time).
template <size_t Size>
struct InnerCopy {
    size_t size;
    int64_t n;         // length of the innermost axis
    int64_t srcStride; // its strides, in bytes
    int64_t dstStride;
    int64_t m = 1; // length of the second axis of a 2-D transpose (1: none)
    int64_t srcStrideM = 0;
    int64_t dstStrideM = 0;

    void element(const std::byte* src, std::byte* dst) const {
        std::memcpy(dst, src, Size != 0 ? Size : size);
    }

#ifdef __AVX2__
    /// A whole 8 x 8 tile of 4-byte elements, through registers. copyElements picks the second
    /// axis as the one contiguous on the side the innermost axis is not, so one side is
    /// contiguous along i and the other along j.
    void fullTile(const std::byte* src, std::byte* dst) const {
        if (srcStrideM == 4) { // src rows along j, one per i; dst rows along i, one per j
            transpose8x8(src, srcStride, dst, dstStrideM);
        } else { // src rows along i, one per j; dst rows along j, one per i
            transpose8x8(src, srcStrideM, dst, dstStride);
        }
    }
#endif

    void operator()(const std::byte* src, std::byte* dst) const {
        if (m == 1) {
            for (int64_t i = 0; i < n; ++i) {
                element(src + i * srcStride, dst + i * dstStride);
            }
            return;
        }
        for (int64_t i0 = 0; i0 < n; i0 += kTile) {
            const int64_t i1 = std::min(n, i0 + kTile);
            for (int64_t j0 = 0; j0 < m; j0 += kTile) {
                const int64_t j1 = std::min(m, j0 + kTile);
#ifdef __AVX2__
                if (Size == 4 && i1 - i0 == 8 && j1 - j0 == 8) {
                    fullTile(src + i0 * srcStride + j0 * srcStrideM,
                             dst + i0 * dstStride + j0 * dstStrideM);
                    continue;
                }
#endif
                for (int64_t j = j0; j < j1; ++j) {
                    const std::byte* s = src + j * srcStrideM;
                    std::byte* t = dst + j * dstStrideM;
                    for (int64_t i = i0; i < i1; ++i) {
                        element(s + i * srcStride, t + i * dstStride);
                    }
                }
            }
        }
    }
};

// Runs `inner` at every coordinate of the `outer` axes of `copy`, split among threads.
template <typename Inner>
void forEachOuter(const std::byte* src, std::byte* dst, const StridedCopy& copy,
                  const std::vector<size_t>& outer, int64_t innerElements, size_t size,
                  const Inner& inner) {
    int64_t count = 1;
    for (const size_t d : outer) {
        count *= copy.dims[d];
    }
    const auto bytes = static_cast<int64_t>(size);
    // About 64 KiB per chunk: smaller copies are not worth waking a thread for.
    const int64_t minChunk = std::max<int64_t>(1, (int64_t{1} << 16) / (innerElements * bytes));
    parallelFor(count, minChunk, [&](int64_t begin, int64_t end) {
        std::vector<int64_t> coords(outer.size(), 0);
        int64_t srcOffset = 0;
        int64_t dstOffset = 0;
        int64_t rest = begin;
        for (size_t k = outer.size(); k-- > 0;) {
            const size_t d = outer[k];
            coords[k] = rest % copy.dims[d];
            rest /= copy.dims[d];
            srcOffset += coords[k] * copy.srcStrides[d] * bytes;
            dstOffset += coords[k] * copy.dstStrides[d] * bytes;
        }
        for (int64_t row = begin; row < end; ++row) {
            inner(src + srcOffset, dst + dstOffset);
            for (size_t k = outer.size(); k-- > 0;) {
                const size_t d = outer[k];
                srcOffset += copy.srcStrides[d] * bytes;
                dstOffset += copy.dstStrides[d] * bytes;
                if (++coords[k] < copy.dims[d]) {
                    break;
                }
                srcOffset -= copy.srcStrides[d] * copy.dims[d] * bytes;
                dstOffset -= copy.dstStrides[d] * copy.dims[d] * bytes;
                coords[k] = 0;
            }
        }
    });
}

template <size_t Size>
void copyElements(const std::byte* src, std::byte* dst, size_t size, const StridedCopy& copy) {
    const size_t last = copy.dims.size() - 1;
    const auto bytes = static_cast<int64_t>(size);
    InnerCopy<Size> inner{size, copy.dims[last], copy.srcStrides[last] * bytes,
                          copy.dstStrides[last] * bytes};
    // A transpose that moves the innermost axis: the axis contiguous on the other side becomes the
    // second axis of square tiles, so both sides are read and written a cache line at a time.
    const bool dstInner = copy.dstStrides[last] == 1;
    size_t second = last;
    for (size_t d = 0; d < last; ++d) {
        if ((dstInner ? copy.srcStrides[d] : copy.dstStrides[d]) == 1) {
            second = d;
        }
    }
    if (second != last && (dstInner || copy.srcStrides[last] == 1)) {
        inner.m = copy.dims[second];
        inner.srcStrideM = copy.srcStrides[second] * bytes;
        inner.dstStrideM = copy.dstStrides[second] * bytes;
    } else {
        second = last;
    }
    std::vector<size_t> outer;
    for (size_t d = 0; d < last; ++d) {
        if (d != second) {
            outer.push_back(d);
        }
    }
    forEachOuter(src, dst, copy, outer, inner.n * inner.m, size, inner);
}

} // namespace

void copyStrided(const void* src, void* dst, size_t elementSize, const StridedCopy& copy) {
    if (shapeNumElements(copy.dims) == 0) {
        return;
    }
    const StridedCopy c = collapse(copy);
    const auto* from = static_cast<const std::byte*>(src);
    auto* to = static_cast<std::byte*>(dst);
    const size_t last = c.dims.size() - 1;
    if (c.srcStrides[last] == 1 && c.dstStrides[last] == 1) {
        // Contiguous runs on both sides (a channel slice, a shuffle that keeps H x W together).
        const size_t runBytes = static_cast<size_t>(c.dims[last]) * elementSize;
        std::vector<size_t> outer(last);
        for (size_t d = 0; d < last; ++d) {
            outer[d] = d;
        }
        forEachOuter(from, to, c, outer, c.dims[last], elementSize,
                     [runBytes](const std::byte* s, std::byte* t) { std::memcpy(t, s, runBytes); });
        return;
    }
    switch (elementSize) {
    case 1:
        return copyElements<1>(from, to, elementSize, c);
    case 2:
        return copyElements<2>(from, to, elementSize, c);
    case 4:
        return copyElements<4>(from, to, elementSize, c);
    case 8:
        return copyElements<8>(from, to, elementSize, c);
    default:
        return copyElements<0>(from, to, elementSize, c);
    }
}

} // namespace qs::runtime
