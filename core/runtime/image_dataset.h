// Folders of images as model input: every PNG/JPEG/BMP in a folder (sorted by name) is decoded
// with stb_image, resized bilinearly (half-pixel centres) to the model's H x W, scaled to [0, 1],
// normalised per channel as (v - mean) / std, and stacked as NCHW float32.
#pragma once

#include "core/runtime/tensor.h"
#include "core/support/result.h"

#include <array>
#include <filesystem>

namespace qs::runtime {

struct ImageNormalization {
    std::array<float, 3> mean = {0.485F, 0.456F, 0.406F}; ///< ImageNet statistics by default
    std::array<float, 3> std = {0.229F, 0.224F, 0.225F};
};

/// Loads all images of `folder` as [N, channels, height, width] (channels 1 or 3).
Result<Tensor> loadImageFolder(const std::filesystem::path& folder, int64_t channels,
                               int64_t height, int64_t width,
                               const ImageNormalization& normalization = {});

} // namespace qs::runtime
