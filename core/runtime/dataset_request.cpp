#include "core/runtime/dataset_request.h"

#include "core/runtime/batching.h"
#include "core/runtime/npy.h"
#include "core/runtime/parallel.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <filesystem>
#include <mutex>
#include <thread>
#include <utility>

namespace qs::runtime {
namespace {

Tensor firstSamples(Tensor tensor, int64_t maxSamples) {
    if (tensor.rank() == 0 || tensor.shape()[0] <= maxSamples) {
        return tensor;
    }
    return sliceBatch(tensor, 0, maxSamples);
}

/// "[batch,3,?,?]": the declared dims, '?' for a dynamic one.
std::string declaredDims(const graph::Value& value) {
    if (!value.shape.rankKnown) {
        return "of unknown rank";
    }
    std::string out = "[";
    for (size_t d = 0; d < value.shape.rank(); ++d) {
        const graph::Dim& dim = value.shape.dims[d];
        out += (d > 0 ? "," : "") + (dim.isKnown()
                                         ? std::to_string(dim.size)
                                         : (dim.symbol.empty() ? std::string("?") : dim.symbol));
    }
    return out + "]";
}

/// The shape of `value` with its first dim set to `batch`; other dims must be static, since a
/// synthetic or resized sample cannot guess them.
Result<Shape> fixedShape(const graph::Value& value, int64_t batch, const DatasetRequest& request,
                         const std::string& what) {
    if (!value.shape.rankKnown) {
        return Error(Errc::Usage, what + " needs the shape of input '" + value.name +
                                      "', which has an unknown rank; give " +
                                      request.names.inputShape + " " + value.name + "=DIMS");
    }
    Shape shape;
    for (size_t d = 0; d < value.shape.rank(); ++d) {
        const graph::Dim& dim = value.shape.dims[d];
        if (d > 0 && !dim.isKnown()) {
            return Error(Errc::Usage, what + " needs static dims beyond the batch; input '" +
                                          value.name + "' is " + declaredDims(value) + "; give " +
                                          request.names.inputShape + " " + value.name + "=DIMS");
        }
        shape.push_back(dim.isKnown() ? dim.size : batch);
    }
    return shape;
}

/// A .npy array must be what the input takes: its element type and, past the sample axis, its
/// declared static dims (a mismatch would otherwise surface deep in the executor, unnamed).
Result<void> checkNpyForInput(const Tensor& tensor, const graph::Value& input) {
    if (input.dtype != graph::DataType::Undefined && tensor.dtype() != input.dtype) {
        return Error(Errc::InvalidArgument,
                     "holds " + std::string(graph::dataTypeName(tensor.dtype())) +
                         " data, the input takes " + std::string(graph::dataTypeName(input.dtype)));
    }
    if (tensor.rank() == 0) {
        return Error(Errc::InvalidArgument, "holds a scalar; the first axis must count samples");
    }
    if (!input.shape.rankKnown) {
        return {};
    }
    bool fits = tensor.rank() == input.shape.rank();
    for (size_t d = 1; fits && d < tensor.rank(); ++d) {
        const graph::Dim& dim = input.shape.dims[d];
        fits = !dim.isKnown() || dim.size == tensor.shape()[d];
    }
    if (!fits) {
        return Error(Errc::InvalidArgument, "has shape " + shapeToString(tensor.shape()) +
                                                ", the input is " + declaredDims(input) +
                                                " (samples on the first axis)");
    }
    return {};
}

Result<void> checkNpyCount(const std::vector<graph::ValueId>& inputs,
                           const DatasetRequest& request) {
    if (request.npyFiles.size() != inputs.size()) {
        return Error(Errc::Usage, "the model has " + std::to_string(inputs.size()) +
                                      " input(s), got " + std::to_string(request.npyFiles.size()) +
                                      " .npy file(s); give one " + request.names.npy +
                                      " per input, in order");
    }
    return success();
}

/// The .npy files opened and checked (dtype, shape, sample limit), their rows read when asked for.
Result<Dataset> openNpy(const graph::Graph& model, const std::vector<graph::ValueId>& inputs,
                        const DatasetRequest& request) {
    QS_TRY(checkNpyCount(inputs, request));
    Dataset dataset;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const std::string& path = request.npyFiles[i];
        const std::string where =
            request.names.npy + " '" + path + "' for input '" + model.value(inputs[i]).name + "'";
        QS_ASSIGN_OR_RETURN(const NpyRows rows,
                            NpyRows::open(path).context("file '" + path + "'").context(where));
        Shape shape = rows.shape();
        const Tensor placeholder = Tensor::withoutData(rows.dtype(), shape);
        QS_TRY(checkNpyForInput(placeholder, model.value(inputs[i])).context(where));
        shape[0] = std::min(shape[0], request.maxSamples);
        dataset.inputs.push_back(Tensor::withoutData(rows.dtype(), shape));
        dataset.rowReaders.emplace_back(
            [rows, where, path](int64_t begin, int64_t end) -> Result<Tensor> {
                return rows.read(begin, end).context("file '" + path + "'").context(where);
            });
    }
    return dataset;
}

/// The NCHW shape images are resized to.
Result<Shape> imageShape(const graph::Graph& model, const std::vector<graph::ValueId>& inputs,
                         const DatasetRequest& request, const std::string& what) {
    if (inputs.size() != 1) {
        return Error(Errc::InvalidArgument, what + " needs a model with one input, this one has " +
                                                std::to_string(inputs.size()));
    }
    const graph::Value& value = model.value(inputs[0]);
    if (value.shape.rankKnown && value.shape.rank() != 4) {
        return Error(Errc::InvalidArgument,
                     what + " needs an NCHW input, '" + value.name + "' is " + declaredDims(value));
    }
    return fixedShape(value, 1, request, what);
}

/// A dataset of image files: shape-only, its rows decoded when asked for.
Dataset imageDataset(const ImageFiles& files) {
    Dataset dataset;
    dataset.inputs.push_back(Tensor::withoutData(graph::DataType::Float, files.shape()));
    dataset.rowReaders.emplace_back(
        [files](int64_t begin, int64_t end) { return files.read(begin, end); });
    dataset.readsRowPerThread = true;
    return dataset;
}

Result<Dataset> loadImages(const graph::Graph& model, const std::vector<graph::ValueId>& inputs,
                           const DatasetRequest& request) {
    QS_ASSIGN_OR_RETURN(const Shape shape,
                        imageShape(model, inputs, request, request.names.images));
    QS_ASSIGN_OR_RETURN(ImageFiles files, ImageFiles::list(request.imagesDir, shape[1], shape[2],
                                                           shape[3], request.normalization));
    files.keepFirst(request.maxSamples);
    return imageDataset(files);
}

/// Images of every class subfolder, in sorted class order; labels are the class indices.
Result<Dataset> loadClassFolders(const graph::Graph& model,
                                 const std::vector<graph::ValueId>& inputs,
                                 const DatasetRequest& request) {
    namespace fs = std::filesystem;
    QS_ASSIGN_OR_RETURN(const Shape shape,
                        imageShape(model, inputs, request, request.names.classes));
    std::error_code ec;
    std::vector<fs::path> classes;
    for (const auto& entry : fs::directory_iterator(request.classesDir, ec)) {
        if (entry.is_directory()) {
            classes.push_back(entry.path());
        }
    }
    if (ec) {
        return Error(Errc::Io, request.names.classes + " '" + request.classesDir +
                                   "' cannot be read: " + ec.message());
    }
    if (classes.empty()) {
        return Error(Errc::InvalidArgument, request.names.classes + " '" + request.classesDir +
                                                "' has no class subfolders");
    }
    std::sort(classes.begin(), classes.end());
    std::optional<ImageFiles> files;
    std::vector<int64_t> labels;
    for (size_t c = 0; c < classes.size(); ++c) {
        QS_ASSIGN_OR_RETURN(
            const ImageFiles images,
            ImageFiles::list(classes[c], shape[1], shape[2], shape[3], request.normalization)
                .context("class '" + classes[c].filename().string() + "'"));
        labels.insert(labels.end(), static_cast<size_t>(images.size()), static_cast<int64_t>(c));
        if (files) {
            files->append(images);
        } else {
            files = images;
        }
    }
    files->keepFirst(request.maxSamples);
    labels.resize(static_cast<size_t>(files->size()));
    Tensor labelTensor =
        Tensor::allocate(graph::DataType::Int64, {static_cast<int64_t>(labels.size())});
    std::copy(labels.begin(), labels.end(), labelTensor.mutableData<int64_t>());
    Dataset dataset = imageDataset(*files);
    dataset.labels = std::move(labelTensor);
    return dataset;
}

/// The shape-only inputs of the random samples (read through randomRowReaders).
Result<std::vector<Tensor>> randomShapes(const graph::Graph& model,
                                         const std::vector<graph::ValueId>& inputs,
                                         const DatasetRequest& request) {
    std::vector<Tensor> tensors;
    for (const graph::ValueId id : inputs) {
        const graph::Value& value = model.value(id);
        if (value.dtype != graph::DataType::Float) {
            return Error(Errc::Unsupported,
                         request.names.random + " can fill float inputs only; '" + value.name +
                             "' is " + std::string(graph::dataTypeName(value.dtype)) + " (give " +
                             request.names.npy + " instead)");
        }
        QS_ASSIGN_OR_RETURN(
            Shape shape, fixedShape(value, request.randomSamples, request, request.names.random));
        if (shape.empty()) {
            return Error(Errc::Unsupported, request.names.random +
                                                " needs inputs with a batch axis; '" + value.name +
                                                "' is a scalar");
        }
        // Samples on axis 0 also for a static batch: N runs of it.
        const int64_t fixed = staticBatchSize(value);
        shape[0] = (fixed > 0 ? fixed : 1) * request.randomSamples;
        tensors.push_back(Tensor::withoutData(graph::DataType::Float, shape));
    }
    return tensors;
}

/// Rows of each random input drawn when asked for: those of randomNormal(its shape, seed + i),
/// which depends on the element's index alone.
std::vector<RowReader> randomRowReaders(const std::vector<Tensor>& inputs, uint64_t seed) {
    std::vector<RowReader> readers;
    for (const Tensor& input : inputs) {
        const int64_t rowSize = input.numElements() / std::max<int64_t>(1, input.shape()[0]);
        readers.emplace_back([shape = input.shape(), rowSize,
                              seed = seed++](int64_t begin, int64_t end) -> Result<Tensor> {
            Shape rows = shape;
            rows[0] = end - begin;
            return randomNormal(rows, seed, begin * rowSize);
        });
    }
    return readers;
}

/// True when `dir` holds at least one subfolder and no files but hidden ones (an image
/// folder in ImageNet's class layout).
bool holdsOnlySubfolders(const std::string& dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    bool folders = false;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        if (entry.path().filename().string().starts_with('.')) {
            continue;
        }
        if (!entry.is_directory()) {
            return false;
        }
        folders = true;
    }
    return folders && !ec;
}

} // namespace

