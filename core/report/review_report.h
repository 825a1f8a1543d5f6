// The review report (issue 20): one self-contained page, plus CSV, that shows a colleague where
// every quantizer of a compression result went, which bit width it got and what it cost. The CLI
// (`quantscope-cli report`) and the GUI (File ▸ Export ▸ Review Report…) both build a ReviewReport
// here from a setup (with its proposal, a calibration outcome for ranges, SQNR and accuracy, and
// the HAWQ, pruning and weight-compression results when there are some) and write it with
// reviewHtml() / writeReviewCsv(); core/session/review_source.h gathers those inputs from a setup
// JSON or a `.qscope` session. Every table of the page is a
// ReviewTable, and the CSV files are written from the same ReviewTables, so they match the HTML
// row for row. The pictures that need Qt (the graph scene, the bit-width charts) come in as SVG
// text (ReviewGraphics); the HAWQ plots are drawn here.
#pragma once

#include "core/graph/graph.h"
#include "core/mixed_precision/bitops.h"
#include "core/quantization/calibration_workflow.h"
#include "core/quantization/quantization_state.h"
#include "core/report/accuracy.h"
#include "core/support/result.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace qs::report {

/// Quantizer counts and their costs at one bit width (0: float).
struct BitwidthShare {
    int activationQuantizers = 0;
    int weightQuantizers = 0;
    int64_t weightParameters = 0; ///< elements of the quantized weight tensors
    int64_t weightBytes = 0;      ///< those elements at this width (bits / 8 each)
    double bitOps = 0.0;          ///< MACs x max(weight bits, input activation bits) of its layers
};

/// What the Bit Widths dock and the report's charts show.
struct BitwidthBreakdown {
    std::map<int, BitwidthShare> byBits; ///< by bit width
    /// Active quantizers per op type and bit width (weights: the op; activations: the ops they
    /// quantize directly).
    std::map<std::string, std::map<int, int>> byOpType;
    /// Quantizer ids per (bits, is weight), for "clicking a bar selects its quantizers".
    std::map<std::pair<int, bool>, std::vector<int>> ids;
    /// Quantizer ids per op type and bit width (as byOpType counts them).
    std::map<std::string, std::map<int, std::vector<int>>> opTypeIds;

    int totalQuantizers() const;
    int64_t totalWeightBytes() const;
    double totalBitOps() const;
};

/// The breakdown of `setup` over `model` (active quantizers and requantizers only).
BitwidthBreakdown bitwidthBreakdown(const quantization::SingleConfigQuantizerSetup& setup,
                                    const graph::Graph& model);

/// One table of the page, also one CSV file.
struct ReviewTable {
    std::string id;    ///< HTML id and CSV file stem ("quantizers")
    std::string title; ///< section heading
    std::vector<std::string> columns;
    std::vector<bool> numeric; ///< per column: sorts as a number
    std::vector<std::vector<std::string>> rows;
};

struct ReviewHeader {
    std::string modelName; ///< file name
    std::string modelPath;
    std::string opsets;   ///< "ai.onnx 13, com.microsoft 1"
    std::string producer; ///< producer name and version, if any
    int64_t nodes = 0;
    int64_t parameters = 0;
    int64_t macs = 0;
    bool macsDynamicDimsAsOne = false; ///< dynamic input dims counted as 1 (no --input-shape)
    std::string hw;
    std::string preset;
    std::string rule;
    std::string source; ///< "setup FILE", "session FILE" or "propagation"
    std::string date;   ///< UTC, ISO 8601
    std::string toolVersion;
    int64_t floatBytes = 0;      ///< float32 weights
    int64_t compressedBytes = 0; ///< quantized weights at their widths, others as they are
    double bitOpsRatio = 1.0;    ///< all-8-bit BitOps / this setup's (HAWQ's ratio)
    int activeQuantizers = 0;
    int mergedQuantizers = 0;
    int requantizers = 0;
    int unifiedGroups = 0;
    std::string dataset; ///< DatasetRequest::describe() when calibrated
    std::vector<quantization::OutputMetrics> outputs; ///< cosine per output when calibrated
    std::optional<AccuracyComparison> accuracy;       ///< with labels
};

/// A HAWQ result as the report shows it (session::HawqSummary fills it).
struct ReviewHawq {
    double target = 0.0;
    std::string mode;
    std::string search;
    std::vector<int> bits;
    int64_t samples = 0;
    int iterations = 0;
    double ratio = 0.0;
    double metric = 0.0;

