// The GEMM behind Conv: C[M x N] = A[M x K] B[K x N] with A the weights (output channels x
// input taps) and B the im2col matrix (input taps x output pixels), blocked as in BLIS (Goto and
// van de Geijn, "Anatomy of high-performance matrix multiplication", TOMS 2008): A in panels of
// kGemmRows rows (packed once per call, or ahead of time), B packed by the caller straight from the
// image into strips of kGemmCols columns, a 6 x 16 register-tile micro-kernel (AVX2 + FMA when
// built for it; 6 x 64 and 6 x 32 AVX-512 ones where the processor has it; narrower ones for the
// last columns when N is not a multiple of 16), and the convolution epilogue applied to each
// finished tile while it is in cache.
#pragma once

#include "core/runtime/conv_kernels.h"
#include "core/runtime/im2col.h"

#include <cstdint>
#include <functional>

namespace qs::runtime {

inline constexpr int64_t kGemmRows = 6;           ///< rows of A per panel (micro-tile height)
inline constexpr int64_t kGemmCols = kStripWidth; ///< columns of B per strip (micro-tile width)

/// Turns the AVX-512 kernels on or off (used where the processor supports AVX-512F: the GEMM's
/// micro-kernels of four and two strips per tile, bit-identical to the AVX2 one, and the depthwise
/// convolution's 16-channel blocks); returns whether they were on. They stay off on a processor
/// without AVX-512F. For tests and benchmarks; not thread-safe with running kernels.
bool setWideGemmKernel(bool enabled);

/// Whether GEMMs run the AVX-512 micro-kernel.
bool wideGemmKernelActive();

/// Floats packWeights writes for an [m x k] matrix.
int64_t packedWeightsSize(int64_t m, int64_t k);

/// Packs row-major A [m x k] (row stride lda) into panels of kGemmRows rows: panel r holds, for
/// each k, rows r kGemmRows .. + kGemmRows - 1 (zero past m).
void packWeights(const float* a, int64_t m, int64_t k, int64_t lda, float* packed);

/// Floats packGroupedWeights writes for `filters` rows of `depth` weights in `group` groups.
int64_t packedGroupedWeightsSize(int64_t filters, int64_t depth, int64_t group);

/// Packs Conv weights [filters, depth] (depth = C / group x kernel size) group by group, each
/// group's filters / group rows as packWeights does; groups follow each other.
void packGroupedWeights(const float* w, int64_t filters, int64_t depth, int64_t group,
                        float* packed);

/// Writes columns [j0, j0 + count) of all k rows of B as strips: strip s holds, for each row,
/// columns j0 + s kGemmCols .. + kGemmCols - 1 (zero past the end). Threads call it at once,
/// for disjoint columns.
using PackColumns = std::function<void(int64_t j0, int64_t count, float* strips)>;

/// Row-major B [k x n] (row stride ldb) as strips of kGemmCols columns (zero past n): the
/// packed B of a MatMul's weight.
void packRowMajorStrips(const float* b, int64_t ldb, int64_t k, int64_t n, float* strips);

/// The strips of B^T for a row-major B [n x k] (row stride ldb): column j of B^T is row j of B
/// (a Gemm's weight with transB, and the weight gradients' x^T).
void packTransposedRowMajorStrips(const float* b, int64_t ldb, int64_t k, int64_t n, float* strips);

struct GemmOutput {
    float* c = nullptr; ///< row-major [m x n], row stride ldc
    int64_t ldc = 0;
    const float* residual = nullptr; ///< same layout as c (the epilogue's), or nullptr
    int64_t channel0 = 0;            ///< channel of row 0 (bias index)
    bool accumulate = false;         ///< C += A B, the epilogue applied to the sum
};

/// C = epilogue(A B) for packed A [m x k] and B supplied by packColumns; threads split N, or
/// the rows of A when N is small.
void packedGemm(int64_t m, int64_t n, int64_t k, const float* packedA,
                const PackColumns& packColumns, const GemmOutput& out,
                const ConvEpilogue& epilogue);

/// Floats of B strips for a [k x n] B (packRowMajorStrips of all n columns).
int64_t packedStripsSize(int64_t k, int64_t n);

/// C = A B (C += A B with out.accumulate) for row-major A [m x k] (row stride lda), packed into
/// panels here, and a B packed ahead of time into strips (packRowMajorStrips or
/// packTransposedRowMajorStrips of all n columns), such as a MatMul's or Gemm's weight: nothing of
/// B is packed per call. A product under about two million multiply-adds stays on the caller's
/// thread.
void gemmPrepackedB(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                    const float* strips, const GemmOutput& out);

/// C [m x n] = A B^T (C += A B^T with `accumulate`) for row-major A [m x k] (row stride lda) and
/// B [n x k] (row stride ldb), both packed here (B transposed into strips): the weight gradients'
/// dy x^T. Threads as in packedGemm.
void gemmABt(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
             int64_t ldb, float* c, int64_t ldc, bool accumulate);

/// C = epilogue(A B) for packed A [m x k] and a row-major B [k x n] with row stride ldb, read in
/// place (columns up to n rounded up to kGemmCols must be readable), on the calling thread. For
/// a B that stays in cache, such as a block of Winograd-transformed tiles; ldb should not be a
/// multiple of 128 floats, whose rows would share cache sets.
void gemmRowMajorB(int64_t m, int64_t n, int64_t k, const float* packedA, const float* b,
                   int64_t ldb, const GemmOutput& out, const ConvEpilogue& epilogue);

/// Whether packedGemmRowMajorB suits an m-row product: at least one whole strip of columns, and
/// rows that do not share cache sets (ldb not a multiple of 128 floats) or an A of at most
/// kInPlaceSharedSetsMaxRows rows, which reads each strip of B too few times for the conflicts to
/// cost what copying B costs.
bool packedGemmReadsBInPlace(int64_t m, int64_t n, int64_t ldb);

/// Rows of A up to which packedGemmReadsBInPlace reads B in place even when its rows share cache
/// sets. Measured on 112 x 112, 160 x 160 and 80 x 80 planes (ldb 12544, 25600, 6400) against
/// packing, 2 threads, 8 images: 16 to 48 rows 10-40 % faster in place (k 16 to 512), 64 rows
/// even, 128 and 256 rows (k 128 and more) 10-35 % slower.
inline constexpr int64_t kInPlaceSharedSetsMaxRows = 64;

/// packedGemm of a row-major B [k x n] (row stride ldb) read in place, strip by strip, instead of
/// packed (a pointwise convolution's input is its im2col matrix): the threads split the column
/// blocks, or for few columns the rows of A; the last partial strip, which would read past B, is
/// packed.
void packedGemmRowMajorB(int64_t m, int64_t n, int64_t k, const float* packedA, const float* b,
                         int64_t ldb, const GemmOutput& out, const ConvEpilogue& epilogue);

} // namespace qs::runtime
