// The tile grid of Winograd F(T x T, 3x3), shared by the forward/dx kernel (winograd.cpp) and the
// weight gradient (winograd_weight_grad.cpp): each tile covers T x T output pixels.
#pragma once

#include "core/runtime/im2col.h"

#include <cstdint>

namespace qs::runtime {

/// Tiles of one image and their numbering: row-major over (ty, tx), images one after another.
struct WinogradTileGrid {
    int64_t rows;
    int64_t cols;
    int64_t perImage;

    WinogradTileGrid(const Conv2d& p, int64_t tile)
        : rows((p.oh + tile - 1) / tile)
        , cols((p.ow + tile - 1) / tile)
        , perImage(rows * cols) {}
};

} // namespace qs::runtime
