#include "core/graph/graph_builder.h"
#include "core/runtime/batching.h"
#include "core/runtime/dataset_request.h"
#include "core/runtime/npy.h"
#include "core/runtime/parallel.h"
#include "core/runtime/probe_runner.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

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

template <typename T>
std::string messageOf(const Result<T>& result) {
    return result.ok() ? std::string("(no error)") : result.error().toString();
}

TEST(DatasetRequest, NpyFilesAreCutToTheSampleLimit) {
    const auto dir = std::filesystem::temp_directory_path() / "qs_dataset_source_test";
    std::filesystem::create_directories(dir);
    ASSERT_TRUE(writeNpy(rows<float>(5, 4), dir / "x.npy").ok());
    ASSERT_TRUE(writeNpy(rows<int64_t>(5, 2), dir / "ids.npy").ok());
    DatasetRequest source;
    source.npyFiles = {(dir / "x.npy").string(), (dir / "ids.npy").string()};
    EXPECT_EQ(source.kind(), DatasetKind::NpyFiles);
    auto all = loadDataset(twoInputs(-1), source);
    ASSERT_TRUE(all.ok()) << messageOf(all);
    EXPECT_EQ(all.value().inputs[0].shape(), (Shape{5, 4}));
    source.maxSamples = 3;
    auto cut = loadDataset(twoInputs(-1), source);
    ASSERT_TRUE(cut.ok()) << messageOf(cut);
    ASSERT_EQ(cut.value().inputs.size(), 2U);
    EXPECT_EQ(cut.value().inputs[0].shape(), (Shape{3, 4}));
    EXPECT_EQ(cut.value().inputs[1].shape(), (Shape{3, 2}));
    EXPECT_EQ(cut.value().inputs[1].elementAsDouble(5), 5.0);

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

TEST(DatasetRequest, NpyFilesMustFitTheirInput) {
    const auto dir = std::filesystem::temp_directory_path() / "qs_dataset_fit_test";
    std::filesystem::create_directories(dir);
    ASSERT_TRUE(writeNpy(rows<int64_t>(5, 2), dir / "ids.npy").ok());
    ASSERT_TRUE(writeNpy(rows<double>(5, 4), dir / "x64.npy").ok());
    ASSERT_TRUE(writeNpy(rows<float>(5, 3), dir / "x3.npy").ok());
    DatasetRequest source;
    source.names.npy = "--input";
    source.npyFiles = {(dir / "x64.npy").string(), (dir / "ids.npy").string()};
    EXPECT_EQ(messageOf(loadDataset(twoInputs(-1), source)),
              "--input '" + (dir / "x64.npy").string() +
                  "' for input 'x': holds double data, the input takes float");
    source.npyFiles = {(dir / "x3.npy").string(), (dir / "ids.npy").string()};
    EXPECT_EQ(messageOf(loadDataset(twoInputs(-1), source)),
              "--input '" + (dir / "x3.npy").string() +
                  "' for input 'x': has shape [5,3], the input is [batch,4] (samples on the first "
                  "axis)");
    std::filesystem::remove_all(dir);
}

TEST(DatasetRequest, RandomSamplesAreSeededAndFitAStaticBatch) {
    DatasetRequest source;
    source.randomSamples = 3;
    source.seed = 5;
    EXPECT_EQ(source.kind(), DatasetKind::Random);
    EXPECT_EQ(source.describe(), "random 3 (seed 5)");
    auto dynamic = loadDataset(floatInputs(-1), source);
    ASSERT_TRUE(dynamic.ok()) << messageOf(dynamic);
    EXPECT_EQ(dynamic.value().inputs[0].shape(), (Shape{3, 4}));
    EXPECT_EQ(dynamic.value().inputs[1].shape(), (Shape{3, 3}));
    // The same seed gives the same samples; the second input takes the next seed.
    auto again = loadDataset(floatInputs(-1), source);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again.value().inputs[0].elementAsDouble(7),
              dynamic.value().inputs[0].elementAsDouble(7));
    EXPECT_NE(dynamic.value().inputs[0].elementAsDouble(0),
              dynamic.value().inputs[1].elementAsDouble(0));

    // A static batch of 2: three runs of it.
    auto fixed = loadDataset(floatInputs(2), source);
    ASSERT_TRUE(fixed.ok()) << messageOf(fixed);
    EXPECT_EQ(fixed.value().inputs[0].shape(), (Shape{6, 4}));
    EXPECT_EQ(staticBatchSize(floatInputs(2).value(floatInputs(2).runtimeInputs()[0])), 2);

    source.names.random = "--calib-random";
    source.names.npy = "--calib-npy";
    const std::string ints = messageOf(loadDataset(twoInputs(-1), source));
    EXPECT_NE(ints.find("--calib-random can fill float inputs only; 'ids' is int64 (give "
                        "--calib-npy instead)"),
              std::string::npos)
        << ints;
}

