// Calibration (statistics → parameters) and the float-vs-fake-quant comparison.

#include "core/quantization/calibration.h"

#include "core/quantization/fake_quantize.h"
#include "core/quantization/insertion_point_values.h"
#include "core/runtime/batching.h"
#include "core/runtime/executor.h"
#include "core/runtime/probe_runner.h"
#include "core/support/similarity.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <unordered_map>

namespace qs::quantization {
namespace {

/// Values observed as extra outputs of a graph, each added once.
class ObservedValues {
public:
    size_t add(graph::ValueId id) {
        const auto [it, inserted] = m_index.try_emplace(id.index(), m_values.size());
        if (inserted) {
            m_values.push_back(id);
        }
        return it->second;
    }

    const std::vector<graph::ValueId>& values() const { return m_values; }

private:
    std::unordered_map<size_t, size_t> m_index;
    std::vector<graph::ValueId> m_values;
};

std::string describe(int id, const InsertionPoint& ip) {
    return "quantizer #" + std::to_string(id) + " at '" + ip.toString() + "'";
}

/// Element-wise union of the members' ranges (min of mins, max of maxes).
Result<void> unifyRanges(const SingleConfigQuantizerSetup& setup,
                         std::map<int, MinMaxRange>& ranges) {
    for (const auto& [gid, members] : setup.unifiedScaleGroups) {
        std::optional<MinMaxRange> shared;
        for (const int id : members) {
            const auto it = ranges.find(id);
            if (it == ranges.end()) {
                continue;
            }
            if (!shared) {
                shared = it->second;
                continue;
            }
            if (it->second.min.size() != shared->min.size()) {
                return Error(Errc::InvalidArgument, "unified-scale group " + std::to_string(gid) +
                                                        " mixes per-channel sizes");
            }
            for (size_t c = 0; c < shared->min.size(); ++c) {
                shared->min[c] = std::min(shared->min[c], it->second.min[c]);
                shared->max[c] = std::max(shared->max[c], it->second.max[c]);
            }
        }
        for (const int id : members) {
            if (shared && ranges.contains(id)) {
                ranges[id] = *shared;
            }
        }
    }
    return success();
}

double sqnrDb(double signal, double noise) {
    if (noise <= 0.0) {
        return std::numeric_limits<double>::infinity();
    }
    if (signal <= 0.0) {
        return -std::numeric_limits<double>::infinity();
    }
    return 10.0 * std::log10(signal / noise);
}

/// Sums of x² and (x - y)² over two float tensors of equal size.
struct NoiseSums {
    double signal = 0.0;
    double noise = 0.0;

    Result<void> add(const runtime::Tensor& x, const runtime::Tensor& y) {
        if (x.numElements() != y.numElements() || x.dtype() != graph::DataType::Float ||
            y.dtype() != graph::DataType::Float) {
            return Error(Errc::Internal, "float and quantized tensors differ in shape or type");
        }
        const Eigen::Map<const Eigen::ArrayXf> a(x.data<float>(), x.numElements());
        const Eigen::Map<const Eigen::ArrayXf> b(y.data<float>(), y.numElements());
        signal += a.cast<double>().square().sum();
        noise += (a - b).cast<double>().square().sum();
        return success();
    }
};

struct OutputAccumulator {
    double sumCosine = 0.0;
    double minCosine = 1.0;
    double maxAbsError = 0.0;
    int64_t top1Equal = 0;
    int64_t samples = 0;
    bool top1 = false;