bool DatasetRequest::hasLabels() const {
    switch (kind()) {
    case DatasetKind::NpyFiles:
        return !labelsNpy.empty();
    case DatasetKind::ImageFolder:
        return !labelsNpy.empty() || labelsFromFolders || holdsOnlySubfolders(imagesDir);
    case DatasetKind::ClassFolders:
        return true;
    case DatasetKind::Random:
    case DatasetKind::None:
        break;
    }
    return false;
}

namespace {

Result<Dataset> loadSource(const graph::Graph& model, const std::vector<graph::ValueId>& inputs,
                           const DatasetRequest& request) {
    Dataset dataset;
    switch (request.kind()) {
    case DatasetKind::NpyFiles:
        return openNpy(model, inputs, request);
    case DatasetKind::ImageFolder: {
        if (!request.labelsFromFolders && !holdsOnlySubfolders(request.imagesDir)) {
            return loadImages(model, inputs, request);
        }
        if (!request.labelsNpy.empty()) {
            return Error(Errc::Usage, request.names.labels + " and the class subfolders of " +
                                          request.names.images + " '" + request.imagesDir +
                                          "' both give labels; give one of them");
        }
        DatasetRequest classes = request; // the ImageNet layout under the images option's name
        classes.classesDir = std::exchange(classes.imagesDir, {});
        classes.names.classes = request.names.images;
        return loadClassFolders(model, inputs, classes);
    }
    case DatasetKind::ClassFolders:
        return loadClassFolders(model, inputs, request);
    case DatasetKind::Random: {
        QS_ASSIGN_OR_RETURN(dataset.inputs, randomShapes(model, inputs, request));
        dataset.rowReaders = randomRowReaders(dataset.inputs, request.seed);
        return dataset;
    }
    case DatasetKind::None:
        break;
    }
    const DatasetOptionNames& n = request.names;
    return Error(Errc::Usage,
                 "give exactly one dataset: " + n.npy + ", " + n.images + " or " + n.random);
}

/// The number of samples all inputs share on axis 0.
Result<int64_t> commonSampleCount(const std::vector<Tensor>& inputs) {
    if (inputs.empty() || inputs[0].rank() == 0 || inputs[0].shape()[0] == 0) {
        return Error(Errc::InvalidArgument, "the dataset holds no samples");
    }
    const int64_t samples = inputs[0].shape()[0];
    for (const Tensor& input : inputs) {
        if (input.rank() == 0 || input.shape()[0] != samples) {
            return Error(Errc::InvalidArgument,
                         "dataset inputs hold different numbers of samples (axis 0)");
        }
    }
    return samples;
}

Result<Tensor> loadLabels(const DatasetRequest& request, int64_t samples) {
    QS_ASSIGN_OR_RETURN(
        Tensor labels,
        readNpy(request.labelsNpy).context(request.names.labels + " '" + request.labelsNpy + "'"));
    const std::string where = request.names.labels + " '" + request.labelsNpy + "'";
    if (labels.dtype() != graph::DataType::Int64 || labels.rank() != 1) {
        return Error(Errc::InvalidArgument, where + " must hold one int64 label per sample, got " +
                                                std::string(graph::dataTypeName(labels.dtype())) +
                                                " " + shapeToString(labels.shape()));
    }
    labels = firstSamples(std::move(labels), request.maxSamples);
    if (labels.shape()[0] != samples) {
        return Error(Errc::InvalidArgument, where + " holds " + std::to_string(labels.shape()[0]) +
                                                " label(s) for " + std::to_string(samples) +
                                                " sample(s)");
    }
    return labels;
}

} // namespace

