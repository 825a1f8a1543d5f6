#include "core/runtime/image_dataset.h"

#include "core/runtime/parallel.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <stb/stb_image.h>
#include <vector>

namespace qs::runtime {

namespace fs = std::filesystem;

namespace {

constexpr int64_t kMaxImagePixels = int64_t{1} << 26;

bool isImageFile(const fs::path& path) {
    std::string ext = path.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    return ext == ".png" || ext == ".jpg" || ext == ".jpeg" || ext == ".bmp";
}

/// Where output row or column i of `out` reads an axis of `in` source pixels: the two pixels
/// around (i + 0.5) in / out - 0.5, clamped to the image, and the second one's weight.
struct BilinearTap {
    int first = 0;
    int second = 0;
    double weight = 0.0;
};

std::vector<BilinearTap> bilinearTaps(int in, int64_t out) {
    const double scale = static_cast<double>(in) / static_cast<double>(out);
    std::vector<BilinearTap> taps(static_cast<size_t>(out));
    for (int64_t i = 0; i < out; ++i) {
        const double at = std::clamp((static_cast<double>(i) + 0.5) * scale - 0.5, 0.0,
                                     static_cast<double>(in - 1));
        const int first = static_cast<int>(at);
        taps[static_cast<size_t>(i)] = {first, std::min(first + 1, in - 1), at - first};
    }
    return taps;
}

/// Decodes `file` and resizes it bilinearly into dst [channels, height, width], normalised.
Result<void> loadImage(const fs::path& file, int64_t channels, int64_t height, int64_t width,
                       const ImageNormalization& normalization, float* dst) {
    int w = 0;
    int h = 0;
    int found = 0;
    // Sized from the header before decoding: a small file may claim a gigapixel image.
    if (stbi_info(file.c_str(), &w, &h, &found) == 0) {
        return Error(Errc::InvalidArgument, std::string("cannot decode: ") + stbi_failure_reason())
            .context("image '" + file.string() + "'");
    }
    if (static_cast<int64_t>(w) * h > kMaxImagePixels) {
        return Error(Errc::InvalidArgument,
                     "is " + std::to_string(w) + "x" + std::to_string(h) + " pixels, more than " +
                         std::to_string(kMaxImagePixels) + " (a calibration image is small)")
            .context("image '" + file.string() + "'");
    }
    std::unique_ptr<unsigned char, void (*)(void*)> pixels(
        stbi_load(file.c_str(), &w, &h, &found, static_cast<int>(channels)), stbi_image_free);
    if (pixels == nullptr) {
        return Error(Errc::InvalidArgument, std::string("cannot decode: ") + stbi_failure_reason())
            .context("image '" + file.string() + "'");
    }
    // Bilinear: each output row and column's taps computed once, not per pixel and channel.
    const std::vector<BilinearTap> rows = bilinearTaps(h, height);
    const std::vector<BilinearTap> cols = bilinearTaps(w, width);
    const unsigned char* image = pixels.get();
    for (int64_t c = 0; c < channels; ++c) {
        const float mean = normalization.mean[static_cast<size_t>(c)];
        const float stdev = normalization.std[static_cast<size_t>(c)];
        for (int64_t y = 0; y < height; ++y) {
            const BilinearTap& ty = rows[static_cast<size_t>(y)];
            const unsigned char* top = image + static_cast<ptrdiff_t>(ty.first) * w * channels + c;
            const unsigned char* bottom =
                image + static_cast<ptrdiff_t>(ty.second) * w * channels + c;
            float* out = dst + (c * height + y) * width;
            for (int64_t x = 0; x < width; ++x) {
                const BilinearTap& tx = cols[static_cast<size_t>(x)];
                const ptrdiff_t x0 = static_cast<ptrdiff_t>(tx.first) * channels;
                const ptrdiff_t x1 = static_cast<ptrdiff_t>(tx.second) * channels;
                const double upper = top[x0] * (1 - tx.weight) + top[x1] * tx.weight;
                const double lower = bottom[x0] * (1 - tx.weight) + bottom[x1] * tx.weight;
                const auto v = static_cast<float>(upper * (1 - ty.weight) + lower * ty.weight);
                out[x] = (v / 255.0F - mean) / stdev;
            }
        }
    }
    return success();
}

} // namespace

Result<Tensor> loadImageFolder(const fs::path& folder, int64_t channels, int64_t height,
                               int64_t width, const ImageNormalization& normalization) {
    if (channels != 1 && channels != 3) {
        return Error(Errc::Unsupported, "images need a model input with 1 or 3 channels, not " +
                                            std::to_string(channels));
    }
    std::error_code ec;
    if (!fs::is_directory(folder, ec)) {
        return Error(Errc::Io, "'" + folder.string() + "' is not a folder");
    }
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(folder, ec)) {
        if (entry.is_regular_file() && isImageFile(entry.path())) {
            files.push_back(entry.path());
        }
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) {
        return Error(Errc::InvalidArgument,
                     "no PNG, JPEG or BMP images in '" + folder.string() + "'");
    }
    Tensor out = Tensor::allocate(graph::DataType::Float,
                                  {static_cast<int64_t>(files.size()), channels, height, width});
    float* dst = out.mutableData<float>();
    // Decoded and resized on every thread, image by image; the first failure in file order is
    // reported, whatever thread met it.
    std::vector<std::optional<Error>> failures(files.size());
    parallelFor(static_cast<int64_t>(files.size()), 1, [&](int64_t first, int64_t last) {
        for (int64_t n = first; n < last; ++n) {
            if (Result<void> done =
                    loadImage(files[static_cast<size_t>(n)], channels, height, width, normalization,
                              dst + n * channels * height * width);
                !done.ok()) {
                failures[static_cast<size_t>(n)] = done.error();
            }
        }
    });
    for (const std::optional<Error>& failure : failures) {
        if (failure) {
            return *failure;
        }
    }
    return out;
}

} // namespace qs::runtime