    Result<void> add(const runtime::Tensor& reference, const runtime::Tensor& quantized) {
        if (reference.dtype() != graph::DataType::Float || reference.rank() == 0 ||
            reference.shape() != quantized.shape()) {
            return Error(Errc::Unsupported, "output metrics need batched float outputs");
        }
        const int64_t batch = reference.shape()[0];
        const int64_t per = batch > 0 ? reference.numElements() / batch : 0;
        top1 = reference.rank() == 2 && per > 1;
        for (int64_t b = 0; b < batch; ++b) {
            const Eigen::Map<const Eigen::ArrayXf> x(reference.data<float>() + b * per, per);
            const Eigen::Map<const Eigen::ArrayXf> y(quantized.data<float>() + b * per, per);
            const double nx = x.cast<double>().square().sum();
            const double ny = y.cast<double>().square().sum();
            const double dot = (x.cast<double>() * y.cast<double>()).sum();
            const double cosine = cosineFromSums(dot, nx, ny);
            sumCosine += cosine;
            minCosine = std::min(minCosine, cosine);
            maxAbsError = std::max(maxAbsError, static_cast<double>((x - y).abs().maxCoeff()));
            if (top1) {
                Eigen::Index ix = 0;
                Eigen::Index iy = 0;
                x.maxCoeff(&ix);
                y.maxCoeff(&iy);
                top1Equal += ix == iy ? 1 : 0;
            }
            ++samples;
        }
        return success();
    }
};

Result<runtime::Executor> executorObserving(graph::Graph graph,
                                            const std::vector<graph::ValueId>& observed) {
    for (const graph::ValueId id : observed) {
        graph.addOutput(id);
    }
    return runtime::Executor::create(std::move(graph));
}

/// SQNR of each weight quantizer, computed on the weight itself.
Result<void> weightErrors(const graph::Graph& model, const SingleConfigQuantizerSetup& setup,
                          const QuantizerParametersMap& parameters, SimulationReport& report) {
    for (const auto& [id, point] : setup.quantizationPoints) {
        if (!point.insertionPoint.isWeight) {
            continue;
        }
        QS_ASSIGN_OR_RETURN(const ResolvedInsertionPoint at,
                            resolveInsertionPoint(model, point.insertionPoint));
        const graph::TensorPtr& data = model.value(at.value).initializer;
        if (data->dtype() != graph::DataType::Float) {
            return Error(Errc::Unsupported,
                         describe(id, point.insertionPoint) + ": weight is not float32");
        }
        const runtime::Tensor weight = runtime::Tensor::wrap(data);
        runtime::Tensor quantized = weight.clone();
        QS_TRY(fakeQuantize(std::span<float>(quantized.mutableData<float>(),
                                             static_cast<size_t>(quantized.numElements())),
                            data->dims(), parameters.at(id)));
        NoiseSums sums;
        QS_TRY(sums.add(weight, quantized));
        const double db = sqnrDb(sums.signal, sums.noise);
        report.quantizers[id] = {db, db};
    }
    return success();
}

/// What calibrate() needs per quantizer before statistics: weight ranges, the observed tensor of
/// each activation quantizer, and every quantizer's channel axis.
struct CalibrationPlan {
    ObservedValues observed;
    std::map<int, size_t> observedOf;
    std::map<int, MinMaxRange> ranges;
    std::map<int, std::optional<int>> axisOf;
};

Result<CalibrationPlan> planCalibration(const graph::Graph& model,
                                        const SingleConfigQuantizerSetup& setup) {
    CalibrationPlan plan;
    for (const auto& [id, point] : setup.quantizationPoints) {
        QS_ASSIGN_OR_RETURN(const ResolvedInsertionPoint at,
                            resolveInsertionPoint(model, point.insertionPoint));
        const bool perChannel = point.qconfig.perChannel;
        if (!point.insertionPoint.isWeight) {
            plan.observedOf[id] = plan.observed.add(at.value);
            plan.axisOf[id] = perChannel ? std::optional<int>(1) : std::nullopt;
            continue;
        }
        QS_ASSIGN_OR_RETURN(plan.ranges[id], weightRange(*model.value(at.value).initializer,
                                                         point.qconfig, at.weightAxis)
                                                 .context(describe(id, point.insertionPoint)));
        plan.axisOf[id] = perChannel && at.weightAxis
                              ? std::optional<int>(static_cast<int>(*at.weightAxis))
                              : std::nullopt;
    }
    return plan;
}

Result<void> activationRanges(const graph::Graph& model, const SingleConfigQuantizerSetup& setup,
                              const runtime::Dataset& dataset, const CalibrationOptions& options,
                              Progress& progress, CalibrationPlan& plan) {
    if (plan.observed.values().empty()) {
        return success();
    }
    const StatisticsOptions statsOptions{.percentiles =
                                             options.estimator == RangeEstimator::Percentile,
                                         .percentile = options.percentile};
    QS_ASSIGN_OR_RETURN(
        const std::vector<TensorStatistics> stats,
        collectStatistics(model, plan.observed.values(), dataset, statsOptions, progress));
    for (const auto& [id, index] : plan.observedOf) {
        const SingleConfigQuantizationPoint& point = setup.quantizationPoints.at(id);
        QS_ASSIGN_OR_RETURN(plan.ranges[id],
                            activationRange(stats[index], point.qconfig, options.estimator)
                                .context(describe(id, point.insertionPoint)));
    }
    return success();
}

/// Per activation quantizer: where its tensors are among the observed outputs of the float and
/// the quantized model.
struct Probe {
    int id = 0;
    size_t floatIndex = 0; ///< float model: the tensor at the insertion point
    size_t inIndex = 0;    ///< quantized model: the tensor entering the quantizer
    size_t outIndex = 0;   ///< quantized model: the quantizer's output
};

/// The float model and its fake-quant copy, run side by side with their probes as extra outputs:
/// the float model through runtime::runObserving, the quantized one on each of its batches.
class SideBySide {
public:
    static Result<SideBySide> create(const graph::Graph& model,
                                     const SingleConfigQuantizerSetup& setup,
                                     const QuantizerParametersMap& parameters) {
        QS_ASSIGN_OR_RETURN(FakeQuantizedModel fq, insertFakeQuantizers(model, setup, parameters));
        ObservedValues floatObserved;
        ObservedValues quantObserved;
        std::vector<Probe> probes;
        for (const auto& [id, y] : fq.quantizerOutput) {
            QS_ASSIGN_OR_RETURN(
                const ResolvedInsertionPoint at,
                resolveInsertionPoint(model, setup.quantizationPoints.at(id).insertionPoint));
            probes.push_back({id, floatObserved.add(at.value),
                              quantObserved.add(fq.quantizerInput.at(id)), quantObserved.add(y)});
        }
        QS_ASSIGN_OR_RETURN(runtime::Executor quantExec,
                            executorObserving(std::move(fq.graph), quantObserved.values()));
        return SideBySide(floatObserved.values(), std::move(quantExec), std::move(probes),
                          model.outputs().size());
    }