int DatasetRequest::sourceCount() const {
    return static_cast<int>(!npyFiles.empty()) + static_cast<int>(!imagesDir.empty()) +
           static_cast<int>(!classesDir.empty()) + static_cast<int>(randomSamples > 0);
}

DatasetKind DatasetRequest::kind() const {
    if (sourceCount() != 1) {
        return DatasetKind::None;
    }
    if (!npyFiles.empty()) {
        return DatasetKind::NpyFiles;
    }
    if (!imagesDir.empty()) {
        return DatasetKind::ImageFolder;
    }
    return classesDir.empty() ? DatasetKind::Random : DatasetKind::ClassFolders;
}

std::string DatasetRequest::describe() const {
    if (!imagesDir.empty()) {
        return "images " + imagesDir;
    }
    if (!classesDir.empty()) {
        return "classes " + classesDir;
    }
    if (!npyFiles.empty()) {
        std::string out = "npy";
        for (const std::string& f : npyFiles) {
            out += " " + f;
        }
        return out;
    }
    return "random " + std::to_string(randomSamples) + " (seed " + std::to_string(seed) + ")";
}

DatasetRequest calibrationRequest() {
    DatasetRequest request;
    request.maxSamples = kDefaultCalibrationSamples;
    return request;
}

Result<onnx::ImportOptions> importOptions(const DatasetRequest& request) {
    onnx::ImportOptions options;
    for (const std::string& text : request.inputShapes) {
        QS_ASSIGN_OR_RETURN(onnx::InputShapeOverride parsed,
                            onnx::parseInputShapeOverride(text).context(request.names.inputShape));
        options.inputShapes.push_back(std::move(parsed));
    }
    return options;
}