TEST(DatasetRequest, RefusesNoneSeveralOrUnfitSources) {
    DatasetRequest none;
    EXPECT_TRUE(none.empty());
    EXPECT_EQ(none.kind(), DatasetKind::None);
    EXPECT_NE(messageOf(loadDataset(floatInputs(-1), none))
                  .find("give exactly one dataset: .npy file, the image folder or random samples"),
              std::string::npos);
    DatasetRequest two;
    two.randomSamples = 2;
    two.imagesDir = "/nonexistent";
    EXPECT_EQ(two.sourceCount(), 2);
    EXPECT_EQ(two.kind(), DatasetKind::None);
    EXPECT_FALSE(loadDataset(floatInputs(-1), two).ok());

    DatasetRequest images;
    images.imagesDir = "/nonexistent";
    images.names.images = "--images";
    EXPECT_EQ(images.describe(), "images /nonexistent");
    EXPECT_NE(messageOf(loadDataset(floatInputs(-1), images))
                  .find("--images needs a model with one input, this one has 2"),
              std::string::npos);
    graph::GraphBuilder b(13);
    const auto x = b.input("x", {-1, 4});
    b.output(b.op("Identity", "copy", {x}));
    EXPECT_NE(messageOf(loadDataset(b.take(), images))
                  .find("--images needs an NCHW input, 'x' is [batch,4]"),
              std::string::npos);
}

TEST(DatasetRequest, RandomSamplesNeedStaticDimsBeyondTheBatch) {
    graph::GraphBuilder b(13);
    const auto x = b.input("tokens", {-1, -1, 4});
    b.output(b.op("Identity", "copy", {x}));
    DatasetRequest request;
    request.randomSamples = 2;
    request.names.inputShape = "--input-shape";
    const std::string message = messageOf(loadDataset(b.take(), request));
    EXPECT_NE(message.find("input 'tokens' is [batch,?,4]; give --input-shape tokens=DIMS"),
              std::string::npos)
        << message;
}

TEST(DatasetRequest, OneBatchSizeRule) {
    DatasetRequest request;
    // Dynamic batch: the default, capped by the samples, or what the request says.
    EXPECT_EQ(resolveBatchSize(floatInputs(-1), request, 100).value(), kDefaultBatchSize);
    EXPECT_EQ(resolveBatchSize(floatInputs(-1), request, 3).value(), 3);
    request.batchSize = 5;
    EXPECT_EQ(resolveBatchSize(floatInputs(-1), request, 100).value(), 5);
    // A static batch: that batch; another explicit one is an error naming the option.
    request.names.batch = "--calib-batch";
    EXPECT_NE(messageOf(resolveBatchSize(floatInputs(2), request, 100))
                  .find("input 'x' has a static batch of 2, not 5 (--calib-batch)"),
              std::string::npos);
    request.batchSize.reset();
    EXPECT_EQ(resolveBatchSize(floatInputs(2), request, 100).value(), 2);
    request.batchSize = 0;
    EXPECT_NE(messageOf(resolveBatchSize(floatInputs(-1), request, 100))
                  .find("--calib-batch must be positive"),
              std::string::npos);
}

TEST(DatasetRequest, BatchStreamHandsOutEverySampleOnce) {
    Dataset dataset;
    dataset.inputs = {rows<float>(7, 4)};
    dataset.labels = Tensor::fromVector<int64_t>({7}, {0, 1, 2, 3, 4, 5, 6});
    dataset.batchSize = 3;
    BatchStream stream(dataset);
    EXPECT_EQ(stream.batchCount(), 3);
    std::vector<int64_t> seen;
    std::vector<int64_t> sizes;
    while (!stream.done()) {
        const SampleBatch batch = stream.next().value();
        sizes.push_back(batch.end - batch.begin);
        ASSERT_TRUE(batch.labels.has_value());
        for (int64_t i = 0; i < batch.labels->numElements(); ++i) {
            seen.push_back(batch.labels->data<int64_t>()[i]);
            // Row r of the inputs holds 4r, 4r+1, ...: the labels travel with their rows.
            EXPECT_EQ(batch.inputs[0].data<float>()[i * 4],
                      static_cast<float>(4 * batch.labels->data<int64_t>()[i]));
        }
    }
    EXPECT_EQ(sizes, (std::vector<int64_t>{3, 3, 1}));
    EXPECT_EQ(seen, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6}));
}