    /// The float model's values the comparison needs (runObserving's probes).
    const std::vector<graph::ValueId>& floatProbes() const { return m_floatProbes; }

    /// Runs the quantized model on the batch the float model just ran and accumulates errors.
    Result<void> addBatch(const runtime::ObservedBatch& ref) {
        QS_ASSIGN_OR_RETURN(const std::vector<runtime::Tensor> quant,
                            m_quant.run(ref.batch.inputs));
        for (size_t o = 0; o < m_numOutputs; ++o) {
            QS_TRY(m_outputs[o].add(ref.outputs[o], quant[o]));
        }
        if (m_numOutputs > 0) {
            m_labelled.add(ref.batch, ref.outputs[0], quant[0]);
        }
        for (size_t p = 0; p < m_probes.size(); ++p) {
            const runtime::Tensor& y = quant[m_numOutputs + m_probes[p].outIndex];
            QS_TRY(m_accumulated[p].add(ref.probes[m_probes[p].floatIndex], y));
            QS_TRY(m_local[p].add(quant[m_numOutputs + m_probes[p].inIndex], y));
        }
        return success();
    }

    /// The first output's scores of both models with the labels, when the dataset has them.
    Result<std::optional<runtime::LabelledScores>> labelled() const { return m_labelled.finish(); }