int64_t Dataset::samples() const {
    return inputs.empty() || inputs[0].rank() == 0 ? 0 : inputs[0].shape()[0];
}

namespace {

/// Rows [begin, end) of every streamed input of `dataset`.
Result<std::vector<Tensor>> readRows(const Dataset& dataset, int64_t begin, int64_t end) {
    std::vector<Tensor> rows;
    rows.reserve(dataset.rowReaders.size());
    for (const RowReader& reader : dataset.rowReaders) {
        QS_ASSIGN_OR_RETURN(Tensor part, reader(begin, end));
        rows.push_back(std::move(part));
    }
    return rows;
}

/// readRows, an exception (out of memory for a large image) made an error naming `what`: on the
/// read-ahead thread it would end the process instead of reaching the caller.
Result<std::vector<Tensor>> readRowsCatching(const Dataset& dataset, int64_t begin, int64_t end,
                                             const std::string& what) {
    try {
        return readRows(dataset, begin, end);
    } catch (const std::exception& e) {
        return Error(Errc::Internal, what + " failed: " + e.what());
    }
}

} // namespace

/// One thread that reads a streamed dataset's rows ahead, a range at a time; kept for the whole
/// stream, so its buffers (decoded pixels) come back every batch.
class BatchStream::ReadAhead {
public:
    explicit ReadAhead(const Dataset& dataset)
        : m_dataset(dataset)
        , m_thread([this] { work(); }) {}