/// Every batch a BatchStream hands out, its inputs' bytes joined per input.
std::vector<std::vector<std::byte>> streamedBytes(const Dataset& dataset,
                                                  std::optional<bool> readAhead = std::nullopt) {
    std::vector<std::vector<std::byte>> bytes(dataset.inputs.size());
    BatchStream stream(dataset, dataset.batchSize, readAhead);
    while (!stream.done()) {
        auto batch = stream.next();
        EXPECT_TRUE(batch.ok()) << messageOf(batch);
        if (!batch.ok()) {
            break;
        }
        for (size_t i = 0; i < bytes.size(); ++i) {
            const auto* data = static_cast<const std::byte*>(batch.value().inputs[i].rawData());
            bytes[i].insert(bytes[i].end(), data, data + batch.value().inputs[i].byteSize());
        }
    }
    return bytes;
}

TEST(DatasetRequest, ReadByBatchHandsOutTheBatchesOfTheWholeDataset) {
    const auto dir = std::filesystem::temp_directory_path() / "qs_dataset_read_by_batch_test";
    std::filesystem::create_directories(dir);
    ASSERT_TRUE(writeNpy(rows<float>(11, 4), dir / "x.npy").ok());
    ASSERT_TRUE(writeNpy(rows<int64_t>(11, 2), dir / "ids.npy").ok());
    DatasetRequest source;
    source.npyFiles = {(dir / "x.npy").string(), (dir / "ids.npy").string()};
    source.maxSamples = 9;
    source.batchSize = 4;
    const Result<Dataset> whole = loadDataset(twoInputs(-1), source);
    ASSERT_TRUE(whole.ok()) << messageOf(whole);
    source.readByBatch = true;
    const Result<Dataset> streamed = loadDataset(twoInputs(-1), source);
    ASSERT_TRUE(streamed.ok()) << messageOf(streamed);
    // Shapes only until a batch is asked for; the same samples, limit and batches.
    EXPECT_EQ(streamed.value().inputs[0].rawData(), nullptr);
    EXPECT_EQ(streamed.value().samples(), 9);
    EXPECT_EQ(streamed.value().inputs[1].shape(), (Shape{9, 2}));
    EXPECT_EQ(streamed.value().inputs[1].dtype(), graph::DataType::Int64);
    EXPECT_EQ(streamedBytes(streamed.value()), streamedBytes(whole.value()));
    EXPECT_EQ(streamedBytes(streamed.value(), true), streamedBytes(whole.value()));

    // A file cut short after it was opened is refused at the next batch, with its name (one
    // replaced by a rename, as writeNpy does, leaves the open file as it was).
    std::filesystem::resize_file(dir / "x.npy", std::filesystem::file_size(dir / "x.npy") - 16);
    BatchStream stream(streamed.value());
    const std::string changed = messageOf(stream.next());
    EXPECT_NE(changed.find("changed"), std::string::npos) << changed;
    EXPECT_NE(changed.find("x.npy"), std::string::npos) << changed;
    // Read ahead, a batch that cannot be read fails when it is handed out, not before: the
    // batches before it come whole.
    Dataset failing;
    failing.inputs.push_back(Tensor::withoutData(graph::DataType::Float, {9, 4}));
    failing.rowReaders.emplace_back([](int64_t begin, int64_t end) -> Result<Tensor> {
        if (end > 8) {
            return Error(Errc::Io, "row 8 is unreadable");
        }
        return sliceBatch(rows<float>(9, 4), begin, end);
    });
    BatchStream ahead(failing, 4, true);
    EXPECT_TRUE(ahead.readsAhead());
    for (int64_t batch = 0; batch < 2; ++batch) {
        const Result<SampleBatch> read = ahead.next();
        ASSERT_TRUE(read.ok()) << messageOf(read);
        EXPECT_EQ(read->inputs[0].data<float>()[0], static_cast<float>(16 * batch));
    }
    EXPECT_NE(messageOf(ahead.next()).find("row 8 is unreadable"), std::string::npos);

    // Open-time checks are those of a whole load: dtype and shape against the input.
    ASSERT_TRUE(writeNpy(rows<float>(11, 3), dir / "x.npy").ok());
    const std::string unfit = messageOf(loadDataset(twoInputs(-1), source));
    EXPECT_NE(unfit.find("has shape [11,3]"), std::string::npos) << unfit;

    // Random samples drawn batch by batch are those drawn whole.
    DatasetRequest random;
    random.randomSamples = 7;
    random.seed = 5;
    random.batchSize = 3;
    const Result<Dataset> drawn = loadDataset(floatInputs(-1), random);
    ASSERT_TRUE(drawn.ok()) << messageOf(drawn);
    random.readByBatch = true;
    const Result<Dataset> drawnByBatch = loadDataset(floatInputs(-1), random);
    ASSERT_TRUE(drawnByBatch.ok()) << messageOf(drawnByBatch);
    EXPECT_EQ(drawnByBatch.value().inputs[1].shape(), (Shape{7, 3}));
    EXPECT_EQ(streamedBytes(drawnByBatch.value()), streamedBytes(drawn.value()));
    EXPECT_EQ(streamedBytes(drawnByBatch.value(), true), streamedBytes(drawn.value()));
    EXPECT_EQ(streamedBytes(drawnByBatch.value(), false), streamedBytes(drawn.value()));
    std::filesystem::remove_all(dir);
}

