// Winograd F(2x2, 3x3) for the weight gradient of a 3x3 stride-1 convolution (Lavin and Gray,
// 2016). The forward computes each 2x2 output tile as Y = A^T [sum_c (G g G^T) . (B^T d B)] A,
// so with dM = A dY A^T per tile the gradient of U = G g G^T is dU = sum over tiles of dM . V
// (V = B^T d B), 16 GEMMs of (filters x tiles) x (tiles x channels), and dg = G^T dU G. Per
// weight that is 16 multiplications per 4 output pixels instead of 9 per pixel: 2.25 times fewer
// than the im2col GEMM. Weight-mode Hessian sweeps (pruning importance, HAWQ traces) spend most of
// their time here.

#include "core/runtime/conv_backward.h"
#include "core/runtime/packed_gemm.h"
#include "core/runtime/parallel.h"
#include "core/runtime/scratch.h"
#include "core/runtime/winograd.h"
#include "core/runtime/winograd_tiles.h"

#include <algorithm>
#include <array>
#include <vector>

namespace qs::runtime {
namespace {

constexpr int64_t kPositions = 16; // of F(2x2, 3x3)

/// Floats between two positions' matrices of `size` floats: never a multiple of 4 KiB, whose 16
/// streams would share L1 sets (4K aliasing made the transforms 3 times slower).
int64_t positionStride(int64_t size) {
    return (size + 1023) / 1024 * 1024 + 64;
}

using TileGrid = WinogradTileGrid;

/// The four input rows of tile row `ty` of `plane`, zero-padded: padded column k holds input
/// column k - pl, rows outside the image are zero.
void padTileRows(const Conv2d& p, const float* plane, int64_t ty, int64_t width,
                 std::vector<float>& rows) {
    std::fill(rows.begin(), rows.end(), 0.0F);
    const int64_t first = std::max<int64_t>(0, p.pl);
    const int64_t last = std::min<int64_t>(width, p.w + p.pl);
    for (int64_t i = 0; i < 4; ++i) {
        const int64_t iy = 2 * ty - p.pt + i;
        if (iy >= 0 && iy < p.h && first < last) {
            std::copy(plane + iy * p.w + first - p.pl, plane + iy * p.w + last - p.pl,
                      rows.begin() + i * width + first);
        }
    }
}

/// (B^T d B) of the `cols` tiles of one padded tile row (rows `d`, row stride `width`), position
/// pos of tile tx to out[pos posStride + tx]; B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1].
void transformTileRow(const float* d, int64_t width, int64_t cols, int64_t posStride, float* out) {
    const float* d0 = d;
    const float* d1 = d0 + width;
    const float* d2 = d1 + width;
    const float* d3 = d2 + width;
    for (int64_t tx = 0; tx < cols; ++tx) {
        std::array<std::array<float, 4>, 4> r{}; // B^T d, column by column
        for (size_t j = 0; j < 4; ++j) {
            const int64_t k = 2 * tx + static_cast<int64_t>(j);
            r[0][j] = d0[k] - d2[k];
            r[1][j] = d1[k] + d2[k];
            r[2][j] = d2[k] - d1[k];
            r[3][j] = d1[k] - d3[k];
        }
        for (int64_t i = 0; i < 4; ++i) {
            const auto& row = r[static_cast<size_t>(i)];
            out[(i * 4 + 0) * posStride + tx] = row[0] - row[2];
            out[(i * 4 + 1) * posStride + tx] = row[1] + row[2];
            out[(i * 4 + 2) * posStride + tx] = row[2] - row[1];
            out[(i * 4 + 3) * posStride + tx] = row[1] - row[3];
        }
    }
}

/// V[pos][c][t] = (B^T d B)[pos] for tile t of channel c of one image; the tile reads input rows
/// 2 ty - pt .. + 3 and columns 2 tx - pl .. + 3, zero outside the image. Each tile row's four
/// input rows are first copied into zero-padded rows, so the tiles read without bounds checks.
void transformInput(const Conv2d& p, const TileGrid& grid, const float* x, float* v) {
    const int64_t posStride = positionStride(p.c * grid.perImage);
    const int64_t width = 2 * grid.cols + 2;
    parallelFor(p.c, 1, [&](int64_t c0, int64_t c1) {
        std::vector<float> rows(static_cast<size_t>(4 * width));
        for (int64_t c = c0; c < c1; ++c) {
            for (int64_t ty = 0; ty < grid.rows; ++ty) {
                padTileRows(p, x + c * p.h * p.w, ty, width, rows);
                transformTileRow(rows.data(), width, grid.cols, posStride,
                                 v + c * grid.perImage + ty * grid.cols);
            }
        }
    });
}

/// dM[pos][m][t] = (A dY A^T)[pos] for tile t of filter m of one image (A^T = [1 1 1 0;
/// 0 1 -1 -1]); output pixels past the plane (odd sizes) have no gradient.
void transformOutputGrad(const Conv2d& p, const TileGrid& grid, const float* dy, float* dm) {
    const int64_t posStride = positionStride(p.m * grid.perImage);
    const int64_t width = 2 * grid.cols;
    parallelFor(p.m, 1, [&](int64_t m0, int64_t m1) {
        std::vector<float> rows(static_cast<size_t>(2 * width));
        for (int64_t m = m0; m < m1; ++m) {
            const float* plane = dy + m * p.oh * p.ow;
            for (int64_t ty = 0; ty < grid.rows; ++ty) {
                std::fill(rows.begin(), rows.end(), 0.0F);
                for (int64_t i = 0; i < 2 && 2 * ty + i < p.oh; ++i) {
                    std::copy_n(plane + (2 * ty + i) * p.ow, p.ow, rows.begin() + i * width);
                }
                const float* y0 = rows.data();
                const float* y1 = y0 + width;
                float* out = dm + m * grid.perImage + ty * grid.cols;
                for (int64_t tx = 0; tx < grid.cols; ++tx) {
                    const int64_t k = 2 * tx;
                    // A dY: 4 rows of 2; then (A dY) A^T: 4 x 4.
                    const std::array<std::array<float, 2>, 4> r{
                        {{y0[k], y0[k + 1]},
                         {y0[k] + y1[k], y0[k + 1] + y1[k + 1]},
                         {y0[k] - y1[k], y0[k + 1] - y1[k + 1]},
                         {-y1[k], -y1[k + 1]}}};
                    for (int64_t a = 0; a < 4; ++a) {
                        const auto& [r0, r1] = r[static_cast<size_t>(a)];
                        out[(a * 4 + 0) * posStride + tx] = r0;
                        out[(a * 4 + 1) * posStride + tx] = r0 + r1;
                        out[(a * 4 + 2) * posStride + tx] = r0 - r1;
                        out[(a * 4 + 3) * posStride + tx] = -r1;
                    }
                }
            }
        }
    });
}

/// dw[m, c] = G^T dU[m][c] G for every (filter, channel), G^T = [1 1/2 1/2 0; 0 1/2 -1/2 0;
/// 0 1/2 1/2 1].
void writeWeightGrad(const Conv2d& p, const float* du, float* dw) {
    const int64_t posStride = positionStride(p.m * p.c);
    parallelFor(p.m, 1, [&](int64_t m0, int64_t m1) {
        for (int64_t m = m0; m < m1; ++m) {
            for (int64_t c = 0; c < p.c; ++c) {
                const float* u = du + m * p.c + c;
                const auto at = [&](int64_t a, int64_t b) { return u[(a * 4 + b) * posStride]; };
                // G^T dU: 3 rows of 4.
                std::array<std::array<float, 4>, 3> s{};
                for (int64_t b = 0; b < 4; ++b) {
                    const float u0 = at(0, b);
                    const float u1 = at(1, b);
                    const float u2 = at(2, b);
                    const float u3 = at(3, b);
                    const auto col = static_cast<size_t>(b);
                    s[0][col] = u0 + 0.5F * (u1 + u2);
                    s[1][col] = 0.5F * (u1 - u2);
                    s[2][col] = 0.5F * (u1 + u2) + u3;
                }
                float* g = dw + (m * p.c + c) * 9;
                for (size_t k = 0; k < 3; ++k) {
                    const auto& [s0, s1, s2, s3] = s[k];
                    g[k * 3 + 0] = s0 + 0.5F * (s1 + s2);
                    g[k * 3 + 1] = 0.5F * (s1 - s2);
                    g[k * 3 + 2] = 0.5F * (s1 + s2) + s3;
                }
            }
        }
    });
}

/// Transformed tiles and gradients, reused across calls (fresh pages on every layer cost page
/// faults).
struct WeightGradScratch {
    ScratchFloats v;  ///< [pos][channel][tile]
    ScratchFloats dm; ///< [pos][filter][tile]
    ScratchFloats du; ///< [pos][filter][channel]
    ScratchFloats dw; ///< one image's dw, for its row sums of squares
};

} // namespace

bool winogradWeightGradApplies(const Conv2d& p) {
    return winogradApplies(p) && TileGrid(p, 2).perImage >= 49;
}

namespace {

/// winogradWeightGrad's work: dw written (summed, or per image with `perSample`) when `squares`
/// is null, else per image the row sums of squares of its dw (squares [N, M]), each image's dw
/// written to a scratch and reduced there.
void weightGradImages(const Conv2d& p, const float* x, const float* dy, float* dw, bool perSample,
                      double* squares) {
    const TileGrid grid(p, 2);
    thread_local WeightGradScratch scratch;
    const int64_t vStride = positionStride(p.c * grid.perImage);
    const int64_t dmStride = positionStride(p.m * grid.perImage);
    const int64_t duStride = positionStride(p.m * p.c);
    const int64_t size = p.m * p.c * 9;
    // Pointers, not the thread_local itself: the threads below must see the caller's buffers.
    float* v = scratch.v.get(static_cast<size_t>(kPositions * vStride));
    float* dm = scratch.dm.get(static_cast<size_t>(kPositions * dmStride));
    float* du = scratch.du.get(static_cast<size_t>(kPositions * duStride));
    float* imageDw = squares != nullptr ? scratch.dw.get(static_cast<size_t>(size)) : nullptr;
    for (int64_t n = 0; n < p.n; ++n) {
        transformInput(p, grid, x + n * p.c * p.h * p.w, v);
        transformOutputGrad(p, grid, dy + n * p.m * p.oh * p.ow, dm);
        // Summed over images in the transformed domain (the output transform is linear), unless
        // each image keeps its own gradient.
        const bool first = perSample || n == 0;
        parallelFor(kPositions, 1, [&](int64_t pos0, int64_t pos1) {
            for (int64_t pos = pos0; pos < pos1; ++pos) {
                gemmABt(p.m, p.c, grid.perImage, dm + pos * dmStride, grid.perImage,
                        v + pos * vStride, grid.perImage, du + pos * duStride, p.c, !first);
            }
        });
        if (squares != nullptr) {
            writeWeightGrad(p, du, imageDw);
            rowSumsOfSquares(imageDw, p.m, p.c * 9, squares + n * p.m);
        } else if (perSample) {
            writeWeightGrad(p, du, dw + n * size);
        }
    }
    if (squares == nullptr && !perSample) {
        if (p.n == 0) {
            std::fill_n(dw, size, 0.0F);
            return;
        }
        writeWeightGrad(p, du, dw);
    }
}

} // namespace

void winogradWeightGrad(const Conv2d& p, const float* x, const float* dy, float* dw,
                        bool perSample) {
    weightGradImages(p, x, dy, dw, perSample, nullptr);
}

void winogradWeightGradRowSquares(const Conv2d& p, const float* x, const float* dy,
                                  double* squares) {
    weightGradImages(p, x, dy, nullptr, true, squares);
}

} // namespace qs::runtime