    struct Layer {
        std::string node;
        double avgTrace = 0.0;
        int weightBits = 0;
        int64_t macs = 0;
        std::map<int, double> perturbation; ///< by bit width
    };

    std::vector<Layer> layers;
    std::vector<mixed_precision::HawqCandidate> candidates; ///< empty: a summary only
    std::vector<size_t> pareto;                             ///< indices into candidates
    size_t chosen = 0;
};

/// A pruning result as the report shows it (session::PruningMasksSection fills it).
struct ReviewPruning {
    std::string hw;
    int64_t simd = 0; ///< 0: the HW config's
    bool simdPadding = true;
    std::string importance;
    int64_t targetBytes = 0;
    int64_t denseBytes = 0;
    int64_t prunedBytes = 0;
    int64_t minimumBytes = 0;

    struct Section {
        std::string entry;
        std::string exit;
        int64_t channels = 0;
        int64_t kept = 0;
        std::string constraint; ///< "free", "lock", "keep N"
    };

    std::vector<Section> sections;
};

struct ReviewReport {
    ReviewHeader header;
    std::vector<quantization::QuantizerMark> marks; ///< for the graph's badges
    ReviewTable quantizers;
    BitwidthBreakdown bitwidths;
    std::string nncfTable; ///< NNCF's "Statistics of the bitwidth distribution"
    std::optional<ReviewHawq> hawq;
    std::optional<ReviewPruning> pruning;
    std::optional<nlohmann::json> compressionPlan; ///< planToJson of the session's plan
    std::vector<std::string> notes;                ///< sections present but not shown, and why
    /// The graph's open groups (layout::groupKey) as the session or the GUI left them; unset:
    /// the GUI's first view.
    std::optional<std::vector<std::string>> expandedGroups;

    /// Every table in page order: quantizers, bit widths, op types, then the sections present.
    std::vector<ReviewTable> tables() const;
};

/// What a report is built from (the GUI fills it from its document, the CLI from files).
struct ReviewInputs {
    std::string modelPath;
    std::string source = "propagation";
    quantization::QuantizationSettings settings;
    quantization::SingleConfigQuantizerSetup setup;
    /// A proposal for the model: each point's candidates, looked up by insertion point.
    const quantization::MultiConfigQuantizerSetup* proposal = nullptr;
    /// The setup was finalized from `proposal` (same ids): the merged quantizers come from it.
    bool finalizedFromProposal = false;
    const quantization::CalibrationOutcome* calibration = nullptr;
    std::optional<ReviewHawq> hawq;
    std::optional<ReviewPruning> pruning;
    std::optional<nlohmann::json> compressionPlan;
    std::optional<std::vector<std::string>> expandedGroups; ///< see ReviewReport
    std::string date;                                       ///< empty: now
};

/// The report of `inputs` over `model`. Bad labels in the calibration are an error.
Result<ReviewReport> buildReviewReport(const graph::Graph& model, const ReviewInputs& inputs);

/// The pictures drawn outside core, each a complete `<svg>` element (empty: left out).
struct ReviewGraphics {
    std::string graphSvg;
    std::string bitwidthChartSvg;
    std::string opTypeChartSvg;
};

/// The whole page: well-formed XHTML-style markup (every element closed, scripts in CDATA), no
/// external reference; the graph zooms and pans, every table sorts by a click on its heading.
std::string reviewHtml(const ReviewReport& report, const ReviewGraphics& graphics);

/// RFC 4180 CSV of `table`: a header row, then one line per row.
std::string tableCsv(const ReviewTable& table);

/// Writes each table as DIR/<id>.csv (the folder is created), each atomically.
Result<void> writeTablesCsv(const std::vector<ReviewTable>& tables,
                            const std::filesystem::path& dir);

/// writeTablesCsv() of every table of `report`.
Result<void> writeReviewCsv(const ReviewReport& report, const std::filesystem::path& dir);

/// Checks before any work that a page can be written at `path` (its folder exists and is
/// writable, `path` is not a folder) and that `csvDir`, if given, is not a file.
Result<void> checkReportOutputs(const std::filesystem::path& path,
                                const std::filesystem::path& csvDir = {});

/// `text` with &, <, >, " escaped.
std::string htmlEscape(std::string_view text);

} // namespace qs::report