TEST(DatasetRequest, OnlyABatchSlowToReadIsReadAhead) {
    // Left to decide, a stream reads its first batch on the caller and reads ahead after it only
    // when that took kReadAheadWorth or more (and the kernels leave a core idle): handing rows of
    // a few token ids to a thread and back costs more than reading them.
    setNumThreads(1);
    const auto streamedRows = [](std::chrono::microseconds perRead) {
        Dataset dataset;
        dataset.batchSize = 2;
        dataset.inputs.push_back(Tensor::withoutData(graph::DataType::Float, {7, 4}));
        dataset.rowReaders.emplace_back([perRead](int64_t begin, int64_t end) -> Result<Tensor> {
            std::this_thread::sleep_for(perRead);
            return sliceBatch(rows<float>(7, 4), begin, end);
        });
        return dataset;
    };
    const Dataset whole = [] {
        Dataset dataset;
        dataset.batchSize = 2;
        dataset.inputs.push_back(rows<float>(7, 4));
        return dataset;
    }();
    for (const auto perRead : {std::chrono::microseconds(0), 4 * BatchStream::kReadAheadWorth}) {
        const Dataset streamed = streamedRows(perRead);
        const bool slow = perRead > std::chrono::microseconds(0);
        // A fast first read can still take longer than kReadAheadWorth when this thread is
        // preempted (sanitizers, a busy machine): one of three streams must read it in time.
        bool decided = false;
        for (int attempt = 0; attempt < 3 && !decided; ++attempt) {
            BatchStream stream(streamed, 2);
            EXPECT_FALSE(stream.readsAhead()); // not before the first batch was timed
            ASSERT_TRUE(stream.next().ok());
            decided = stream.readsAhead() == (slow && hardwareThreads() > 1);
        }
        EXPECT_TRUE(decided) << perRead.count() << " us per read";
        EXPECT_EQ(streamedBytes(streamed), streamedBytes(whole));
        // Asked for, a stream reads ahead however fast its rows come.
        EXPECT_TRUE(BatchStream(streamed, 2, true).readsAhead());
    }
    setNumThreads(0);
}

