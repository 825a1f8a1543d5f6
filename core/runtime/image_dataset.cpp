#include "core/runtime/image_dataset.h"

#include <algorithm>
#include <cmath>
#include <memory>
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

/// Bilinear sample of an interleaved 8-bit image at (y, x) in source pixels.
float sample(const unsigned char* pixels, int w, int h, int channels, int c, double y, double x) {
    y = std::clamp(y, 0.0, static_cast<double>(h - 1));
    x = std::clamp(x, 0.0, static_cast<double>(w - 1));
    const int y0 = static_cast<int>(y);
    const int x0 = static_cast<int>(x);
    const int y1 = std::min(y0 + 1, h - 1);
    const int x1 = std::min(x0 + 1, w - 1);
    const double ty = y - y0;
    const double tx = x - x0;
    auto at = [&](int yy, int xx) {
        return static_cast<double>(pixels[(yy * w + xx) * channels + c]);
    };
    const double top = at(y0, x0) * (1 - tx) + at(y0, x1) * tx;
    const double bottom = at(y1, x0) * (1 - tx) + at(y1, x1) * tx;
    return static_cast<float>(top * (1 - ty) + bottom * ty);
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
    for (size_t n = 0; n < files.size(); ++n) {
        int w = 0;
        int h = 0;
        int found = 0;
        // Sized from the header before decoding: a small file may claim a gigapixel image.
        if (stbi_info(files[n].c_str(), &w, &h, &found) == 0) {
            return Error(Errc::InvalidArgument,
                         std::string("cannot decode: ") + stbi_failure_reason())
                .context("image '" + files[n].string() + "'");
        }
        if (static_cast<int64_t>(w) * h > kMaxImagePixels) {
            return Error(Errc::InvalidArgument, "is " + std::to_string(w) + "x" +
                                                    std::to_string(h) + " pixels, more than " +
                                                    std::to_string(kMaxImagePixels) +
                                                    " (a calibration image is small)")
                .context("image '" + files[n].string() + "'");
        }
        std::unique_ptr<unsigned char, void (*)(void*)> pixels(
            stbi_load(files[n].c_str(), &w, &h, &found, static_cast<int>(channels)),
            stbi_image_free);
        if (pixels == nullptr) {
            return Error(Errc::InvalidArgument,
                         std::string("cannot decode: ") + stbi_failure_reason())
                .context("image '" + files[n].string() + "'");
        }
        const double sy = static_cast<double>(h) / static_cast<double>(height);
        const double sx = static_cast<double>(w) / static_cast<double>(width);
        for (int64_t c = 0; c < channels; ++c) {
            const float mean = normalization.mean[static_cast<size_t>(c)];
            const float stdev = normalization.std[static_cast<size_t>(c)];
            for (int64_t y = 0; y < height; ++y) {
                for (int64_t x = 0; x < width; ++x) {
                    const float v =
                        sample(pixels.get(), w, h, static_cast<int>(channels), static_cast<int>(c),
                               (static_cast<double>(y) + 0.5) * sy - 0.5,
                               (static_cast<double>(x) + 0.5) * sx - 0.5);
                    dst[((static_cast<int64_t>(n) * channels + c) * height + y) * width + x] =
                        (v / 255.0F - mean) / stdev;
                }
            }
        }
    }
    return out;
}

} // namespace qs::runtime