    void fill(const graph::Graph& model, SimulationReport& report) const {
        for (size_t p = 0; p < m_probes.size(); ++p) {
            report.quantizers[m_probes[p].id] = {
                sqnrDb(m_accumulated[p].signal, m_accumulated[p].noise),
                sqnrDb(m_local[p].signal, m_local[p].noise)};
        }
        for (size_t o = 0; o < m_numOutputs; ++o) {
            const OutputAccumulator& acc = m_outputs[o];
            OutputMetrics metrics;
            metrics.name = model.value(model.outputs()[o]).name;
            metrics.meanCosine =
                acc.sumCosine / static_cast<double>(std::max<int64_t>(acc.samples, 1));
            metrics.minCosine = acc.minCosine;
            metrics.maxAbsError = acc.maxAbsError;
            if (acc.top1) {
                metrics.top1Agreement =
                    static_cast<double>(acc.top1Equal) / static_cast<double>(acc.samples);
            }
            report.outputs.push_back(std::move(metrics));
        }
    }

private:
    SideBySide(std::vector<graph::ValueId> floatProbes, runtime::Executor quantExec,
               std::vector<Probe> probes, size_t numOutputs)
        : m_floatProbes(std::move(floatProbes))
        , m_quant(std::move(quantExec))
        , m_probes(std::move(probes))
        , m_numOutputs(numOutputs)
        , m_accumulated(m_probes.size())
        , m_local(m_probes.size())
        , m_outputs(numOutputs) {}

    std::vector<graph::ValueId> m_floatProbes;
    runtime::Executor m_quant;
    std::vector<Probe> m_probes;
    size_t m_numOutputs;
    std::vector<NoiseSums> m_accumulated;
    std::vector<NoiseSums> m_local;
    std::vector<OutputAccumulator> m_outputs;
    runtime::LabelledScoresCollector m_labelled;
};

} // namespace

Result<QuantizerParametersMap> calibrate(const graph::Graph& model,
                                         const SingleConfigQuantizerSetup& setup,
                                         const runtime::Dataset& dataset,
                                         const CalibrationOptions& options, Progress& progress) {
    QS_ASSIGN_OR_RETURN(CalibrationPlan plan, planCalibration(model, setup));
    QS_TRY(activationRanges(model, setup, dataset, options, progress, plan));
    QS_TRY(unifyRanges(setup, plan.ranges));
    QuantizerParametersMap parameters;
    for (const auto& [id, range] : plan.ranges) {
        const SingleConfigQuantizationPoint& point = setup.quantizationPoints.at(id);
        QS_ASSIGN_OR_RETURN(parameters[id], parametersFromMinMax(point.qconfig, range.min,
                                                                 range.max, plan.axisOf.at(id))
                                                .context(describe(id, point.insertionPoint)));
    }
    return parameters;
}

Result<SimulationReport> simulateQuantization(const graph::Graph& model,
                                              const SingleConfigQuantizerSetup& setup,
                                              const QuantizerParametersMap& parameters,
                                              const runtime::Dataset& dataset, Progress& progress) {
    const auto start = std::chrono::steady_clock::now();
    QS_ASSIGN_OR_RETURN(SideBySide runs, SideBySide::create(model, setup, parameters));
    QS_TRY(runtime::runObserving(
        model, runs.floatProbes(), dataset, progress,
        [&runs](runtime::ObservedBatch& batch) { return runs.addBatch(batch); },
        {.label = "simulation"}));
    SimulationReport report;
    report.samples = dataset.samples();
    runs.fill(model, report);
    QS_ASSIGN_OR_RETURN(report.labelled, runs.labelled());
    QS_TRY(weightErrors(model, setup, parameters, report));
    report.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return report;
}

nlohmann::json toJson(const QuantizerError& error) {
    // JSON has no infinity: a noiseless quantizer's SQNR is written as null.
    const auto db = [](double v) {
        return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
    };
    return {{"sqnr_db", db(error.sqnrDb)}, {"local_sqnr_db", db(error.localSqnrDb)}};
}

nlohmann::json toJson(const SimulationReport& report) {
    nlohmann::json outputs = nlohmann::json::array();
    for (const OutputMetrics& m : report.outputs) {
        outputs.push_back({{"name", m.name},
                           {"cosine_similarity", m.meanCosine},
                           {"min_cosine_similarity", m.minCosine},
                           {"max_abs_error", m.maxAbsError},
                           {"top1_agreement", m.top1Agreement ? nlohmann::json(*m.top1Agreement)
                                                              : nlohmann::json(nullptr)}});
    }
    return {{"samples", report.samples}, {"seconds", report.seconds}, {"outputs", outputs}};
}

} // namespace qs::quantization