TEST(DatasetRequest, LabelsMustBeOneInt64PerSample) {
    const auto dir = std::filesystem::temp_directory_path() / "qs_dataset_labels_test";
    std::filesystem::create_directories(dir);
    ASSERT_TRUE(writeNpy(rows<float>(5, 4), dir / "x.npy").ok());
    ASSERT_TRUE(writeNpy(rows<float>(5, 3), dir / "y.npy").ok());
    ASSERT_TRUE(writeNpy(Tensor::fromVector<int64_t>({5}, {1, 0, 1, 0, 1}), dir / "l5.npy").ok());
    ASSERT_TRUE(writeNpy(Tensor::fromVector<int64_t>({4}, {1, 0, 1, 0}), dir / "l4.npy").ok());
    ASSERT_TRUE(writeNpy(rows<float>(5, 1), dir / "lf.npy").ok());
    DatasetRequest request;
    request.npyFiles = {(dir / "x.npy").string(), (dir / "y.npy").string()};
    request.names.labels = "--labels-npy";
    request.labelsNpy = (dir / "l5.npy").string();
    request.maxSamples = 4;
    auto cut = loadDataset(floatInputs(-1), request);
    ASSERT_TRUE(cut.ok()) << messageOf(cut);
    ASSERT_TRUE(cut->labels.has_value());
    EXPECT_EQ(cut->labels->shape(), (Shape{4})); // cut with the samples
    request.maxSamples = 5;
    request.labelsNpy = (dir / "l4.npy").string();
    EXPECT_NE(
        messageOf(loadDataset(floatInputs(-1), request)).find("holds 4 label(s) for 5 sample(s)"),
        std::string::npos);
    request.labelsNpy = (dir / "lf.npy").string();
    EXPECT_NE(messageOf(loadDataset(floatInputs(-1), request))
                  .find("must hold one int64 label per sample, got float"),
              std::string::npos);
    std::filesystem::remove_all(dir);
}

/// A 2 x 2 24-bit BMP of one grey level.
void writeBmp(const std::filesystem::path& path, unsigned char level) {
    const auto u32 = [](uint32_t v) {
        return std::string{static_cast<char>(v & 0xFF), static_cast<char>((v >> 8) & 0xFF),
                           static_cast<char>((v >> 16) & 0xFF), static_cast<char>(v >> 24)};
    };
    const auto u16 = [](uint16_t v) {
        return std::string{static_cast<char>(v & 0xFF), static_cast<char>(v >> 8)};
    };
    // Rows of 2 pixels x 3 bytes, padded to 8 bytes.
    std::string row(6, static_cast<char>(level));
    row += std::string(2, '\0');
    const std::string pixels = row + row;
    std::string file = "BM" + u32(54 + static_cast<uint32_t>(pixels.size())) + u32(0) + u32(54);
    file += u32(40) + u32(2) + u32(2) + u16(1) + u16(24) + u32(0) +
            u32(static_cast<uint32_t>(pixels.size())) + u32(2835) + u32(2835) + u32(0) + u32(0);
    std::ofstream(path, std::ios::binary) << file << pixels;
}

TEST(DatasetRequest, ClassFoldersGiveLabelsBySortedClassName) {
    const auto dir = std::filesystem::temp_directory_path() / "qs_dataset_classes_test";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir / "cat");
    std::filesystem::create_directories(dir / "ant");
    writeBmp(dir / "cat" / "a.bmp", 200);
    writeBmp(dir / "ant" / "a.bmp", 10);
    writeBmp(dir / "ant" / "b.bmp", 20);
    graph::GraphBuilder b(13);
    const auto x = b.input("image", {-1, 1, 2, 2});
    b.output(b.op("Identity", "copy", {x}));
    const graph::Graph model = b.take();
    DatasetRequest request;
    request.classesDir = dir.string();
    request.normalization = {.mean = {0, 0, 0}, .std = {1, 1, 1}};
    EXPECT_EQ(request.kind(), DatasetKind::ClassFolders);
    auto dataset = loadDataset(model, request);
    ASSERT_TRUE(dataset.ok()) << messageOf(dataset);
    ASSERT_TRUE(dataset->labels.has_value());
    EXPECT_EQ(dataset->inputs[0].shape(), (Shape{3, 1, 2, 2}));
    EXPECT_EQ(std::vector<int64_t>(dataset->labels->data<int64_t>(),
                                   dataset->labels->data<int64_t>() + 3),
              (std::vector<int64_t>{0, 0, 1})); // ant, ant, cat
    EXPECT_GT(dataset->inputs[0].data<float>()[8], dataset->inputs[0].data<float>()[0]);
    request.labelsNpy = "labels.npy";
    EXPECT_FALSE(loadDataset(model, request).ok()); // two sources of labels
    std::filesystem::remove_all(dir);
}