    ReadAhead(const ReadAhead&) = delete;
    ReadAhead& operator=(const ReadAhead&) = delete;

    ~ReadAhead() {
        {
            const std::lock_guard lock(m_mutex);
            m_stop = true;
        }
        m_changed.notify_all();
        m_thread.join();
    }

    /// Starts reading rows [begin, end); the previous range must have been taken.
    void start(int64_t begin, int64_t end) {
        {
            const std::lock_guard lock(m_mutex);
            m_range = {begin, end};
        }
        m_changed.notify_all();
    }

    /// The rows of the started range, once read.
    Result<std::vector<Tensor>> take() {
        std::unique_lock lock(m_mutex);
        m_changed.wait(lock, [this] { return m_rows.has_value(); });
        Result<std::vector<Tensor>> rows = std::move(*m_rows);
        m_rows.reset();
        return rows;
    }

private:
    void work() {
        // The kernels own the pool; a read here runs on this thread alone.
        const InlineParallelFor inlineOnly;
        std::unique_lock lock(m_mutex);
        for (;;) {
            m_changed.wait(lock, [this] { return m_stop || m_range.has_value(); });
            if (m_stop) {
                return;
            }
            const auto [begin, end] = *m_range;
            lock.unlock();
            Result<std::vector<Tensor>> rows =
                readRowsCatching(m_dataset, begin, end, "reading ahead");
            lock.lock();
            m_range.reset();
            m_rows.emplace(std::move(rows));
            m_changed.notify_all();
        }
    }

