// Folders of images as model input: every PNG/JPEG/BMP in a folder (sorted by name) is decoded
// (JPEG with libjpeg-turbo, the decoder PIL and torchvision use; PNG and BMP with stb_image),
// resized bilinearly (half-pixel centres) to the model's H x W, scaled to [0, 1], normalised per
// channel as (v - mean) / std, and stacked as NCHW float32. ImageFiles lists and checks a folder
// up front and decodes any range of its images when asked (`run` reads them batch by batch).
#pragma once

#include "core/runtime/tensor.h"
#include "core/support/result.h"

#include <array>
#include <filesystem>
#include <vector>

namespace qs::runtime {

struct ImageNormalization {
    std::array<float, 3> mean = {0.485F, 0.456F, 0.406F}; ///< ImageNet statistics by default
    std::array<float, 3> std = {0.229F, 0.224F, 0.225F};
};

/// The images of one or more folders, in order, as samples of [channels, height, width]: listed
/// (and the geometry checked) when made, decoded by read().
class ImageFiles {
public:
    /// The PNG, JPEG and BMP files of `folder`, sorted by name. Refuses channels other than 1 or
    /// 3, a path that is not a folder, and a folder without images.
    static Result<ImageFiles> list(const std::filesystem::path& folder, int64_t channels,
                                   int64_t height, int64_t width,
                                   const ImageNormalization& normalization = {});

    int64_t size() const { return static_cast<int64_t>(m_files.size()); }

    /// [size(), channels, height, width].
    Shape shape() const;

    /// Appends the files of `more` (made with the same geometry).
    void append(const ImageFiles& more);

    /// Keeps the first `count` files.
    void keepFirst(int64_t count);

    /// Images [begin, end) as [end - begin, channels, height, width], decoded on every thread;
    /// the first failure in file order is reported, with the file's name.
    Result<Tensor> read(int64_t begin, int64_t end) const;

private:
    std::vector<std::filesystem::path> m_files;
    int64_t m_channels = 3;
    int64_t m_height = 0;
    int64_t m_width = 0;
    ImageNormalization m_normalization;
};

/// Loads all images of `folder` as [N, channels, height, width] (channels 1 or 3).
Result<Tensor> loadImageFolder(const std::filesystem::path& folder, int64_t channels,
                               int64_t height, int64_t width,
                               const ImageNormalization& normalization = {});

} // namespace qs::runtime
