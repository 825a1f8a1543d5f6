#include "core/graph/graph_builder.h"
#include "core/runtime/dataset_source.h"
#include "core/runtime/npy.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace qs::runtime {
namespace {

/// x: float [batch, 4] and ids: int64 [batch, 2], both dynamic on axis 0, or static if `batch` > 0.
graph::Graph twoInputs(int64_t batch) {
    graph::GraphBuilder b(13);
    const auto x = b.input("x", {batch, 4});
    const auto ids = b.input("ids", {batch, 2}, graph::DataType::Int64);
    b.output(b.op("Identity", "x_copy", {x}));
    b.output(b.op("Identity", "ids_copy", {ids}), graph::DataType::Int64);
    return b.take();
}

graph::Graph floatInputs(int64_t batch) {
    graph::GraphBuilder b(13);
    const auto x = b.input("x", {batch, 4});
    const auto y = b.input("y", {batch, 3});
    b.output(b.op("Identity", "x_copy", {x}));
    b.output(b.op("Identity", "y_copy", {y}));
    return b.take();
}

/// count x width rows holding 0, 1, 2, ...
template <typename T>
Tensor rows(int64_t count, int64_t width) {
    std::vector<T> values(static_cast<size_t>(count * width));
    for (size_t i = 0; i < values.size(); ++i) {
        values[i] = static_cast<T>(i);
    }
    return Tensor::fromVector<T>({count, width}, values);
}

std::string messageOf(const Result<std::vector<Tensor>>& result) {
    return result.ok() ? std::string("(no error)") : result.error().toString();
}

TEST(DatasetSource, NpyFilesAreCutToTheSampleLimit) {
    const auto dir = std::filesystem::temp_directory_path() / "qs_dataset_source_test";
    std::filesystem::create_directories(dir);
    ASSERT_TRUE(writeNpy(rows<float>(5, 4), dir / "x.npy").ok());
    ASSERT_TRUE(writeNpy(rows<int64_t>(5, 2), dir / "ids.npy").ok());
    DatasetSource source;
    source.npyFiles = {(dir / "x.npy").string(), (dir / "ids.npy").string()};
    EXPECT_EQ(source.kind(), DatasetKind::NpyFiles);
    auto all = loadDataset(twoInputs(-1), source);
    ASSERT_TRUE(all.ok()) << messageOf(all);
    EXPECT_EQ(all.value()[0].shape(), (Shape{5, 4}));
    source.maxSamples = 3;
    auto cut = loadDataset(twoInputs(-1), source);
    ASSERT_TRUE(cut.ok()) << messageOf(cut);
    ASSERT_EQ(cut.value().size(), 2U);
    EXPECT_EQ(cut.value()[0].shape(), (Shape{3, 4}));
    EXPECT_EQ(cut.value()[1].shape(), (Shape{3, 2}));
    EXPECT_EQ(cut.value()[1].elementAsDouble(5), 5.0);

    source.maxSamples = 0;
    EXPECT_NE(
        messageOf(loadDataset(twoInputs(-1), source)).find("the sample limit must be positive"),
        std::string::npos);
    source.maxSamples = 3;
    source.npyFiles = {(dir / "x.npy").string(), (dir / "missing.npy").string()};
    source.names.npy = "--input";
    const std::string missing = messageOf(loadDataset(twoInputs(-1), source));
    EXPECT_NE(missing.find("--input '" + (dir / "missing.npy").string() + "' for input 'ids'"),
              std::string::npos)
        << missing;
    source.npyFiles.pop_back();
    const std::string count = messageOf(loadDataset(twoInputs(-1), source));
    EXPECT_NE(count.find("the model has 2 input(s), got 1 .npy file(s); give one --input per "
                         "input, in order"),
              std::string::npos)
        << count;
    std::filesystem::remove_all(dir);
}

TEST(DatasetSource, RandomSamplesAreSeededAndFitAStaticBatch) {
    DatasetSource source;
    source.randomSamples = 3;
    source.seed = 5;
    EXPECT_EQ(source.kind(), DatasetKind::Random);
    EXPECT_EQ(source.describe(), "random 3 (seed 5)");
    auto dynamic = loadDataset(floatInputs(-1), source);
    ASSERT_TRUE(dynamic.ok()) << messageOf(dynamic);
    EXPECT_EQ(dynamic.value()[0].shape(), (Shape{3, 4}));
    EXPECT_EQ(dynamic.value()[1].shape(), (Shape{3, 3}));
    // The same seed gives the same samples; the second input takes the next seed.
    auto again = loadDataset(floatInputs(-1), source);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again.value()[0].elementAsDouble(7), dynamic.value()[0].elementAsDouble(7));
    EXPECT_NE(dynamic.value()[0].elementAsDouble(0), dynamic.value()[1].elementAsDouble(0));

    // A static batch of 2: three runs of it.
    auto fixed = loadDataset(floatInputs(2), source);
    ASSERT_TRUE(fixed.ok()) << messageOf(fixed);
    EXPECT_EQ(fixed.value()[0].shape(), (Shape{6, 4}));
    EXPECT_EQ(staticBatchSize(floatInputs(2).value(floatInputs(2).runtimeInputs()[0])), 2);

    source.names.random = "--calib-random";
    source.names.npy = "--calib-npy";
    const std::string ints = messageOf(loadDataset(twoInputs(-1), source));
    EXPECT_NE(ints.find("--calib-random can fill float inputs only; 'ids' is int64 (give "
                        "--calib-npy instead)"),
              std::string::npos)
        << ints;
}

TEST(DatasetSource, RefusesNoneSeveralOrUnfitSources) {
    DatasetSource none;
    EXPECT_TRUE(none.empty());
    EXPECT_EQ(none.kind(), DatasetKind::None);
    EXPECT_NE(messageOf(loadDataset(floatInputs(-1), none))
                  .find("give exactly one dataset: .npy file, the image folder or random samples"),
              std::string::npos);
    DatasetSource two;
    two.randomSamples = 2;
    two.imagesDir = "/nonexistent";
    EXPECT_EQ(two.sourceCount(), 2);
    EXPECT_EQ(two.kind(), DatasetKind::None);
    EXPECT_FALSE(loadDataset(floatInputs(-1), two).ok());

    DatasetSource images;
    images.imagesDir = "/nonexistent";
    images.names.images = "--images";
    EXPECT_EQ(images.describe(), "images /nonexistent");
    EXPECT_NE(messageOf(loadDataset(floatInputs(-1), images))
                  .find("--images needs a model with one input, this one has 2"),
              std::string::npos);
    graph::GraphBuilder b(13);
    const auto x = b.input("x", {-1, 4});
    b.output(b.op("Identity", "copy", {x}));
    EXPECT_NE(
        messageOf(loadDataset(b.take(), images)).find("--images needs an NCHW input, 'x' is [1,4]"),
        std::string::npos);
}

} // namespace
} // namespace qs::runtime
