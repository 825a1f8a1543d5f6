#include "core/runtime/batching.h"
#include "core/runtime/image_dataset.h"
#include "core/runtime/npy.h"
#include "core/runtime/op_util.h"
#include "core/runtime/parallel.h"
#include "core/runtime/probe_runner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>
// jpeglib.h needs FILE and size_t declared first.
#include <cstdio>
#include <jpeglib.h>
#include <memory>
#include <stb/stb_image.h>
#include <stb/stb_image_write.h>

namespace qs::runtime {
namespace {

using graph::DataType;
using graph::Graph;
using graph::ValueId;

ValueId addWeight(Graph& g, const std::string& name, Shape shape, std::mt19937& rng) {
    const Tensor t = randomTensor(rng, shape, -0.5F, 0.5F);
    return g.addInitializer(name, t.toTensorData());
}

/// A residual CNN with a dynamic batch: conv-bn-relu, conv, add, global pool, flatten, gemm.
Graph makeResidualCnn() {
    std::mt19937 rng(7);
    Graph g;
    graph::TensorShape inShape;
    inShape.rankKnown = true;
    inShape.dims = {graph::Dim::symbolic("batch"), graph::Dim::known(3), graph::Dim::known(8),
                    graph::Dim::known(8)};
    const ValueId x = g.addValue("x", DataType::Float, inShape);
    g.addInput(x);
    const ValueId w1 = addWeight(g, "w1", {4, 3, 3, 3}, rng);
    const ValueId b1 = addWeight(g, "b1", {4}, rng);
    const ValueId scale = addWeight(g, "scale", {4}, rng);
    const ValueId bias = addWeight(g, "bias", {4}, rng);
    const ValueId mean = addWeight(g, "mean", {4}, rng);
    const Tensor var = randomTensor(rng, {4}, 0.5F, 1.5F);
    const ValueId varId = g.addInitializer("var", var.toTensorData());
    const ValueId w2 = addWeight(g, "w2", {4, 4, 3, 3}, rng);
    const ValueId wf = addWeight(g, "wf", {5, 4}, rng);
    const ValueId bf = addWeight(g, "bf", {5}, rng);
    auto v = [&](const char* name) { return g.addValue(name, DataType::Float); };
    const ValueId c1 = v("c1"), bn = v("bn"), r1 = v("r1"), c2 = v("c2"), sum = v("sum"),
                  pooled = v("pooled"), flat = v("flat"), y = v("y");
    const std::vector<graph::Attribute> pads{intsAttribute("pads", {1, 1, 1, 1})};
    g.addNode("conv1", "Conv", {x, w1, b1}, {c1}, pads);
    g.addNode("bn", "BatchNormalization", {c1, scale, bias, mean, varId}, {bn});
    g.addNode("relu", "Relu", {bn}, {r1});
    g.addNode("conv2", "Conv", {r1, w2}, {c2}, pads);
    g.addNode("add", "Add", {c2, r1}, {sum});
    g.addNode("pool", "GlobalAveragePool", {sum}, {pooled});
    g.addNode("flatten", "Flatten", {pooled}, {flat});
    g.addNode("fc", "Gemm", {flat, wf, bf}, {y}, {intAttribute("transB", 1)});
    g.addOutput(y);
    return g;
}

TEST(Batching, BatchedRunsEqualPerSampleRuns) {
    auto exec = Executor::create(makeResidualCnn());
    ASSERT_TRUE(exec.ok()) << exec.error().toString();
    const Tensor inputs = randomNormal({7, 3, 8, 8}, 3);
    NullProgress quiet;
    auto batched = runBatched(*exec, Dataset{.inputs = {inputs}, .batchSize = 3}, quiet);
    ASSERT_TRUE(batched.ok()) << batched.error().toString();
    ASSERT_EQ((*batched)[0].shape(), (Shape{7, 5}));
    for (int64_t n = 0; n < 7; ++n) {
        const Tensor one = sliceBatch(inputs, n, n + 1);
        auto single = exec->run(std::span(&one, 1));
        ASSERT_TRUE(single.ok());
        for (int64_t k = 0; k < 5; ++k) {
            const float expected = (*single)[0].data<float>()[k];
            const float actual = (*batched)[0].data<float>()[n * 5 + k];
            EXPECT_LE(std::abs(actual - expected), 1e-5F * std::max(1.0F, std::abs(expected)));
        }
    }
}

TEST(Batching, ShapesOnlyRunsGiveTheStackedShapeAndNoValues) {
    auto exec = Executor::create(makeResidualCnn());
    ASSERT_TRUE(exec.ok()) << exec.error().toString();
    NullProgress quiet;
    auto shapes =
        runBatched(*exec, Dataset{.inputs = {randomNormal({7, 3, 8, 8}, 3)}, .batchSize = 3}, quiet,
                   nullptr, true);
    ASSERT_TRUE(shapes.ok()) << shapes.error().toString();
    EXPECT_EQ((*shapes)[0].shape(), (Shape{7, 5}));
    EXPECT_EQ((*shapes)[0].dtype(), DataType::Float);
    EXPECT_EQ((*shapes)[0].rawData(), nullptr);
}

// Batches go into one tensor sized by the first batch's rows per sample; a batch that breaks
// that ratio or the shape falls back to concatBatches, with its result or its error.
TEST(Batching, BatchStackerEqualsConcatenatingTheBatches) {
    const Tensor a = randomNormal({6, 4}, 1);   // 3 samples, 2 rows each
    const Tensor b = randomNormal({6, 4}, 2);   // 3 samples
    const Tensor c = randomNormal({2, 4}, 3);   // 1 sample
    const Tensor odd = randomNormal({3, 4}, 4); // 1 sample, 3 rows: breaks the ratio
    const auto stacked = [](const std::vector<std::pair<Tensor, int64_t>>& parts, int64_t total) {
        BatchStacker stacker(total);
        for (const auto& [part, samples] : parts) {
            stacker.add(part.clone(), samples);
        }
        return stacker.take();
    };
    const auto equal = [](const Tensor& x, const Tensor& y) {
        return x.shape() == y.shape() && std::memcmp(x.rawData(), y.rawData(), x.byteSize()) == 0;
    };
    auto regular = stacked({{a, 3}, {b, 3}, {c, 1}}, 7);
    ASSERT_TRUE(regular.ok());
    EXPECT_TRUE(equal(*regular, *concatBatches({a, b, c})));
    auto irregular = stacked({{a, 3}, {odd, 1}, {c, 1}}, 5);
    ASSERT_TRUE(irregular.ok());
    EXPECT_TRUE(equal(*irregular, *concatBatches({a, odd, c})));
    auto wider = stacked({{a, 3}, {randomNormal({2, 5}, 5), 1}}, 4);
    ASSERT_FALSE(wider.ok());
    EXPECT_NE(wider.error().toString().find("differ beyond axis 0"), std::string::npos);
    auto scalar = stacked({{Tensor::fromVector<float>({}, {1.0F}), 1}}, 1);
    ASSERT_FALSE(scalar.ok());
    EXPECT_NE(scalar.error().toString().find("scalar"), std::string::npos);
}

TEST(Batching, Fp16StaysWithinHalfPrecision) {
    auto exact = Executor::create(makeResidualCnn());
    auto half = Executor::create(makeResidualCnn(), {.fp16 = true});
    ASSERT_TRUE(exact.ok() && half.ok());
    const Tensor x = randomNormal({2, 3, 8, 8}, 5);
    auto a = exact->run(std::span(&x, 1));
    auto b = half->run(std::span(&x, 1));
    ASSERT_TRUE(a.ok() && b.ok());
    for (int64_t i = 0; i < (*a)[0].numElements(); ++i) {
        EXPECT_NEAR((*b)[0].data<float>()[i], (*a)[0].data<float>()[i], 1e-2);
    }
}

// Seeded random-normal data: standard-normal moments, the same tensor on one or two threads,
// each element fixed by the seed and its index (a shorter tensor is a prefix of a longer one,
// whatever block the end falls in), other seeds other values.
TEST(Batching, RandomNormalIsStandardAndDependsOnSeedAndIndexOnly) {
    const int threadsBefore = numThreads();
    setNumThreads(1);
    const Tensor one = randomNormal({3, 100003}, 11);
    setNumThreads(2);
    const Tensor two = randomNormal({3, 100003}, 11);
    setNumThreads(threadsBefore);
    const Tensor prefix = randomNormal({1500}, 11);
    const Tensor other = randomNormal({1500}, 12);
    double sum = 0.0;
    double squares = 0.0;
    double fourth = 0.0;
    int64_t beyondThree = 0;
    for (int64_t i = 0; i < one.numElements(); ++i) {
        const double v = one.data<float>()[i];
        ASSERT_EQ(one.data<float>()[i], two.data<float>()[i]) << i;
        ASSERT_TRUE(std::isfinite(v)) << i;
        sum += v;
        squares += v * v;
        fourth += v * v * v * v;
        beyondThree += std::abs(v) > 3.0 ? 1 : 0;
    }
    const auto n = static_cast<double>(one.numElements());
    EXPECT_NEAR(sum / n, 0.0, 0.01);
    EXPECT_NEAR(squares / n, 1.0, 0.01);
    EXPECT_NEAR(fourth / n, 3.0, 0.05); // a normal's kurtosis, not a uniform's 1.8
    EXPECT_NEAR(static_cast<double>(beyondThree) / n, 0.0027, 0.0006);
    int64_t equal = 0;
    for (int64_t i = 0; i < prefix.numElements(); ++i) {
        ASSERT_EQ(prefix.data<float>()[i], one.data<float>()[i]) << i;
        equal += prefix.data<float>()[i] == other.data<float>()[i] ? 1 : 0;
    }
    EXPECT_LT(equal, 3);
}

TEST(Batching, RandomNormalFromAnElementIsThatPartOfTheWholeTensor) {
    const Tensor whole = randomNormal({3000}, 9);
    for (const auto& [first, count] : std::vector<std::pair<int64_t, int64_t>>{
             {0, 1024}, {1, 5}, {1000, 1100}, {1024, 1900}, {2047, 953}, {2999, 1}}) {
        const Tensor part = randomNormal({count}, 9, first);
        for (int64_t i = 0; i < count; ++i) {
            ASSERT_EQ(part.data<float>()[i], whole.data<float>()[first + i])
                << "element " << first + i;
        }
    }
}

TEST(Npy, RoundTripsAndRejectsFortranOrder) {
    const Tensor t = Tensor::fromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
    auto bytes = serializeNpy(t);
    ASSERT_TRUE(bytes.ok());
    auto back = parseNpy(*bytes);
    ASSERT_TRUE(back.ok()) << back.error().toString();
    EXPECT_EQ(back->shape(), t.shape());
    EXPECT_EQ(back->data<float>()[5], 6.0F);
    std::string fortran = *bytes;
    fortran.replace(fortran.find("False"), 5, "True ");
    auto rejected = parseNpy(fortran);
    ASSERT_FALSE(rejected.ok());
    EXPECT_NE(rejected.error().message().find("Fortran"), std::string::npos);
    auto badType = parseNpy(std::string(
        "\x93NUMPY\x01\x00\x20\x00{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", 42));
    EXPECT_FALSE(badType.ok());
}

// A file larger than readNpy's 8 MiB pieces, read on two threads, comes back element for
// element; a file cut short is refused.
TEST(Npy, LargeFilesReadInPiecesComeBackWhole) {
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("qs_npy_pieces_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const Tensor t = randomNormal({5, 1000003}, 2); // 20 MB: two whole pieces and a partial one
    ASSERT_TRUE(writeNpy(t, dir / "big.npy").ok());
    const int threadsBefore = numThreads();
    setNumThreads(2);
    auto back = readNpy(dir / "big.npy");
    setNumThreads(threadsBefore);
    ASSERT_TRUE(back.ok()) << back.error().toString();
    ASSERT_EQ(back->shape(), t.shape());
    EXPECT_EQ(std::memcmp(back->rawData(), t.rawData(), t.byteSize()), 0);
    std::filesystem::resize_file(dir / "big.npy", std::filesystem::file_size(dir / "big.npy") - 4);
    auto cut = readNpy(dir / "big.npy");
    ASSERT_FALSE(cut.ok());
    EXPECT_NE(cut.error().message().find("truncated file"), std::string::npos);
    std::filesystem::remove_all(dir);
}

/// A version-1.0 .npy file with `header` (unpadded) and `data`.
std::string npyWith(const std::string& header, const std::string& data) {
    std::string out("\x93NUMPY\x01\x00", 8);
    out += static_cast<char>(header.size() & 0xFF);
    out += static_cast<char>(header.size() >> 8);
    return out + header + data;
}

TEST(Npy, HeadersAreParsedStrictlyAndSizesCheckedBeforeAllocating) {
    const auto errorOf = [](const std::string& bytes) {
        auto parsed = parseNpy(bytes);
        return parsed.ok() ? std::string("accepted") : parsed.error().message();
    };
    const std::string four(16, '\0');
    EXPECT_EQ(errorOf(npyWith("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", four)),
              "accepted");
    // A shape no file can hold: refused from the header, nothing allocated.
    EXPECT_EQ(
        errorOf(npyWith(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 8), }", four)),
        ".npy data holds 16 bytes, the header's shape [4611686018427387904,8] needs more "
        "than 2^64");
    EXPECT_EQ(errorOf(npyWith("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", four)),
              ".npy data holds 16 bytes, the header's shape [2,3] needs 24 (truncated file?)");
    EXPECT_EQ(
        errorOf(npyWith(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", four)),
        "malformed .npy header: a dimension is too large");
    EXPECT_EQ(
        errorOf(npyWith("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -2), }", four)),
        "malformed .npy header: shape must be a tuple of non-negative integers");
    EXPECT_EQ(errorOf(npyWith("{'descr': '<f4', 'shape': (4,), }", four)),
              "malformed .npy header: no 'fortran_order'");
    EXPECT_EQ(
        errorOf(npyWith("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (4,), }",
                        four)),
        "malformed .npy header: key 'descr' given twice");
    EXPECT_EQ(errorOf(npyWith("{'descr': '<f4', 'fortran_order': 0, 'shape': (4,), }", four)),
              "malformed .npy header: fortran_order must be True or False");
    EXPECT_EQ(errorOf(std::string("\x93NUMPY\x01\x00\xff\x00{'descr'", 17)),
              "truncated .npy header");
}

/// A 2x2 RGB image as a 24-bit BMP (bottom-up rows, padded to 4 bytes).
void writeBmp(const std::filesystem::path& path) {
    const unsigned char pixels[2][2][3] = {{{255, 0, 0}, {0, 255, 0}},
                                           {{0, 0, 255}, {255, 255, 255}}};
    std::string bytes = "BM";
    auto put32 = [&](uint32_t v) {
        for (int i = 0; i < 4; ++i) {
            bytes += static_cast<char>((v >> (8 * i)) & 0xFF);
        }
    };
    auto put16 = [&](uint16_t v) {
        bytes += static_cast<char>(v & 0xFF);
        bytes += static_cast<char>(v >> 8);
    };
    put32(54 + 16);
    put32(0);
    put32(54);
    put32(40);
    put32(2);
    put32(2);
    put16(1);
    put16(24);
    put32(0);
    put32(16);
    put32(2835);
    put32(2835);
    put32(0);
    put32(0);
    for (int row = 1; row >= 0; --row) {
        for (int col = 0; col < 2; ++col) {
            // BMP stores BGR.
            bytes += static_cast<char>(pixels[row][col][2]);
            bytes += static_cast<char>(pixels[row][col][1]);
            bytes += static_cast<char>(pixels[row][col][0]);
        }
        bytes += std::string(2, '\0');
    }
    std::ofstream(path, std::ios::binary) << bytes;
}

TEST(ImageDataset, LoadsResizesAndNormalises) {
    const auto dir = std::filesystem::temp_directory_path() / "qs_image_dataset_test";
    std::filesystem::create_directories(dir);
    writeBmp(dir / "a.bmp");
    writeBmp(dir / "b.bmp");
    ImageNormalization identity;
    identity.mean = {0, 0, 0};
    identity.std = {1, 1, 1};
    auto images = loadImageFolder(dir, 3, 2, 2, identity);
    ASSERT_TRUE(images.ok()) << images.error().toString();
    EXPECT_EQ(images->shape(), (Shape{2, 3, 2, 2}));
    // Top-left pixel is red: channel 0 is 1, channels 1 and 2 are 0.
    EXPECT_NEAR(images->data<float>()[0], 1.0F, 1e-6F);
    EXPECT_NEAR(images->data<float>()[4], 0.0F, 1e-6F);
    auto resized = loadImageFolder(dir, 3, 4, 4, identity);
    ASSERT_TRUE(resized.ok());
    EXPECT_EQ(resized->shape(), (Shape{2, 3, 4, 4}));
    auto missing = loadImageFolder(dir / "nope", 3, 2, 2);
    EXPECT_FALSE(missing.ok());
    std::filesystem::remove_all(dir);
}

/// A width x height gradient, different in each of `channels` channels.
std::vector<unsigned char> gradient(int width, int height, int channels) {
    std::vector<unsigned char> pixels(static_cast<size_t>(width * height * channels));
    for (int y = 0; y < height; ++y) {
        for (int x = 0; x < width; ++x) {
            for (int c = 0; c < channels; ++c) {
                pixels[static_cast<size_t>((y * width + x) * channels + c)] =
                    static_cast<unsigned char>((x * 3 + y * 5 + c * 70) % 256);
            }
        }
    }
    return pixels;
}

/// A CMYK JPEG (libjpeg-turbo cannot turn it into RGB; stb_image can).
void writeCmykJpeg(const std::filesystem::path& path, int width, int height) {
    const std::vector<unsigned char> pixels = gradient(width, height, 4);
    jpeg_compress_struct info{};
    jpeg_error_mgr errors{};
    info.err = jpeg_std_error(&errors);
    jpeg_create_compress(&info);
    FILE* file = std::fopen(path.c_str(), "wb");
    ASSERT_NE(file, nullptr);
    jpeg_stdio_dest(&info, file);
    info.image_width = static_cast<JDIMENSION>(width);
    info.image_height = static_cast<JDIMENSION>(height);
    info.input_components = 4;
    info.in_color_space = JCS_CMYK;
    jpeg_set_defaults(&info);
    jpeg_set_quality(&info, 95, TRUE);
    jpeg_start_compress(&info, TRUE);
    while (info.next_scanline < info.image_height) {
        auto* row = const_cast<unsigned char*>(pixels.data()) +
                    static_cast<size_t>(info.next_scanline) * static_cast<size_t>(width) * 4;
        jpeg_write_scanlines(&info, &row, 1);
    }
    jpeg_finish_compress(&info);
    std::fclose(file);
    jpeg_destroy_compress(&info);
}

/// The largest and the mean |ours x 255 - stb_image's| over an image loaded at its own size (the
/// resize then keeps every pixel).
std::pair<double, double> differenceFromStb(const Tensor& ours, const std::filesystem::path& file,
                                            int channels) {
    int width = 0;
    int height = 0;
    int found = 0;
    std::unique_ptr<unsigned char, void (*)(void*)> reference(
        stbi_load(file.c_str(), &width, &height, &found, channels), stbi_image_free);
    EXPECT_NE(reference, nullptr);
    if (reference == nullptr) {
        return {1e9, 1e9};
    }
    double largest = 0;
    double sum = 0;
    for (int c = 0; c < channels; ++c) {
        for (int i = 0; i < width * height; ++i) {
            const double difference = std::abs(ours.data<float>()[c * width * height + i] * 255.0 -
                                               reference.get()[i * channels + c]);
            largest = std::max(largest, difference);
            sum += difference;
        }
    }
    return {largest, sum / (channels * width * height)};
}

TEST(ImageDataset, DecodesJpegLikeStbImageAndRefusesDamagedFiles) {
    const auto dir = std::filesystem::temp_directory_path() / "qs_image_dataset_jpeg_test";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir / "rgb");
    std::filesystem::create_directories(dir / "cmyk");
    std::filesystem::create_directories(dir / "cut");
    const std::vector<unsigned char> pixels = gradient(64, 48, 3);
    const auto rgb = dir / "rgb" / "a.jpg";
    ASSERT_NE(stbi_write_jpg(rgb.c_str(), 64, 48, 3, pixels.data(), 95), 0);
    ImageNormalization identity;
    identity.mean = {0, 0, 0};
    identity.std = {1, 1, 1};
    // libjpeg-turbo's IDCT and upsampling differ from stb_image's by a level here and there.
    for (const int channels : {3, 1}) {
        const Result<Tensor> ours = loadImageFolder(dir / "rgb", channels, 48, 64, identity);
        ASSERT_TRUE(ours.ok()) << ours.error().toString();
        const auto [largest, mean] = differenceFromStb(ours.value(), rgb, channels);
        EXPECT_LE(largest, 4.0) << channels << " channel(s)";
        EXPECT_LE(mean, 1.0) << channels << " channel(s)";
    }
    // CMYK goes to stb_image: the same pixels.
    writeCmykJpeg(dir / "cmyk" / "c.jpg", 16, 8);
    const Result<Tensor> cmyk = loadImageFolder(dir / "cmyk", 3, 8, 16, identity);
    ASSERT_TRUE(cmyk.ok()) << cmyk.error().toString();
    EXPECT_LT(differenceFromStb(cmyk.value(), dir / "cmyk" / "c.jpg", 3).first, 1e-3);

    // Half a file: libjpeg's warning is an error, naming the file, not grey filling.
    std::ifstream in(rgb, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), {});
    std::ofstream(dir / "cut" / "half.jpg", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
    const Result<Tensor> cut = loadImageFolder(dir / "cut", 3, 48, 64, identity);
    ASSERT_FALSE(cut.ok());
    EXPECT_NE(cut.error().toString().find("half.jpg"), std::string::npos);
    EXPECT_NE(cut.error().toString().find("Premature end"), std::string::npos)
        << cut.error().toString();
    // Bytes between the last scan and the end marker, which some cameras write: libjpeg warns
    // and decodes the same pixels; PIL and stb_image take the file too.
    std::filesystem::create_directories(dir / "extra");
    std::string padded = bytes;
    padded.insert(padded.size() - 2, "camera");
    std::ofstream(dir / "extra" / "x.jpg", std::ios::binary) << padded;
    const Result<Tensor> extra = loadImageFolder(dir / "extra", 3, 48, 64, identity);
    ASSERT_TRUE(extra.ok()) << extra.error().toString();
    const Result<Tensor> clean = loadImageFolder(dir / "rgb", 3, 48, 64, identity);
    ASSERT_TRUE(clean.ok());
    EXPECT_EQ(std::memcmp(extra->rawData(), clean->rawData(), clean->byteSize()), 0);
    // JPEG's marker and then noise.
    std::ofstream(dir / "cut" / "half.jpg", std::ios::binary | std::ios::trunc)
        << std::string("\xFF\xD8\xFF") + std::string(100, 'x');
    const Result<Tensor> noise = loadImageFolder(dir / "cut", 3, 48, 64, identity);
    ASSERT_FALSE(noise.ok());
    EXPECT_NE(noise.error().toString().find("cannot decode"), std::string::npos)
        << noise.error().toString();
    // A file larger than any allowed image is refused before it is read (a sparse file here).
    std::filesystem::remove(dir / "cut" / "half.jpg");
    std::ofstream(dir / "cut" / "huge.png").put('x');
    std::filesystem::resize_file(dir / "cut" / "huge.png", uintmax_t{300} << 20);
    const Result<Tensor> huge = loadImageFolder(dir / "cut", 3, 48, 64, identity);
    ASSERT_FALSE(huge.ok());
    EXPECT_NE(huge.error().toString().find("bytes, more than"), std::string::npos)
        << huge.error().toString();
    std::filesystem::remove_all(dir);
}

} // namespace
} // namespace qs::runtime
