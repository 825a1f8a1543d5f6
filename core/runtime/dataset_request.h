// Where a model's input samples come from, for every front end that feeds a dataset (calibration,
// data-aware weight compression, `quantscope-cli run`, the Hessian service, the GUI dialogs): one
// DatasetRequest names the source — .npy files (one per runtime input, samples on axis 0), a
// folder of images (one NCHW input; decoded, resized and normalised by image_dataset.h), a folder
// of class subfolders of images (labels from the sorted class names), or N seeded random-normal
// samples — with the batch size, the sample limit, input-shape overrides and optional labels.
// loadDataset() turns it into a Dataset, and a BatchStream hands the dataset out batch by batch,
// every sample exactly once and in order (runObserving in probe_runner.h runs the model on it).
//
// The one batch-size rule (resolveBatchSize): a first input with a static first dim runs in
// batches of that dim (an explicit, different batch size is an error); otherwise the explicit
// batch size, or kDefaultBatchSize samples per run.
#pragma once

#include "core/graph/graph.h"
#include "core/onnx/model_io.h"
#include "core/runtime/image_dataset.h"
#include "core/runtime/tensor.h"
#include "core/support/result.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace qs::runtime {

/// Samples per executor run when the model does not fix its batch and the request does not say.
inline constexpr int64_t kDefaultBatchSize = 8;

/// The sample limit of calibration datasets (NNCF's subset_size default).
inline constexpr int64_t kDefaultCalibrationSamples = 300;

enum class DatasetKind { None, NpyFiles, ImageFolder, Random, ClassFolders };

/// What the user calls each option, so errors name the option they typed (a CLI sets its flags;
/// the defaults read as plain words for the GUI and the API).
struct DatasetOptionNames {
    std::string npy = ".npy file";
    std::string images = "the image folder";
    std::string classes = "the class folder";
    std::string random = "random samples";
    std::string samples = "the sample limit";
    std::string batch = "the batch size";
    std::string labels = "the labels file";
    std::string inputShape = "an input shape";
};

struct DatasetRequest {
    std::vector<std::string> npyFiles; ///< one per runtime input, in order
    std::string imagesDir;             ///< PNG/JPEG/BMP images for a one-input NCHW model
    /// imagesDir holds one subfolder of images per class (ImageNet's layout): the labels come
    /// from the sorted class names, as with classesDir. Also assumed when imagesDir holds
    /// subfolders and no images (`--labels-from-folders` makes it explicit).
    bool labelsFromFolders = false;
    /// One subfolder per class, each holding images; label = index of the class name in sorted
    /// order (torchvision's ImageFolder convention).
    std::string classesDir;
    /// Seeded standard-normal samples: N rows, or N runs of the static batch when the first
    /// input's first dim is static (so the data always fits the model).
    int64_t randomSamples = 0;
    uint64_t seed = 0; ///< of the first input's random samples; +1 per further input
    /// Keep the first N samples of .npy files and images (positive; default: all).
    int64_t maxSamples = std::numeric_limits<int64_t>::max();
    /// Samples per executor run; unset: the rule of resolveBatchSize().
    std::optional<int64_t> batchSize;
    /// "NAME=D1,D2,..." overrides applied when the model is imported (importOptions()).
    std::vector<std::string> inputShapes;
    /// Optional int64 .npy of one label per sample (class folders bring their own labels).
    std::string labelsNpy;
    ImageNormalization normalization;
    DatasetOptionNames names;
    /// Read each batch from the files (decode its images, draw it) when a BatchStream hands it
    /// out, instead of loading the whole dataset first. `run` streams a dataset once: the first
    /// touch of a dataset's fresh pages in memory cost about 10 % of a 640 x 640 detector's
    /// forward, and images are decoded while the previous batch runs. The Dataset's inputs are
    /// then shape-only (labels are loaded whole).
    bool readByBatch = false;

    /// How many sources are set (a valid request has exactly one).
    int sourceCount() const;
    /// The one source set, or None when none or several are.
    DatasetKind kind() const;

    bool empty() const { return sourceCount() == 0; }

    /// Whether the loaded dataset will carry labels: a labels file, class folders, or an image
    /// folder in the class layout (looked at on disk). Lets a flow skip a run that only labels
    /// make worth doing.
    bool hasLabels() const;

    /// "images DIR", "classes DIR", "npy FILE...", "random N (seed S)" for reports.
    std::string describe() const;
};

/// A request with calibration's defaults: at most kDefaultCalibrationSamples samples.
DatasetRequest calibrationRequest();

/// The import options that apply the request's --input-shape overrides.
Result<onnx::ImportOptions> importOptions(const DatasetRequest& request);

/// Rows [begin, end) of one dataset input, read or drawn when asked for.
using RowReader = std::function<Result<Tensor>(int64_t begin, int64_t end)>;