    const Dataset& m_dataset;
    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::optional<std::pair<int64_t, int64_t>> m_range; ///< asked for, not yet read
    std::optional<Result<std::vector<Tensor>>> m_rows;  ///< read, not yet taken
    bool m_stop = false;
    std::thread m_thread; ///< last: starts once the members above exist
};

BatchStream::BatchStream(const Dataset& dataset)
    : BatchStream(dataset, dataset.batchSize) {}

BatchStream::BatchStream(const Dataset& dataset, int64_t batchSize, std::optional<bool> readAhead)
    : m_dataset(dataset)
    , m_batchSize(std::max<int64_t>(1, batchSize))
    , m_samples(dataset.samples()) {
    const bool streamed = !dataset.rowReaders.empty() && batchCount() > 1;
    if (readAhead.has_value()) {
        m_readsAhead = *readAhead && streamed; // the thread starts with the first batch
    } else {
        m_timesFirstRead = streamed && numThreads() < hardwareThreads();
    }
    if (!m_readsAhead && !m_timesFirstRead) {
        readRowsPerThread();
    }
}

void BatchStream::readRowsPerThread() {
    if (m_dataset.readsRowPerThread) {
        // Batches smaller than the thread count would leave threads idle while reading: read
        // whole multiples of the batch that give each thread a row.
        const int64_t threads = numThreads();
        m_readRows = (threads + m_batchSize - 1) / m_batchSize * m_batchSize;
    }
}

BatchStream::~BatchStream() = default;

Result<std::vector<Tensor>> BatchStream::readBatch(int64_t begin, int64_t end) {
    if (m_readRows <= end - begin) {
        return readRows(m_dataset, begin, end);
    }
    if (m_read.empty() || begin < m_readBegin || end > m_readEnd) {
        const int64_t readEnd = std::min(m_samples, begin + m_readRows);
        m_read.clear();
        QS_ASSIGN_OR_RETURN(m_read, readRows(m_dataset, begin, readEnd)
                                        .context("samples " + std::to_string(begin) + " to " +
                                                 std::to_string(readEnd - 1) + ", read together"));
        m_readBegin = begin;
        m_readEnd = readEnd;
    }
    std::vector<Tensor> rows;
    rows.reserve(m_read.size());
    for (const Tensor& read : m_read) {
        rows.push_back(sliceBatch(read, begin - m_readBegin, end - m_readBegin));
    }
    return rows;
}

int64_t BatchStream::batchCount() const {
    return (m_samples + m_batchSize - 1) / m_batchSize;
}

Result<std::vector<Tensor>> BatchStream::readStreamed(int64_t begin, int64_t end) {
    if (m_timesFirstRead) {
        // Read here, timed: a read shorter than handing batches to a thread and back (a wake-up
        // each way, 20-25 microseconds on a virtual machine) stays on the caller. tiny_bert's
        // rows of 32 token ids, read ahead: 25,532 futex calls for 7,930 batches, and 160 ms
        // of the run outside the executor against 70 read here.
        // The batch alone, not the rows per thread, which reading ahead would read again.
        m_timesFirstRead = false;
        const auto start = std::chrono::steady_clock::now();
        QS_ASSIGN_OR_RETURN(std::vector<Tensor> rows,
                            readRowsCatching(m_dataset, begin, end, "reading"));
        m_readsAhead = std::chrono::steady_clock::now() - start >= kReadAheadWorth;
        if (!m_readsAhead) {
            readRowsPerThread();
        } else if (!done()) {
            startReadingAhead(m_next);
        }
        return rows;
    }
    if (!m_readsAhead) {
        return readBatch(begin, end);
    }
    if (m_readAhead == nullptr) { // asked to read ahead: from the first batch
        startReadingAhead(begin);
    }
    QS_ASSIGN_OR_RETURN(std::vector<Tensor> rows, m_readAhead->take());
    if (!done()) {
        startReadingAhead(m_next);
    }
    return rows;
}

