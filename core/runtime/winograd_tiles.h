// The tile grid of Winograd F(2x2, 3x3), shared by the forward/dx kernel (winograd.cpp) and the
// weight gradient (winograd_weight_grad.cpp): each tile covers 2x2 output pixels.
#pragma once

#include "core/runtime/im2col.h"

#include <cstdint>

namespace qs::runtime {

/// Tiles of one image and their numbering: row-major over (ty, tx), images one after another.
struct WinogradTileGrid {
    int64_t rows;
    int64_t cols;
    int64_t perImage;

    explicit WinogradTileGrid(const Conv2d& p)
        : rows((p.oh + 1) / 2)
        , cols((p.ow + 1) / 2)
        , perImage(rows * cols) {}
};

} // namespace qs::runtime
