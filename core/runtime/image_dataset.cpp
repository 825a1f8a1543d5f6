#include "core/runtime/image_dataset.h"

#include "core/runtime/parallel.h"
#include "core/support/atomic_file.h"

#include <algorithm>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <memory>
#include <optional>
#include <stb/stb_image.h>
#include <string>
#include <vector>

// jpeglib.h needs size_t and FILE declared first.
#include <jpeglib.h>
// After jpeglib.h: the warning codes.
#include <jerror.h>

namespace qs::runtime {

namespace fs = std::filesystem;

namespace {

constexpr int64_t kMaxImagePixels = int64_t{1} << 26;
/// Four bytes per pixel of the largest image: more than any PNG, JPEG or BMP of it takes.
constexpr uintmax_t kMaxImageFileBytes = uintmax_t{4} << 26;

bool isImageFile(const fs::path& path) {
    std::string ext = path.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    return ext == ".png" || ext == ".jpg" || ext == ".jpeg" || ext == ".bmp";
}

/// Decoded 8-bit pixels, `channels` interleaved per pixel, row after row.
struct Pixels {
    const unsigned char* data = nullptr;
    int width = 0;
    int height = 0;
};

Error tooLarge(int64_t width, int64_t height) {
    return Error(Errc::InvalidArgument, "is " + std::to_string(width) + "x" +
                                            std::to_string(height) + " pixels, more than " +
                                            std::to_string(kMaxImagePixels) +
                                            " (a calibration image is small)");
}

/// libjpeg reports errors through a callback that must not return; it jumps back to
/// decodeJpegInto's setjmp with the message kept here.
struct JpegErrors {
    jpeg_error_mgr manager{};
    std::jmp_buf jump{};
    std::array<char, JMSG_LENGTH_MAX> message{};
};

[[noreturn]] void jpegErrorExit(j_common_ptr info) {
    auto* errors = reinterpret_cast<JpegErrors*>(info->err);
    (*info->err->format_message)(info, errors->message.data());
    std::longjmp(errors->jump, 1);
}

/// Warnings about missing data are errors: libjpeg would fill the rest of the image with grey.
/// Others (extraneous bytes between markers, which some cameras write) pass silently, as in PIL.
void jpegEmitMessage(j_common_ptr info, int level) {
    const int code = info->err->msg_code;
    if (level < 0 && (code == JWRN_JPEG_EOF || code == JWRN_HIT_MARKER)) {
        jpegErrorExit(info);
    }
}

enum class JpegOutcome {
    decoded,
    tooLarge,  ///< pixels holds the size the header declares
    leftToStb, ///< CMYK or YCCK, which libjpeg-turbo cannot turn into RGB
    failed,    ///< errors.message says why
};

/// Decodes JPEG `bytes` into `buffer` as `channels` (1: luma, 3: RGB) per pixel. Nothing with a
/// destructor lives in this frame: libjpeg's errors leave it through longjmp.
JpegOutcome decodeJpegInto(const std::string& bytes, int channels,
                           std::vector<unsigned char>& buffer, Pixels& pixels, JpegErrors& errors) {
    jpeg_decompress_struct info{};
    info.err = jpeg_std_error(&errors.manager);
    errors.manager.error_exit = jpegErrorExit;
    errors.manager.emit_message = jpegEmitMessage;
    if (setjmp(errors.jump) != 0) { // NOLINT(cert-err52-cpp): libjpeg's error protocol
        jpeg_destroy_decompress(&info);
        return JpegOutcome::failed;
    }
    jpeg_create_decompress(&info);
    jpeg_mem_src(&info, reinterpret_cast<const unsigned char*>(bytes.data()),
                 static_cast<unsigned long>(bytes.size()));
    jpeg_read_header(&info, TRUE);
    pixels = {nullptr, static_cast<int>(info.image_width), static_cast<int>(info.image_height)};
    JpegOutcome outcome = JpegOutcome::decoded;
    if (static_cast<int64_t>(info.image_width) * info.image_height > kMaxImagePixels) {
        outcome = JpegOutcome::tooLarge;
    } else if (info.jpeg_color_space == JCS_CMYK || info.jpeg_color_space == JCS_YCCK) {
        outcome = JpegOutcome::leftToStb;
    } else {
        info.out_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
        jpeg_start_decompress(&info);
        const size_t rowBytes =
            static_cast<size_t>(info.output_width) * static_cast<size_t>(channels);
        buffer.resize(rowBytes * info.output_height);
        while (info.output_scanline < info.output_height) {
            JSAMPROW row = buffer.data() + static_cast<size_t>(info.output_scanline) * rowBytes;
            jpeg_read_scanlines(&info, &row, 1);
        }
        jpeg_finish_decompress(&info);
        pixels = {buffer.data(), static_cast<int>(info.output_width),
                  static_cast<int>(info.output_height)};
    }
    jpeg_destroy_decompress(&info);
    return outcome;
}

bool isJpeg(const std::string& bytes) {
    return bytes.size() >= 3 && static_cast<unsigned char>(bytes[0]) == 0xFF &&
           static_cast<unsigned char>(bytes[1]) == 0xD8 &&
           static_cast<unsigned char>(bytes[2]) == 0xFF;
}

/// A decoding thread's pixel buffer, kept across images: a fresh 1 MB buffer per image cost a
/// millisecond of page faults, half of what decoding a 640 x 480 JPEG costs.
std::vector<unsigned char>& pixelBuffer() {
    thread_local std::vector<unsigned char> buffer;
    return buffer;
}

/// A pixel buffer larger than this (a 2560 x 2048 RGB photo) is given back after its image,
/// decoded or not, rather than held by the thread for the rest of the process.
constexpr size_t kKeptPixelBufferBytes = size_t{16} << 20;

void releaseLargePixelBuffer() {
    if (pixelBuffer().capacity() > kKeptPixelBufferBytes) {
        std::vector<unsigned char>().swap(pixelBuffer());
    }
}

using StbPixels = std::unique_ptr<unsigned char, void (*)(void*)>;

/// PNG, BMP and the JPEGs libjpeg-turbo leaves to it, through stb_image; sized from the header
/// before decoding, since a small file may claim a gigapixel image.
Result<StbPixels> decodeWithStb(const std::string& bytes, int channels, Pixels& pixels) {
    const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
    const int size = static_cast<int>(std::min<size_t>(bytes.size(), INT32_MAX));
    int found = 0;
    if (stbi_info_from_memory(data, size, &pixels.width, &pixels.height, &found) == 0) {
        return Error(Errc::InvalidArgument, std::string("cannot decode: ") + stbi_failure_reason());
    }
    if (static_cast<int64_t>(pixels.width) * pixels.height > kMaxImagePixels) {
        return tooLarge(pixels.width, pixels.height);
    }
    StbPixels decoded(
        stbi_load_from_memory(data, size, &pixels.width, &pixels.height, &found, channels),
        stbi_image_free);
    if (decoded == nullptr) {
        return Error(Errc::InvalidArgument, std::string("cannot decode: ") + stbi_failure_reason());
    }
    pixels.data = decoded.get();
    return decoded;
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

/// Resizes `image` bilinearly into dst [channels, height, width], normalised.
void resizeInto(const Pixels& image, int64_t channels, int64_t height, int64_t width,
                const ImageNormalization& normalization, float* dst) {
    // Each output row and column's taps computed once, not per pixel and channel.
    const std::vector<BilinearTap> rows = bilinearTaps(image.height, height);
    const std::vector<BilinearTap> cols = bilinearTaps(image.width, width);
    const ptrdiff_t stride = static_cast<ptrdiff_t>(image.width) * channels;
    for (int64_t c = 0; c < channels; ++c) {
        const float mean = normalization.mean[static_cast<size_t>(c)];
        const float stdev = normalization.std[static_cast<size_t>(c)];
        for (int64_t y = 0; y < height; ++y) {
            const BilinearTap& ty = rows[static_cast<size_t>(y)];
            const unsigned char* top = image.data + ty.first * stride + c;
            const unsigned char* bottom = image.data + ty.second * stride + c;
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
}

/// Decodes `file` and resizes it into dst [channels, height, width], normalised.
Result<void> loadImage(const fs::path& file, int64_t channels, int64_t height, int64_t width,
                       const ImageNormalization& normalization, float* dst) {
    const auto where = "image '" + file.string() + "'";
    // Read whole before the header says its size: a file no image of kMaxImagePixels needs.
    std::error_code ec;
    if (const uintmax_t bytes = fs::file_size(file, ec); !ec && bytes > kMaxImageFileBytes) {
        return Error(Errc::InvalidArgument, "is " + std::to_string(bytes) + " bytes, more than " +
                                                std::to_string(kMaxImageFileBytes) +
                                                " (a calibration image is small)")
            .context(where);
    }
    QS_ASSIGN_OR_RETURN(const std::string bytes, readFile(file));
    const int wanted = static_cast<int>(channels);
    Pixels pixels;
    StbPixels stbPixels(nullptr, stbi_image_free);
    JpegOutcome outcome = JpegOutcome::leftToStb;
    if (isJpeg(bytes)) {
        JpegErrors errors;
        outcome = decodeJpegInto(bytes, wanted, pixelBuffer(), pixels, errors);
        if (outcome == JpegOutcome::failed) {
            return Error(Errc::InvalidArgument,
                         std::string("cannot decode: ") + errors.message.data())
                .context(where);
        }
        if (outcome == JpegOutcome::tooLarge) {
            return tooLarge(pixels.width, pixels.height).context(where);
        }
    }
    if (outcome == JpegOutcome::leftToStb) {
        QS_ASSIGN_OR_RETURN(stbPixels, decodeWithStb(bytes, wanted, pixels).context(where));
    }
    resizeInto(pixels, channels, height, width, normalization, dst);
    return success();
}

} // namespace

Result<ImageFiles> ImageFiles::list(const fs::path& folder, int64_t channels, int64_t height,
                                    int64_t width, const ImageNormalization& normalization) {
    if (channels != 1 && channels != 3) {
        return Error(Errc::Unsupported, "images need a model input with 1 or 3 channels, not " +
                                            std::to_string(channels));
    }
    std::error_code ec;
    if (!fs::is_directory(folder, ec)) {
        return Error(Errc::Io, "'" + folder.string() + "' is not a folder");
    }
    ImageFiles files;
    for (const auto& entry : fs::directory_iterator(folder, ec)) {
        if (entry.is_regular_file() && isImageFile(entry.path())) {
            files.m_files.push_back(entry.path());
        }
    }
    if (ec) {
        return Error(Errc::Io, "'" + folder.string() + "' cannot be read: " + ec.message());
    }
    std::sort(files.m_files.begin(), files.m_files.end());
    if (files.m_files.empty()) {
        return Error(Errc::InvalidArgument,
                     "no PNG, JPEG or BMP images in '" + folder.string() + "'");
    }
    files.m_channels = channels;
    files.m_height = height;
    files.m_width = width;
    files.m_normalization = normalization;
    return files;
}

Shape ImageFiles::shape() const {
    return {size(), m_channels, m_height, m_width};
}

void ImageFiles::append(const ImageFiles& more) {
    m_files.insert(m_files.end(), more.m_files.begin(), more.m_files.end());
}

void ImageFiles::keepFirst(int64_t count) {
    if (count < size()) {
        m_files.resize(static_cast<size_t>(std::max<int64_t>(0, count)));
    }
}

Result<Tensor> ImageFiles::read(int64_t begin, int64_t end) const {
    QS_CHECK(0 <= begin && begin <= end && end <= size(), "image rows out of range");
    Tensor out =
        Tensor::allocate(graph::DataType::Float, {end - begin, m_channels, m_height, m_width});
    float* dst = out.mutableData<float>();
    const int64_t imageSize = m_channels * m_height * m_width;
    // Decoded and resized on every thread, image by image; the first failure in file order is
    // reported, whatever thread met it.
    std::vector<std::optional<Error>> failures(static_cast<size_t>(end - begin));
    parallelFor(end - begin, 1, [&](int64_t first, int64_t last) {
        for (int64_t n = first; n < last; ++n) {
            if (Result<void> done =
                    loadImage(m_files[static_cast<size_t>(begin + n)], m_channels, m_height,
                              m_width, m_normalization, dst + n * imageSize);
                !done.ok()) {
                failures[static_cast<size_t>(n)] = done.error();
            }
            releaseLargePixelBuffer();
        }
    });
    for (const std::optional<Error>& failure : failures) {
        if (failure) {
            return *failure;
        }
    }
    return out;
}

Result<Tensor> loadImageFolder(const fs::path& folder, int64_t channels, int64_t height,
                               int64_t width, const ImageNormalization& normalization) {
    QS_ASSIGN_OR_RETURN(const ImageFiles files,
                        ImageFiles::list(folder, channels, height, width, normalization));
    return files.read(0, files.size());
}

} // namespace qs::runtime