void BatchStream::startReadingAhead(int64_t begin) {
    if (m_readAhead == nullptr) {
        m_readAhead = std::make_unique<ReadAhead>(m_dataset);
    }
    m_readAhead->start(begin, std::min(m_samples, begin + m_batchSize));
}

Result<SampleBatch> BatchStream::next() {
    SampleBatch batch;
    batch.index = m_index++;
    batch.begin = m_next;
    batch.end = std::min(m_samples, m_next + m_batchSize);
    m_next = batch.end;
    if (!m_dataset.rowReaders.empty()) {
        QS_ASSIGN_OR_RETURN(batch.inputs, readStreamed(batch.begin, batch.end));
    } else {
        batch.inputs.reserve(m_dataset.inputs.size());
        for (const Tensor& input : m_dataset.inputs) {
            batch.inputs.push_back(sliceBatch(input, batch.begin, batch.end));
        }
    }
    if (m_dataset.labels) {
        batch.labels = sliceBatch(*m_dataset.labels, batch.begin, batch.end);
    }
    return batch;
}

int64_t staticBatchSize(const graph::Value& input) {
    if (!input.shape.rankKnown || input.shape.rank() == 0) {
        return 0;
    }
    const graph::Dim& dim = input.shape.dims[0];
    return dim.isKnown() ? dim.size : 0;
}

Result<int64_t> resolveBatchSize(const graph::Graph& model, const DatasetRequest& request,
                                 int64_t samples) {
    if (request.batchSize && *request.batchSize <= 0) {
        return Error(Errc::Usage, request.names.batch + " must be positive");
    }
    const std::vector<graph::ValueId> inputs = model.runtimeInputs();
    const int64_t fixed = inputs.empty() ? 0 : staticBatchSize(model.value(inputs[0]));
    if (fixed > 0) {
        if (request.batchSize && *request.batchSize != fixed) {
            return Error(Errc::Usage, "input '" + model.value(inputs[0]).name +
                                          "' has a static batch of " + std::to_string(fixed) +
                                          ", not " + std::to_string(*request.batchSize) + " (" +
                                          request.names.batch + ")");
        }
        return fixed;
    }
    if (request.batchSize) {
        return *request.batchSize;
    }
    return std::max<int64_t>(1, std::min(kDefaultBatchSize, samples));
}

Result<Dataset> loadDataset(const graph::Graph& model, const DatasetRequest& request) {
    if (request.maxSamples <= 0) {
        return Error(Errc::Usage, request.names.samples + " must be positive");
    }
    if (request.batchSize && *request.batchSize <= 0) {
        return Error(Errc::Usage, request.names.batch + " must be positive");
    }
    if (!request.labelsNpy.empty() && request.kind() == DatasetKind::ClassFolders) {
        return Error(Errc::Usage, request.names.labels + " and " + request.names.classes +
                                      " both give labels; give one of them");
    }
    const std::vector<graph::ValueId> inputs = model.runtimeInputs();
    if (inputs.empty()) {
        return Error(Errc::InvalidArgument, "the model has no inputs to feed a dataset to");
    }
    QS_ASSIGN_OR_RETURN(Dataset dataset, loadSource(model, inputs, request));
    if (!request.readByBatch && !dataset.rowReaders.empty()) {
        // Every sample in memory now: read (drawn) whole through the row readers.
        QS_ASSIGN_OR_RETURN(dataset.inputs, readRows(dataset, 0, dataset.samples()));
        dataset.rowReaders.clear();
        dataset.readsRowPerThread = false;
    }
    QS_ASSIGN_OR_RETURN(const int64_t samples, commonSampleCount(dataset.inputs));
    if (!request.labelsNpy.empty()) {
        QS_ASSIGN_OR_RETURN(dataset.labels, loadLabels(request, samples));
    }
    QS_ASSIGN_OR_RETURN(dataset.batchSize, resolveBatchSize(model, request, samples));
    return dataset;
}

} // namespace qs::runtime