/// Samples in memory: one tensor per runtime input (samples on axis 0), optional int64 labels
/// [samples], and the batch size the runs take. A dataset loaded with readByBatch holds its
/// inputs' dtypes and shapes only (Tensor::withoutData) and reads them through `rowReaders`:
/// only a BatchStream sees its samples.
struct Dataset {
    std::vector<Tensor> inputs;
    std::vector<RowReader> rowReaders; ///< empty, or one per input (readByBatch)
    /// The row readers give each thread whole rows (images decode one per thread), so reading
    /// fewer rows than threads leaves threads idle.
    bool readsRowPerThread = false;
    std::optional<Tensor> labels;
    int64_t batchSize = 1;

    /// Axis 0 of the inputs (all agree; loadDataset checks).
    int64_t samples() const;
};

/// Samples [begin, end) of a dataset: the inputs' rows and their labels.
struct SampleBatch {
    int64_t index = 0; ///< 0-based batch number
    int64_t begin = 0;
    int64_t end = 0;
    std::vector<Tensor> inputs;
    std::optional<Tensor> labels;
};

/// Hands out a dataset in consecutive batches of `batchSize` samples (the last one smaller): no
/// sample dropped, none repeated. Re-batching (the Hessian service) builds on it. A streamed
/// dataset (Dataset::rowReaders) can be read ahead: while the caller works on one batch, a
/// background thread reads (decodes, draws) the next one; a stream destroyed early (an error,
/// a cancel) waits for that read to end.
class BatchStream {
public:
    explicit BatchStream(const Dataset& dataset);
    /// `readAhead` unset: read ahead when the kernels leave a core idle (numThreads() below
    /// hardwareThreads()), where the reading costs no kernel any time, and the first batch took
    /// at least kReadAheadWorth to read (on the caller).
    BatchStream(const Dataset& dataset, int64_t batchSize,
                std::optional<bool> readAhead = std::nullopt);
    ~BatchStream();
    BatchStream(const BatchStream&) = delete;
    BatchStream& operator=(const BatchStream&) = delete;

    int64_t batchCount() const;

    bool done() const { return m_next >= m_samples; }

    /// How many batches next() handed out so far.
    int64_t batchesHandedOut() const { return m_index; }

    /// A batch read faster than this is read on the caller: a hand-off to the read-ahead thread
    /// and back would cost more.
    static constexpr std::chrono::microseconds kReadAheadWorth{100};

    /// Whether the next batch is read on a background thread (started by the first next(); with
    /// `readAhead` unset, known after it).
    bool readsAhead() const { return m_readsAhead; }

    /// The next batch; only while !done(). An error when a streamed input cannot be read.
    Result<SampleBatch> next();

private:
    class ReadAhead;

    /// Rows [begin, end) of the streamed inputs: read here, or taken from the read-ahead thread
    /// (which then starts on the next batch); the first call decides which, when left to.
    Result<std::vector<Tensor>> readStreamed(int64_t begin, int64_t end);

    /// Has the read-ahead thread (made on first use) read the batch from row `begin`.
    void startReadingAhead(int64_t begin);

    /// Sets m_readRows for a dataset that reads a row per thread (images), when not reading ahead.
    void readRowsPerThread();

    /// Rows [begin, end) of the streamed inputs, out of a read of m_readRows when that is more.
    Result<std::vector<Tensor>> readBatch(int64_t begin, int64_t end);

    const Dataset& m_dataset;
    int64_t m_batchSize;
    int64_t m_samples;
    int64_t m_next = 0;
    int64_t m_index = 0;
    bool m_readsAhead = false;
    bool m_timesFirstRead = false; ///< the first next() decides m_readsAhead
    std::unique_ptr<ReadAhead> m_readAhead;
    int64_t m_readRows = 0;     ///< rows read at once without reading ahead (0: a batch)
    std::vector<Tensor> m_read; ///< rows [m_readBegin, m_readEnd) of the streamed inputs
    int64_t m_readBegin = 0;
    int64_t m_readEnd = 0;
};

/// The first dim of `input` when static, else 0.
int64_t staticBatchSize(const graph::Value& input);

/// The one batch-size rule (see the top of this file) for `samples` samples of `model`.
Result<int64_t> resolveBatchSize(const graph::Graph& model, const DatasetRequest& request,
                                 int64_t samples);

/// The dataset of `request` for `model`'s runtime inputs. Refuses no or several sources, a .npy
/// count that is not the input count, images for a model without a single NCHW input of static
/// H x W, random samples for non-float or scalar inputs or inputs with dynamic non-batch dims
/// (naming the input-shape option), a non-positive sample limit or batch size, and labels that
/// are not int64 or not one per sample.
Result<Dataset> loadDataset(const graph::Graph& model, const DatasetRequest& request);

} // namespace qs::runtime