TEST(DatasetRequest, AnImageFolderOfClassSubfoldersGivesLabels) {
    // ImageNet's layout under the images option: three class folders, labels by sorted name.
    const auto dir = std::filesystem::temp_directory_path() / "qs_dataset_imagenet_test";
    std::filesystem::remove_all(dir);
    for (const char* name : {"zebra", "ant", "moth"}) {
        std::filesystem::create_directories(dir / name);
    }
    writeBmp(dir / "zebra" / "a.bmp", 250);
    writeBmp(dir / "ant" / "a.bmp", 10);
    writeBmp(dir / "moth" / "a.bmp", 100);
    writeBmp(dir / "moth" / "b.bmp", 110);
    graph::GraphBuilder b(13);
    const auto x = b.input("image", {-1, 1, 2, 2});
    b.output(b.op("Identity", "copy", {x}));
    const graph::Graph model = b.take();
    DatasetRequest request;
    request.imagesDir = dir.string();
    request.normalization = {.mean = {0, 0, 0}, .std = {1, 1, 1}};
    const auto labelsOf = [&](const Dataset& dataset) {
        return std::vector<int64_t>(dataset.labels->data<int64_t>(),
                                    dataset.labels->data<int64_t>() + dataset.labels->shape()[0]);
    };
    auto detected = loadDataset(model, request);
    ASSERT_TRUE(detected.ok()) << messageOf(detected);
    ASSERT_TRUE(detected->labels.has_value());
    EXPECT_EQ(labelsOf(*detected), (std::vector<int64_t>{0, 1, 1, 2})); // ant, moth x2, zebra
    request.labelsFromFolders = true;                                   // explicit: the same
    auto explicitly = loadDataset(model, request);
    ASSERT_TRUE(explicitly.ok()) << messageOf(explicitly);
    EXPECT_EQ(labelsOf(*explicitly), labelsOf(*detected));
    request.maxSamples = 3;
    EXPECT_EQ(labelsOf(*loadDataset(model, request)), (std::vector<int64_t>{0, 1, 1}));
    request.maxSamples = std::numeric_limits<int64_t>::max();
    request.labelsNpy = "labels.npy";
    EXPECT_NE(messageOf(loadDataset(model, request)).find("both give labels"), std::string::npos);
    request.labelsNpy.clear();

    // A flat folder stays unlabelled; asking for folder labels there is a clear error.
    writeBmp(dir / "loose.bmp", 50);
    request.labelsFromFolders = false;
    auto mixed = loadDataset(model, request); // images at the top: a flat folder
    ASSERT_TRUE(mixed.ok()) << messageOf(mixed);
    EXPECT_EQ(mixed->inputs[0].shape()[0], 1);
    EXPECT_FALSE(mixed->labels.has_value());
    const auto flatDir = dir / "moth";
    request.imagesDir = flatDir.string();
    auto images = loadDataset(model, request);
    ASSERT_TRUE(images.ok()) << messageOf(images);
    EXPECT_FALSE(images->labels.has_value());
    request.labelsFromFolders = true;
    EXPECT_NE(messageOf(loadDataset(model, request)).find("has no class subfolders"),
              std::string::npos);
    std::filesystem::remove_all(dir);
}

/// A counter that cancels after `allowed` reports.
class CancelAfter final : public Progress {
public:
    explicit CancelAfter(int allowed)
        : m_allowed(allowed) {}

    void report(double, std::string_view) override { ++m_reports; }

    bool isCancelled() const override { return m_reports >= m_allowed; }

private:
    int m_allowed;
    int m_reports = 0;
};

TEST(ProbeRunner, ObservesProbesBatchByBatchAndStopsOnCancel) {
    graph::GraphBuilder b(13);
    const auto x = b.input("x", {-1, 4});
    const auto doubled = b.op("Add", "twice", {x, x});
    b.output(b.op("Relu", "relu", {doubled}));
    const graph::Graph model = b.take();
    Dataset dataset;
    dataset.inputs = {rows<float>(5, 4)};
    dataset.batchSize = 2;
    const std::vector<graph::ValueId> probes = {doubled};
    int64_t rowsSeen = 0;
    NullProgress quiet;
    auto run = runObserving(model, probes, dataset, quiet, [&](ObservedBatch& batch) {
        EXPECT_EQ(batch.outputs.size(), 1U);
        EXPECT_EQ(batch.probes.size(), 1U);
        EXPECT_EQ(batch.probes[0].shape()[0], batch.batch.end - batch.batch.begin);
        EXPECT_EQ(batch.probes[0].data<float>()[1],
                  2.0F * static_cast<float>(batch.batch.begin * 4 + 1));
        rowsSeen += batch.probes[0].shape()[0];
        return success();
    });
    ASSERT_TRUE(run.ok()) << run.error().toString();
    EXPECT_EQ(rowsSeen, 5);

    CancelAfter cancel(2);
    int batches = 0;
    auto cancelled = runObserving(model, probes, dataset, cancel, [&](ObservedBatch&) {
        ++batches;
        return success();
    });
    ASSERT_FALSE(cancelled.ok());
    EXPECT_EQ(cancelled.error().code(), Errc::Cancelled);
    EXPECT_EQ(cancelled.error().message(), "cancelled");
    EXPECT_EQ(batches, 2);

    auto batched = runBatched(*Executor::create(model), dataset, quiet);
    ASSERT_TRUE(batched.ok());
    EXPECT_EQ((*batched)[0].shape(), (Shape{5, 4}));
}

TEST(DatasetRequest, ImagesReadByBatchAreThoseLoadedWhole) {
    // Five images, class folders and a flat folder, streamed a batch at a time (read ahead or
    // not, batches smaller than the thread count read together) and loaded whole.
    const auto dir = std::filesystem::temp_directory_path() / "qs_dataset_images_by_batch_test";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir / "ant");
    std::filesystem::create_directories(dir / "bee");
    for (int i = 0; i < 5; ++i) {
        writeBmp(dir / (i < 2 ? "ant" : "bee") / ("i" + std::to_string(i) + ".bmp"), 40 * i + 9);
    }
    graph::GraphBuilder b(13);
    const auto x = b.input("image", {-1, 1, 2, 2});
    b.output(b.op("Identity", "copy", {x}));
    const graph::Graph model = b.take();
    for (const bool classes : {true, false}) {
        DatasetRequest request;
        request.imagesDir = (classes ? dir : dir / "bee").string();
        request.maxSamples = 4;
        request.batchSize = 1;
        const Result<Dataset> whole = loadDataset(model, request);
        ASSERT_TRUE(whole.ok()) << messageOf(whole);
        request.readByBatch = true;
        const Result<Dataset> streamed = loadDataset(model, request);
        ASSERT_TRUE(streamed.ok()) << messageOf(streamed);
        EXPECT_EQ(streamed->inputs[0].rawData(), nullptr);
        EXPECT_EQ(streamed->samples(), classes ? 4 : 3);
        EXPECT_EQ(streamed->labels.has_value(), classes);
        if (classes) {
            EXPECT_EQ(std::vector<int64_t>(streamed->labels->data<int64_t>(),
                                           streamed->labels->data<int64_t>() + 4),
                      (std::vector<int64_t>{0, 0, 1, 1}));
        }
        for (const std::optional<bool> ahead :
             {std::optional<bool>(), std::optional(true), std::optional(false)}) {
            EXPECT_EQ(streamedBytes(streamed.value(), ahead), streamedBytes(whole.value()));
        }
    }
    // A damaged image is refused when its batch is read, by name; read ahead, the batches
    // before it come whole; read together (two threads, batches of one: two at a time), it
    // fails with the first batch of that read, i2 and i3 handed out before it.
    setNumThreads(2);
    std::ofstream(dir / "bee" / "i4.bmp", std::ios::trunc) << "BM not an image";
    DatasetRequest request;
    request.imagesDir = (dir / "bee").string();
    request.batchSize = 1;
    request.readByBatch = true;
    const Result<Dataset> streamed = loadDataset(model, request);
    ASSERT_TRUE(streamed.ok()) << messageOf(streamed);
    for (const bool ahead : {true, false}) {
        BatchStream stream(streamed.value(), 1, ahead);
        Result<SampleBatch> batch = stream.next();
        int64_t whole = 0;
        for (; batch.ok() && !stream.done(); batch = stream.next()) {
            ++whole;
        }
        EXPECT_EQ(whole, 2);
        const std::string damaged = messageOf(batch);
        EXPECT_NE(damaged.find("i4.bmp"), std::string::npos) << damaged;
        EXPECT_EQ(damaged.find("read together") != std::string::npos, !ahead) << damaged;
    }
    setNumThreads(0);
    std::filesystem::remove_all(dir);
}

} // namespace
} // namespace qs::runtime
